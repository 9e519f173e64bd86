// Internal to the MPI path of the calibrator (gw_calibrate_mpi, linked only
// into gradwire-calibrate): one rank's place in the job and its side of the
// measured collectives, either MPI's own over host buffers (--device cpu,
// host_collectives.cpp) or NCCL with one GPU per rank (--device cuda,
// calibrate/cuda/nccl_collectives.cpp). Includes mpi.h: not for gw_calibrate.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "gradwire/calibrate/ranks.hpp"

namespace gw::calibrate::mpi {

/// Throws std::runtime_error naming the call, file and line when rc is not MPI_SUCCESS.
void check_mpi(int rc, const char* what, const char* file, int line);
#define GW_MPI(x) ::gw::calibrate::mpi::check_mpi((x), #x, __FILE__, __LINE__)

/// Where this rank runs: its rank, the world size, its node's ranks.
struct RankPlace {
  int rank = 0, world = 1, local_rank = 0, local_size = 1;
  std::string host;  ///< MPI_Get_processor_name
};

/// One rank's side of the collectives rank 0 asks for.
class RankCollectives {
 public:
  virtual ~RankCollectives() = default;
  /// This rank's own time of each timed repeat of the command's collective
  /// (after the warm-up; an MPI_Barrier before each repeat).
  virtual std::vector<double> run(const ranks::Command& c) = 0;
  /// What this rank measures on ("CPU", "GPU 3"), for error messages.
  virtual std::string where() const = 0;
  /// Rank 0: lines for the profile's notes (method, the ranks' devices).
  virtual std::vector<std::string> notes() const = 0;
};

/// --device cpu: MPI_Allreduce, MPI_Allgather, MPI_Reduce_scatter_block,
/// MPI_Bcast and MPI_Alltoall over fp32 host buffers, timed with MPI_Wtime.
std::unique_ptr<RankCollectives> make_host_collectives(const RankPlace& place);

/// Whether this build has the NCCL side (CUDA built).
bool nccl_collectives_built();
/// --device cuda: the rank's GPU (its local rank), one NCCL communicator
/// over all ranks (collective over MPI_COMM_WORLD: every rank calls it).
/// Throws std::runtime_error on CUDA/NCCL errors or without CUDA.
std::unique_ptr<RankCollectives> make_nccl_collectives(const RankPlace& place);

/// Each rank's `mine` (up to 255 characters), gathered on every rank.
std::vector<std::string> allgather_strings(const std::string& mine, int world);

}  // namespace gw::calibrate::mpi
