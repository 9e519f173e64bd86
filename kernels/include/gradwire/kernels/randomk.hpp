// Random-K: K indices from a keyed permutation of (seed, step); only values travel.
// CPU twins. Host-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gw::kernels {

struct RandomKParams {
  std::size_t k = 0;
  std::uint64_t seed = 0;
  std::uint64_t step = 0;
};

inline std::size_t randomk_wire_bytes(std::size_t k) { return 4 * k; }

/// The K indices (distinct, in slot order) every worker derives from (seed, step).
std::vector<std::uint64_t> randomk_indices(std::size_t n, const RandomKParams& p);

/// values[j] = x[idx[j]], j < K.
void randomk_encode_cpu(const float* x, std::size_t n, const RandomKParams& p, float* values);
/// y = 0 except y[idx[j]] = values[j].
void randomk_decode_cpu(const float* values, std::size_t n, const RandomKParams& p, float* y);
/// Fused encode + residual: residual[i] = 0 where i is selected, x[i] elsewhere.
void randomk_encode_ef_cpu(const float* x, std::size_t n, const RandomKParams& p, float* values, float* residual);

}  // namespace gw::kernels
