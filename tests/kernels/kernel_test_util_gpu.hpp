// Helpers for the GPU kernel tests: skip without a device, device arrays that
// are poisoned (all bytes 0xFF, i.e. NaN for floats) before every run, the
// awkward sizes of the issue, and bitwise comparison against the CPU twin.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "gradwire/cuda/device_buffer.hpp"
#include "gradwire/kernels/codec_cuda.hpp"
#include "gradwire/kernels/store_hint.hpp"

/// Skips the test unless a CUDA device is usable (any error = no GPU).
#define GW_SKIP_WITHOUT_GPU()                                                   \
  do {                                                                          \
    std::string gw_why_;                                                        \
    if (!gw::kernels::cuda_device_available(&gw_why_)) GTEST_SKIP() << gw_why_; \
  } while (0)

#define GW_CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call

namespace gw::kernels::test {

/// Both store forms of the decoders: each must equal the CPU twin.
inline constexpr StoreHint kStoreHints[] = {StoreHint::plain, StoreHint::streaming};
inline std::string hint_name(StoreHint h) { return h == StoreHint::streaming ? "streaming stores" : "plain stores"; }

/// 1, 7, 4097, 2^20 + 3 and 2^26 elements.
inline std::vector<std::size_t> awkward_sizes() {
  return {1, 7, 4097, (std::size_t{1} << 20) + 3, std::size_t{1} << 26};
}

/// A device array (owned by the project's one buffer, gw::cuda::DeviceBuffer:
/// an allocation failure throws, which fails the test) with the tests' uploads,
/// downloads and poisoning.
template <typename T>
class DeviceArray {
 public:
  explicit DeviceArray(std::size_t n) : buf_(n) {}
  T* get() const { return buf_.get(); }
  std::size_t size() const { return buf_.size(); }
  void upload(const std::vector<T>& h) {
    EXPECT_EQ(h.size(), size());
    EXPECT_EQ(cudaMemcpy(get(), h.data(), size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  /// Fills with 0xFF bytes so any element a kernel fails to write is visible.
  void poison() { EXPECT_EQ(cudaMemset(get(), 0xFF, (size() == 0 ? 1 : size()) * sizeof(T)), cudaSuccess); }
  std::vector<T> download() const {
    std::vector<T> h(size());
    EXPECT_EQ(cudaMemcpy(h.data(), get(), size() * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return h;
  }

 private:
  gw::cuda::DeviceBuffer<T> buf_;
};

/// Bitwise equality of two arrays; reports the first few differing elements.
template <typename T>
::testing::AssertionResult same_bits(const std::vector<T>& gpu, const std::vector<T>& cpu) {
  if (gpu.size() != cpu.size()) {
    return ::testing::AssertionFailure() << "sizes differ: " << gpu.size() << " vs " << cpu.size();
  }
  std::size_t bad = 0;
  auto failure = ::testing::AssertionFailure();
  for (std::size_t i = 0; i < gpu.size(); ++i) {
    if (std::memcmp(&gpu[i], &cpu[i], sizeof(T)) != 0) {
      if (bad < 5) failure << "[" << i << "] gpu=" << +gpu[i] << " cpu=" << +cpu[i] << "; ";
      ++bad;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return failure << bad << " of " << gpu.size() << " elements differ";
}

}  // namespace gw::kernels::test
