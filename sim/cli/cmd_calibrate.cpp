// `gradwire calibrate`: the calibrator (calibrate/), same options as
// gradwire-calibrate. gradwire links SimGrid, not MPI: with --mpi it hands
// the command line to gradwire-calibrate (no MPI start function here).
#include "commands.hpp"
#include "gradwire/calibrate/calibrate.hpp"

namespace gw::cli {

int cmd_calibrate(int argc, char** argv) { return gw::calibrate::run_cli(argc, argv, nullptr); }

}  // namespace gw::cli
