// The MPI path in builds without it (MPI not found at configure time, or
// GRADWIRE_MPI=OFF): `gradwire-calibrate --mpi` is refused with a plain
// message (cli.cpp, exit 2).
#include "gradwire/calibrate/calibrate.hpp"

namespace gw::calibrate {

std::unique_ptr<MpiRun> start_mpi_run(const Options&, std::string* why) {
  if (why) *why = "this gradwire-calibrate was built without MPI";
  return nullptr;
}

}  // namespace gw::calibrate
