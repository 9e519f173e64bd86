// PowerSGD CPU twins: orthonormality, exact rank-r recovery, step semantics.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "gradwire/kernels/powersgd.hpp"
#include "kernel_test_util.hpp"

namespace {

using namespace gw::kernels;
using gw::kernels::test::gaussian;

template <class T>
double max_orthonormality_error(const std::vector<T>& P, std::int64_t m, int r) {
  double worst = 0.0;
  for (int i = 0; i < r; ++i) {
    for (int j = 0; j < r; ++j) {
      double dot = 0.0;
      for (std::int64_t k = 0; k < m; ++k) {
        dot += static_cast<double>(P[static_cast<std::size_t>(k + i * m)]) * P[static_cast<std::size_t>(k + j * m)];
      }
      worst = std::max(worst, std::fabs(dot - (i == j ? 1.0 : 0.0)));
    }
  }
  return worst;
}

double rel_frobenius(const std::vector<float>& a, const std::vector<float>& b) {
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    num += d * d;
    den += static_cast<double>(b[i]) * b[i];
  }
  return std::sqrt(num / den);
}

TEST(PowersgdCpu, OrthogonalizedPIsOrthonormal) {
  struct Shape {
    std::int64_t m;
    int r;
  };
  for (const Shape s : {Shape{1, 1}, Shape{7, 4}, Shape{64, 4}, Shape{4097, 4}, Shape{1000, 8}}) {
    auto P = gaussian(static_cast<std::size_t>(s.m * s.r), static_cast<std::uint32_t>(s.m));
    powersgd_orthogonalize_cpu(P.data(), s.m, s.r);
    EXPECT_LT(max_orthonormality_error(P, s.m, s.r), 1e-5) << "m=" << s.m << " r=" << s.r;
  }
}

TEST(PowersgdCpu, GramSchmidtKeepsSpanAndOrder) {
  // Column 0 of the result is column 0 of the input, normalized; column 1 is
  // the component of input column 1 orthogonal to column 0.
  std::vector<double> P = {3.0, 4.0, 0.0, /* col 1 */ 1.0, 1.0, 1.0};
  powersgd_orthogonalize_cpu(P.data(), 3, 2);
  EXPECT_NEAR(P[0], 0.6, 1e-15);
  EXPECT_NEAR(P[1], 0.8, 1e-15);
  EXPECT_EQ(P[2], 0.0);
  // (1,1,1) - 1.4*(0.6,0.8,0) = (0.16,-0.12,1); norm sqrt(1.04)
  const double nrm = std::sqrt(1.04);
  EXPECT_NEAR(P[3], 0.16 / nrm, 1e-15);
  EXPECT_NEAR(P[4], -0.12 / nrm, 1e-15);
  EXPECT_NEAR(P[5], 1.0 / nrm, 1e-15);
}

TEST(PowersgdCpu, ZeroColumnBecomesZeroAndEpsilonIsApplied) {
  std::vector<float> P = {0.0f, 0.0f, /* col 1 */ 3.0f, 4.0f};
  powersgd_orthogonalize_cpu(P.data(), 2, 2);
  EXPECT_EQ(P, (std::vector<float>{0.0f, 0.0f, 0.6f, 0.8f}));
  std::vector<double> Q = {3.0, 4.0};
  powersgd_orthogonalize_cpu(Q.data(), 2, 1, 5.0);  // divide by |q| + eps = 10
  EXPECT_NEAR(Q[0], 0.3, 1e-15);
  EXPECT_NEAR(Q[1], 0.4, 1e-15);
}

