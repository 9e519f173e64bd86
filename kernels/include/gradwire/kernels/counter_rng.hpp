// Counter-based random numbers and a keyed permutation, written once for the
// host and the device so that CPU twins and CUDA kernels draw identical
// values. Pure integer arithmetic (and one exact int->float conversion).
// No CUDA header is needed: GW_HD expands to __host__ __device__ under nvcc.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define GW_HD __host__ __device__ __forceinline__
#else
#define GW_HD inline
#endif

namespace gw::kernels {

/// Stream tags: each use of the generator has its own, so draws never correlate.
inline constexpr std::uint64_t kTagStochasticRounding = 0x5352'0000'0000'0001ULL;
inline constexpr std::uint64_t kTagRandomK = 0x524b'0000'0000'0002ULL;
inline constexpr std::uint64_t kTagPeers = 0x5045'0000'0000'0003ULL;
inline constexpr std::uint64_t kGolden64 = 0x9e3779b97f4a7c15ULL;

/// 32-bit finalizer; a bijection on 32-bit values.
GW_HD std::uint32_t mix32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

/// 64-bit finalizer; a bijection on 64-bit values.
GW_HD std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

/// Key of one random stream (computed once on the host, passed to kernels).
GW_HD std::uint64_t stream_key(std::uint64_t seed, std::uint64_t tag) { return mix64(seed ^ tag); }

/// 32 random bits for counter i of the stream `key`.
GW_HD std::uint32_t counter_hash(std::uint64_t key, std::uint64_t i) {
  const std::uint32_t h = mix32(static_cast<std::uint32_t>(i) ^ static_cast<std::uint32_t>(key));
  return mix32(h ^ static_cast<std::uint32_t>(i >> 32) ^ static_cast<std::uint32_t>(key >> 32));
}

/// Uniform float in [0, 1) with 24 random bits (exactly representable).
GW_HD float uniform01(std::uint64_t key, std::uint64_t i) {
  return static_cast<float>(counter_hash(key, i) >> 8) * (1.0f / 16777216.0f);
}

/// A keyed pseudo-random permutation of [0, n): 4-round balanced Feistel
/// network on 2h bits (smallest even width with 2^(2h) >= n, at least 2)
/// made a permutation of [0, n) by cycle walking. forward(j) for j < K gives
/// K distinct indices; inverse(i) gives the position of index i.
struct FeistelPermutation {
  std::uint64_t n = 0;
  std::uint32_t half_bits = 1;
  std::uint64_t half_mask = 1;
  std::uint64_t keys[4] = {0, 0, 0, 0};

  GW_HD std::uint64_t round_fn(int r, std::uint64_t right) const {
    return static_cast<std::uint64_t>(counter_hash(keys[r], right)) & half_mask;
  }
  GW_HD std::uint64_t permute_domain(std::uint64_t x) const {
    std::uint64_t left = x >> half_bits, right = x & half_mask;
    for (int r = 0; r < 4; ++r) {
      const std::uint64_t next = left ^ round_fn(r, right);
      left = right;
      right = next;
    }
    return (left << half_bits) | right;
  }
  GW_HD std::uint64_t unpermute_domain(std::uint64_t x) const {
    std::uint64_t left = x >> half_bits, right = x & half_mask;
    for (int r = 3; r >= 0; --r) {
      const std::uint64_t prev = right ^ round_fn(r, left);
      right = left;
      left = prev;
    }
    return (left << half_bits) | right;
  }
  /// j in [0, n) -> a value in [0, n); a bijection.
  GW_HD std::uint64_t forward(std::uint64_t j) const {
    std::uint64_t x = permute_domain(j);
    while (x >= n) x = permute_domain(x);
    return x;
  }
  /// inverse of forward on [0, n).
  GW_HD std::uint64_t inverse(std::uint64_t i) const {
    std::uint64_t x = unpermute_domain(i);
    while (x >= n) x = unpermute_domain(x);
    return x;
  }
};

/// The permutation used by Random-K for (seed, step) over n elements.
inline FeistelPermutation make_randomk_permutation(std::uint64_t n, std::uint64_t seed, std::uint64_t step) {
  FeistelPermutation p;
  p.n = n;
  std::uint32_t bits = 2;
  while (bits < 64 && (std::uint64_t{1} << bits) < n) bits += 2;
  p.half_bits = bits / 2;
  p.half_mask = (std::uint64_t{1} << p.half_bits) - 1;
  const std::uint64_t base = mix64(stream_key(seed, kTagRandomK) ^ step);
  for (int r = 0; r < 4; ++r) p.keys[r] = base + static_cast<std::uint64_t>(r) * kGolden64;
  return p;
}

}  // namespace gw::kernels
