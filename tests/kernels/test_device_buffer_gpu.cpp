// The project's one owning device allocation, gw::cuda::DeviceBuffer<T>:
// ensure() keeps a large enough buffer and regrows a small one, moves hand
// the allocation over once, an empty buffer still has a valid pointer.
#include <cuda_runtime_api.h>

#include <numeric>
#include <utility>
#include <vector>

#include "gradwire/cuda/device_buffer.hpp"
#include "kernel_test_util_gpu.hpp"

namespace {

using gw::cuda::DeviceBuffer;

std::vector<float> round_trip(const DeviceBuffer<float>& b, const std::vector<float>& h) {
  std::vector<float> back(h.size());
  EXPECT_EQ(cudaMemcpy(b.get(), h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(back.data(), b.get(), h.size() * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  return back;
}

TEST(DeviceBufferGpu, EnsureKeepsALargeEnoughBufferAndRegrowsASmallOne) {
  GW_SKIP_WITHOUT_GPU();
  DeviceBuffer<float> b;
  EXPECT_EQ(b.get(), nullptr);
  EXPECT_EQ(b.size(), 0U);
  b.ensure(0, 100);
  ASSERT_NE(b.get(), nullptr);
  EXPECT_EQ(b.size(), 100U);
  EXPECT_EQ(b.bytes(), 400U);
  float* const first = b.get();
  b.ensure(0, 50);  // large enough: the same allocation
  EXPECT_EQ(b.get(), first);
  EXPECT_EQ(b.size(), 100U);
  b.ensure(0, 1000);  // too small: a new one of the new size, usable to its end
  EXPECT_EQ(b.size(), 1000U);
  std::vector<float> h(1000);
  std::iota(h.begin(), h.end(), 1.0f);
  EXPECT_EQ(round_trip(b, h), h);
  int current = -1;
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, 0);
}

TEST(DeviceBufferGpu, MovesHandTheAllocationOver) {
  GW_SKIP_WITHOUT_GPU();
  DeviceBuffer<float> a(10);
  float* const p = a.get();
  ASSERT_NE(p, nullptr);
  DeviceBuffer<float> b(std::move(a));
  EXPECT_EQ(a.get(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state is the point
  EXPECT_EQ(a.size(), 0U);
  EXPECT_EQ(b.get(), p);
  EXPECT_EQ(b.size(), 10U);
  a = std::move(b);
  EXPECT_EQ(a.get(), p);
  EXPECT_EQ(b.get(), nullptr);  // NOLINT(bugprone-use-after-move)
  a.release();
  EXPECT_EQ(a.get(), nullptr);
  EXPECT_EQ(a.size(), 0U);
}

TEST(DeviceBufferGpu, AnEmptyBufferHasAValidPointer) {
  GW_SKIP_WITHOUT_GPU();
  const DeviceBuffer<float> z(0);
  EXPECT_NE(z.get(), nullptr);
  EXPECT_EQ(z.size(), 0U);
  EXPECT_EQ(cudaMemset(z.get(), 0, 1), cudaSuccess);  // the 1 byte it holds
}

}  // namespace
