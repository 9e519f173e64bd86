// Seeded gradient-like input (standard normal) for the calibration backends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace gw::calibrate {

inline std::vector<float> random_gradient(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

}  // namespace gw::calibrate
