// Chunk geometry shared by the per-chunk codecs (int8, sign) on both backends,
// and the canonical order in which a chunk's sum is evaluated (see
// docs/kernels.md) so that GPU and CPU sums agree bit for bit.
#pragma once

#include <cstddef>

namespace gw::kernels {

/// Threads of one chunk block, and the elements one thread reads at a time.
inline constexpr int kChunkThreads = 256;
inline constexpr int kChunkVector = 4;

/// Number of chunks covering n values (0 for n == 0).
inline std::size_t chunk_count(std::size_t n, std::size_t chunk) { return chunk == 0 ? 0 : (n + chunk - 1) / chunk; }

/// Throws std::invalid_argument unless chunk is a positive multiple of 32.
void check_chunk(std::size_t chunk);

/// Sum of |x[0..len)| in the canonical order of the GPU chunk reduction.
float canonical_abs_sum(const float* x, std::size_t len);

}  // namespace gw::kernels
