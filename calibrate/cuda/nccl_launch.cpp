#include "nccl_launch.hpp"

#include "nccl_check.hpp"

namespace gw::calibrate::detail {

void launch_nccl(CollectiveOp op, void* send, void* recv, std::size_t count, int nranks, ncclComm_t comm,
                 cudaStream_t stream) {
  const std::size_t per_rank = count / static_cast<std::size_t>(nranks);
  switch (op) {
    case CollectiveOp::AllReduce:
      GW_CHECK(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, comm, stream));
      return;
    case CollectiveOp::Broadcast:
      GW_CHECK(ncclBroadcast(send, recv, count, ncclFloat, 0, comm, stream));
      return;
    case CollectiveOp::AllGather:
      GW_CHECK(ncclAllGather(send, recv, per_rank, ncclFloat, comm, stream));
      return;
    case CollectiveOp::ReduceScatter:
      GW_CHECK(ncclReduceScatter(send, recv, per_rank, ncclFloat, ncclSum, comm, stream));
      return;
    case CollectiveOp::AllToAll:
      // Nested inside a caller's group (one process driving every GPU) it
      // joins that group: NCCL runs the outermost ncclGroupEnd.
      GW_CHECK(ncclGroupStart());
      for (int peer = 0; peer < nranks; ++peer) {
        const auto off = static_cast<std::size_t>(peer) * per_rank * 4;
        GW_CHECK(ncclSend(static_cast<char*>(send) + off, per_rank, ncclFloat, peer, comm, stream));
        GW_CHECK(ncclRecv(static_cast<char*>(recv) + off, per_rank, ncclFloat, peer, comm, stream));
      }
      GW_CHECK(ncclGroupEnd());
      return;
  }
}

}  // namespace gw::calibrate::detail
