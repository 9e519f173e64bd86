// gradwire-calibrate: the calibrator on its own (builds in GPU-only builds).
#include "gradwire/calibrate/calibrate.hpp"

int main(int argc, char** argv) { return gw::calibrate::run_cli(argc, argv); }
