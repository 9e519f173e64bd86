// The real `gradwire sweep`: -j 1 / -j 2, shards + merge, SIGTERM and SIGKILL
// midway followed by a resume (a separate executable, test_sweep_cli, so
// that test_plan does not need the gradwire binary).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gradwire/core/atomic_file.hpp"
#include "run_util.hpp"
#include "sweep_test_util.hpp"

namespace gw::plan {
namespace {

// --- The real CLI --------------------------------------------------------------

/// The exit status of the command, 128 + the signal when one killed it.
int run(const std::vector<std::string>& args) {
  const auto r = gw::test::run(args);
  return r.signal != 0 ? 128 + r.signal : r.exit_code;
}

std::size_t count_lines(const std::string& path) {
  std::ifstream in(path);
  std::size_t n = 0;
  std::string l;
  while (std::getline(in, l)) ++n;
  return n;
}

/// A sweep of 3 x 8 x 5 x 5 = 600 points.
std::string big_sweep() {
  return "name: big\n"
         "base:\n"
         "  cluster: {instance: p4d.24xlarge, nodes: 2}\n"
         "  workload: {model: resnet50, micro_batch: 32}\n"
         "  training: {samples: 1000000}\n"
         "axes:\n"
         "  cluster.nodes: [1, 2, 4]\n"
         "  workload.compression: [{kind: none}, {kind: fp16}, {kind: int8}, {kind: sign}, {kind: topk, ratio: 0.01},\n"
         "                         {kind: randomk, ratio: 0.01}, {kind: powersgd, rank: 1}, {kind: powersgd, rank: "
         "4}]\n"
         "  cluster.nics.bandwidth: [1Gbps, 10Gbps, 25Gbps, 100Gbps, 400Gbps]\n"
         "  workload.accumulation: [1, 2, 4, 8, 16]\n";
}

TEST(SweepCli, OneAndTwoJobsAndMergedShardsGiveTheSameFile) {
  TempDir d;
  const std::string sweep = d.file("small.yaml", kSmall);
  const std::string bin = GW_GRADWIRE_BIN;
  ASSERT_EQ(run({bin, "sweep", sweep, "-j", "1", "--out", d.file("j1.jsonl")}), 0);
  ASSERT_EQ(run({bin, "sweep", sweep, "-j", "2", "--out", d.file("j2.jsonl")}), 0);
  const std::string j1 = read_file(d.file("j1.jsonl"));
  EXPECT_EQ(count_lines(d.file("j1.jsonl")), 12u);
  EXPECT_EQ(j1, read_file(d.file("j2.jsonl")));
  for (int i = 0; i < 3; ++i)
    ASSERT_EQ(run({bin, "sweep", sweep, "-j", "2", "--shard", std::to_string(i) + "/3", "--out",
                   d.file("s" + std::to_string(i) + ".jsonl")}),
              0);
  EXPECT_EQ(count_lines(d.file("s1.jsonl")), 4u);
  ASSERT_EQ(run({bin, "merge", d.file("merged.jsonl"), d.file("s2.jsonl"), d.file("s0.jsonl"), d.file("s1.jsonl")}), 0);
  EXPECT_EQ(read_file(d.file("merged.jsonl")), j1);
  // A rerun on a complete file runs nothing and leaves it as it was.
  ASSERT_EQ(run({bin, "sweep", sweep, "-j", "2", "--out", d.file("j1.jsonl")}), 0);
  EXPECT_EQ(read_file(d.file("j1.jsonl")), j1);
  // Results of another sweep are refused (exit 2), not mixed.
  std::string other = kSmall;
  other.replace(other.find("[1, 2, 4]"), 9, "[1, 2, 8]");
  EXPECT_EQ(run({bin, "sweep", d.file("other.yaml", other), "--out", d.file("j1.jsonl")}), 2);
}

/// Not gw::test::run: the test reads the progress lines itself, slowly.
/// Starts `gradwire sweep --progress lines` with a small stderr pipe that the
/// test reads slowly, so the sweep cannot run far ahead; sends `sig` after
/// `after` finished points. Returns the exit status.
int interrupt_after(const std::string& sweep, const std::string& out, int after, int sig) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  ::fcntl(fds[0], F_SETPIPE_SZ, 4096);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 2);
    ::close(fds[0]);
    ::close(fds[1]);
    const std::string bin = GW_GRADWIRE_BIN;
    ::execl(bin.c_str(), bin.c_str(), "sweep", sweep.c_str(), "-j", "2", "--progress", "lines", "--out", out.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[1]);
  int lines = 0;
  char c;
  while (lines < after && ::read(fds[0], &c, 1) == 1)
    if (c == '\n') ++lines;
  ::kill(pid, sig);
  // Drain until the child exits so that it never blocks on a full pipe.
  char buf[4096];
  while (::read(fds[0], buf, sizeof buf) > 0) {
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(SweepCli, KilledMidwayThenResumedEqualsAnUninterruptedRun) {
  TempDir d;
  const std::string sweep = d.file("big.yaml", big_sweep());
  const std::string bin = GW_GRADWIRE_BIN;
  ASSERT_EQ(run({bin, "sweep", sweep, "-j", "2", "--out", d.file("ref.jsonl")}), 0);
  const std::string ref = read_file(d.file("ref.jsonl"));
  ASSERT_EQ(count_lines(d.file("ref.jsonl")), 600u);

  // SIGTERM: a clean stop with exit 130, the finished points kept.
  const std::string term = d.file("term.jsonl");
  EXPECT_EQ(interrupt_after(sweep, term, 40, SIGTERM), 130);
  const std::size_t kept = count_lines(term);
  EXPECT_GE(kept, 40u);
  EXPECT_LT(kept, 600u);
  ASSERT_EQ(run({bin, "sweep", sweep, "-j", "2", "--out", term}), 0);
  EXPECT_EQ(read_file(term), ref);

  // SIGKILL, then a torn final record as a crash during the append leaves it.
  const std::string killed = d.file("kill.jsonl");
  EXPECT_EQ(interrupt_after(sweep, killed, 60, SIGKILL), 128 + SIGKILL);
  const std::size_t survived = count_lines(killed);
  EXPECT_GE(survived, 60u);
  EXPECT_LT(survived, 600u);
  {
    std::ofstream torn(killed, std::ios::app);
    torn << "{\"index\":599,\"of\":600,\"sweep\":\"tr";
  }
  ASSERT_EQ(run({bin, "sweep", sweep, "-j", "1", "--out", killed}), 0);
  EXPECT_EQ(read_file(killed), ref);
}

/// A simulation-evaluator sweep of 2 clusters x 2 compressors x 2
/// accumulation steps x 2 bucket sizes: points that differ only in k give
/// equal replay children (docs/engine.md, "Replay children's results, reused").
std::string simulated_sweep() {
  return "name: simulated\n"
         "evaluator: simulation\n"
         "base:\n"
         "  cluster: {instance: p4d.24xlarge, nodes: 2}\n"
         "  workload: {model: resnet50, micro_batch: 32}\n"
         "  training: {samples: 1000000}\n"
         "axes:\n"
         "  cluster.nics.bandwidth: [10Gbps, 100Gbps]\n"
         "  workload.compression: [{kind: none}, {kind: powersgd, rank: 4}]\n"
         "  workload.bucket_size: [10MiB, 25MiB]\n"
         "  workload.accumulation: [1, 4]\n";
}

// Two results files with the same records, numbers equal to 1e-9 relative
// and everything else exactly.
void expect_json_equal_to_last_bits(const nlohmann::json& a, const nlohmann::json& b, const std::string& where) {
  if (a.is_number_float() && b.is_number_float()) {
    const double x = a.get<double>(), y = b.get<double>();
    EXPECT_LE(std::abs(x - y), 1e-9 * std::max(std::abs(x), std::abs(y))) << where << ": " << x << " vs " << y;
    return;
  }
  ASSERT_EQ(a.type(), b.type()) << where;
  if (a.is_object()) {
    ASSERT_EQ(a.size(), b.size()) << where;
    for (auto it = a.begin(); it != a.end(); ++it) {
      ASSERT_TRUE(b.contains(it.key())) << where << "." << it.key();
      expect_json_equal_to_last_bits(it.value(), b.at(it.key()), where + "." + it.key());
    }
  } else if (a.is_array()) {
    ASSERT_EQ(a.size(), b.size()) << where;
    for (std::size_t i = 0; i < a.size(); ++i)
      expect_json_equal_to_last_bits(a[i], b[i], where + "[" + std::to_string(i) + "]");
  } else {
    EXPECT_EQ(a, b) << where;
  }
}

void expect_records_equal_to_last_bits(const std::string& file_a, const std::string& file_b) {
  std::ifstream a(file_a), b(file_b);
  std::string la, lb;
  int line = 0;
  while (std::getline(a, la)) {
    ++line;
    ASSERT_TRUE(static_cast<bool>(std::getline(b, lb))) << file_b << " ends before line " << line;
    expect_json_equal_to_last_bits(nlohmann::json::parse(la), nlohmann::json::parse(lb),
                                   "line " + std::to_string(line));
  }
  EXPECT_FALSE(static_cast<bool>(std::getline(b, lb))) << file_b << " has more lines than " << file_a;
}

TEST(SweepCli, ASimulatedSweepInReusedWorkersEqualsEveryPointRunAloneByteForByte) {
  TempDir d;
  const std::string sweep = d.file("sim.yaml", simulated_sweep());
  const std::string bin = GW_GRADWIRE_BIN;
  ASSERT_EQ(run({bin, "sweep", sweep, "-j", "2", "--out", d.file("j2.jsonl")}), 0);
  const std::string j2 = read_file(d.file("j2.jsonl"));
  ASSERT_EQ(count_lines(d.file("j2.jsonl")), 16u);
  EXPECT_EQ(j2.find("\"status\":\"error\""), std::string::npos);
  EXPECT_NE(j2.find("\"evaluator\":\"simulation\""), std::string::npos);
  ASSERT_EQ(run({bin, "sweep", sweep, "-j", "1", "--out", d.file("j1.jsonl")}), 0);
  EXPECT_EQ(read_file(d.file("j1.jsonl")), j2) << "one worker ran all 16 points";
  // The reference: each point alone, in a process of its own (a shard of
  // one point), nothing reused from another point.
  std::vector<std::string> merge{bin, "merge", d.file("alone.jsonl")};
  for (int i = 0; i < 16; ++i) {
    merge.push_back(d.file("p" + std::to_string(i) + ".jsonl"));
    ASSERT_EQ(run({bin, "sweep", sweep, "-j", "1", "--shard", std::to_string(i) + "/16", "--out", merge.back()}), 0);
  }
  ASSERT_EQ(run(merge), 0);
  EXPECT_EQ(read_file(d.file("alone.jsonl")), j2);
  // The full path: no replay child reused, every collective simulated. A
  // memoised collective ends at start + d in one addition where the full
  // simulation adds its phases to the clock, so times may differ in the last
  // bits (docs/engine.md, "How equal"); the records agree field by field,
  // numbers to 1e-9 relative as tests/replay/test_memo.cpp holds them.
  gw::test::RunOptions full;
  full.env = {"GRADWIRE_FULL_SIMULATION=1"};
  const auto r = gw::test::run({bin, "sweep", sweep, "-j", "2", "--out", d.file("full.jsonl")}, full);
  ASSERT_EQ(r.exit_code, 0) << r.all();
  expect_records_equal_to_last_bits(d.file("full.jsonl"), d.file("j2.jsonl"));
  // Stopped midway and resumed: the same file.
  const std::string term = d.file("term.jsonl");
  EXPECT_EQ(interrupt_after(sweep, term, 5, SIGTERM), 130);
  EXPECT_LT(count_lines(term), 16u);
  ASSERT_EQ(run({bin, "sweep", sweep, "-j", "2", "--out", term}), 0);
  EXPECT_EQ(read_file(term), j2);
}

TEST(SweepCli, PlanSaysWhyNothingQualifiesWhenNoPointFits) {
  // Llama-2-7B under plain DDP on p4d.24xlarge (8 x 40 GB): every point needs
  // far more memory than the GPUs have (issue 16: plan used to blame "no
  // time-to-train and cost").
  TempDir d;
  const std::string sweep = d.file("llama.yaml",
                                   "name: llama\n"
                                   "base:\n"
                                   "  cluster: {instance: p4d.24xlarge, nodes: 1}\n"
                                   "  workload: {model: llama2-7b, micro_batch: 8, optimizer: {kind: adam}}\n"
                                   "  training: {samples: 1000000}\n"
                                   "axes:\n"
                                   "  cluster.nodes: [1, 2]\n"
                                   "  workload.micro_batch: [1, 4, 8]\n");
  const std::string bin = GW_GRADWIRE_BIN;
  const std::string results = d.file("llama.jsonl");
  ASSERT_EQ(run({bin, "sweep", sweep, "-j", "1", "--out", results}), 0);
  const auto r = gw::test::run({bin, "plan", results});
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_NE(r.out.find("excluded: 6 need more memory than the GPUs have\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no recommendation: all 6 points need more memory than the GPUs have\n"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("no time-to-train"), std::string::npos) << r.out;
}

// Issue 33's planner axes: sharding x accumulation x activation
// checkpointing (the compressed formats are sharding's own values: ZeRO++'s
// qwZ and qgZ) at a fixed global batch of Llama-2-7B on 8 x H100 80 GB. Every
// record and the plan's configuration name the scheme; the pick fits.
TEST(SweepCli, ShardingAccumulationAndCheckpointingAxesLabelEveryPoint) {
  TempDir d;
  const std::string sweep = d.file("shard.yaml",
                                   "name: shard\n"
                                   "base:\n"
                                   "  cluster: {instance: p5.48xlarge, nodes: 1}\n"
                                   "  workload: {model: llama2-7b, precision: bf16, compute_precision: amp-bf16,\n"
                                   "             optimizer: {kind: adamw}}\n"
                                   "  training: {tokens: 2000000000, global_batch: 32}\n"
                                   "axes:\n"
                                   "  workload.sharding: [full_shard, zero2, zeropp]\n"
                                   "  workload.accumulation: [1, 4]\n"
                                   "  workload.activation_checkpointing: [none, full]\n");
  const std::string bin = GW_GRADWIRE_BIN;
  const std::string results = d.file("shard.jsonl");
  ASSERT_EQ(run({bin, "sweep", sweep, "-j", "1", "--progress", "none", "--out", results}), 0);
  std::vector<nlohmann::json> records(12);  // by index
  std::ifstream in(results);
  std::size_t lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    const auto r = nlohmann::json::parse(line);
    records.at(r.at("index").get<std::size_t>()) = r;
  }
  ASSERT_EQ(lines, 12u);
  const std::vector<std::string> schemes = {"zero3 (fsdp1)", "zero2 (deepspeed)",
                                            "zeropp (deepspeed, int8 weights + int4 gradients)"};
  int ok = 0;
  for (const auto& r : records) {
    const auto i = r.at("index").get<std::size_t>();
    const bool full = i % 2 == 1;
    const std::string want = schemes[i / 4] + (full ? " + full activation checkpointing" : "");
    ASSERT_TRUE(r.contains("sharding")) << r.dump();
    EXPECT_EQ(r.at("sharding"), want) << r.dump();
    EXPECT_EQ(r.at("accumulation"), (i / 2) % 2 == 0 ? 1 : 4) << r.dump();
    EXPECT_DOUBLE_EQ(r.at("global_batch").get<double>(), 32.0);
    if (r.at("status") == "ok") {
      ++ok;
      EXPECT_LE(r.at("memory").at("total_bytes").get<double>(), r.at("memory").at("capacity_bytes").get<double>());
    }
  }
  EXPECT_GT(ok, 0);
  const auto plan = gw::test::run({bin, "plan", results, "--format", "json"});
  ASSERT_EQ(plan.exit_code, 0) << plan.all();
  const auto rec = nlohmann::json::parse(plan.out).at("groups").at(0).at("recommendation");
  const auto& chosen = records.at(rec.at("index").get<std::size_t>());
  EXPECT_EQ(chosen.at("status"), "ok");
  EXPECT_LE(chosen.at("memory").at("total_bytes").get<double>(),
            chosen.at("memory").at("capacity_bytes").get<double>());
  // Uncompressed sharded points read as their scheme: "zero3 (fsdp1) + full
  // activation checkpointing, k = 1 (micro-batch 4, ...".
  EXPECT_EQ(rec.at("configuration").get<std::string>().rfind(chosen.at("sharding").get<std::string>() + ", k = ", 0),
            0u)
      << rec.dump();
}

TEST(SweepCli, SimulateAndASweepRecordOfTheSamePointAgree) {
  // One scenario (a fixed global batch split by memory, a training target,
  // a catalog price) simulated alone and as a sweep's only point: both are
  // plan::evaluate_scenario with the replay, so the batch, iteration,
  // time-to-train and cost agree (simulate used to compute its own).
  TempDir d;
  const std::string body =
      "cluster: {instance: p4d.24xlarge, nodes: 2}\n"
      "workload: {model: resnet50, compression: {kind: powersgd, rank: 4}}\n"
      "training: {samples: 1000000, global_batch: 2048}\n";
  std::string indented;
  for (std::size_t at = 0, nl; (nl = body.find('\n', at)) != std::string::npos; at = nl + 1)
    indented += "  " + body.substr(at, nl + 1 - at);
  const std::string scenario = d.file("one.yaml", "name: one\n" + body);
  const std::string sweep = d.file("one-sweep.yaml", "name: one\nbase:\n" + indented + "axes:\n  cluster.nodes: [2]\n");
  const std::string bin = GW_GRADWIRE_BIN;
  const std::string results = d.file("one.jsonl");
  ASSERT_EQ(run({bin, "sweep", sweep, "-j", "1", "--evaluator", "simulation", "--progress", "none", "--out", results}),
            0);
  const auto sim = gw::test::run({bin, "simulate", scenario, "--format", "json"});
  ASSERT_EQ(sim.exit_code, 0) << sim.all();
  const auto it = nlohmann::json::parse(sim.out);
  const auto rec = nlohmann::json::parse(read_file(results));
  ASSERT_EQ(rec.at("status"), "ok") << rec.dump();
  EXPECT_EQ(rec.at("micro_batch"), it.at("micro_batch"));
  EXPECT_EQ(rec.at("accumulation"), it.at("accumulation"));
  EXPECT_GT(it.at("accumulation").get<int>() * it.at("micro_batch").get<int>(), 0);
  EXPECT_DOUBLE_EQ(rec.at("global_batch").get<double>(), 2048.0);
  EXPECT_DOUBLE_EQ(it.at("global_batch").get<double>(), 2048.0);
  EXPECT_DOUBLE_EQ(rec.at("iteration_s").get<double>(), it.at("critical_path").at("total_s").get<double>());
  EXPECT_DOUBLE_EQ(rec.at("training").at("hours").get<double>(), it.at("training").at("hours").get<double>());
  EXPECT_DOUBLE_EQ(rec.at("training").at("iterations").get<double>(), it.at("training").at("iterations").get<double>());
  EXPECT_DOUBLE_EQ(rec.at("cost").at("on_demand_usd").get<double>(), it.at("cost").at("on_demand_usd").get<double>());
  EXPECT_DOUBLE_EQ(rec.at("cost").at("billed_s").get<double>(), it.at("cost").at("billed_s").get<double>());
}

}  // namespace
}  // namespace gw::plan
