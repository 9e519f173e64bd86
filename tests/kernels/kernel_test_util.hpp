// Helpers shared by the kernel tests (CPU and GPU): seeded random data and
// the error-feedback identity checks.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace gw::kernels::test {

/// n values drawn from N(0, 1) by std::mt19937 seeded with `seed`.
inline std::vector<float> gaussian(std::size_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(n);
  for (auto& v : x) v = dist(gen);
  return x;
}

/// Normally distributed values with a few exact zeros, negative zeros and a
/// spread of magnitudes, like gradients.
inline std::vector<float> random_gradient(std::size_t n, std::uint32_t seed, float sigma = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, sigma);
  std::uniform_int_distribution<int> pick(0, 99);
  std::vector<float> x(n);
  for (auto& v : x) {
    const int p = pick(rng);
    if (p == 0)
      v = 0.0f;
    else if (p == 1)
      v = -0.0f;
    else if (p < 5)
      v = normal(rng) * 1e-3f;
    else
      v = normal(rng);
  }
  return x;
}

/// Uniform values in [lo, hi).
inline std::vector<float> random_uniform(std::size_t n, std::uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> x(n);
  for (auto& v : x) v = u(rng);
  return x;
}

/// True when Sterbenz' lemma makes x - y exact (same sign, y/2 <= x <= 2y) or y == 0.
inline bool sterbenz_applies(float x, float y) {
  if (y == 0.0f) return true;
  const float ax = std::fabs(x), ay = std::fabs(y);
  return std::signbit(x) == std::signbit(y) && ay / 2 <= ax && ax <= 2 * ay;
}

/// Checks the error-feedback identity y + r == x element by element. Exact
/// everywhere when `always_exact`; otherwise exact where Sterbenz applies and
/// within half an ulp of r elsewhere. Returns the number of elements where
/// the exact identity was required.
inline std::size_t expect_ef_identity(const std::vector<float>& x, const std::vector<float>& y,
                                      const std::vector<float>& r, bool always_exact) {
  EXPECT_EQ(x.size(), y.size());
  EXPECT_EQ(x.size(), r.size());
  std::size_t exact = 0, failures = 0;
  for (std::size_t i = 0; i < x.size() && failures < 10; ++i) {
    EXPECT_EQ(r[i], x[i] - y[i]) << "residual is not x - y at " << i;
    if (always_exact || sterbenz_applies(x[i], y[i])) {
      ++exact;
      if (y[i] + r[i] != x[i]) {
        ++failures;
        ADD_FAILURE() << "y + r != x at " << i << ": x=" << x[i] << " y=" << y[i] << " r=" << r[i];
      }
    } else {
      const double err = std::fabs(static_cast<double>(y[i]) + static_cast<double>(r[i]) - static_cast<double>(x[i]));
      const double half_ulp =
          std::fabs(static_cast<double>(std::nextafter(r[i], std::numeric_limits<float>::infinity())) -
                    static_cast<double>(r[i])) /
          2;
      if (err > half_ulp) {
        ++failures;
        ADD_FAILURE() << "|y + r - x| > ulp(r)/2 at " << i;
      }
    }
  }
  return exact;
}

}  // namespace gw::kernels::test
