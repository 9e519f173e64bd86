#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

#include "gradwire/model/constant_fit.hpp"

namespace {

using gw::fit::Observation;

// Observations of y = x . truth (+ noise), x drawn in [0.5, 2], in `groups` groups.
std::vector<Observation> linear_data(const std::vector<double>& truth, int per_group, int groups, double noise,
                                     unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  std::normal_distribution<double> n01(0.0, 1.0);
  std::vector<Observation> obs;
  for (int g = 0; g < groups; ++g) {
    for (int i = 0; i < per_group; ++i) {
      Observation o;
      o.group = "case" + std::to_string(g);
      for (std::size_t j = 0; j < truth.size(); ++j) o.x.push_back(u(rng));
      o.y = gw::fit::predict(o, truth) + noise * n01(rng);
      obs.push_back(o);
    }
  }
  return obs;
}

double cost(const std::vector<Observation>& obs, const std::vector<double>& c) {
  double s = 0;
  for (const auto& o : obs) s += o.weight * std::pow(o.y - gw::fit::predict(o, c), 2);
  return s;
}

}  // namespace

TEST(ConstantFit, RecoversExactConstants) {
  const std::vector<double> truth{2.0, 0.5, 3.0};
  const auto fit = gw::fit::fit_constants(linear_data(truth, 10, 4, 0.0, 1), 3);
  ASSERT_EQ(fit.values.size(), 3u);
  for (std::size_t j = 0; j < 3; ++j) EXPECT_NEAR(fit.values[j], truth[j], 1e-9);
  EXPECT_NEAR(fit.rms, 0.0, 1e-9);
  EXPECT_EQ(fit.observations, 40u);
}

TEST(ConstantFit, OneConstantIsTheWeightedClosedForm) {
  // c = sum w x y / sum w x^2, here (1*1*2 + 3*2*3) / (1*1 + 3*4) = 20/13.
  std::vector<Observation> obs{{"a", 2.0, {1.0}, 1.0}, {"b", 3.0, {2.0}, 3.0}};
  const auto fit = gw::fit::fit_constants(obs, 1);
  EXPECT_NEAR(fit.values[0], 20.0 / 13.0, 1e-12);
  const double r_a = 2.0 - 20.0 / 13.0, r_b = 3.0 - 40.0 / 13.0;
  EXPECT_NEAR(fit.rms, std::sqrt((r_a * r_a + 3 * r_b * r_b) / 4.0), 1e-12);
}

TEST(ConstantFit, ANegativeOptimumIsClampedAndTheOthersRefitted) {
  // y = 2 x0 - 1 x1 with independent columns: unconstrained gives c1 < 0;
  // the non-negative optimum is c1 = 0 and c0 the one-column fit on x0.
  auto obs = linear_data({2.0, -1.0}, 20, 2, 0.0, 7);
  const auto fit = gw::fit::fit_constants(obs, 2);
  EXPECT_EQ(fit.values[1], 0.0);
  double sxy = 0, sxx = 0;
  for (const auto& o : obs) {
    sxy += o.x[0] * o.y;
    sxx += o.x[0] * o.x[0];
  }
  EXPECT_NEAR(fit.values[0], sxy / sxx, 1e-12);
}

TEST(ConstantFit, NoPointOfAGridBeatsTheNonNegativeOptimum) {
  auto obs = linear_data({0.3, 1.7}, 15, 3, 0.2, 11);
  for (auto& o : obs) o.y -= 1.5 * o.x[0];  // pushes the first constant below 0
  const auto fit = gw::fit::fit_constants(obs, 2);
  const double best = cost(obs, fit.values);
  for (int i = 0; i <= 200; ++i) {
    for (int k = 0; k <= 200; ++k) {
      EXPECT_GE(cost(obs, {i * 0.02, k * 0.02}), best - 1e-9);
    }
  }
}

TEST(ConstantFit, AConstantNoCaseExercisesIsZero) {
  auto obs = linear_data({1.0, 4.0, 2.0}, 8, 3, 0.01, 3);
  for (auto& o : obs) {
    o.y -= 4.0 * o.x[1];
    o.x[1] = 0.0;
  }
  const auto fit = gw::fit::fit_constants(obs, 3);
  EXPECT_EQ(fit.values[1], 0.0);
  EXPECT_NEAR(fit.values[0], 1.0, 0.05);
  EXPECT_NEAR(fit.values[2], 2.0, 0.05);
}

TEST(ConstantFit, HuberResistsACaseNoMechanismExplains) {
  auto obs = linear_data({1.0, 2.0}, 10, 5, 0.001, 5);
  for (auto& o : obs) {
    if (o.group == "case4") o.y += 3.0;  // one case far off
  }
  const auto squares = gw::fit::fit_constants(obs, 2);
  gw::fit::FitOptions robust;
  robust.loss = gw::fit::Loss::huber;
  robust.huber_scale = 0.05;
  const auto huber = gw::fit::fit_constants(obs, 2, robust);
  const double err_squares = std::abs(squares.values[0] - 1.0) + std::abs(squares.values[1] - 2.0);
  const double err_huber = std::abs(huber.values[0] - 1.0) + std::abs(huber.values[1] - 2.0);
  EXPECT_GT(err_squares, 0.5);
  EXPECT_LT(err_huber, 0.25 * err_squares);
}

TEST(ConstantFit, LeavingACaseOutFitsTheOthers) {
  // Two cases with different constants: without one, the fit is the other's.
  std::vector<Observation> obs;
  for (int i = 1; i <= 5; ++i) {
    obs.push_back({"a", 1.0 * i, {double(i)}, 1.0});
    obs.push_back({"b", 3.0 * i, {double(i)}, 1.0});
  }
  const auto loo = gw::fit::leave_one_group_out(obs, 1);
  ASSERT_EQ(loo.size(), 2u);
  EXPECT_EQ(loo[0].first, "a");
  EXPECT_NEAR(loo[0].second.values[0], 3.0, 1e-12);
  EXPECT_EQ(loo[1].first, "b");
  EXPECT_NEAR(loo[1].second.values[0], 1.0, 1e-12);
  EXPECT_EQ(loo[1].second.observations, 5u);
}

TEST(ConstantFit, RefusesWhatItCannotFit) {
  const Observation ok{"a", 1.0, {1.0}, 1.0};
  EXPECT_THROW(gw::fit::fit_constants({}, 1), std::invalid_argument);
  EXPECT_THROW(gw::fit::fit_constants({ok}, 0), std::invalid_argument);
  EXPECT_THROW(gw::fit::fit_constants({ok}, gw::fit::kMaxConstants + 1), std::invalid_argument);
  EXPECT_THROW(gw::fit::fit_constants({ok}, 2), std::invalid_argument);
  EXPECT_THROW(gw::fit::fit_constants({{"a", std::nan(""), {1.0}, 1.0}}, 1), std::invalid_argument);
  EXPECT_THROW(gw::fit::fit_constants({{"a", 1.0, {1.0}, -1.0}}, 1), std::invalid_argument);
  EXPECT_THROW(gw::fit::leave_one_group_out({ok, ok}, 1), std::invalid_argument);
  gw::fit::FitOptions bad;
  bad.loss = gw::fit::Loss::huber;
  bad.huber_scale = 0;
  EXPECT_THROW(gw::fit::fit_constants({ok}, 1, bad), std::invalid_argument);
}
