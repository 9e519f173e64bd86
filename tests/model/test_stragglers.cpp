// Stragglers and the band (docs/model.md, "Stragglers", "The band"): the
// extreme-value closed forms against exact values and against a seeded
// brute-force simulation of N ranks; the iteration's closed form with jitter;
// the band around the prediction.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

#include "gradwire/model/interference.hpp"
#include "gradwire/model/iteration_model.hpp"
#include "gradwire/model/stragglers.hpp"
#include "synthetic.hpp"

namespace gw {
namespace {

using test::costs;
using test::model_of;
using test::tensor;

TEST(Stragglers, ExpectedMaxOfNormalsMatchesExactValuesAndTables) {
  EXPECT_EQ(expected_max_normal(1), 0.0);
  EXPECT_NEAR(expected_max_normal(2), 1 / std::sqrt(std::numbers::pi), 1e-9);    // exact
  EXPECT_NEAR(expected_max_normal(3), 1.5 / std::sqrt(std::numbers::pi), 1e-9);  // exact
  // Harter (1961) / Royston (1982) tables of expected normal order statistics.
  EXPECT_NEAR(expected_max_normal(10), 1.538753, 1e-6);
  EXPECT_NEAR(expected_max_normal(100), 2.507594, 1e-6);
}

TEST(Stragglers, NormalQuantilesAndTheQuantileOfTheMax) {
  EXPECT_NEAR(normal_quantile(0.975), 1.959964, 1e-6);
  EXPECT_NEAR(normal_quantile(0.5), 0.0, 1e-12);
  EXPECT_NEAR(max_normal_quantile(1, 0.9), 1.281552, 1e-6);
  // P(max of 2 <= z) = Phi(z)^2 = 0.25 at z = 0.
  EXPECT_NEAR(max_normal_quantile(2, 0.25), 0.0, 1e-9);
}

// Brute force: N ranks, k micro-steps each, every micro-step C (1 + cv Z);
// the synchronization waits for the slowest rank's sum. Its mean excess over
// k C against D = cv C sqrt(k) mu_N, its 10% and 90% quantiles against the
// band's jitter term; within 4 standard errors of the simulation.
struct SlowestRank {
  double mean_excess = 0, standard_error = 0, q10 = 0, q90 = 0;
};
SlowestRank simulate_ranks(int ranks, int k, double cv, double step, double last_part, int trials) {
  std::mt19937_64 rng(20261201);
  std::normal_distribution<double> z;
  std::vector<double> excess(trials);
  for (int t = 0; t < trials; ++t) {
    double slowest = -1e300;
    for (int i = 0; i < ranks; ++i) {
      double s = 0;
      for (int m = 0; m + 1 < k; ++m) s += step * (1 + cv * z(rng));
      s += last_part * (1 + cv * z(rng));
      slowest = std::max(slowest, s);
    }
    excess[t] = slowest - ((k - 1) * step + last_part);
  }
  SlowestRank r;
  double sq = 0;
  for (double e : excess) r.mean_excess += e / trials;
  for (double e : excess) sq += (e - r.mean_excess) * (e - r.mean_excess);
  r.standard_error = std::sqrt(sq / (trials - 1) / trials);
  std::sort(excess.begin(), excess.end());
  r.q10 = excess[static_cast<std::size_t>(0.1 * trials)];
  r.q90 = excess[static_cast<std::size_t>(0.9 * trials)];
  return r;
}

TEST(Stragglers, ExpectedDelayMatchesABruteForceSimulationOfNRanks) {
  const double step = 0.1, cv = 0.08;
  for (int ranks : {2, 8, 64}) {
    for (int k : {1, 4}) {
      SCOPED_TRACE(std::to_string(ranks) + " ranks, k = " + std::to_string(k));
      const auto mc = simulate_ranks(ranks, k, cv, step, step, 20000);
      const double d = straggler_delays(cv, ranks, k, step, {step}).back();
      EXPECT_NEAR(d, cv * step * std::sqrt(k) * expected_max_normal(ranks), 1e-15);
      EXPECT_NEAR(mc.mean_excess, d, 4 * mc.standard_error);
      // The band's jitter term: the slowest rank's 10% and 90% quantiles (1% of sigma).
      const auto t = band_terms(1.0, 0, 0, cv, ranks, k, step, {});
      const double sigma = cv * step * std::sqrt(k);
      EXPECT_NEAR(d - t.jitter_low, mc.q10, 0.03 * sigma);
      EXPECT_NEAR(d + t.jitter_high, mc.q90, 0.03 * sigma);
    }
  }
}

TEST(Stragglers, AnEarlierBucketWaitsLessBruteForce) {
  // A bucket ready 30% into the synchronizing micro-step: sigma_b =
  // cv sqrt((k-1) C^2 + (F + R_b)^2).
  const double step = 0.1, cv = 0.1, part = 0.03;
  const auto mc = simulate_ranks(16, 3, cv, step, part, 20000);
  const auto d = straggler_delays(cv, 16, 3, step, {part, step});
  EXPECT_NEAR(d[0], cv * std::sqrt(2 * step * step + part * part) * expected_max_normal(16), 1e-15);
  EXPECT_LT(d[0], d[1]);
  EXPECT_NEAR(mc.mean_excess, d[0], 4 * mc.standard_error);
}

TEST(Stragglers, NoneForOneRankOrNoJitter) {
  EXPECT_EQ(straggler_delays(0.1, 1, 4, 1.0, {0.5, 1.0}), (std::vector<double>{0, 0}));
  EXPECT_EQ(straggler_delays(0.0, 64, 4, 1.0, {0.5, 1.0}), (std::vector<double>{0, 0}));
}

// Three tensors, one bucket each; backward 1, 2 and 1 ms, forward 2 ms; 8 GPUs.
IterationPlan plan_with(bool overlap, int k, std::optional<double> jitter, double spread = 0) {
  const auto m = model_of({tensor("t0", {1000}, 1e9), tensor("t1", {1000}, 2e9), tensor("t2", {1000}, 1e9)});
  WorkloadSpec w;
  w.compute_efficiency = 1.0;
  w.first_bucket_size = 1;
  w.bucket_size = 1;
  w.overlap = overlap;
  w.accumulation = k;
  w.optimizer.step_time = 0.5e-3;
  w.ddp_overheads = false;
  w.compute_jitter = jitter;
  auto c = costs();
  c.flops_spread = spread;
  return plan_iteration(w, test::cluster(1, 8), m, c);
}
const CollectiveTimeFn kOnePointFiveMs = [](const CommStep&) { return 1.5e-3; };

TEST(Stragglers, ZeroJitterLeavesTheIterationExactlyAsBefore) {
  for (bool overlap : {true, false}) {
    const auto none = evaluate_closed_form(plan_with(overlap, 2, std::nullopt), kOnePointFiveMs);
    const auto zero = evaluate_closed_form(plan_with(overlap, 2, 0.0), kOnePointFiveMs);
    EXPECT_TRUE(plan_with(overlap, 2, 0.0).bucket_sync_delay.empty());
    EXPECT_EQ(none.total, zero.total);
    EXPECT_EQ(zero.straggler_wait, 0.0);
    // 2 (F + B) + 3 x 1.5 ms + 0.5 ms without overlap; the pipeline by hand with it.
    EXPECT_NEAR(zero.total, overlap ? 6e-3 + 8.5e-3 : 12e-3 + 4.5e-3 + 0.5e-3, 1e-12);
  }
}

TEST(Stragglers, NoOverlapEveryCollectiveWaitsForTheSlowestRanksBackwardEnd) {
  const double cv = 0.05, step = 6e-3;
  const auto base = evaluate_closed_form(plan_with(false, 4, 0.0), kOnePointFiveMs);
  const auto r = evaluate_closed_form(plan_with(false, 4, cv), kOnePointFiveMs);
  const double d = cv * step * 2 * expected_max_normal(8);  // sqrt(k) = 2
  EXPECT_NEAR(r.straggler_wait, d, 1e-15);
  EXPECT_NEAR(r.total, base.total + d, 1e-12);
  EXPECT_NEAR(r.exposed_communication, base.exposed_communication, 1e-12);
  EXPECT_NEAR(r.buckets[0].start, r.backward_end + d, 1e-12);
}

TEST(Stragglers, OverlapEachBucketWaitsItsOwnDelay) {
  const double cv = 0.05;
  const auto p = plan_with(true, 1, cv);
  ASSERT_EQ(p.bucket_sync_delay.size(), 3u);
  const double mu = expected_max_normal(8);
  // F + R_b: 3, 5 and 6 ms.
  EXPECT_NEAR(p.bucket_sync_delay[0], cv * 3e-3 * mu, 1e-15);
  EXPECT_NEAR(p.bucket_sync_delay[2], cv * 6e-3 * mu, 1e-15);
  const auto r = evaluate_closed_form(p, kOnePointFiveMs);
  EXPECT_NEAR(r.buckets[0].start, 3e-3 + p.bucket_sync_delay[0], 1e-12);
  // The last bucket: max(ready + D, the previous end).
  const double second_end = std::max(5e-3 + p.bucket_sync_delay[1], r.buckets[0].end) + 1.5e-3;
  EXPECT_NEAR(r.buckets[1].end, second_end, 1e-12);
  EXPECT_NEAR(r.buckets[2].start, std::max(6e-3 + p.bucket_sync_delay[2], second_end), 1e-12);
  EXPECT_NEAR(r.total, r.buckets[2].end + 0.5e-3, 1e-12);
}

TEST(Band, ContainsTheMedianAndWidensWithSpreadJitterAndResiduals) {
  const auto band = [](double spread, double jitter, ModelResiduals res) {
    auto p = plan_with(true, 1, jitter, spread);
    p.residuals = res;
    return evaluate_closed_form(p, kOnePointFiveMs);
  };
  const auto flat = band(0, 0, {});
  EXPECT_EQ(flat.band_low, flat.total);
  EXPECT_EQ(flat.band_high, flat.total);
  const auto a = band(0.1, 0, {});
  const auto b = band(0.2, 0, {});
  // (a): compute x s / 2 each side (compute 6 ms).
  EXPECT_NEAR(a.band_high - a.total, 6e-3 * 0.05, 1e-15);
  EXPECT_NEAR(a.total - a.band_low, 6e-3 * 0.05, 1e-15);
  EXPECT_GT(b.band_high - b.band_low, a.band_high - a.band_low);
  EXPECT_EQ(a.total, flat.total);  // the spread moves the band, not the median
  const auto j = band(0, 0.05, {});
  EXPECT_GT(j.band_high, j.total);
  EXPECT_LT(j.band_low, j.total);
  // (c): the residuals -10% .. +20%: low T / 1.2, high T / 0.9.
  const auto c = band(0, 0, {-0.1, 0.2, 20, ""});
  EXPECT_NEAR(c.band_low, c.total / 1.2, 1e-15);
  EXPECT_NEAR(c.band_high, c.total / 0.9, 1e-15);
  // Root-sum-square of independent terms (the residual term scales with the
  // total, which the stragglers lengthen).
  const auto all = band(0.1, 0.05, {-0.1, 0.2, 20, ""});
  EXPECT_GT(all.total, flat.total);
  EXPECT_NEAR(all.band.residual_high, all.total / 0.9 - all.total, 1e-15);
  EXPECT_NEAR(all.band_high - all.total,
              std::hypot(a.band_high - a.total, all.band.jitter_high, all.band.residual_high), 1e-15);
  for (const auto* r : {&flat, &a, &b, &j, &c, &all}) {
    EXPECT_LE(r->band_low, r->total);
    EXPECT_GE(r->band_high, r->total);
  }
}

TEST(Band, ResidualsFileRoundTrips) {
  const ModelResiduals r{-0.125, 0.0625, 24, ""};
  const std::string path = ::testing::TempDir() + "residuals.yaml";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    const std::string text = model_residuals_yaml(r);
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
  const auto back = load_model_residuals(path);
  EXPECT_EQ(back.low, r.low);
  EXPECT_EQ(back.high, r.high);
  EXPECT_EQ(back.cases, 24);
  EXPECT_GE(bundled_model_residuals().cases, 0);
}

// --- Interference (docs/model.md, section 7) ----------------------------------

// Many small tensors with int8 compression and costly codecs, so that both
// collectives and codecs run beside the remaining backward.
IterationPlan interference_plan(std::optional<double> given, const InterferenceFigures& measured, bool overlap = true) {
  std::vector<TensorDesc> ts;
  for (int i = 0; i < 40; ++i) ts.push_back(tensor("t" + std::to_string(i), {300000}, 1e9));
  WorkloadSpec w;
  w.compute_efficiency = 1.0;
  w.compression.kind = "int8";
  w.compression.implementation = "gradwire";  // codec kernels on the comm stream, beside the backward
  w.interference = given;
  w.overlap = overlap;
  w.optimizer.step_time = 0;
  w.ddp_overheads = false;
  auto c = costs(2.0);
  c.interference = measured;
  return plan_iteration(w, test::cluster(1, 8), model_of(ts), c);
}
const CollectiveTimeFn kSlow = [](const CommStep& s) { return s.bytes / 2e9; };

TEST(Interference, WorkloadOverridesTheProfileWhichOverridesTheDefault) {
  const InterferenceFigures measured{0.3, 0.1, 0.05};
  auto p = interference_plan(std::nullopt, measured);
  EXPECT_EQ(p.interference, 0.3);
  EXPECT_EQ(p.interference_codec, 0.1);
  EXPECT_EQ(p.codec_interference, 0.05);
  EXPECT_EQ(p.interference_range_high, 0.0);
  p = interference_plan(0.2, measured);
  EXPECT_EQ(p.interference, 0.2);
  EXPECT_EQ(p.interference_codec, 0.2);
  p = interference_plan(std::nullopt, {});
  EXPECT_EQ(p.interference, 0.0);
  EXPECT_EQ(p.interference_range_high, kInterferenceRangeHigh);
}

TEST(Interference, ARunUsesItsOwnCodecsMeasuredFigures) {
  InterferenceFigures measured{0.3, 0.1, 0.05, {}};
  measured.codecs["int8"] = {0.02, 0.7};  // the plan's codec: both figures its own
  measured.codecs["topk"] = {0.9, 0.9};   // another codec: not used
  auto p = interference_plan(std::nullopt, measured);
  EXPECT_EQ(p.interference, 0.3);  // NCCL's figure is not per codec
  EXPECT_EQ(p.interference_codec, 0.02);
  EXPECT_EQ(p.codec_interference, 0.7);
  measured.codecs["int8"] = {std::nullopt, 0.6};  // one figure measured: the other is the summary
  p = interference_plan(std::nullopt, measured);
  EXPECT_EQ(p.interference_codec, 0.1);
  EXPECT_EQ(p.codec_interference, 0.6);
  measured.codecs.erase("int8");  // not measured for int8: the summary
  p = interference_plan(std::nullopt, measured);
  EXPECT_EQ(p.interference_codec, 0.1);
  EXPECT_EQ(p.codec_interference, 0.05);
  // What selects the codec: gradwire's kernels for the row, none for
  // PyTorch's hooks (their kernels are not the ones measured) or no compression.
  EXPECT_EQ(gradwire_codec_of({.kind = "int8", .implementation = "gradwire"}), "int8");
  EXPECT_EQ(gradwire_codec_of({.kind = "powersgd", .implementation = "pytorch"}), "");
  EXPECT_EQ(gradwire_codec_of({.kind = "none", .implementation = "gradwire"}), "");
  EXPECT_EQ(measured.for_codec("").codec_under_compute, 0.05);
  EXPECT_TRUE(measured.for_codec("topk").codecs.empty());
  EXPECT_EQ(measured.for_codec("topk").compute_under_codec, 0.9);
}

TEST(Interference, CollectivesAndCodecsSlowTheBackwardByTheirOwnFigures) {
  const auto clean = evaluate_closed_form(interference_plan(std::nullopt, {0.0, 0.0, {}}), kSlow);
  const auto both = evaluate_closed_form(interference_plan(std::nullopt, {0.25, 0.25, {}}), kSlow);
  const auto nccl = evaluate_closed_form(interference_plan(std::nullopt, {0.25, 0.0, {}}), kSlow);
  const auto codec = evaluate_closed_form(interference_plan(std::nullopt, {0.0, 0.25, {}}), kSlow);
  const auto given = evaluate_closed_form(interference_plan(0.25, {}), kSlow);
  EXPECT_EQ(given.total, both.total);  // one figure for both: the rule as before
  EXPECT_GT(nccl.backward, clean.backward);
  EXPECT_GT(codec.backward, clean.backward);
  EXPECT_LT(nccl.backward, both.backward);
  EXPECT_LT(codec.backward, both.backward);
  // Tensor by tensor: the duration is the clean one times (1 + the figure of
  // what the comm stream ran when it started).
  const auto p = interference_plan(std::nullopt, {0.25, 0.1, {}});
  const auto r = evaluate_closed_form(p, kSlow);
  double start = r.backward_start;
  int nccl_slowed = 0, codec_slowed = 0;
  for (std::size_t j = 0; j < r.tensor_end.size(); ++j) {
    const auto a = comm_activity_at(r, r.buckets.size(), start, true);
    const double f = a == CommActivity::Collective ? 0.25 : a == CommActivity::Codec ? 0.1 : 0.0;
    nccl_slowed += a == CommActivity::Collective;
    codec_slowed += a == CommActivity::Codec;
    EXPECT_NEAR(r.tensor_end[j] - start, p.tensor_backward[j] * (1 + f), 1e-12) << j;
    start = r.tensor_end[j];
  }
  EXPECT_GT(nccl_slowed, 0);
  EXPECT_GT(codec_slowed, 0);
}

TEST(Interference, UnmeasuredInterferenceWidensTheBandByTheOverlappedCompute) {
  const auto r = evaluate_closed_form(interference_plan(std::nullopt, {}), kSlow);
  EXPECT_GT(r.overlapped_compute, 0);
  EXPECT_LT(r.overlapped_compute, r.backward);
  EXPECT_NEAR(r.band.interference_high, r.overlapped_compute * kInterferenceRangeHigh, 1e-15);
  EXPECT_NEAR(r.band_high - r.total, r.band.interference_high, 1e-15);  // the only term here
  EXPECT_EQ(r.band_low, r.total);  // nothing else here: the default 0 is the low end
  const auto measured = evaluate_closed_form(interference_plan(std::nullopt, {0.0, 0.0, {}}), kSlow);
  EXPECT_EQ(measured.band.interference_high, 0.0);
  EXPECT_EQ(measured.total, r.total);
  const auto off = evaluate_closed_form(interference_plan(std::nullopt, {}, false), kSlow);
  EXPECT_EQ(off.overlapped_compute, 0.0);
}

}  // namespace
}  // namespace gw
