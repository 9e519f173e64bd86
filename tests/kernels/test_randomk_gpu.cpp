// Random-K on the GPU equals its CPU twin bit for bit: same indices from
// (seed, step), same gathered values, same scatter and residual.
#include "gradwire/kernels/codec.hpp"
#include "gradwire/kernels/randomk_cuda.hpp"
#include "kernel_test_util.hpp"
#include "kernel_test_util_gpu.hpp"

namespace gw::kernels {
namespace {

TEST(RandomKGpu, EqualsCpuTwin) {
  GW_SKIP_WITHOUT_GPU();
  for (double ratio : {0.01, 0.5}) {
    for (std::size_t n : test::awkward_sizes()) {
      SCOPED_TRACE("n=" + std::to_string(n) + " ratio=" + std::to_string(ratio));
      const auto x = test::random_gradient(n, static_cast<std::uint32_t>(n) + 41);
      const RandomKParams p{sparse_count(n, ratio), 1234, 9};
      std::vector<float> v(p.k), y(n), r(n);
      randomk_encode_ef_cpu(x.data(), n, p, v.data(), r.data());
      randomk_decode_cpu(v.data(), n, p, y.data());

      test::DeviceArray<float> dx(n), dv(p.k), dy(n), dr(n);
      dx.upload(x);
      dv.poison();
      GW_CUDA_OK(randomk_encode_cuda(dx.get(), n, p, dv.get(), nullptr));
      GW_CUDA_OK(cudaDeviceSynchronize());
      EXPECT_TRUE(test::same_bits(dv.download(), v));

      for (const StoreHint hint : test::kStoreHints) {
        SCOPED_TRACE(test::hint_name(hint));
        dy.poison();
        GW_CUDA_OK(randomk_decode_cuda(dv.get(), n, p, dy.get(), nullptr, hint));
        GW_CUDA_OK(cudaDeviceSynchronize());
        EXPECT_TRUE(test::same_bits(dy.download(), y));
      }

      dv.poison();
      dr.poison();
      GW_CUDA_OK(randomk_encode_ef_cuda(dx.get(), n, p, dv.get(), dr.get(), nullptr));
      GW_CUDA_OK(cudaDeviceSynchronize());
      EXPECT_TRUE(test::same_bits(dv.download(), v));
      EXPECT_TRUE(test::same_bits(dr.download(), r));
    }
  }
}

}  // namespace
}  // namespace gw::kernels
