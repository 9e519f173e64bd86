// Sign (EF-SignSGD) and majority vote on the GPU equal their CPU twins bit
// for bit: the per-chunk sum runs in the canonical order on both sides.
#include "gradwire/kernels/sign_cuda.hpp"
#include "kernel_test_util.hpp"
#include "kernel_test_util_gpu.hpp"

namespace gw::kernels {
namespace {

void check_sign(std::size_t chunk) {
  for (std::size_t n : test::awkward_sizes()) {
    SCOPED_TRACE("n=" + std::to_string(n) + " chunk=" + std::to_string(chunk));
    const auto x = test::random_gradient(n, static_cast<std::uint32_t>(n) + 29);
    const std::size_t nw = sign_word_count(n), ns = sign_scale_count(n, chunk);
    std::vector<std::uint32_t> w(nw);
    std::vector<float> s(ns), y(n), r(n);
    sign_encode_ef_cpu(x.data(), n, chunk, w.data(), s.data(), r.data());
    sign_decode_cpu(w.data(), s.data(), n, chunk, y.data());

    test::DeviceArray<float> dx(n), ds(ns), dy(n), dr(n);
    test::DeviceArray<std::uint32_t> dw(nw);
    dx.upload(x);
    dw.poison();
    ds.poison();
    GW_CUDA_OK(sign_encode_cuda(dx.get(), n, chunk, dw.get(), ds.get(), nullptr));
    GW_CUDA_OK(cudaDeviceSynchronize());
    EXPECT_TRUE(test::same_bits(dw.download(), w));
    EXPECT_TRUE(test::same_bits(ds.download(), s));

    for (const StoreHint hint : test::kStoreHints) {
      SCOPED_TRACE(test::hint_name(hint));
      dy.poison();
      GW_CUDA_OK(sign_decode_cuda(dw.get(), ds.get(), n, chunk, dy.get(), nullptr, hint));
      GW_CUDA_OK(cudaDeviceSynchronize());
      EXPECT_TRUE(test::same_bits(dy.download(), y));
    }

    dw.poison();
    ds.poison();
    dr.poison();
    GW_CUDA_OK(sign_encode_ef_cuda(dx.get(), n, chunk, dw.get(), ds.get(), dr.get(), nullptr));
    GW_CUDA_OK(cudaDeviceSynchronize());
    EXPECT_TRUE(test::same_bits(dw.download(), w));
    EXPECT_TRUE(test::same_bits(ds.download(), s));
    EXPECT_TRUE(test::same_bits(dr.download(), r));
  }
}

TEST(SignGpu, EqualsCpuTwin) {
  GW_SKIP_WITHOUT_GPU();
  check_sign(1024);
}
TEST(SignGpu, OtherChunksEqualCpuTwin) {
  GW_SKIP_WITHOUT_GPU();
  check_sign(32);
  check_sign(8192);
}

TEST(SignGpu, MajorityVoteEqualsCpuTwin) {
  GW_SKIP_WITHOUT_GPU();
  for (int workers : {1, 4, 7}) {
    for (std::size_t n : test::awkward_sizes()) {
      if (n > (std::size_t{1} << 24) && workers != 7) continue;  // the largest size once
      SCOPED_TRACE("n=" + std::to_string(n) + " workers=" + std::to_string(workers));
      const std::size_t chunk = 512;
      const std::size_t nw = sign_word_count(n), ns = sign_scale_count(n, chunk);
      const auto wu = static_cast<std::size_t>(workers);
      std::vector<std::uint32_t> w(nw * wu);
      std::vector<float> s(ns * wu), y(n);
      for (std::size_t k = 0; k < wu; ++k) {
        const auto x = test::random_gradient(n, static_cast<std::uint32_t>(n + 100 * k));
        sign_encode_cpu(x.data(), n, chunk, w.data() + k * nw, s.data() + k * ns);
      }
      majority_vote_decode_cpu(w.data(), s.data(), workers, n, chunk, y.data());
      test::DeviceArray<std::uint32_t> dw(w.size());
      test::DeviceArray<float> ds(s.size()), dy(n);
      dw.upload(w);
      ds.upload(s);
      for (const StoreHint hint : test::kStoreHints) {
        SCOPED_TRACE(test::hint_name(hint));
        dy.poison();
        GW_CUDA_OK(majority_vote_decode_cuda(dw.get(), ds.get(), workers, n, chunk, dy.get(), nullptr, hint));
        GW_CUDA_OK(cudaDeviceSynchronize());
        EXPECT_TRUE(test::same_bits(dy.download(), y));
      }
    }
  }
}

}  // namespace
}  // namespace gw::kernels
