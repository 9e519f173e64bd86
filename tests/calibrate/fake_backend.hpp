// The part of a calibration backend the pipeline's fake-backend tests
// (test_noise.cpp, test_interference.cpp) share: a device named "fake" with
// 16 GiB, codecs that always match their twins, an fp32 GEMM at 1e11 FLOP/s
// and a copy at 1e10 B/s. Each test derives the codec and collective times
// it plants.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "gradwire/calibrate/calibrate.hpp"

namespace gw::test {

class FakeBackendBase : public gw::calibrate::Backend {
 public:
  gw::calibrate::DeviceInfo info() override {
    gw::calibrate::DeviceInfo d;
    d.device = "fake";
    d.sm_count = 1;
    d.memory_bytes = 16.0 * (1ull << 30);
    return d;
  }
  void verify_codec(const std::string&, std::size_t) override {}
  std::vector<double> time_gemm(const std::string& precision, int m, int n, int k, int, int repeats) override {
    if (precision != "fp32") throw std::runtime_error("only fp32 here");
    return std::vector<double>(static_cast<std::size_t>(repeats), 2.0 * m * n * k / 1e11);
  }
  std::vector<double> time_copy(double bytes, int, int repeats) override {
    return std::vector<double>(static_cast<std::size_t>(repeats), 2 * bytes / 1e10);
  }
};

}  // namespace gw::test
