// How the per-chunk encoders (int8, sign) walk a chunk's 4-element groups,
// in one place for both: the warp kernels' loads of a whole chunk into
// registers (chunks up to kWarpChunkMax), and the block kernels' second pass
// over a thread's groups, from registers or re-read (longer chunks). Either
// way every load and store instruction of a warp is contiguous.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "gradwire/kernels/chunking.hpp"
#include "launch_util.cuh"
#include "tuning_policy.cuh"

namespace gw::kernels::detail {

/// Group of slot (k, w) of `lane` in the per-chunk warp kernels (int8, sign):
/// g = 256k + 32w + lane, so every load and store instruction of the warp is
/// contiguous.
__device__ __forceinline__ std::size_t slot_group(int k, int w, unsigned lane) {
  return static_cast<std::size_t>(256 * k + 32 * w) + lane;
}

/// Loads a chunk of `groups` groups (`len` elements from xc) into the slots of
/// one warp's lane: v[k][w] = group slot_group(k, w, lane), zeros past the
/// chunk. A chunk that fills all R x 8 slots of every lane is read without
/// bounds checks. The per-chunk warp kernels issue all these loads before
/// any reduction.
template <int R>
__device__ __forceinline__ void load_chunk_slots(const float* xc, std::size_t groups, std::size_t len, unsigned lane,
                                                 float4 (&v)[R][8]) {
  if (groups == static_cast<std::size_t>(256 * R)) {  // whole slots: no bounds checks
    const float4* x4 = reinterpret_cast<const float4*>(xc) + lane;
#pragma unroll
    for (int k = 0; k < R; ++k) {
#pragma unroll
      for (int w = 0; w < 8; ++w) v[k][w] = __ldg(x4 + 256 * k + 32 * w);
    }
  } else {
#pragma unroll
    for (int k = 0; k < R; ++k) {
#pragma unroll
      for (int w = 0; w < 8; ++w) {
        const std::size_t g = slot_group(k, w, lane);
        v[k][w] = g < groups ? load_group(xc, g, len) : make_float4(0.f, 0.f, 0.f, 0.f);
      }
    }
  }
}

/// The block kernels' second pass: emit(g, group g) for each group g of this
/// thread (g = threadIdx.x + k * kChunkThreads), from v when the pass over
/// the chunk kept them there (in_regs), else re-read from xc.
template <typename Emit>
__device__ __forceinline__ void for_each_thread_group(const float4 (&v)[kRegGroups], bool in_regs, const float* xc,
                                                      std::size_t groups, std::size_t len, Emit&& emit) {
  if (in_regs) {
#pragma unroll
    for (int k = 0; k < kRegGroups; ++k) {
      const std::size_t g = threadIdx.x + static_cast<std::size_t>(k) * kChunkThreads;
      if (g < groups) emit(g, v[k]);
    }
  } else {
    for (std::size_t g = threadIdx.x; g < groups; g += kChunkThreads) emit(g, load_group(xc, g, len));
  }
}

}  // namespace gw::kernels::detail