TEST(PowersgdCpu, StepsMatchDenseDefinitions) {
  const std::int64_t m = 13, n = 9;
  const int r = 3;
  const auto Mf = gaussian(static_cast<std::size_t>(m * n), 5);
  const auto Qf = gaussian(static_cast<std::size_t>(n * r), 6);
  std::vector<float> P(static_cast<std::size_t>(m * r)), Q2(static_cast<std::size_t>(n * r)),
      out(static_cast<std::size_t>(m * n));
  powersgd_compute_p_cpu(Mf.data(), m, n, Qf.data(), r, P.data());
  for (std::int64_t i = 0; i < m; ++i) {
    for (int j = 0; j < r; ++j) {
      double s = 0.0;
      for (std::int64_t k = 0; k < n; ++k) s += double(Mf[i * n + k]) * Qf[k + j * n];
      EXPECT_NEAR(P[i + j * m], s, 1e-5);
    }
  }
  powersgd_orthogonalize_cpu(P.data(), m, r);
  powersgd_compute_q_cpu(Mf.data(), m, n, P.data(), r, Q2.data());
  for (std::int64_t k = 0; k < n; ++k) {
    for (int j = 0; j < r; ++j) {
      double s = 0.0;
      for (std::int64_t i = 0; i < m; ++i) s += double(Mf[i * n + k]) * P[i + j * m];
      EXPECT_NEAR(Q2[k + j * n], s, 1e-5);
    }
  }
  powersgd_decompress_cpu(P.data(), Q2.data(), m, n, r, out.data());
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t k = 0; k < n; ++k) {
      double s = 0.0;
      for (int j = 0; j < r; ++j) s += double(P[i + j * m]) * Q2[k + j * n];
      EXPECT_NEAR(out[i * n + k], s, 1e-5);
    }
  }
}

TEST(PowersgdCpu, RecoversExactlyRankRMatrixWithWarmStart) {
  const std::int64_t m = 96, n = 70;
  const int r = 4;
  const auto A = gaussian(static_cast<std::size_t>(m * r), 11);
  const auto B = gaussian(static_cast<std::size_t>(n * r), 12);
  std::vector<float> M(static_cast<std::size_t>(m * n));
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t k = 0; k < n; ++k) {
      double s = 0.0;
      for (int j = 0; j < r; ++j) s += double(A[i * r + j]) * B[k * r + j];
      M[i * n + k] = static_cast<float>(s);
    }
  }
  std::vector<float> P(static_cast<std::size_t>(m * r)), Q(static_cast<std::size_t>(n * r)), out(M.size());
  powersgd_init_q(Q.data(), n, r, 42);
  double previous = 0.0;
  for (int iter = 0; iter < 3; ++iter) {  // Q is carried over between calls
    powersgd_step_cpu(M.data(), m, n, r, P.data(), Q.data(), out.data());
    EXPECT_LT(max_orthonormality_error(P, m, r), 1e-5);
    previous = rel_frobenius(out, M);
  }
  EXPECT_LT(previous, 1e-5);
  // A rank-r approximation of a full-rank matrix cannot be exact.
  const auto G = gaussian(M.size(), 13);
  powersgd_step_cpu(G.data(), m, n, r, P.data(), Q.data(), out.data());
  EXPECT_GT(rel_frobenius(out, G), 0.5);
}

TEST(PowersgdCpu, WarmStartImprovesTheApproximation) {
  // Power iteration: with Q carried across calls the error on a fixed matrix
  // with a decaying spectrum does not grow and ends below the first call's.
  const std::int64_t m = 80, n = 60;
  const int r = 2;
  std::vector<float> M(static_cast<std::size_t>(m * n));
  const auto U = gaussian(static_cast<std::size_t>(m * 8), 21);
  const auto V = gaussian(static_cast<std::size_t>(n * 8), 22);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t k = 0; k < n; ++k) {
      double s = 0.0;
      for (int j = 0; j < 8; ++j) s += std::pow(0.5, j) * U[i * 8 + j] * V[k * 8 + j];
      M[i * n + k] = static_cast<float>(s);
    }
  }
  std::vector<float> P(static_cast<std::size_t>(m * r)), Q(static_cast<std::size_t>(n * r)), out(M.size());
  powersgd_init_q(Q.data(), n, r, 3);
  powersgd_step_cpu(M.data(), m, n, r, P.data(), Q.data(), out.data());
  const double first = rel_frobenius(out, M);
  double last = first;
  for (int iter = 0; iter < 10; ++iter) {
    powersgd_step_cpu(M.data(), m, n, r, P.data(), Q.data(), out.data());
    const double e = rel_frobenius(out, M);
    EXPECT_LE(e, last * (1.0 + 1e-6));
    last = e;
  }
  EXPECT_LT(last, first);
}

