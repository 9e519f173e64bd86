#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>

#include "gradwire/model/collectives.hpp"
#include "gradwire/model/fit.hpp"

namespace {

// Synthetic alpha-beta law with multiplicative noise (seeded).
std::vector<gw::CurvePoint> alpha_beta_points(double alpha, double beta, double noise, unsigned seed,
                                              int repeats_per_size) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n01(0.0, 1.0);
  std::vector<gw::CurvePoint> pts;
  for (int e = 8; e <= 32; ++e) {
    const double x = std::ldexp(1.0, e);
    for (int r = 0; r < repeats_per_size; ++r) {
      pts.push_back({x, (alpha + x / beta) * (1.0 + noise * n01(rng)), 0, 1});
    }
  }
  return pts;
}

}  // namespace

TEST(Fit, SummarizeMedianAndSpread) {
  auto s = gw::fit::summarize({3.0, 1.0, 2.0, 10.0});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.spread, 9.0 / 2.5);
  EXPECT_EQ(s.repeats, 4);
  EXPECT_DOUBLE_EQ(gw::fit::summarize({4.0}).spread, 0.0);
  EXPECT_THROW(gw::fit::summarize({}), std::invalid_argument);
  EXPECT_THROW(gw::fit::summarize({1.0, NAN}), std::invalid_argument);
}

TEST(Fit, AlphaBetaRecoversKnownLawWithNoise) {
  for (unsigned seed : {1u, 2u, 3u}) {
    SCOPED_TRACE(seed);
    const double alpha = 18e-6, beta = 1.6e11;  // 8-GPU NVLink all-reduce-like
    auto fit = gw::fit::fit_alpha_beta(alpha_beta_points(alpha, beta, 0.03, seed, 5));
    EXPECT_NEAR(fit.alpha, alpha, 0.02 * alpha);
    EXPECT_NEAR(fit.beta, beta, 0.02 * beta);
    EXPECT_GT(fit.max_rel_residual, 0.03);  // residuals are kept, not hidden
    EXPECT_LT(fit.max_rel_residual, 0.25);
  }
  // Exact data: exact fit.
  auto exact = gw::fit::fit_alpha_beta(alpha_beta_points(5e-6, 2.5e10, 0.0, 0, 1));
  EXPECT_NEAR(exact.alpha, 5e-6, 1e-12);
  EXPECT_NEAR(exact.beta, 2.5e10, 2.5e10 * 1e-9);
  EXPECT_LT(exact.max_rel_residual, 1e-9);
}

TEST(Fit, AlphaBetaPredictsHeldOutSizes) {
  const double alpha = 30e-6, beta = 4e10;
  auto fit = gw::fit::fit_alpha_beta(alpha_beta_points(alpha, beta, 0.02, 7, 3));
  for (double x : {3000.0, 7.7e5, 1.3e7, 3.3e8, 6.1e9}) {
    const double truth = alpha + x / beta;
    EXPECT_NEAR(fit.evaluate(x), truth, 0.05 * truth) << x;
  }
}

TEST(Fit, AlphaBetaIsRelativeNotAbsolute) {
  // An absolute least-squares fit would ignore the microsecond latency next to
  // second-long transfers; the relative fit must get it.
  std::vector<gw::CurvePoint> pts = {{1e3, 1.0e-5 + 1e3 / 1e10, 0, 1},
                                     {1e4, 1.0e-5 + 1e4 / 1e10, 0, 1},
                                     {1e10, 1.0e-5 + 1.0, 0, 1},
                                     {2e10, 1.0e-5 + 2.0, 0, 1}};
  auto fit = gw::fit::fit_alpha_beta(pts);
  EXPECT_NEAR(fit.alpha, 1e-5, 1e-8);
}

