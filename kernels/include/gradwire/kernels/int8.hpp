// int8 with per-chunk absmax scales, optional stochastic rounding. CPU twins. Host-only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gradwire/kernels/chunking.hpp"

namespace gw::kernels {

struct Int8Params {
  std::size_t chunk = 1024;  ///< positive multiple of 32
  bool stochastic_rounding = false;
  std::uint64_t seed = 0;  ///< stochastic rounding stream: stream_key(seed, kTagStochasticRounding)
};

/// Scales in one message: chunk_count(n, chunk).
inline std::size_t int8_scale_count(std::size_t n, std::size_t chunk) { return chunk_count(n, chunk); }
/// Bytes of one message: n int8 + the float scales.
inline std::size_t int8_wire_bytes(std::size_t n, std::size_t chunk) { return n + 4 * int8_scale_count(n, chunk); }

/// q[n], scales[int8_scale_count].
void int8_encode_cpu(const float* x, std::size_t n, const Int8Params& p, std::int8_t* q, float* scales);
void int8_decode_cpu(const std::int8_t* q, const float* scales, std::size_t n, std::size_t chunk, float* y);
/// Fused encode + residual[i] = x[i] - q[i] * scale.
void int8_encode_ef_cpu(const float* x, std::size_t n, const Int8Params& p, std::int8_t* q, float* scales,
                        float* residual);

}  // namespace gw::kernels
