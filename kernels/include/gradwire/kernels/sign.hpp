// 1-bit sign with a per-chunk mean-magnitude scale (EF-SignSGD) and the
// majority-vote decode over N workers. CPU twins. Host-only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gradwire/kernels/chunking.hpp"

namespace gw::kernels {

/// 32-bit words of packed signs: ceil(n / 32) (bit i%32 of word i/32 is element i).
inline std::size_t sign_word_count(std::size_t n) { return (n + 31) / 32; }
inline std::size_t sign_scale_count(std::size_t n, std::size_t chunk) { return chunk_count(n, chunk); }
inline std::size_t sign_wire_bytes(std::size_t n, std::size_t chunk) {
  return 4 * sign_word_count(n) + 4 * sign_scale_count(n, chunk);
}

/// words[sign_word_count(n)], scales[sign_scale_count]; bit = (x >= 0).
void sign_encode_cpu(const float* x, std::size_t n, std::size_t chunk, std::uint32_t* words, float* scales);
/// y[i] = bit ? scale : -scale.
void sign_decode_cpu(const std::uint32_t* words, const float* scales, std::size_t n, std::size_t chunk, float* y);
/// Fused encode + residual[i] = x[i] - decode[i].
void sign_encode_ef_cpu(const float* x, std::size_t n, std::size_t chunk, std::uint32_t* words, float* scales,
                        float* residual);
/// Majority vote of `workers` messages stored worker-major (words: workers x
/// sign_word_count(n); scales: workers x sign_scale_count). y[i] = sign of the
/// vote (0 on a tie) times the workers' mean scale of the chunk.
void majority_vote_decode_cpu(const std::uint32_t* words, const float* scales, int workers, std::size_t n,
                              std::size_t chunk, float* y);

/// Synthetic peer `peer` (>= 1) of the majority_vote Codec: x with the sign of
/// element i flipped when uniform01(stream_key(seed, kTagPeers), peer * n + i) < 0.25.
void majority_vote_peer_input(const float* x, std::size_t n, std::uint64_t seed, int peer, float* out);

}  // namespace gw::kernels
