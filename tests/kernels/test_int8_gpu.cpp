// int8 per-chunk quantization on the GPU equals its CPU twin bit for bit
// (nearest and stochastic rounding, plain and fused error feedback).
#include "gradwire/kernels/int8_cuda.hpp"
#include "kernel_test_util.hpp"
#include "kernel_test_util_gpu.hpp"

namespace gw::kernels {
namespace {

void check_int8(const Int8Params& p) {
  for (std::size_t n : test::awkward_sizes()) {
    SCOPED_TRACE("n=" + std::to_string(n) + " chunk=" + std::to_string(p.chunk) +
                 " sr=" + std::to_string(p.stochastic_rounding));
    const auto x = test::random_gradient(n, static_cast<std::uint32_t>(n) + 17);
    const std::size_t ns = int8_scale_count(n, p.chunk);
    std::vector<std::int8_t> q(n);
    std::vector<float> s(ns), y(n), r(n);
    int8_encode_ef_cpu(x.data(), n, p, q.data(), s.data(), r.data());
    int8_decode_cpu(q.data(), s.data(), n, p.chunk, y.data());

    test::DeviceArray<float> dx(n), ds(ns), dy(n), dr(n);
    test::DeviceArray<std::int8_t> dq(n);
    dx.upload(x);
    dq.poison();
    ds.poison();
    GW_CUDA_OK(int8_encode_cuda(dx.get(), n, p, dq.get(), ds.get(), nullptr));
    GW_CUDA_OK(cudaDeviceSynchronize());
    EXPECT_TRUE(test::same_bits(dq.download(), q));
    EXPECT_TRUE(test::same_bits(ds.download(), s));

    for (const StoreHint hint : test::kStoreHints) {
      SCOPED_TRACE(test::hint_name(hint));
      dy.poison();
      GW_CUDA_OK(int8_decode_cuda(dq.get(), ds.get(), n, p.chunk, dy.get(), nullptr, hint));
      GW_CUDA_OK(cudaDeviceSynchronize());
      EXPECT_TRUE(test::same_bits(dy.download(), y));
    }

    dq.poison();
    ds.poison();
    dr.poison();
    GW_CUDA_OK(int8_encode_ef_cuda(dx.get(), n, p, dq.get(), ds.get(), dr.get(), nullptr));
    GW_CUDA_OK(cudaDeviceSynchronize());
    EXPECT_TRUE(test::same_bits(dq.download(), q));
    EXPECT_TRUE(test::same_bits(ds.download(), s));
    EXPECT_TRUE(test::same_bits(dr.download(), r));
  }
}

TEST(Int8Gpu, NearestEqualsCpuTwin) {
  GW_SKIP_WITHOUT_GPU();
  check_int8({1024, false, 0});
}
TEST(Int8Gpu, StochasticEqualsCpuTwin) {
  GW_SKIP_WITHOUT_GPU();
  check_int8({1024, true, 77});
}
TEST(Int8Gpu, SmallAndLongChunksEqualCpuTwin) {
  GW_SKIP_WITHOUT_GPU();
  check_int8({32, false, 0});
  check_int8({8192, true, 5});  // longer than the register-resident path
}
TEST(Int8Gpu, RejectsBadChunk) {
  GW_SKIP_WITHOUT_GPU();
  test::DeviceArray<float> dx(64), ds(2);
  test::DeviceArray<std::int8_t> dq(64);
  EXPECT_EQ(int8_encode_cuda(dx.get(), 64, {48, false, 0}, dq.get(), ds.get(), nullptr), cudaErrorInvalidValue);
}

}  // namespace
}  // namespace gw::kernels