TEST(Fit, AlphaBetaRejectsDegenerateInput) {
  EXPECT_THROW(gw::fit::fit_alpha_beta({{1024, 1e-5, 0, 1}}), std::invalid_argument);
  EXPECT_THROW(gw::fit::fit_alpha_beta({{1024, 1e-5, 0, 1}, {1 << 20, 1e-5, 0, 1}}), std::invalid_argument);
  EXPECT_THROW(gw::fit::fit_alpha_beta({{1024, 2e-5, 0, 1}, {1 << 20, 1e-5, 0, 1}}), std::invalid_argument);
  EXPECT_THROW(gw::fit::fit_alpha_beta({{-1, 2e-5, 0, 1}, {1 << 20, 1e-5, 0, 1}}), std::invalid_argument);
  // Negative latency (noise) is clamped to 0.
  auto f = gw::fit::fit_alpha_beta({{1e6, 0.9e-3, 0, 1}, {2e6, 2.0e-3, 0, 1}});
  EXPECT_EQ(f.alpha, 0.0);
  EXPECT_GT(f.beta, 0.0);
}

TEST(Fit, PiecewiseReproducesKnotsAndInterpolates) {
  std::vector<gw::CurvePoint> pts;
  for (int e = 10; e <= 24; ++e) {
    const double x = std::ldexp(1.0, e);
    pts.push_back({x, 5e-6 + x * 8 / 2e12, 0.01, 10});
  }
  auto fit = gw::fit::fit_piecewise_log(pts);
  ASSERT_EQ(fit.knots.size(), pts.size());
  for (const auto& p : pts) EXPECT_DOUBLE_EQ(fit.evaluate(p.x), p.seconds);
  EXPECT_EQ(fit.max_rel_residual, 0.0);
  // Between knots: within the bracket, and exact for a power law.
  const double mid = std::ldexp(1.0, 15) * 1.5;
  EXPECT_GT(fit.evaluate(mid), fit.evaluate(std::ldexp(1.0, 15)));
  EXPECT_LT(fit.evaluate(mid), fit.evaluate(std::ldexp(1.0, 16)));
  gw::PiecewiseLogFit lin{{{100, 1.0, 0, 0}, {400, 4.0, 0, 0}}, 0};
  EXPECT_NEAR(lin.evaluate(200), 2.0, 1e-12);  // time proportional to x: exact
  gw::PiecewiseLogFit flat{{{100, 3.0, 0, 0}, {400, 3.0, 0, 0}}, 0};
  EXPECT_DOUBLE_EQ(flat.evaluate(250), 3.0);
  // Below the first knot: constant; beyond the last: last segment's time per element.
  EXPECT_DOUBLE_EQ(fit.evaluate(1.0), pts.front().seconds);
  const double x_last = pts.back().x;
  EXPECT_NEAR(fit.evaluate(4 * x_last), 5e-6 + 4 * x_last * 8 / 2e12, 1e-12);
  EXPECT_THROW(gw::PiecewiseLogFit{}.evaluate(1.0), std::logic_error);
}

TEST(Fit, PiecewiseHeldOutPredictionAndThinning) {
  // A launch-latency + bandwidth + cache-knee curve, measured every 2x with noise.
  std::mt19937_64 rng(42);
  std::normal_distribution<double> n01(0.0, 1.0);
  auto law = [](double x) {
    const double bytes = 6 * x;
    const double bw = 2.2e12 + 0.8e12 / (1 + bytes / 50e6);  // L2-resident -> HBM
    return 4e-6 + bytes / bw;
  };
  std::vector<gw::CurvePoint> pts;
  for (int e = 10; e <= 28; ++e) {
    const double x = std::ldexp(1.0, e);
    pts.push_back({x, law(x) * (1 + 0.005 * n01(rng)), 0.01, 10});
  }
  // Leave-one-out doubles the gap around the left-out size (4x instead of 2x),
  // so its bound is looser than the 5% asked of sizes between measured ones.
  const double loo = gw::fit::held_out_max_rel_error(pts);
  EXPECT_GT(loo, 0.0);
  EXPECT_LT(loo, 0.10);
  auto fit = gw::fit::fit_piecewise_log(pts);
  for (int e = 10; e < 28; ++e) {
    const double x = std::ldexp(1.0, e) * 1.41421356;  // sizes never measured
    EXPECT_NEAR(fit.evaluate(x), law(x), 0.05 * law(x)) << x;
  }
  auto thin = gw::fit::fit_piecewise_log(pts, 0.02);
  EXPECT_LT(thin.knots.size(), pts.size());
  EXPECT_GE(thin.knots.size(), 2u);
  EXPECT_LE(thin.max_rel_residual, 0.02);
  EXPECT_EQ(thin.knots.front().x, pts.front().x);
  EXPECT_EQ(thin.knots.back().x, pts.back().x);
}

