// `gradwire calibrate --mpi`: gradwire links SimGrid, whose SMPI defines
// MPI_Init too, so the MPI path lives only in gradwire-calibrate. gradwire
// replaces itself by that executable (beside it) with the same arguments,
// before MPI starts, so `mpirun -np 4 gradwire calibrate --mpi ...` and a
// plain `gradwire calibrate --mpi ...` both run it (docs/calibrate.md).
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <vector>

#include "gradwire/calibrate/calibrate.hpp"
#include "gradwire/core/error.hpp"

namespace gw::calibrate {

int exec_calibrator(int argc, char** argv) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::string exe = ec ? std::string() : (self.parent_path() / "gradwire-calibrate").string();
  if (!exe.empty() && ::access(exe.c_str(), X_OK) == 0) {
    std::vector<char*> args;
    args.push_back(const_cast<char*>(exe.c_str()));
    for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
    args.push_back(nullptr);
    std::cout.flush();
    std::cerr.flush();
    ::execv(exe.c_str(), args.data());
    std::cerr << "gradwire calibrate: cannot run " << exe << ": " << std::strerror(errno) << "\n";
  }
  std::cerr << "gradwire calibrate: --mpi runs in gradwire-calibrate (gradwire links SimGrid, whose SMPI would take "
               "MPI's place), and there is none beside this gradwire"
            << (exe.empty() ? std::string() : " (" + exe + ")")
            << ": run it under your launcher with the same options, e.g.\n"
               "  mpirun -np 4 gradwire-calibrate --mpi --device cpu --out P.yaml\n"
               "  srun -N 2 --ntasks-per-node 8 gradwire-calibrate --mpi --out P.yaml\n";
  return kExitInput;
}

}  // namespace gw::calibrate
