// PowerSGD steps on the GPU against a double-precision CPU reference
// (relative Frobenius error <= 1e-4) and the orthonormality of P (1e-5).
// Skips without a GPU.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gradwire/kernels/powersgd.hpp"
#include "gradwire/kernels/powersgd_cuda.hpp"
#include "kernel_test_util.hpp"
#include "kernel_test_util_gpu.hpp"

namespace {

using namespace gw::kernels;

constexpr double kTolerance = 1e-4;  // relative Frobenius error vs the double reference

using DevF = test::DeviceArray<float>;

double rel_error(const std::vector<float>& got, const std::vector<double>& ref) {
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double d = got[i] - ref[i];
    num += d * d;
    den += ref[i] * ref[i];
  }
  return den == 0.0 ? std::sqrt(num) : std::sqrt(num / den);
}

double orthonormality_error(const std::vector<float>& P, std::int64_t m, int r) {
  double worst = 0.0;
  for (int i = 0; i < r; ++i) {
    for (int j = 0; j < r; ++j) {
      double dot = 0.0;
      for (std::int64_t k = 0; k < m; ++k) dot += double(P[k + i * m]) * P[k + j * m];
      worst = std::max(worst, std::fabs(dot - (i == j ? 1.0 : 0.0)));
    }
  }
  return worst;
}

std::vector<double> widen(const std::vector<float>& v) { return {v.begin(), v.end()}; }

// Two warm-started iterations of all four steps on the GPU and in double on
// the CPU from the same float inputs; compares P, Q and the decompression.
void check_shape(std::int64_t m, std::int64_t n, int rank, std::uint32_t seed) {
  const int r = powersgd_effective_rank(m, n, rank);
  SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n) + " r=" + std::to_string(r));
  const auto M = test::random_gradient(static_cast<std::size_t>(m * n), seed);
  std::vector<float> q0(static_cast<std::size_t>(n * r));
  powersgd_init_q(q0.data(), n, r, seed + 1);

  PowerSgdBlas blas;
  cudaStream_t stream = nullptr;
  GW_CUDA_OK(cudaStreamCreate(&stream));
  DevF dM(M.size()), dP(static_cast<std::size_t>(m * r)), dQ(q0.size()), dOut(M.size());
  const std::size_t ws_bytes = powersgd_workspace_bytes(m, r);
  test::DeviceArray<unsigned char> ws_buf(ws_bytes);
  void* ws = ws_bytes > 0 ? ws_buf.get() : nullptr;
  dM.upload(M);
  dQ.upload(q0);

  std::vector<double> Md = widen(M), Pd(static_cast<std::size_t>(m * r)), Qd = widen(q0), Od(M.size());
  for (int iter = 0; iter < 2; ++iter) {
    dP.poison();
    dOut.poison();
    GW_CUDA_OK(powersgd_compute_p_cuda(blas, dM.get(), m, n, dQ.get(), r, dP.get(), stream));
    GW_CUDA_OK(powersgd_orthogonalize_p_cuda(dP.get(), m, r, 0.0f, ws, ws_bytes, stream));
    GW_CUDA_OK(powersgd_compute_q_cuda(blas, dM.get(), m, n, dP.get(), r, dQ.get(), stream));
    GW_CUDA_OK(powersgd_decompress_cuda(blas, dP.get(), dQ.get(), m, n, r, dOut.get(), stream));
    GW_CUDA_OK(cudaStreamSynchronize(stream));
    powersgd_step_cpu(Md.data(), m, n, r, Pd.data(), Qd.data(), Od.data());
    const auto P = dP.download();
    EXPECT_LT(orthonormality_error(P, m, r), 1e-5) << "iteration " << iter;
    EXPECT_LT(rel_error(P, Pd), kTolerance) << "P, iteration " << iter;
    EXPECT_LT(rel_error(dQ.download(), Qd), kTolerance) << "Q, iteration " << iter;
    EXPECT_LT(rel_error(dOut.download(), Od), kTolerance) << "P Q^T, iteration " << iter;
  }
  cudaStreamDestroy(stream);
}

