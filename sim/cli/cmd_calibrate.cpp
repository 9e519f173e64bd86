// `gradwire calibrate`: the calibrator is its own executable,
// gradwire-calibrate (calibrate/), the only one that links the CUDA runtime,
// cuBLAS, NCCL and MPI; gradwire and gradwire-sim link none of them (they
// start faster and smaller, and SimGrid's SMPI never meets MPI in one image:
// tests/cli/test_images.cpp checks). This command replaces the process by
// the gradwire-calibrate beside this executable with the same arguments, for
// every calibration alike (--device, --mpi, --from-nccl-tests, --help).
#include "commands.hpp"
#include "exec_beside.hpp"

namespace gw::cli {

int cmd_calibrate(int argc, char** argv) {
  return exec_beside("gradwire-calibrate", "gradwire calibrate", "the calibrator",
                     std::vector<char*>(argv + 1, argv + argc));
}

}  // namespace gw::cli
