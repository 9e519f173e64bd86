// `gradwire calibrate`: the calibrator is its own executable,
// gradwire-calibrate (calibrate/), the only one that links the CUDA runtime,
// cuBLAS, NCCL and MPI; gradwire links none of them (it starts faster and
// smaller, and SimGrid's SMPI never meets MPI in one image:
// tests/cli/test_images.cpp checks). This command replaces the process
// (execv, so the pid, signals and an MPI launcher's ranks carry over) by the
// gradwire-calibrate beside this executable with the same arguments, for
// every calibration alike (--device, --mpi, --from-nccl-tests, --help).
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "gradwire/core/error.hpp"

namespace gw::cli {

int cmd_calibrate(int argc, char** argv) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::string exe = ec ? std::string("gradwire-calibrate") : (self.parent_path() / "gradwire-calibrate").string();
  if (ec || ::access(exe.c_str(), X_OK) != 0) {
    std::cerr << "gradwire calibrate: the calibrator is gradwire-calibrate and there is none beside this gradwire ("
              << exe << "): build it (cmake --build build --target gradwire-calibrate) or run it with the same options\n";
    return kExitInput;
  }
  std::vector<char*> args;
  args.push_back(const_cast<char*>(exe.c_str()));
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  ::execv(exe.c_str(), args.data());
  std::cerr << "gradwire calibrate: cannot run " << exe << ": " << std::strerror(errno) << "\n";
  return kExitFailure;
}

}  // namespace gw::cli