TEST(Fit, NormalizeMergesDuplicatesAndSorts) {
  auto n = gw::fit::normalize_points({{8, 3, 0.1, 2}, {2, 1, 0, 1}, {8, 5, 0.2, 2}, {8, 4, 0, 2}});
  ASSERT_EQ(n.size(), 2u);
  EXPECT_EQ(n[0].x, 2);
  EXPECT_EQ(n[1].seconds, 4);
  EXPECT_EQ(n[1].spread, 0.2);
  EXPECT_EQ(n[1].repeats, 6);
}

TEST(Fit, BusBandwidthFactors) {
  EXPECT_DOUBLE_EQ(gw::bus_bandwidth_factor(gw::parse_collective_op("allreduce"), 8), 1.75);
  EXPECT_DOUBLE_EQ(gw::bus_bandwidth_factor(gw::CollectiveOp::AllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(gw::bus_bandwidth_factor(gw::CollectiveOp::ReduceScatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(gw::bus_bandwidth_factor(gw::CollectiveOp::AllToAll, 2), 0.5);
  EXPECT_DOUBLE_EQ(gw::bus_bandwidth_factor(gw::CollectiveOp::Broadcast, 4), 1.0);
  EXPECT_THROW(gw::bus_bandwidth_factor(gw::CollectiveOp::AllReduce, 0), std::invalid_argument);
  EXPECT_THROW(gw::parse_collective_op("gossip"), std::invalid_argument);
}

// Hardening round 2 (issue 11): a codec's predicted time never falls as the
// size grows. Noisy launch-bound measurements (the H200 profile has drops of
// up to 30% between neighbouring sizes) made knots that did on f2c0d4f, where
// the fit went through every point.
TEST(Fit, PiecewiseKnotsNeverDecrease) {
  const std::vector<gw::CurvePoint> noisy = {{1024, 8.0e-6, 0.1, 5}, {2048, 7.0e-6, 0.1, 5},  {4096, 7.5e-6, 0.1, 5},
                                             {8192, 6.5e-6, 0.1, 5}, {16384, 9.0e-6, 0.1, 5}, {32768, 1.2e-5, 0.1, 5}};
  for (double tol : {0.0, 0.05}) {
    const auto fit = gw::fit::fit_piecewise_log(noisy, tol);
    for (std::size_t i = 1; i < fit.knots.size(); ++i) {
      EXPECT_GE(fit.knots[i].seconds, fit.knots[i - 1].seconds) << "knot " << i << ", tolerance " << tol;
    }
    double last = 0;
    for (double x = 512; x <= 65536; x *= 1.19) {
      const double t = fit.evaluate(x);
      EXPECT_GE(t, last) << x;
      last = t;
    }
  }
  // The first four sizes pool to their geometric mean; the rise after is kept.
  const auto fit = gw::fit::fit_piecewise_log(noisy);
  ASSERT_EQ(fit.knots.size(), noisy.size());
  const double pooled = std::pow(8.0e-6 * 7.0e-6 * 7.5e-6 * 6.5e-6, 0.25);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(fit.knots[i].seconds, pooled, 1e-18);
  EXPECT_DOUBLE_EQ(fit.knots[4].seconds, 9.0e-6);
  EXPECT_DOUBLE_EQ(fit.knots[5].seconds, 1.2e-5);
  EXPECT_GT(fit.max_rel_residual, 0.0);
}
