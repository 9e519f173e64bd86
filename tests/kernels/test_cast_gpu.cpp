// fp16/bf16 casts on the GPU equal their CPU twins bit for bit.
#include "gradwire/kernels/cast_cuda.hpp"
#include "kernel_test_util.hpp"
#include "kernel_test_util_gpu.hpp"

namespace gw::kernels {
namespace {

void check_cast(CastKind kind, float prescale) {
  for (std::size_t n : test::awkward_sizes()) {
    SCOPED_TRACE("n=" + std::to_string(n));
    // Wide range so that fp16 overflow, subnormals and ties all occur.
    auto x = test::random_gradient(n, static_cast<std::uint32_t>(n) * 3 + 1, 3000.0f);
    for (std::size_t i = 0; i < n; i += 97) x[i] *= 1e-6f;
    for (std::size_t i = 5; i < n; i += 1009) x[i] = 1e5f;
    test::DeviceArray<float> dx(n), dy(n), dr(n);
    test::DeviceArray<std::uint16_t> dh(n);
    dx.upload(x);
    std::vector<std::uint16_t> h(n);
    std::vector<float> y(n), r(n);
    cast_encode_ef_cpu(kind, x.data(), n, prescale, h.data(), r.data());
    cast_decode_cpu(kind, h.data(), n, y.data());

    dh.poison();
    GW_CUDA_OK(cast_encode_cuda(kind, dx.get(), n, prescale, dh.get(), nullptr));
    GW_CUDA_OK(cudaDeviceSynchronize());
    EXPECT_TRUE(test::same_bits(dh.download(), h));

    for (const StoreHint hint : test::kStoreHints) {
      SCOPED_TRACE(test::hint_name(hint));
      dy.poison();
      GW_CUDA_OK(cast_decode_cuda(kind, dh.get(), n, dy.get(), nullptr, hint));
      GW_CUDA_OK(cudaDeviceSynchronize());
      EXPECT_TRUE(test::same_bits(dy.download(), y));
    }

    dh.poison();
    dr.poison();
    GW_CUDA_OK(cast_encode_ef_cuda(kind, dx.get(), n, prescale, dh.get(), dr.get(), nullptr));
    GW_CUDA_OK(cudaDeviceSynchronize());
    EXPECT_TRUE(test::same_bits(dh.download(), h));
    EXPECT_TRUE(test::same_bits(dr.download(), r));
  }
}

TEST(CastGpu, Fp16EqualsCpuTwin) {
  GW_SKIP_WITHOUT_GPU();
  check_cast(CastKind::fp16, 1.0f);
}
TEST(CastGpu, Bf16EqualsCpuTwin) {
  GW_SKIP_WITHOUT_GPU();
  check_cast(CastKind::bf16, 1.0f);
}
TEST(CastGpu, PrescaledEqualsCpuTwin) {
  GW_SKIP_WITHOUT_GPU();
  check_cast(CastKind::fp16, 1.0f / 12.0f);
  check_cast(CastKind::bf16, 1.0f / 12.0f);
}

TEST(CastGpu, RejectsMisalignedPointersAndAcceptsEmpty) {
  GW_SKIP_WITHOUT_GPU();
  test::DeviceArray<float> dx(64);
  test::DeviceArray<std::uint16_t> dh(64);
  EXPECT_EQ(cast_encode_cuda(CastKind::fp16, dx.get() + 1, 16, 1.0f, dh.get(), nullptr), cudaErrorMisalignedAddress);
  EXPECT_EQ(cast_encode_cuda(CastKind::fp16, dx.get(), 0, 1.0f, dh.get(), nullptr), cudaSuccess);
}

}  // namespace
}  // namespace gw::kernels
