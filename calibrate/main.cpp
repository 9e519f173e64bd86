// gradwire-calibrate: the calibrator on its own (builds in GPU-only builds), and
// the only image with the MPI path (gw_calibrate_mpi).
#include "gradwire/calibrate/calibrate.hpp"

int main(int argc, char** argv) { return gw::calibrate::run_cli(argc, argv, gw::calibrate::start_mpi_run); }
