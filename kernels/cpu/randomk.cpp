// Random-K on the CPU: indices from the keyed Feistel permutation of (seed, step).
#include "gradwire/kernels/randomk.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "gradwire/kernels/counter_rng.hpp"

namespace gw::kernels {

namespace {
FeistelPermutation checked_permutation(std::size_t n, const RandomKParams& p) {
  if (p.k > n) {
    throw std::invalid_argument("randomk: k = " + std::to_string(p.k) + " exceeds n = " + std::to_string(n));
  }
  return make_randomk_permutation(n, p.seed, p.step);
}
}  // namespace

std::vector<std::uint64_t> randomk_indices(std::size_t n, const RandomKParams& p) {
  const FeistelPermutation perm = checked_permutation(n, p);
  std::vector<std::uint64_t> idx(p.k);
  for (std::size_t j = 0; j < p.k; ++j) idx[j] = perm.forward(j);
  return idx;
}

void randomk_encode_cpu(const float* x, std::size_t n, const RandomKParams& p, float* values) {
  const FeistelPermutation perm = checked_permutation(n, p);
  for (std::size_t j = 0; j < p.k; ++j) values[j] = x[perm.forward(j)];
}

void randomk_decode_cpu(const float* values, std::size_t n, const RandomKParams& p, float* y) {
  const FeistelPermutation perm = checked_permutation(n, p);
  std::fill(y, y + n, 0.0f);
  for (std::size_t j = 0; j < p.k; ++j) y[perm.forward(j)] = values[j];
}

void randomk_encode_ef_cpu(const float* x, std::size_t n, const RandomKParams& p, float* values, float* residual) {
  const FeistelPermutation perm = checked_permutation(n, p);
  std::copy(x, x + n, residual);
  for (std::size_t j = 0; j < p.k; ++j) {
    const std::uint64_t i = perm.forward(j);
    values[j] = x[i];
    residual[i] = 0.0f;
  }
}

}  // namespace gw::kernels
