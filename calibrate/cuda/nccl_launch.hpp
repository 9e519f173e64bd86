// One NCCL collective as nccl-tests launches it: the one launch of both
// calibration paths (cuda_backend.cpp, one process over all local GPUs, and
// nccl_collectives.cpp, one rank per GPU across nodes). Host-only.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>

#include "gradwire/model/collectives.hpp"

namespace gw::calibrate::detail {

/// Enqueues `op` on `stream` over `comm` (`nranks` ranks) for a nccl-tests
/// "size" of `count` fp32 elements (gw::SizeConvention): allreduce and
/// broadcast (root 0) take count elements per rank; allgather, reducescatter
/// and alltoall count / nranks per rank (alltoall: that many to and from
/// every peer, in one group). `send` and `recv` hold count floats. Throws
/// std::runtime_error on an NCCL error.
void launch_nccl(CollectiveOp op, void* send, void* recv, std::size_t count, int nranks, ncclComm_t comm,
                 cudaStream_t stream);

}  // namespace gw::calibrate::detail
