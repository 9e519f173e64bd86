// int8 per-chunk absmax quantization on the CPU (same float operations as the GPU).
#include "gradwire/kernels/int8.hpp"

#include <algorithm>
#include <cmath>

#include "gradwire/kernels/counter_rng.hpp"

namespace gw::kernels {

namespace {

void encode_impl(const float* x, std::size_t n, const Int8Params& p, std::int8_t* q, float* scales, float* residual) {
  check_chunk(p.chunk);
  const std::uint64_t key = stream_key(p.seed, kTagStochasticRounding);
  const std::size_t chunks = chunk_count(n, p.chunk);
  for (std::size_t c = 0; c < chunks; ++c) {
    const std::size_t begin = c * p.chunk, end = std::min(n, begin + p.chunk);
    float absmax = 0.0f;
    for (std::size_t i = begin; i < end; ++i) absmax = std::max(absmax, std::fabs(x[i]));
    const float scale = absmax / 127.0f;
    const float inv = absmax > 0.0f ? 127.0f / absmax : 0.0f;
    scales[c] = scale;
    for (std::size_t i = begin; i < end; ++i) {
      float t = x[i] * inv;
      t = p.stochastic_rounding ? std::floor(t + uniform01(key, i)) : std::nearbyint(t);
      t = std::min(127.0f, std::max(-127.0f, t));
      const auto qi = static_cast<std::int8_t>(t);
      q[i] = qi;
      if (residual != nullptr) residual[i] = x[i] - static_cast<float>(qi) * scale;
    }
  }
}

}  // namespace

void int8_encode_cpu(const float* x, std::size_t n, const Int8Params& p, std::int8_t* q, float* scales) {
  encode_impl(x, n, p, q, scales, nullptr);
}

void int8_encode_ef_cpu(const float* x, std::size_t n, const Int8Params& p, std::int8_t* q, float* scales,
                        float* residual) {
  encode_impl(x, n, p, q, scales, residual);
}

void int8_decode_cpu(const std::int8_t* q, const float* scales, std::size_t n, std::size_t chunk, float* y) {
  check_chunk(chunk);
  for (std::size_t i = 0; i < n; ++i) y[i] = static_cast<float>(q[i]) * scales[i / chunk];
}

}  // namespace gw::kernels
