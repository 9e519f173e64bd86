// CPU twin of the Top-K compressor (see topk.hpp for the contract).
#include "gradwire/kernels/topk.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace gw::kernels {

void topk_check_sizes(std::int64_t n, std::int64_t k) {
  if (n < 0 || n > std::numeric_limits<std::int32_t>::max()) {
    throw std::invalid_argument("topk: n = " + std::to_string(n) +
                                " outside [0, INT32_MAX] (indices are int32)");
  }
  if (k < 0 || k > n) {
    throw std::invalid_argument("topk: k = " + std::to_string(k) + " outside [0, n = " +
                                std::to_string(n) + "]");
  }
}

void topk_cpu(const float* x, std::int64_t n, std::int64_t k, float* values,
              std::int32_t* indices) {
  topk_check_sizes(n, k);
  if (k == 0) return;
  const auto count = static_cast<std::size_t>(n);
  std::vector<std::uint32_t> keys(count);
  for (std::size_t i = 0; i < count; ++i) keys[i] = topk_key(x[i]);

  // Threshold T = the k-th largest key. Everything above T is taken; of the
  // elements equal to T the first (k - #above) in index order are taken.
  std::vector<std::uint32_t> scratch(keys);
  const auto kth = scratch.begin() + (k - 1);
  std::nth_element(scratch.begin(), kth, scratch.end(), std::greater<>());
  const std::uint32_t threshold = *kth;
  std::int64_t above = 0;
  for (const std::uint32_t key : keys) above += key > threshold ? 1 : 0;
  std::int64_t ties_left = k - above;

  std::int64_t out = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint32_t key = keys[i];
    bool take = key > threshold;
    if (!take && key == threshold && ties_left > 0) {
      take = true;
      --ties_left;
    }
    if (take) {
      values[out] = x[i];
      indices[out] = static_cast<std::int32_t>(i);
      ++out;
    }
  }
}

namespace {
void check_index(std::int32_t idx, std::int64_t n) {
  if (idx < 0 || idx >= n) {
    throw std::invalid_argument("topk decode: index " + std::to_string(idx) +
                                " outside [0, " + std::to_string(n) + ")");
  }
}
}  // namespace

void topk_decode_cpu(const float* values, const std::int32_t* indices, std::int64_t k,
                     float* dense, std::int64_t n) {
  topk_decode_gathered_cpu(values, indices, 1, k, dense, n);
}

void topk_decode_gathered_cpu(const float* values, const std::int32_t* indices, int workers,
                              std::int64_t k, float* dense, std::int64_t n) {
  if (n < 0 || k < 0 || workers < 0) throw std::invalid_argument("topk decode: negative size");
  std::fill(dense, dense + n, 0.0f);
  for (int w = 0; w < workers; ++w) {
    const std::int64_t base = static_cast<std::int64_t>(w) * k;
    for (std::int64_t i = 0; i < k; ++i) {
      const std::int32_t idx = indices[base + i];
      check_index(idx, n);
      dense[idx] += values[base + i];
    }
  }
}

}  // namespace gw::kernels
