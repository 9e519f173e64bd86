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

void topk_check_sizes(std::size_t n, std::size_t k) {
  if (n > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
    throw std::invalid_argument("topk: n = " + std::to_string(n) + " above INT32_MAX (indices are int32)");
  }
  if (k > n) {
    throw std::invalid_argument("topk: k = " + std::to_string(k) + " above n = " + std::to_string(n));
  }
}

namespace {

// Selects and writes the message; marks selected elements in `taken` if given.
void select(const float* x, std::size_t n, std::size_t k, float* values, std::int32_t* indices,
            std::vector<char>* taken) {
  topk_check_sizes(n, k);
  if (taken != nullptr) taken->assign(n, 0);
  if (k == 0) return;
  std::vector<std::uint32_t> keys(n);
  for (std::size_t i = 0; i < n; ++i) keys[i] = topk_key(x[i]);

  // Threshold T = the k-th largest key. Everything above T is taken; of the
  // elements equal to T the first (k - #above) in index order are taken.
  std::vector<std::uint32_t> scratch(keys);
  const auto kth = scratch.begin() + static_cast<std::ptrdiff_t>(k - 1);
  std::nth_element(scratch.begin(), kth, scratch.end(), std::greater<>());
  const std::uint32_t threshold = *kth;
  std::size_t above = 0;
  for (const std::uint32_t key : keys) above += key > threshold ? 1 : 0;
  std::size_t ties_left = k - above;

  std::size_t out = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t key = keys[i];
    bool take = key > threshold;
    if (!take && key == threshold && ties_left > 0) {
      take = true;
      --ties_left;
    }
    if (take) {
      values[out] = x[i];
      indices[out] = static_cast<std::int32_t>(i);
      if (taken != nullptr) (*taken)[i] = 1;
      ++out;
    }
  }
}

}  // namespace

void topk_encode_cpu(const float* x, std::size_t n, std::size_t k, float* values, std::int32_t* indices) {
  select(x, n, k, values, indices, nullptr);
}

void topk_encode_ef_cpu(const float* x, std::size_t n, std::size_t k, float* values, std::int32_t* indices,
                        float* residual) {
  std::vector<char> taken;
  select(x, n, k, values, indices, &taken);
  for (std::size_t i = 0; i < n; ++i) residual[i] = taken[i] != 0 ? x[i] - x[i] : x[i] - 0.0f;
}

void topk_decode_cpu(const float* values, const std::int32_t* indices, std::size_t k, std::size_t n, float* y) {
  topk_decode_gathered_cpu(values, indices, 1, k, n, y);
}

void topk_decode_gathered_cpu(const float* values, const std::int32_t* indices, std::size_t workers, std::size_t k,
                              std::size_t n, float* y) {
  std::fill(y, y + n, 0.0f);
  for (std::size_t w = 0; w < workers; ++w) {
    for (std::size_t i = w * k; i < (w + 1) * k; ++i) {
      const std::int32_t idx = indices[i];
      if (idx < 0 || static_cast<std::size_t>(idx) >= n) {
        throw std::invalid_argument("topk decode: index " + std::to_string(idx) + " outside [0, " + std::to_string(n) +
                                    ")");
      }
      y[idx] += values[i];
    }
  }
}

}  // namespace gw::kernels
