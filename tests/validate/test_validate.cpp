// Validation cases: strict loading, scoring checked against the closed forms
// on an uncontended cluster, every bundled case runnable, and the tables of
// docs/validation.md equal to what `gradwire validate collectives` prints.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gradwire/model/closed_form.hpp"
#include "gradwire/model/collective_model.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/model/scenario.hpp"
#include "gradwire/validate/collectives.hpp"

namespace gw::validate {
namespace {
namespace fs = std::filesystem;

const std::string kRepo = GW_SOURCE_DIR;

class TempDir {
 public:
  TempDir() : path_(fs::temp_directory_path() / ("gw-validate-" + std::to_string(::getpid()))) {
    fs::create_directories(path_ / "cases");
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string write(const std::string& name, const std::string& text) const {
    const auto p = path_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

 private:
  fs::path path_;
};

const char* kCluster = R"(name: one-node
cluster:
  nodes: 1
  gpus_per_node: 8
  gpu: h100
  intra_node: {bandwidth: 100GB/s, latency: 2us}
  nics: {count: 1, bandwidth: 100Gbps, latency: 5us}
  fabric: {topology: switch, latency: 1us}
)";

std::string case_text(const std::string& points, const std::string& extra = "") {
  return "case: t\ndevset: T1\nsource: https://example.org/t\nconfidence: high\ncluster: ../one-node.yaml\n"
         "op: allreduce\nalgorithm: ring\nunit: GB/s\n" +
         extra + "points:\n" + points;
}

TEST(ValidateCase, LoadsAndConvertsUnits) {
  TempDir d;
  d.write("one-node.yaml", kCluster);
  const auto c = load_collective_case(d.write("cases/t.yaml", case_text("  - [1024, 0.5]\n  - [2048, 1.5, 12.5]\n")));
  EXPECT_EQ(c.name, "t");
  ASSERT_EQ(c.points.size(), 2u);
  EXPECT_DOUBLE_EQ(c.points[0].busbw, 0.5e9);
  EXPECT_FALSE(c.points[0].time);
  EXPECT_DOUBLE_EQ(*c.points[1].time, 12.5e-6);
  EXPECT_TRUE(fs::exists(c.cluster_file));
  std::string gbit = case_text("  - [1024, 8]\n");
  gbit.replace(gbit.find("unit: GB/s"), 10, "unit: Gbit/s");
  EXPECT_DOUBLE_EQ(load_collective_case(d.write("cases/g.yaml", gbit)).points[0].busbw, 1e9);
}

TEST(ValidateCase, BadInputNamesTheField) {
  TempDir d;
  const auto expect_error = [&](const std::string& text, const std::string& key, int line) {
    try {
      load_collective_case(d.write("cases/bad.yaml", text));
      ADD_FAILURE() << "accepted:\n" << text;
    } catch (const InputError& e) {
      EXPECT_EQ(e.key(), key) << e.what();
      EXPECT_EQ(e.line(), line) << e.what();
    }
  };
  expect_error(case_text("  - [2048, 1]\n  - [1024, 1]\n"), "points[1]", 11);
  expect_error(case_text("  - [2048]\n"), "points[0]", 10);
  expect_error(case_text("  - [2048, -1]\n"), "points[0][1]", 10);
  expect_error(case_text("  - [2048, 1]\n", "colour: red\n"), "colour", 9);
  std::string conf = case_text("  - [2048, 1]\n");
  conf.replace(conf.find("confidence: high"), 16, "confidence: sure");
  expect_error(conf, "confidence", 4);
}

// On one node with no contention the simulated ring all-reduce is its closed
// form with NCCL's cost, max(L, alpha) + 2(N-1)/N S/(B e), the protocol NCCL's
// rule picks: a case whose published busbw is that closed form scores 0 error
// everywhere, and one published at half of it +100%.
TEST(ValidateCase, ScoresAgainstTheClosedForm) {
  TempDir d;
  const ClusterSpec c = load_scenario(d.write("one-node.yaml", kCluster)).cluster;
  std::string exact, half;
  for (double s = 1024; s <= 256.0 * 1024 * 1024; s *= 16) {
    const double t =
        choose_collective(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::Auto, c, collective_shape(c, 8), s).time;
    const double busbw = s / t * collective::allreduce_busbw_factor(8);
    exact += "  - [" + std::to_string(static_cast<long long>(s)) + ", " + std::to_string(busbw / 1e9) + "]\n";
    half += "  - [" + std::to_string(static_cast<long long>(s)) + ", " + std::to_string(busbw / 2e9) + "]\n";
  }
  const auto r = run_case(load_collective_case(d.write("cases/exact.yaml", case_text(exact))));
  EXPECT_EQ(r.gpus, 8);
  ASSERT_TRUE(r.median_small && r.median_large && r.worst);
  EXPECT_LT(*r.worst, 1e-5);  // the published values are printed to 6 decimals
  const auto h = run_case(load_collective_case(d.write("cases/half.yaml", case_text(half))));
  for (const auto& p : h.points) EXPECT_NEAR(*p.error, 1.0, 1e-4);
  EXPECT_NEAR(*h.median_large, 1.0, 1e-4);
}

TEST(ValidateCase, RoundedZerosAreShownNotScored) {
  TempDir d;
  d.write("one-node.yaml", kCluster);
  const auto c = load_collective_case(d.write("cases/z.yaml", case_text("  - [8, 0]\n  - [2097152, 10]\n")));
  const auto r = score_case(c, 8, {1e-5, 1e-3});
  EXPECT_FALSE(r.points[0].error);
  EXPECT_FALSE(r.median_small);
  ASSERT_TRUE(r.median_large);
  EXPECT_DOUBLE_EQ(r.worst_bytes, 2097152);
}

// Issue 29, item 16: `validate collectives` ends with one line over all
// cases, as `validate iterations` does.
TEST(ValidateCase, TheSummaryEndsWithOneLineOverAllCases) {
  TempDir d;
  d.write("one-node.yaml", kCluster);
  const auto c =
      load_collective_case(d.write("cases/s.yaml", case_text("  - [8, 1]\n  - [2097152, 10]\n  - [4194304, 10]\n")));
  // Predicted times giving the relative busbw error e at each point (8 GPUs: busbw = size / t x 1.75).
  const auto times = [&](std::vector<double> e) {
    std::vector<double> t;
    for (std::size_t i = 0; i < e.size(); ++i) t.push_back(c.points[i].bytes * 1.75 / (c.points[i].busbw * (1 + e[i])));
    return t;
  };
  const CaseResult within = score_case(c, 8, times({0.1, 0.05, -0.05}));  // medians 10% and 5%
  const CaseResult outside = score_case(c, 8, times({-0.5, 0.2, 0.3}));   // medians 50% and 25%
  ASSERT_EQ(within.points.size(), 3u);
  const std::string line = summary_line({within, outside});
  EXPECT_EQ(line,
            "Collective cases: 2, 1 within target, 1 outside; median |error| 30.0% below 1 MiB (target <= 25%), "
            "12.5% from 1 MiB (target <= 10%), over 6 scored points.\n");
  const std::string text = render_summary({within, outside});
  ASSERT_GE(text.size(), line.size());
  EXPECT_EQ(text.substr(text.size() - line.size()), line);
}

TEST(ValidateBundled, EveryCaseLoadsWithAnExplicitCluster) {
  const auto cases = load_collective_cases(kRepo + "/validation/collectives");
  ASSERT_GE(cases.size(), 15u);
  for (const auto& c : cases) {
    const Scenario s = load_scenario(c.cluster_file);
    EXPECT_FALSE(s.cluster.intra_node_from_profile) << c.file;
    EXPECT_FALSE(c.points.empty()) << c.file;
  }
}

// docs/validation.md holds the command's Markdown between two markers; a model
// change that moves any figure must regenerate it (the doc says how).
TEST(ValidateBundled, DocsHoldTheCurrentTables) {
  std::vector<CaseResult> results;
  const auto cwd = fs::current_path();
  fs::current_path(kRepo);  // the cases name their clusters relative to the repository
  for (const auto& c : load_collective_cases("validation/collectives")) results.push_back(run_case(c));
  fs::current_path(cwd);
  std::ifstream in(kRepo + "/docs/validation.md");
  std::stringstream doc;
  doc << in.rdbuf();
  const std::string text = doc.str();
  const std::string begin = "<!-- begin: gradwire validate collectives --format markdown -->\n";
  const std::string end = "<!-- end -->";
  const auto a = text.find(begin), b = text.find(end);
  ASSERT_NE(a, std::string::npos);
  ASSERT_NE(b, std::string::npos);
  const RampFit ramp = fit_ramp(results);
  EXPECT_EQ(text.substr(a + begin.size(), b - a - begin.size()), render_markdown(results, &ramp))
      << "regenerate docs/validation.md (see its first section)";
}

// The per-size ramp's compiled constants (nccl_model.cpp) are the fit of the
// committed devset within 1%: a model or devset change that is not refitted
// fails here (refit: `gradwire validate collectives` prints the fit).
TEST(ValidateBundled, CompiledRampEqualsTheDevsetFit) {
  std::vector<CaseResult> results;
  const auto cwd = fs::current_path();
  fs::current_path(kRepo);
  for (const auto& c : load_collective_cases("validation/collectives")) results.push_back(run_case(c));
  fs::current_path(cwd);
  const RampFit ramp = fit_ramp(results);
  ASSERT_GT(ramp.observations, 100u);
  for (std::size_t j = 0; j < ramp.fitted.size(); ++j) {
    EXPECT_GT(ramp.fitted[j], 0) << ramp_constant_names()[j];
    EXPECT_NEAR(ramp.compiled[j], ramp.fitted[j], 0.01 * ramp.fitted[j])
        << ramp_constant_names()[j] << ": refit nccl_model.cpp's kRamp (" << ramp_line(ramp) << ")";
  }
}

// Leave one case out, by hand: two cases whose published times are a base
// plus a launch floor of 2 us (A) and 4 us (B), nothing else. Together the
// fit puts t_launch between them and t_stage, o_proxy (no point exercises them) at
// 0; A left out is predicted with B's 4 us and B's with A's 2 us, so their
// left-out errors are published / (base + the other's floor) - 1 exactly.
TEST(ValidateCase, LeaveOneCaseOutRefitsWithoutTheCase) {
  const double base = 10e-6;
  const auto make = [&](const std::string& id, double launch_us) {
    CollectiveCase c;
    c.devset = id;
    c.op = "allreduce";
    std::vector<double> times;
    for (double bytes : {1e3, 1e4, 4e6}) {
      c.points.push_back({bytes, bytes * 1.75 / (base + launch_us * 1e-6), std::nullopt});
      times.push_back(base + ramp_in_fit_units(nccl_ramp())[0] * 1e-6);  // as the engine predicts them
    }
    CaseResult r = score_case(c, 8, times);
    for (auto& p : r.points) p.ramp = RampTerms{base, {1e-6, 0, 0}};
    return r;
  };
  std::vector<CaseResult> results{make("A", 2), make("B", 4)};
  const RampFit f = fit_ramp(results);
  EXPECT_GT(f.fitted[0], 2);
  EXPECT_LT(f.fitted[0], 4);
  EXPECT_DOUBLE_EQ(f.fitted[1], 0);
  EXPECT_DOUBLE_EQ(f.fitted[2], 0);
  EXPECT_NEAR(results[0].loo_constants[0], 4, 1e-6);
  EXPECT_NEAR(results[1].loo_constants[0], 2, 1e-6);
  for (const auto& p : results[0].points) EXPECT_NEAR(*p.loo_error, (base + 2e-6) / (base + 4e-6) - 1, 1e-6);
  for (const auto& p : results[1].points) EXPECT_NEAR(*p.loo_error, (base + 4e-6) / (base + 2e-6) - 1, 1e-6);
  ASSERT_TRUE(results[0].loo_large && results[0].loo_small);
  EXPECT_NEAR(*results[0].loo_large, 1 - (base + 2e-6) / (base + 4e-6), 1e-6);
  EXPECT_NE(ramp_line(f).find("leave one case out"), std::string::npos);
}

// A case's observations are its closed form split linear in the constants:
// linearised at the compiled constants, y - x . c there is log(published /
// closed form), and each case weighs 1 in all (its points 1 / points each).
TEST(ValidateCase, RampObservationsAreTheClosedFormsTerms) {
  TempDir d;
  const ClusterSpec c = load_scenario(d.write("one-node.yaml", kCluster)).cluster;
  const auto cc = load_collective_case(
      d.write("cases/r.yaml", case_text("  - [8, 0]\n  - [65536, 1]\n  - [2097152, 10]\n  - [268435456, 100]\n")));
  const CaseResult r = run_case(cc);
  const RampConstants k = ramp_in_fit_units(nccl_ramp());
  const auto obs = ramp_observations(r, k);
  ASSERT_EQ(obs.size(), 3u);  // the rounded 0 is not scored
  double weights = 0;
  for (std::size_t i = 0; i < obs.size(); ++i) {
    const auto& p = r.points[i + 1];
    const double published = p.published.bytes * 1.75 / p.published.busbw;
    const double closed = choose_collective(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::Auto, c,
                                            collective_shape(c, 8), p.published.bytes)
                              .time;
    double fitted = obs[i].y;
    for (std::size_t j = 0; j < k.size(); ++j) fitted -= obs[i].x[j] * k[j];
    EXPECT_NEAR(fitted, std::log(published / closed), 1e-9) << p.published.bytes;
    EXPECT_EQ(obs[i].group, cc.devset);
  }
  for (const auto& o : obs) weights += o.weight;
  EXPECT_NEAR(weights, 1.0, 1e-12);
}

}  // namespace
}  // namespace gw::validate
