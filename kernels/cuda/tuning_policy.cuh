// Tuning policy of the elementwise codecs (sign, int8, cast): block sizes,
// register blocking and the encode launch ladder, in one place (as CUB keeps
// its per-architecture policies apart from the kernels). Every figure was
// chosen on A100/H100 with gw_kernels_bench (docs/kernels.md); a change here
// changes speed only, never a result: the canonical summation order of
// docs/kernels.md does not depend on any of them.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <type_traits>

namespace gw::kernels::detail {

/// Per-chunk encoders (sign, int8), long chunks: one kChunkThreads block per
/// chunk, kRegGroups groups of 4 elements kept in registers per thread
/// (chunks up to 4096 elements are read once; longer ones re-read from L1/L2).
inline constexpr int kRegGroups = 4;

/// Per-chunk encoders, chunks up to kWarpChunkMax elements (the common case,
/// chunk 1024): one warp per chunk, kWarpThreads threads (8 warps, 8 chunks)
/// per block, persistent over the chunks.
inline constexpr int kWarpThreads = 256;
inline constexpr std::size_t kWarpChunkMax = 2048;

/// Decoders: kDecodeThreads threads per block; the tile of the cast and
/// int8 decoders is kDecodeUnroll x kDecodeThreads units, its loads all
/// issued before its stores.
inline constexpr int kDecodeThreads = 256;
inline constexpr int kDecodeUnroll = 4;

/// Chunks of the per-chunk codecs: a multiple of 32 (one sign word per 32
/// values), not 0.
inline bool valid_chunk(std::size_t chunk) { return chunk != 0 && chunk % 32 == 0; }

/// The encode launch ladder of the per-chunk codecs: chunks up to
/// kWarpChunkMax / 2 elements: the warp kernel with R = 1 register round,
/// up to kWarpChunkMax: R = 2, both on warp_blocks blocks (one warp per
/// chunk); longer chunks: one block per chunk. `warp(R, warp_blocks)` gets R
/// as a std::integral_constant<int, R>; `block(chunks)` the block count.
template <typename WarpLaunch, typename BlockLaunch>
void launch_encode_ladder(std::size_t chunk, std::size_t chunks, WarpLaunch&& warp, BlockLaunch&& block) {
  const std::size_t warp_blocks = (chunks + kWarpThreads / 32 - 1) / (kWarpThreads / 32);
  if (chunk <= kWarpChunkMax / 2) {
    warp(std::integral_constant<int, 1>{}, warp_blocks);
  } else if (chunk <= kWarpChunkMax) {
    warp(std::integral_constant<int, 2>{}, warp_blocks);
  } else {
    block(static_cast<unsigned>(chunks));
  }
}

}  // namespace gw::kernels::detail