TEST(PowersgdGpu, MatchesDoubleReferenceOnAwkwardShapes) {
  GW_SKIP_WITHOUT_GPU();
  check_shape(1, 1, 4, 1);        // 1 element, rank clamps to 1
  check_shape(7, 1, 4, 2);        // 7 elements, a column
  check_shape(1, 7, 4, 3);        // a row
  check_shape(17, 241, 4, 4);     // 4097 elements
  check_shape(1031, 1017, 4, 5);  // ~2^20
  check_shape(64, 147, 4, 6);     // ResNet-50 conv1
  check_shape(2048, 4608, 4, 7);  // ResNet-50 layer4 3x3 conv
  check_shape(65539, 16, 4, 8);   // tall: multi-block Gram-Schmidt
  check_shape(8192, 8192, 4, 9);  // 2^26 elements
}

TEST(PowersgdGpu, RecoversRankRMatrix) {
  GW_SKIP_WITHOUT_GPU();
  const std::int64_t m = 300, n = 200;
  const int r = 4;
  const auto A = test::random_gradient(static_cast<std::size_t>(m * r), 31);
  const auto B = test::random_gradient(static_cast<std::size_t>(n * r), 32);
  std::vector<float> M(static_cast<std::size_t>(m * n));
  std::vector<double> Mref(M.size());
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t k = 0; k < n; ++k) {
      double s = 0.0;
      for (int j = 0; j < r; ++j) s += double(A[i * r + j]) * B[k * r + j];
      M[i * n + k] = static_cast<float>(s);
      Mref[i * n + k] = M[i * n + k];
    }
  }
  std::vector<float> q0(static_cast<std::size_t>(n * r));
  powersgd_init_q(q0.data(), n, r, 77);
  PowerSgdBlas blas;
  DevF dM(M.size()), dP(static_cast<std::size_t>(m * r)), dQ(q0.size()), dOut(M.size());
  dM.upload(M);
  dQ.upload(q0);
  for (int iter = 0; iter < 3; ++iter) {
    GW_CUDA_OK(powersgd_compute_p_cuda(blas, dM.get(), m, n, dQ.get(), r, dP.get(), nullptr));
    GW_CUDA_OK(powersgd_orthogonalize_p_cuda(dP.get(), m, r, 0.0f, nullptr, 0, nullptr));
    GW_CUDA_OK(powersgd_compute_q_cuda(blas, dM.get(), m, n, dP.get(), r, dQ.get(), nullptr));
    GW_CUDA_OK(powersgd_decompress_cuda(blas, dP.get(), dQ.get(), m, n, r, dOut.get(), nullptr));
  }
  GW_CUDA_OK(cudaDeviceSynchronize());
  EXPECT_LT(rel_error(dOut.download(), Mref), 1e-5);
}

TEST(PowersgdGpu, RejectsBadArguments) {
  GW_SKIP_WITHOUT_GPU();
  PowerSgdBlas blas;
  DevF d(64);
  EXPECT_EQ(powersgd_compute_p_cuda(blas, d.get(), 4, 4, d.get(), 5, d.get(), nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(powersgd_orthogonalize_p_cuda(d.get(), 20000, 4, 0.0f, nullptr, 0, nullptr), cudaErrorInvalidValue);
}

}  // namespace

#include "gradwire/kernels/codec.hpp"
#include "gradwire/kernels/codec_cuda.hpp"

namespace {

TEST(PowersgdGpu, CudaCodecMatchesCpuCodecWithinTolerance) {
  GW_SKIP_WITHOUT_GPU();
  CodecConfig cfg;
  cfg.rank = 4;
  cfg.rows = 301;
  cfg.cols = 997;
  const auto x = test::random_gradient(cfg.rows * cfg.cols, 67);
  auto cpu = make_cpu_codec("powersgd", x.size(), cfg);
  auto gpu = make_cuda_codec("powersgd", x.size(), cfg, nullptr);
  EXPECT_EQ(gpu->wire_bytes(), cpu->wire_bytes());
  cpu->set_input(x.data());
  gpu->set_input(x.data());
  for (int iter = 0; iter < 2; ++iter) {  // warm start on both sides
    cpu->encode();
    cpu->decode();
    gpu->encode();
    gpu->decode();
  }
  gpu->synchronize();
  EXPECT_LT(rel_error(gpu->decoded(), widen(cpu->decoded())), kTolerance);
}

}  // namespace
