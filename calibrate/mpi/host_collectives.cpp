// The CPU side of the MPI calibration (gradwire-calibrate --mpi --device
// cpu): MPI's own collectives over fp32 host buffers between the ranks'
// processes (shared memory or TCP, whatever the MPI library picks), timed
// with MPI_Wtime. Sizes follow the collective vocabulary's convention, as
// launch_nccl() does for NCCL.
#include <climits>
#include <stdexcept>

#include "mpi_rank.hpp"

namespace gw::calibrate::mpi {
namespace {

using ranks::Command;

/// One MPI collective for a nccl-tests "size" of `count` floats (allreduce
/// and broadcast: count per rank; the others count / world per rank).
void launch_mpi(CollectiveOp op, float* send, float* recv, std::size_t count, int world) {
  const std::size_t per_rank =
      collective_info(op).size == SizeConvention::PerRank ? count : count / static_cast<std::size_t>(world);
  if (per_rank > static_cast<std::size_t>(INT_MAX)) {
    throw std::runtime_error("MPI collective of " + std::to_string(per_rank) +
                             " floats per rank: above MPI's int count");
  }
  const int n = static_cast<int>(per_rank);
  switch (op) {
    case CollectiveOp::AllReduce:
      GW_MPI(MPI_Allreduce(send, recv, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
      return;
    case CollectiveOp::AllGather:
      GW_MPI(MPI_Allgather(send, n, MPI_FLOAT, recv, n, MPI_FLOAT, MPI_COMM_WORLD));
      return;
    case CollectiveOp::ReduceScatter:
      GW_MPI(MPI_Reduce_scatter_block(send, recv, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD));
      return;
    case CollectiveOp::Broadcast:
      GW_MPI(MPI_Bcast(send, n, MPI_FLOAT, 0, MPI_COMM_WORLD));
      return;
    case CollectiveOp::AllToAll:
      GW_MPI(MPI_Alltoall(send, n, MPI_FLOAT, recv, n, MPI_FLOAT, MPI_COMM_WORLD));
      return;
  }
}

class HostCollectives final : public RankCollectives {
 public:
  explicit HostCollectives(const RankPlace& place) : world_(place.world) {}

  std::vector<double> run(const Command& c) override {
    const auto count = static_cast<std::size_t>(c.bytes / 4);  // fp32 elements of the nccl-tests "size"
    if (send_.size() < count) {
      send_.assign(count, 1.0f);
      recv_.assign(count, 0.0f);
    }
    auto launch = [&] { launch_mpi(c.op, send_.data(), recv_.data(), count, world_); };
    for (int i = 0; i < c.warmup; ++i) launch();
    std::vector<double> out;
    out.reserve(static_cast<std::size_t>(c.repeats));
    for (int i = 0; i < c.repeats; ++i) {
      GW_MPI(MPI_Barrier(MPI_COMM_WORLD));  // start together, as on the GPU path
      const double t0 = MPI_Wtime();
      launch();
      out.push_back(MPI_Wtime() - t0);
    }
    return out;
  }

  std::string where() const override { return "CPU"; }

  std::vector<std::string> notes() const override {
    return {
        "MPI collectives (--device cpu): the MPI library's own MPI_Allreduce, MPI_Allgather, "
        "MPI_Reduce_scatter_block, MPI_Bcast and MPI_Alltoall over fp32 host buffers (sum), one process per "
        "rank; per point, after an MPI_Barrier, each rank times the call with MPI_Wtime; a repeat's time is the "
        "slowest rank's (gathered on rank 0), the point is the median of the repeats. Codecs, GEMM and copy "
        "bandwidth are rank 0's CPU twins. These fits describe the MPI library on these hosts, not NCCL"};
  }

 private:
  int world_;
  std::vector<float> send_, recv_;
};

}  // namespace

std::unique_ptr<RankCollectives> make_host_collectives(const RankPlace& place) {
  return std::make_unique<HostCollectives>(place);
}

}  // namespace gw::calibrate::mpi
