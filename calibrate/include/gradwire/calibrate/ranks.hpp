// Plain logic of the MPI calibration (gradwire-calibrate --mpi), kept free of
// MPI, CUDA and NCCL so that it is unit-tested on every build: combining the
// ranks' timings, counting nodes, choosing each rank's GPU, the command rank 0
// sends to the other ranks, and the launcher's environment.
#pragma once

#include <array>
#include <functional>
#include <string>
#include <vector>

#include "gradwire/model/collectives.hpp"

namespace gw::calibrate::ranks {

/// The collective's time per repeat from every rank's own timings of it
/// (per_rank[rank][repeat]): the slowest rank's, since the collective is done
/// for the job only when its last rank has the result. Throws
/// std::invalid_argument for no ranks, no repeats or ranks with different
/// repeat counts.
std::vector<double> max_over_ranks(const std::vector<std::vector<double>>& per_rank);

/// The same from the gathered buffer rank 0 receives: `ranks` blocks of
/// `repeats` times, rank after rank.
std::vector<double> max_over_ranks(const std::vector<double>& gathered, int ranks, int repeats);

/// Per repeat, (slowest - fastest) / slowest over the ranks: how much of the
/// time one rank spent waiting for the others to arrive.
std::vector<double> rank_imbalance(const std::vector<double>& gathered, int ranks, int repeats);

/// Distinct host names (processor names) of the ranks.
int distinct_hosts(const std::vector<std::string>& rank_hosts);

/// "2 nodes: a (ranks 0-3), b (ranks 4-7)"-style summary, host order of first rank.
std::string hosts_summary(const std::vector<std::string>& rank_hosts);

/// The GPU of a rank: its local rank on its node. Throws std::runtime_error
/// when the node runs more ranks than it has visible GPUs (NCCL refuses two
/// ranks on one GPU) or has no GPU; with one visible GPU per rank (a launcher
/// that sets CUDA_VISIBLE_DEVICES per rank) every rank uses device 0.
int local_device(int local_rank, int local_size, int visible_gpus, const std::string& host);

/// What rank 0 asks the other ranks to do next.
struct Command {
  enum Kind : int { kStopOk = 0, kStopFailed = 1, kCollective = 2 };
  Kind kind = kStopOk;
  CollectiveOp op = CollectiveOp::AllReduce;  ///< sent as its index in gw::collective_ops()
  double bytes = 0;                           ///< nccl-tests "size"
  int warmup = 0;
  int repeats = 0;
};
inline constexpr int kCommandDoubles = 5;
/// A command as doubles (one MPI_Bcast of MPI_DOUBLE) and back; decode
/// throws std::runtime_error for a malformed message.
std::array<double, kCommandDoubles> encode(const Command& c);
Command decode(const std::array<double, kCommandDoubles>& d);

/// Ranks announced by an MPI launcher in the environment (Open MPI
/// OMPI_COMM_WORLD_SIZE, MPICH/Hydra PMI_SIZE, MVAPICH2
/// MV2_COMM_WORLD_SIZE), 0 when none is set or readable. `get` is getenv
/// (injectable for tests).
int launcher_world_size(const std::function<const char*(const char*)>& get);

}  // namespace gw::calibrate::ranks
