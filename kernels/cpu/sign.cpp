// 1-bit sign (EF-SignSGD) and majority vote on the CPU.
#include "gradwire/kernels/sign.hpp"

#include <algorithm>
#include <stdexcept>

#include "gradwire/kernels/counter_rng.hpp"

namespace gw::kernels {

namespace {

void encode_impl(const float* x, std::size_t n, std::size_t chunk, std::uint32_t* words, float* scales,
                 float* residual) {
  check_chunk(chunk);
  const std::size_t chunks = chunk_count(n, chunk);
  for (std::size_t c = 0; c < chunks; ++c) {
    const std::size_t begin = c * chunk, end = std::min(n, begin + chunk);
    const float scale = canonical_abs_sum(x + begin, end - begin) / static_cast<float>(end - begin);
    scales[c] = scale;
    // chunk is a multiple of 32, so words never straddle chunks.
    for (std::size_t w = begin / 32; w * 32 < end; ++w) {
      std::uint32_t bits = 0;
      for (std::size_t i = w * 32; i < std::min(end, w * 32 + 32); ++i) {
        const bool positive = x[i] >= 0.0f;
        if (positive) bits |= 1U << (i % 32);
        if (residual != nullptr) residual[i] = x[i] - (positive ? scale : -scale);
      }
      words[w] = bits;
    }
  }
}

}  // namespace

void sign_encode_cpu(const float* x, std::size_t n, std::size_t chunk, std::uint32_t* words, float* scales) {
  encode_impl(x, n, chunk, words, scales, nullptr);
}

void sign_encode_ef_cpu(const float* x, std::size_t n, std::size_t chunk, std::uint32_t* words, float* scales,
                        float* residual) {
  encode_impl(x, n, chunk, words, scales, residual);
}

void sign_decode_cpu(const std::uint32_t* words, const float* scales, std::size_t n, std::size_t chunk, float* y) {
  check_chunk(chunk);
  for (std::size_t i = 0; i < n; ++i) {
    const float s = scales[i / chunk];
    y[i] = ((words[i / 32] >> (i % 32)) & 1U) ? s : -s;
  }
}

void majority_vote_decode_cpu(const std::uint32_t* words, const float* scales, int workers, std::size_t n,
                              std::size_t chunk, float* y) {
  check_chunk(chunk);
  if (workers < 1) throw std::invalid_argument("majority vote needs at least one worker");
  const std::size_t nw = sign_word_count(n), nc = sign_scale_count(n, chunk);
  for (std::size_t i = 0; i < n; ++i) {
    int votes = 0;
    float s = 0.0f;
    for (int w = 0; w < workers; ++w) {
      const auto wu = static_cast<std::size_t>(w);
      votes += static_cast<int>((words[wu * nw + i / 32] >> (i % 32)) & 1U);
      s += scales[wu * nc + i / chunk];
    }
    s /= static_cast<float>(workers);
    y[i] = 2 * votes > workers ? s : (2 * votes < workers ? -s : 0.0f);
  }
}

void majority_vote_peer_input(const float* x, std::size_t n, std::uint64_t seed, int peer, float* out) {
  const std::uint64_t key = stream_key(seed, kTagPeers);
  const std::uint64_t base = static_cast<std::uint64_t>(peer) * n;
  for (std::size_t i = 0; i < n; ++i) out[i] = uniform01(key, base + i) < 0.25f ? -x[i] : x[i];
}

}  // namespace gw::kernels
