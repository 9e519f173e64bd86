// The MPI path in builds without CUDA: --mpi --device cuda is refused before
// MPI starts (mpi_run.cpp); --mpi --device cpu works.
#include <stdexcept>

#include "mpi_rank.hpp"

namespace gw::calibrate::mpi {

bool nccl_collectives_built() { return false; }

std::unique_ptr<RankCollectives> make_nccl_collectives(const RankPlace&) {
  throw std::runtime_error("this gradwire-calibrate was built without CUDA");
}

}  // namespace gw::calibrate::mpi
