// Iteration validation cases (validation/iterations/): strict loading with
// one-line errors, the published quantities' closed forms, the summary, every
// bundled case's prediction equal to what `gradwire simulate` prints for its
// scenario, and docs/validation.md's iteration tables equal to the command's.
#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gradwire/core/error.hpp"
#include "gradwire/validate/iteration_fit.hpp"
#include "gradwire/validate/iterations.hpp"
#include "gradwire/model/stragglers.hpp"
#include "run_util.hpp"

namespace gw::validate {
namespace {
namespace fs = std::filesystem;

const std::string kRepo = GW_SOURCE_DIR;
const std::string kClusters = kRepo + "/validation/clusters/";

test::RunResult gradwire(std::vector<std::string> args) {
  args.insert(args.begin(), GW_GRADWIRE_BIN);
  return test::run(args);
}

class TempDir {
 public:
  TempDir() : path_(fs::temp_directory_path() / ("gw-iter-validate-" + std::to_string(::getpid()))) {
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name) << text;
    return (path_ / name).string();
  }
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
};

// A speedup case: 2x8 DGX-1 with 1 MiB buckets against 25 MiB on 1x8.
std::string case_text(const std::string& extra = "", const std::string& quantity = "speedup") {
  return "case: t\ndevset: B9\nsource: https://example.org/t\nconfidence: high\nkind: ddp\nquantity: " + quantity +
         "\nsetup: a test\nscenario:\n  cluster: " + kClusters +
         "v100-dgx1-2x8.yaml\n  workload: {model: resnet50, micro_batch: 32, accumulation: 2, bucket_size: 1MiB}\n"
         "baseline:\n  cluster: " +
         kClusters + "v100-dgx1-1x8.yaml\n  workload: {model: resnet50, micro_batch: 16}\n" + extra;
}

TEST(IterationCase, LoadsScenarioAndBaseline) {
  TempDir d;
  const auto c = load_iteration_case(d.write("t.yaml", case_text("published: 1.5\ngap: none known\n")));
  EXPECT_EQ(c.devset, "B9");
  EXPECT_EQ(c.quantity, "speedup");
  EXPECT_EQ(c.scenario.cluster.world_size(), 16);
  ASSERT_TRUE(c.scenario.workload);
  EXPECT_EQ(c.scenario.workload->accumulation, 2);
  EXPECT_DOUBLE_EQ(c.scenario.workload->bucket_size, 1024.0 * 1024);
  ASSERT_TRUE(c.baseline);
  EXPECT_EQ(c.baseline->cluster.world_size(), 8);
  EXPECT_DOUBLE_EQ(*c.published, 1.5);
  EXPECT_TRUE(c.unscored.empty());
}

TEST(IterationCase, BadInputNamesFileLineColumnAndField) {
  TempDir d;
  const auto expect_error = [&](const std::string& text, const std::string& key, int line) {
    try {
      load_iteration_case(d.write("bad.yaml", text));
      ADD_FAILURE() << "accepted:\n" << text;
    } catch (const InputError& e) {
      EXPECT_EQ(e.key(), key) << e.what();
      EXPECT_EQ(e.line(), line) << e.what();
    }
  };
  expect_error(case_text("published: 1\ncolour: red\n"), "colour", 15);
  expect_error(case_text("published: -1\n"), "published", 14);
  expect_error(case_text(""), "", 1);                                          // neither published nor unscored
  expect_error(case_text("published: 1\n", "iteration_time"), "quantity", 6);  // a baseline it does not use
  std::string no_base = case_text("published: 1\n");
  no_base.erase(no_base.find("baseline:"), no_base.find("published:") - no_base.find("baseline:"));
  expect_error(no_base, "quantity", 6);
  std::string kind = case_text("published: 1\n", "iteration_time");
  kind.replace(kind.find("kind: ddp"), 9, "kind: compression");
  expect_error(kind, "quantity", 6);
  std::string cluster = case_text("published: 1\n");
  cluster.replace(cluster.find("v100-dgx1-2x8"), 13, "no-such-cluster");
  expect_error(cluster, "scenario.cluster", 9);
  const std::string wl = d.write("with-workload.yaml", test::read_text(kClusters + "v100-dgx1-1x2.yaml") +
                                                           "workload: {model: resnet50, micro_batch: 1}\n");
  std::string holds = case_text("published: 1\n");
  holds.replace(holds.find(kClusters + "v100-dgx1-2x8.yaml"), kClusters.size() + 18, wl);
  expect_error(holds, "scenario.cluster", 9);
  std::string bad_workload = case_text("published: 1\n");
  bad_workload.replace(bad_workload.find("micro_batch: 32"), 15, "micro_batch: 0");
  expect_error(bad_workload, "scenario.workload.micro_batch", 10);
}

// The command reports a bad case as one line naming file:line:column and the
// field, exits 2 and prints nothing on stdout.
TEST(IterationCase, CommandRejectsBadCaseInOneLine) {
  TempDir d;
  d.write("bad.yaml", case_text("published: 1\ncolour: red\n"));
  const auto r = gradwire({"validate", "iterations", "--cases", d.path()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find(d.path() + "/bad.yaml:15:1: colour"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// The quantities' closed forms, from given times: b = micro_batch x
// accumulation samples per GPU per iteration, W GPUs.
TEST(IterationCase, QuantitiesFollowTheirClosedForms) {
  TempDir d;
  auto c = load_iteration_case(d.write("t.yaml", case_text("published: 2.5\n")));
  // speedup = (16 x 64 / 0.2) / (8 x 16 / 0.1) = 5120 / 1280 = 4
  auto r = score_iteration_case(c, 0.2, 0.1);
  EXPECT_DOUBLE_EQ(r.predicted, 4.0);
  EXPECT_DOUBLE_EQ(*r.error, 4.0 / 2.5 - 1);
  EXPECT_TRUE(*r.same_sign);
  EXPECT_FALSE(*score_iteration_case(c, 2.0, 0.1).same_sign);  // 0.4 against 2.5
  c.quantity = "scaling_efficiency";                           // (64 / 0.2) / (16 / 0.1) = 2
  EXPECT_DOUBLE_EQ(iteration_quantity(c, 0.2, 0.1), 2.0);
  c.quantity = "per_gpu_throughput";  // 64 / 0.2
  EXPECT_DOUBLE_EQ(iteration_quantity(c, 0.2, std::nullopt), 320.0);
  c.quantity = "iteration_time";  // per micro-step: 0.2 / 2
  EXPECT_DOUBLE_EQ(iteration_quantity(c, 0.2, std::nullopt), 0.1);
  c.unscored = "a reason";
  EXPECT_FALSE(score_iteration_case(c, 0.2, 0.1).error);
}

// The summary over hand-made results: DDP errors +10%, -30%, +20% (median
// 20%, worst 30%); speedups +20% with the sign, +50% with the sign, -10%
// with the wrong sign; one unscored case; sharded -50% and +4% (median 27%).
TEST(IterationCase, SummaryCountsTheTargets) {
  const auto result = [](const std::string& kind, std::optional<double> error, std::optional<bool> sign) {
    IterationCaseResult r;
    r.c.kind = kind;
    r.error = error;
    r.same_sign = sign;
    return r;
  };
  const std::vector<IterationCaseResult> rs{
      result("ddp", 0.1, std::nullopt),          result("ddp", -0.3, std::nullopt),
      result("ddp", 0.2, std::nullopt),          result("compression", 0.2, true),
      result("accumulation", 0.5, true),         result("compression", -0.1, false),
      result("ddp", std::nullopt, std::nullopt), result("sharded", -0.5, std::nullopt),
      result("sharded", 0.04, std::nullopt)};
  const auto s = summarise(rs);
  // Sharded cases are summarised apart, against the DDP targets.
  EXPECT_EQ(s.sharded_scored, 2);
  EXPECT_NEAR(*s.sharded_median, 0.27, 1e-12);
  EXPECT_NEAR(*s.sharded_worst, 0.5, 1e-12);
  EXPECT_EQ(s.ddp_scored, 3);
  EXPECT_NEAR(*s.ddp_median, 0.2, 1e-12);
  EXPECT_NEAR(*s.ddp_worst, 0.3, 1e-12);
  EXPECT_EQ(s.speedup_scored, 3);
  EXPECT_EQ(s.speedup_sign_ok, 2);
  EXPECT_EQ(s.speedup_within, 1);
  EXPECT_EQ(s.unscored, 1);
  EXPECT_FALSE(s.ddp_median_loo);  // no out-of-sample errors without a fit
  auto with_loo = rs;
  for (auto& r : with_loo)
    if (r.error) r.loo_error = 2 * *r.error;  // DDP 20%, 60%, 40%; speedups 40% (sign), 100%, 20% (no sign)
  const auto l = summarise(with_loo);
  EXPECT_NEAR(*l.ddp_median_loo, 0.4, 1e-12);
  EXPECT_NEAR(*l.ddp_worst_loo, 0.6, 1e-12);
  EXPECT_EQ(l.speedup_within_loo, 0);
  EXPECT_NEAR(*l.sharded_median_loo, 0.54, 1e-12);
  EXPECT_NEAR(*l.sharded_worst_loo, 1.0, 1e-12);
}

double simulate_total(const std::string& scenario_file) {
  const auto r = gradwire({"simulate", "--format", "json", "--allow-oversubscribed-memory", scenario_file});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out).at("critical_path").at("total_s").get<double>();
}

// The command is consistent with the simulator: each bundled case's predicted
// iteration time (and its baseline's) is what `gradwire simulate` prints for
// the scenario the case describes (its cluster file plus its workload).
TEST(IterationBundled, PredictionsAreWhatSimulatePrints) {
  TempDir d;
  const auto cases = load_iteration_cases(kRepo + "/validation/iterations");
  ASSERT_GE(cases.size(), 30u);
  for (const auto& c : cases) {
    const auto r = run_iteration_case(c);
    const YAML::Node doc = YAML::LoadFile(c.file);
    for (const char* part : {"scenario", "baseline"}) {
      if (!doc[part]) continue;
      const std::string cluster =
          (fs::path(c.file).parent_path() / doc[part]["cluster"].as<std::string>()).lexically_normal().string();
      YAML::Node s = YAML::LoadFile(cluster);
      s["workload"] = doc[part]["workload"];
      // A model given as a file is relative to the case, as its cluster is.
      const std::string model = s["workload"]["model"].as<std::string>();
      if (model.find(".yaml") != std::string::npos)
        s["workload"]["model"] = (fs::path(c.file).parent_path() / model).lexically_normal().string();
      const std::string file = d.write("scenario.yaml", YAML::Dump(s) + "\n");
      const double expected = std::string(part) == "scenario" ? r.time : r.baseline_time.value();
      EXPECT_NEAR(simulate_total(file), expected, 1e-12 * expected) << c.file << " " << part;
    }
  }
}

// One run of the bundled devset (the fit runs every case four times):
// docs/validation.md's iteration tables and validation/residuals.yaml are
// the command's current output, and the compiled constants are the fit.
TEST(IterationBundled, DocsResidualsAndCompiledConstantsAreTheCurrentFit) {
  const auto cwd = fs::current_path();
  fs::current_path(kRepo);  // the cases' files are shown relative to the repository
  const IterationValidation v = validate_iterations(load_iteration_cases("validation/iterations"));
  fs::current_path(cwd);
  const std::string text = test::read_text(kRepo + "/docs/validation.md");
  const std::string begin = "<!-- begin: gradwire validate iterations --format markdown -->\n";
  const auto a = text.find(begin);
  ASSERT_NE(a, std::string::npos);
  const auto b = text.find("<!-- end: iterations -->", a);
  ASSERT_NE(b, std::string::npos);
  EXPECT_EQ(text.substr(a + begin.size(), b - a - begin.size()), render_iterations_markdown(v))
      << "regenerate docs/validation.md (scripts/validation_docs.sh)";
  // The band's model residuals (docs/model.md, "The band").
  EXPECT_EQ(test::read_text(kRepo + "/validation/residuals.yaml"), render_iterations_residuals(v))
      << "regenerate validation/residuals.yaml (scripts/validation_docs.sh)";
  EXPECT_EQ(bundled_model_residuals().cases, v.fit.value().band.cases);
  // A change to the model that moves the fit by more than 1% fails here
  // until the constants are refitted (docs/validation.md, "Fitted constants
  // and the band": gradwire validate iterations --fit).
  const ConstantValues compiled = constant_values(kFittedConstants), fitted = constant_values(v.fit->fitted);
  EXPECT_EQ(v.fit->at, kFittedConstants);
  for (std::size_t j = 0; j < kFittedConstantCount; ++j)
    EXPECT_NEAR(fitted[j], compiled[j], 0.01 * compiled[j] + 1e-4 * kFitProbe[j])
        << kFittedConstantNames[j] << ": refit (gradwire validate iterations --fit) and compile in\n"
        << fitted_constants_source(v.fit->fitted);
}

// The command writes the residuals the library renders (a small devset).
TEST(IterationCase, ResidualsCommandWritesTheBandOfTheLeaveOneOutErrors) {
  TempDir d;
  d.write("a.yaml", case_text("published: 1.5\n"));
  d.write("b.yaml", case_text("published: 1.9\n", "speedup"));
  d.write("c.yaml", case_text("published: 2.1\n", "speedup"));
  const auto v = validate_iterations(load_iteration_cases(d.path()));
  ASSERT_TRUE(v.fit);
  EXPECT_EQ(v.fit->band.cases, 3);
  const auto r = gradwire({"validate", "iterations", "--cases", d.path(), "--format", "residuals"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, render_iterations_residuals(v));
  for (const auto& c : v.results) EXPECT_TRUE(c.loo_error.has_value());
  // --fit prints the fit and the line to compile in; only for iterations.
  const auto fit = gradwire({"validate", "iterations", "--cases", d.path(), "--fit"});
  EXPECT_EQ(fit.exit_code, 0) << fit.err;
  EXPECT_EQ(fit.out, render_iterations_fit(v));
  EXPECT_NE(fit.out.find(fitted_constants_source(v.fit->fitted)), std::string::npos);
  EXPECT_EQ(gradwire({"validate", "collectives", "--fit"}).exit_code, 2);
}

// Split-conformal 10-90%: of n sorted errors, the floor((n + 1) 0.1)-th and
// the ceil((n + 1) 0.9)-th (1-based), clamped to 1..n.
TEST(IterationCase, ConformalBandTakesTheOrderStatistics) {
  std::vector<double> e;
  for (int i = 30; i >= 0; --i) e.push_back(0.01 * i);  // 31 errors, 0 .. 0.30
  auto [low, high] = conformal_band(e);
  EXPECT_DOUBLE_EQ(low, 0.02);   // floor(3.2) = 3rd
  EXPECT_DOUBLE_EQ(high, 0.28);  // ceil(28.8) = 29th
  std::tie(low, high) = conformal_band({0.3, -0.1, 0.2});
  EXPECT_DOUBLE_EQ(low, -0.1);  // floor(0.4) -> 1st
  EXPECT_DOUBLE_EQ(high, 0.3);  // ceil(3.6) -> 3rd
  EXPECT_EQ(conformal_band({}), std::make_pair(0.0, 0.0));
}

// The fit from given slopes: one constant that every case's error moves by
// 1 per unit (e = v_i + c; residuals inside the Huber scale: least squares).
// Over all: c = -mean(v); without case i: -mean of the others, and case i's
// out-of-sample error v_i + that. A speedup case shows it as 1 / (1 + e) - 1.
TEST(IterationCase, FitAndLeaveOneOutFollowTheirClosedForms) {
  const std::vector<double> v{-0.02, -0.04, -0.03, -0.01};
  std::vector<IterationCaseResult> results(v.size());
  std::vector<CaseSlopes> slopes;
  for (std::size_t i = 0; i < v.size(); ++i) {
    results[i].c.quantity = i == 3 ? "speedup" : "iteration_time";
    slopes.push_back({i, v[i], {1.0, 0.0, 0.0}, v[i]});
  }
  const ConstantsFit f = fit_from_slopes(FittedConstants{}, slopes, results);
  EXPECT_NEAR(f.fitted.compute_under_nccl, 0.025, 1e-12);
  EXPECT_EQ(f.fitted.rank_jitter, 0.0);  // exercised by no case
  EXPECT_EQ(f.fitted.host_per_collective, 0.0);
  EXPECT_NEAR(*results[0].loo_error, -0.02 + 0.08 / 3, 1e-12);
  EXPECT_NEAR(f.loo_high.compute_under_nccl, 0.03, 1e-12);  // without -0.01
  EXPECT_NEAR(f.loo_low.compute_under_nccl, 0.02, 1e-12);   // without -0.04
  const double e3 = -0.01 + 0.03;
  EXPECT_NEAR(*results[3].loo_error, 1 / (1 + e3) - 1, 1e-12);
  // Out-of-sample errors +0.0067, -0.02, -0.0067, +0.02; each against the
  // band of the other three (n = 3: their min and max): the two inner ones
  // are inside, the two outer ones not.
  EXPECT_EQ(f.band.cases, 4);
  EXPECT_TRUE(*results[0].in_band);
  EXPECT_FALSE(*results[1].in_band);
  EXPECT_TRUE(*results[2].in_band);
  EXPECT_FALSE(*results[3].in_band);
  EXPECT_EQ(f.covered, 2);
  // The band of all four (n = 4: floor(0.5) -> 1st, ceil(4.5) -> 4th).
  EXPECT_NEAR(f.band.low, -0.02, 1e-12);
  EXPECT_NEAR(f.band.high, 0.02, 1e-12);
}

// A sharded case (no fitted constant acts on its schedule: slopes 0) is in
// the fit and keeps its error out of sample, but stays out of the band, which
// the sharded schedule does not carry (docs/model.md, section 7c): the same
// four cases as above plus a sharded one at +0.5 give the same fit and band.
TEST(IterationCase, ShardedCasesAreFittedButMakeNoBand) {
  const std::vector<double> v{-0.02, -0.04, -0.03, -0.01, 0.5};
  std::vector<IterationCaseResult> results(v.size());
  std::vector<CaseSlopes> slopes;
  for (std::size_t i = 0; i < v.size(); ++i) {
    results[i].c.quantity = "iteration_time";
    results[i].c.kind = i == 4 ? "sharded" : "ddp";
    slopes.push_back({i, v[i], {i == 4 ? 0.0 : 1.0, 0.0, 0.0}, v[i]});
  }
  const ConstantsFit f = fit_from_slopes(FittedConstants{}, slopes, results);
  EXPECT_EQ(f.cases.size(), 5u);
  // Huber: the sharded residual weighs linearly but has no slope to pull.
  EXPECT_NEAR(f.fitted.compute_under_nccl, 0.025, 1e-9);
  EXPECT_NEAR(*results[4].loo_error, 0.5, 1e-12);
  EXPECT_FALSE(results[4].in_band.has_value());
  EXPECT_EQ(f.band.cases, 4);
  EXPECT_EQ(f.covered, 2);
  EXPECT_NEAR(f.band.low, -0.02, 1e-9);
  EXPECT_NEAR(f.band.high, 0.02, 1e-9);
  EXPECT_TRUE(takes_the_band(results[0].c));
  EXPECT_FALSE(takes_the_band(results[4].c));
}

// compute_under_nccl stays within the published 0.40 (kFitUpperBound): a fit
// past it holds it there and refits the others. Errors e = v_i + c_f + w_i c_h
// with v = -0.5, -0.6 and w = 0, 1 per us: unbounded c_f = 0.5, c_h = 0.1 us
// (exact); held at c_f = 0.4, case 1 gives -0.2 + c_h = 0: c_h = 0.2 us
// (case 0 stays at -0.1, which nothing else moves).
TEST(IterationCase, InterferenceIsHeldAtItsPublishedUpperEnd) {
  std::vector<IterationCaseResult> results(2);
  for (auto& r : results) r.c.quantity = "iteration_time";
  const std::vector<CaseSlopes> slopes{{0, -0.5, {1.0, 0.0, 0.0}, -0.5}, {1, -0.6, {1.0, 0.0, 1e6}, -0.6}};
  const ConstantsFit f = fit_from_slopes(FittedConstants{}, slopes, results);
  EXPECT_DOUBLE_EQ(f.fitted.compute_under_nccl, kInterferenceRangeHigh);
  EXPECT_NEAR(f.fitted.host_per_collective, 0.2e-6, 1e-15);
}

}  // namespace
}  // namespace gw::validate
