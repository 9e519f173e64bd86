// Shared helpers of the CPU side: chunk checks, the canonical chunk sum, K.
#include <cmath>
#include <stdexcept>
#include <string>

#include "gradwire/kernels/chunking.hpp"
#include "gradwire/kernels/codec.hpp"

namespace gw::kernels {

void check_chunk(std::size_t chunk) {
  if (chunk == 0 || chunk % 32 != 0) {
    throw std::invalid_argument("chunk must be a positive multiple of 32, got " + std::to_string(chunk));
  }
}

float canonical_abs_sum(const float* x, std::size_t len) {
  // Lane t accumulates the 4-element groups t, t + 256, ... in order, exactly
  // as one thread of the GPU chunk block does with its float4 loads.
  float lanes[kChunkThreads];
  const std::size_t groups = (len + kChunkVector - 1) / kChunkVector;
  for (int t = 0; t < kChunkThreads; ++t) {
    float acc = 0.0f;
    for (std::size_t g = static_cast<std::size_t>(t); g < groups; g += kChunkThreads) {
      for (std::size_t e = g * kChunkVector; e < g * kChunkVector + kChunkVector && e < len; ++e) {
        acc += std::fabs(x[e]);
      }
    }
    lanes[t] = acc;
  }
  // Shuffle-down tree inside each warp (lane l += lane l + off), then a tree
  // over the 8 warp sums.
  float warps[kChunkThreads / 32];
  for (int w = 0; w < kChunkThreads / 32; ++w) {
    float* v = lanes + 32 * w;
    for (int off = 16; off >= 1; off /= 2) {
      for (int l = 0; l < off; ++l) v[l] += v[l + off];
    }
    warps[w] = v[0];
  }
  for (int off = kChunkThreads / 64; off >= 1; off /= 2) {
    for (int l = 0; l < off; ++l) warps[l] += warps[l + off];
  }
  return warps[0];
}

std::size_t sparse_count(std::size_t n, double ratio) {
  if (n == 0) return 0;
  if (!(ratio > 0.0) || ratio > 1.0) {
    throw std::invalid_argument("ratio must be in (0, 1], got " + std::to_string(ratio));
  }
  const double k = std::ceil(ratio * static_cast<double>(n));
  if (k < 1.0) return 1;
  if (k >= static_cast<double>(n)) return n;
  return static_cast<std::size_t>(k);
}

}  // namespace gw::kernels
