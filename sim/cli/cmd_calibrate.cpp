// `gradwire calibrate`: the calibrator (calibrate/), same options as gradwire-calibrate.
#include "commands.hpp"
#include "gradwire/calibrate/calibrate.hpp"

namespace gw::cli {

int cmd_calibrate(int argc, char** argv) { return gw::calibrate::run_cli(argc, argv); }

}  // namespace gw::cli
