// Determinism: the same inputs give byte-identical JSON, CSV and trace
// outputs across runs, and a sweep's results file does not depend on -j.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "run_util.hpp"

namespace fs = std::filesystem;
using gw::test::run;

namespace {

const std::string kBin = GW_GRADWIRE_BIN;
const fs::path kSource = GW_SOURCE_ROOT;
const fs::path kData = fs::path(GW_HARDENING_DIR) / "data";

TEST(Determinism, SimulateJsonCsvAndTraceAreByteIdenticalAcrossRuns) {
  const fs::path dir = gw::test::scratch_dir("determinism-simulate");
  for (const char* scenario : {"default.yaml", "bert-large-powersgd.yaml"}) {
    const std::string sc = (kSource / "scenarios" / scenario).string();
    const auto j1 = run({kBin, "simulate", "--format", "json", "--trace", (dir / "t1.json").string(), sc});
    const auto j2 = run({kBin, "simulate", "--format", "json", "--trace", (dir / "t2.json").string(), sc});
    ASSERT_EQ(j1.exit_code, 0) << j1.all();
    ASSERT_EQ(j2.exit_code, 0) << j2.all();
    EXPECT_GT(j1.out.size(), 100u);
    EXPECT_EQ(j1.out, j2.out) << scenario;
    const std::string t1 = gw::test::read_text(dir / "t1.json"), t2 = gw::test::read_text(dir / "t2.json");
    EXPECT_GT(t1.size(), 100u);
    EXPECT_EQ(t1, t2) << scenario << ": traces differ";
    const auto c1 = run({kBin, "simulate", "--format", "csv", sc});
    const auto c2 = run({kBin, "simulate", "--format", "csv", sc});
    ASSERT_EQ(c1.exit_code, 0) << c1.all();
    EXPECT_NE(c1.out.find('\n'), std::string::npos);
    EXPECT_EQ(c1.out, c2.out) << scenario;
  }
}

TEST(Determinism, CollectiveJsonIsByteIdenticalAcrossRuns) {
  const std::string sc = (kSource / "scenarios/default.yaml").string();
  for (const char* algo : {"ring", "hierarchical"}) {
    const auto a =
        run({kBin, "collective", "--scenario", sc, "--algo", algo, "--sizes", "1KiB:64MiB", "--format", "json"});
    const auto b =
        run({kBin, "collective", "--scenario", sc, "--algo", algo, "--sizes", "1KiB:64MiB", "--format", "json"});
    ASSERT_EQ(a.exit_code, 0) << a.all();
    EXPECT_NE(a.out.find("\"results\""), std::string::npos) << a.out;
    EXPECT_EQ(a.out, b.out) << algo;
  }
}

std::string sweep_results(const fs::path& sweep, const fs::path& out, int jobs, const char* evaluator = nullptr) {
  std::vector<std::string> args{kBin, "sweep", "-j", std::to_string(jobs), "--progress", "none", "--out", out.string()};
  if (evaluator) {
    args.push_back("--evaluator");
    args.push_back(evaluator);
  }
  args.push_back(sweep.string());
  const auto r = run(args);
  EXPECT_EQ(r.exit_code, 0) << r.all();
  return gw::test::read_text(out);
}

TEST(Determinism, SweepResultsDoNotDependOnJobs) {
  const fs::path dir = gw::test::scratch_dir("determinism-sweep");
  const fs::path sweep = kData / "small.sweep.yaml";
  const std::string one = sweep_results(sweep, dir / "j1.jsonl", 1);
  const std::string two = sweep_results(sweep, dir / "j2.jsonl", 2);
  const std::string four = sweep_results(sweep, dir / "j4.jsonl", 4);
  EXPECT_EQ(std::count(one.begin(), one.end(), '\n'), 8);
  EXPECT_EQ(one, two);
  EXPECT_EQ(one, four);
}

TEST(Determinism, SimulatedSweepResultsDoNotDependOnJobs) {
  const fs::path dir = gw::test::scratch_dir("determinism-sweep-sim");
  const fs::path sweep = kData / "small.sweep.yaml";
  const std::string one = sweep_results(sweep, dir / "j1.jsonl", 1, "simulation");
  const std::string two = sweep_results(sweep, dir / "j2.jsonl", 2, "simulation");
  EXPECT_EQ(std::count(one.begin(), one.end(), '\n'), 8);
  EXPECT_NE(one.find("\"status\":\"ok\""), std::string::npos) << one;
  EXPECT_EQ(one, two);
}

TEST(Determinism, MergedShardsEqualTheUnshardedRun) {
  const fs::path dir = gw::test::scratch_dir("determinism-shards");
  const fs::path sweep = kData / "small.sweep.yaml";
  const std::string whole = sweep_results(sweep, dir / "whole.jsonl", 2);
  for (const char* shard : {"0/3", "1/3", "2/3"}) {
    const auto r = run({kBin, "sweep", "-j", "1", "--progress", "none", "--shard", shard, "--out",
                        (dir / ("s" + std::string(1, shard[0]) + ".jsonl")).string(), sweep.string()});
    ASSERT_EQ(r.exit_code, 0) << r.all();
  }
  const auto m = run({kBin, "merge", (dir / "merged.jsonl").string(), (dir / "s2.jsonl").string(),
                      (dir / "s0.jsonl").string(), (dir / "s1.jsonl").string()});
  ASSERT_EQ(m.exit_code, 0) << m.all();
  EXPECT_EQ(gw::test::read_text(dir / "merged.jsonl"), whole);
}

}  // namespace
