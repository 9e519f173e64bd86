// Sweeps: expansion and errors naming the sweep file's lines (the real
// `gradwire sweep` is tested in test_sweep_cli.cpp).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <new>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "gradwire/core/atomic_file.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/plan/planner.hpp"
#include "gradwire/plan/sweep.hpp"
#include "sweep_test_util.hpp"

namespace gw::plan {
namespace {

namespace fs = std::filesystem;

TEST(Sweep, ExpandsAxesMostSignificantFirstWithZipGroups) {
  const auto s = parse_sweep(kSmall, "small.yaml");
  EXPECT_EQ(s.points, 3u * 2 * 2);
  EXPECT_EQ(point_key(s, 0),
            "cluster.nodes=1;workload.compression={kind: none};cluster.nics.bandwidth=10Gbps;"
            "cluster.nics.latency=20us");
  EXPECT_EQ(point_key(s, 11),
            "cluster.nodes=4;workload.compression={kind: powersgd, rank: 4};"
            "cluster.nics.bandwidth=100Gbps;cluster.nics.latency=5us");
  const auto sc = point_scenario(s, 7);  // nodes 2, powersgd, 100 Gbps
  EXPECT_EQ(sc.cluster.nodes, 2);
  EXPECT_EQ(sc.workload->compression.kind, "powersgd");
  EXPECT_DOUBLE_EQ(sc.cluster.nic.bandwidth, 100e9 / 8);
  EXPECT_DOUBLE_EQ(sc.cluster.nic.latency, 5e-6);
  // The same text gives the same identity; another axis value another one.
  EXPECT_EQ(parse_sweep(kSmall, "again.yaml").id, s.id);
  std::string other = kSmall;
  other.replace(other.find("[1, 2, 4]"), 9, "[1, 2, 8]");
  EXPECT_NE(parse_sweep(other, "other.yaml").id, s.id);
}

void expect_error(const std::string& text, int line, const std::string& key, const std::string& what) {
  try {
    parse_sweep(text, "bad.yaml");
    ADD_FAILURE() << "accepted:\n" << text;
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "bad.yaml") << e.what();
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_EQ(e.key(), key) << e.what();
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(Sweep, BadAxisValuesNameTheSweepFileLine) {
  const std::string base =
      "base:\n"
      "  cluster: {instance: p4d.24xlarge, nodes: 2}\n"
      "  workload: {model: resnet50, micro_batch: 32}\n"
      "axes:\n";
  expect_error(base + "  cluster.nodes:\n    - 2\n    - 0\n", 7, "cluster.nodes", "point 1");
  expect_error(base + "  cluster.nics.bandwidth:\n    - 10Gbps\n    - 10\n", 7, "cluster.nics.bandwidth", "unit");
  expect_error(base + "  cluster.instance: [p4d.24xlarge, nope.large]\n", 5, "cluster.instance", "no instance");
  expect_error(base + "  workload.compression:\n    - {kind: topk, rank: 4}\n", 6, "workload.compression.rank",
               "not used");
  expect_error(base + "  workload.microbatch: [1, 2]\n", 5, "workload.microbatch", "unknown key");
  expect_error(base + "  cluster: [1]\n  cluster.nodes: [2]\n", 6, "axes.cluster.nodes", "overlap");
  expect_error(base + "  cluster.nodes: []\n", 5, "axes.cluster.nodes", "at least one value");
}

// workload.compute_precision is a workload key like precision: an axis sets it
// per point and a value outside the vocabulary names the sweep file's line.
TEST(Sweep, ComputePrecisionIsSweepableApartFromTheGradientPrecision) {
  const std::string base =
      "base:\n"
      "  cluster: {instance: p4d.24xlarge, nodes: 2}\n"
      "  workload: {model: resnet50, micro_batch: 32, precision: fp32}\n"
      "axes:\n";
  const auto s = parse_sweep(base + "  workload.compute_precision: [tf32, amp-bf16, fp32]\n", "cp.yaml");
  ASSERT_EQ(s.points, 3u);
  EXPECT_EQ(point_key(s, 1), "workload.compute_precision=amp-bf16");
  for (std::size_t i = 0; i < 3; ++i) {
    const auto sc = point_scenario(s, i);
    EXPECT_EQ(sc.workload->compute_precision, (std::vector<std::string>{"tf32", "amp-bf16", "fp32"})[i]);
    EXPECT_EQ(sc.workload->precision, Precision::FP32);  // the gradients stay fp32
  }
  expect_error(base + "  workload.compute_precision: [tf32, fp8]\n", 5, "workload.compute_precision", "point 1");
}

TEST(Sweep, RefusesAbsurdSizes) {
  std::string text =
      "base:\n  cluster: {instance: p4d.24xlarge, nodes: 2}\n  workload: {model: resnet50, micro_batch: 32}\naxes:\n";
  for (const char* k : {"workload.micro_batch", "workload.accumulation", "cluster.nodes", "workload.interference"}) {
    text += std::string("  ") + k + ": [";
    for (int i = 1; i <= 100; ++i) text += (i > 1 ? ", " : "") + std::to_string(i);
    text += "]\n";
  }
  try {
    parse_sweep(text, "huge.yaml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 5);
    EXPECT_NE(std::string(e.what()).find("more than the 1000000 "), std::string::npos) << e.what();
  }
}

// --- Robustness of records and workers (docs/hardening.md, "Sweeps and results files") ---

TEST(SweepRecords, InvalidUtf8InAStringNeverMakesARecordThrow) {
  const auto spec = parse_sweep(kSmall, "small.yaml");
  Scenario sc = point_scenario(spec, 0);
  sc.name = "bad \xff\xfe name";
  PointEvaluator pe(spec.options, closed_form_iteration, "closed form \xc3");
  std::string line;
  ASSERT_NO_THROW(line = to_json(pe.evaluate(0, spec.points, spec.id, "key=\xff", {{"name", "bad\xff"}}, sc)));
  const ResultLine r = parse_result_line(line, "record", 1);  // valid JSON, valid record
  EXPECT_EQ(r.record.key, "key=\xef\xbf\xbd");                // U+FFFD in place of the bad byte
}

TEST(SweepRecords, AWorkerThatThrowsAnythingEndsAsAnErrorRecordAndNeverUnwindsIntoTheParent) {
  TempDir d;
  const auto spec = parse_sweep(kSmall, "small.yaml");
  const pid_t me = ::getpid();
  for (int kind = 0; kind < 2; ++kind) {
    RunOptions o;
    o.jobs = 2;
    o.progress = RunOptions::Progress::None;
    o.out = d.file("e" + std::to_string(kind) + ".jsonl");
    const Evaluator throws = [kind, me](const Scenario&, const ModelDesc&, const Profile&) -> IterationResult {
      // In the parent this would be a test bug; in a worker it must stay there.
      if (::getpid() == me) ADD_FAILURE() << "evaluated in the parent";
      if (kind == 0) throw 42;                                     // not a std::exception
      throw std::runtime_error("bad bytes \xff\xfe in a reason");  // not UTF-8
    };
    const auto sum = run_sweep(spec, o, throws, "throwing");
    ASSERT_EQ(::getpid(), me);
    EXPECT_EQ(sum.ran, spec.points);
    EXPECT_EQ(sum.failed, spec.points);
    EXPECT_EQ(sum.errors_left, spec.points);
    const auto lines = read_results(o.out);
    ASSERT_EQ(lines.size(), spec.points);
    for (const auto& l : lines) EXPECT_EQ(l.record.status, "error") << l.text;
    if (kind == 1) {
      EXPECT_NE(lines[0].text.find("bad bytes \xef\xbf\xbd"), std::string::npos) << lines[0].text;
    }
    // A rerun retries every error record (and fails again: still 12, no more).
    const auto again = run_sweep(spec, o, throws, "throwing");
    EXPECT_EQ(again.retried, spec.points);
    EXPECT_EQ(again.ran, spec.points);
    EXPECT_EQ(read_results(o.out).size(), spec.points);
  }
}

/// A std::bad_alloc that says what ran out, as engine::ChildOutOfMemory does.
struct ChildRanOut : std::bad_alloc {
  const char* what() const noexcept override { return "out of memory in the simulation child (std::bad_alloc)"; }
};

TEST(SweepRecords, APointThatRunsOutOfMemoryIsSaidInWordsWithItsPointAndAHint) {
  // The record said "std::bad_alloc": neither what ran out nor what to do.
  TempDir d;
  const auto spec = parse_sweep(kSmall, "small.yaml");
  for (const bool child : {false, true}) {
    RunOptions o;
    o.jobs = 2;
    o.progress = RunOptions::Progress::None;
    o.out = d.file(child ? "child.jsonl" : "worker.jsonl");
    const Evaluator big = [child](const Scenario& s, const ModelDesc& m, const Profile& p) -> IterationResult {
      if (s.cluster.nodes != 4) return closed_form_iteration(s, m, p);
      if (child) throw ChildRanOut();
      throw std::bad_alloc();
    };
    const auto sum = run_sweep(spec, o, big, "big");
    EXPECT_EQ(sum.failed, 4u);  // the 4 points on 4 nodes
    EXPECT_EQ(sum.errors_left, 4u);
    const std::string words =
        child ? "out of memory in the simulation child (std::bad_alloc)" : "out of memory (std::bad_alloc)";
    const std::string reason = words + ": free memory, run fewer workers (-j) or raise the limit (ulimit -v)";
    for (const auto& l : read_results(o.out)) {
      if (l.record.status == "ok") continue;
      EXPECT_EQ(l.record.status, "error") << l.text;
      EXPECT_EQ(l.record.reason, reason) << l.text;
    }
    EXPECT_EQ(sum.first_error, "sweep point 8 (" + point_key(spec, 8) + "): " + reason);
  }
}

TEST(SweepRecords, TheIdentityCoversTheContentsOfTheFilesThePointsRead) {
  TempDir d;
  const std::string model_text = read_file(std::string(GW_PLAN_TEST_DIR) + "/../../models/resnet50.yaml");
  d.file("m.yaml", model_text);
  const std::string text =
      "base:\n  cluster: {instance: p4d.24xlarge, nodes: 2}\n  workload: {model: " + (d.path / "m.yaml").string() +
      ", micro_batch: 32}\naxes:\n  cluster.nodes: [1, 2]\n";
  const auto spec = parse_sweep(text, "id.yaml");
  const auto inputs = sweep_inputs(spec);
  std::set<std::string> roles;
  for (const auto& in : inputs) roles.insert(in.role);
  EXPECT_EQ(roles, (std::set<std::string>{"catalog", "model " + (d.path / "m.yaml").string(), "profile a100-40gb"}))
      << "p4d.24xlarge has A100-40GB GPUs";
  const std::string before = sweep_identity(spec, inputs);
  d.file("m.yaml", model_text + "# changed\n");
  const auto changed = sweep_inputs(spec);
  EXPECT_NE(sweep_identity(spec, changed), before);
  EXPECT_EQ(parse_sweep(text, "id.yaml").id, spec.id) << "the spec's own id does not change";
}

TEST(SweepRecords, ResultsRecordsAreValidatedAtFileLine) {
  TempDir d;
  const std::string good =
      R"({"index":0,"of":2,"sweep":"x","key":"k","status":"ok","instance":"p4d.24xlarge","nodes":1,)"
      R"("gpus_per_node":8,"world":8,"micro_batch":32,"accumulation":1,"model":"resnet50","compression":"uncompressed",)"
      R"("compression_kind":"none","cluster_key":"c","node_bandwidth":1e10,"iteration":0.1,"forward":0.03,)"
      R"("backward":0.06,"exposed_communication":0.01,"optimizer":0.001,"training":{"hours":2.5},)"
      R"("cost":{"on_demand":80.5,"spot":null}})";
  const std::string path = d.file("r.jsonl", good + "\r\n");
  const auto lines = read_results(path);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].text, good) << "CR dropped";
  EXPECT_EQ(lines[0].line, 1);
  EXPECT_EQ(plan_points(lines, Pricing::OnDemand).size(), 1u);
  // A negative cost: refused by read_results, and by the planner for lines
  // that did not come from it.
  std::string bad = good;
  bad.replace(bad.find("80.5"), 4, "-80.5");
  d.file("bad.jsonl", good + "\n\n" + bad + "\n");
  try {
    read_results(d.file("bad.jsonl"));
    FAIL() << "accepted a negative cost";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 3) << e.what();
    EXPECT_EQ(e.key(), "cost.on_demand") << e.what();
  }
  ResultLine forged = lines[0];
  forged.text = bad;
  forged.line = 7;
  try {
    plan_points({forged}, Pricing::OnDemand);
    FAIL() << "planned with a negative cost";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 7) << e.what();
    EXPECT_EQ(e.key(), "cost.on_demand") << e.what();
  }
}

}  // namespace
}  // namespace gw::plan