TEST(PowersgdCpu, InitQIsDeterministicAndNormal) {
  std::vector<float> a(10001), b(10001), c(10001);
  powersgd_init_q(a.data(), 10001, 1, 9);
  powersgd_init_q(b.data(), 10001, 1, 9);
  powersgd_init_q(c.data(), 10001, 1, 10);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  double mean = 0.0, var = 0.0;
  for (const float v : a) mean += v;
  mean /= static_cast<double>(a.size());
  for (const float v : a) var += (v - mean) * (v - mean);
  var /= static_cast<double>(a.size());
  EXPECT_NEAR(mean, 0.0, 0.05);
  EXPECT_NEAR(var, 1.0, 0.05);
}

TEST(PowersgdCpu, RankClampAndSizeChecks) {
  EXPECT_EQ(powersgd_effective_rank(1, 7, 4), 1);
  EXPECT_EQ(powersgd_effective_rank(100, 3, 4), 3);
  EXPECT_EQ(powersgd_effective_rank(100, 300, 4), 4);
  EXPECT_EQ(powersgd_effective_rank(0, 3, 4), 0);
  EXPECT_TRUE(powersgd_worth_compressing(64, 147, 4));  // ResNet-50 conv1
  EXPECT_FALSE(powersgd_worth_compressing(8, 8, 4));    // (8+8)*4*2 >= 64
  std::vector<float> M(6), Q(12), P(8);
  EXPECT_THROW(powersgd_compute_p_cpu(M.data(), 2, 3, Q.data(), 4, P.data()), std::invalid_argument);
  EXPECT_THROW(powersgd_check_sizes(1 << 16, 1 << 16, 1), std::invalid_argument);
  EXPECT_EQ(powersgd_workspace_bytes(100, 4), 0u);
  EXPECT_EQ(powersgd_workspace_bytes(1 << 20, 4),
            static_cast<std::size_t>(powersgd_ortho_blocks(1 << 20)) * 4 * sizeof(double));
}

}  // namespace

#include "gradwire/kernels/codec.hpp"

namespace {

TEST(PowersgdCpu, CodecShapeIsTheMostSquareFactorization) {
  using Shape = std::pair<std::size_t, std::size_t>;
  EXPECT_EQ(powersgd_matrix_shape(4097), (Shape{17, 241}));
  EXPECT_EQ(powersgd_matrix_shape(1 << 20), (Shape{1024, 1024}));
  EXPECT_EQ(powersgd_matrix_shape(7), (Shape{1, 7}));
  EXPECT_EQ(powersgd_matrix_shape(1), (Shape{1, 1}));
  EXPECT_EQ(powersgd_matrix_shape(12), (Shape{3, 4}));
  EXPECT_EQ(powersgd_matrix_shape(12, 2, 6), (Shape{2, 6}));
  EXPECT_THROW(powersgd_matrix_shape(13, 2, 6), std::invalid_argument);
  EXPECT_THROW(powersgd_matrix_shape(12, 2, 0), std::invalid_argument);
  EXPECT_THROW(powersgd_matrix_shape(0), std::invalid_argument);
}

TEST(PowersgdCpu, CodecRunsTheStepsWithWarmStart) {
  const std::int64_t m = 24, n = 40;
  const int r = 3;
  const auto M = gaussian(static_cast<std::size_t>(m * n), 71);
  gw::kernels::CodecConfig cfg;
  cfg.rank = r;
  cfg.rows = static_cast<std::size_t>(m);
  cfg.cols = static_cast<std::size_t>(n);
  cfg.seed = 5;
  auto codec = gw::kernels::make_cpu_codec("powersgd", M.size(), cfg);
  EXPECT_EQ(codec->wire_bytes(), static_cast<std::size_t>((m + n) * r) * 4);
  codec->set_input(M.data());
  std::vector<float> P(static_cast<std::size_t>(m * r)), Q(static_cast<std::size_t>(n * r)), out(M.size());
  powersgd_init_q(Q.data(), n, r, cfg.seed);
  for (int iter = 0; iter < 3; ++iter) {  // Q carried over by the codec too
    codec->encode();
    codec->decode();
    powersgd_step_cpu(M.data(), m, n, r, P.data(), Q.data(), out.data());
    EXPECT_EQ(codec->decoded(), out) << "iteration " << iter;
  }
  cfg.rank = 0;
  EXPECT_THROW(gw::kernels::make_cpu_codec("powersgd", M.size(), cfg), std::invalid_argument);
}

}  // namespace
