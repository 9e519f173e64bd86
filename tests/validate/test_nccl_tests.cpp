// nccl-tests logs in and out: the parser on the committed real logs
// (tests/data/nccl-tests/) and on malformed ones, the layout round trip of
// `gradwire collective`, `--compare` on a real log and `gradwire calibrate
// --from-nccl-tests` into a profile that `simulate` loads, or into a cluster
// that `collective --compare` gives the log back on.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "gradwire/core/error.hpp"
#include "gradwire/model/nccl_tests_log.hpp"
#include "gradwire/model/profile.hpp"
#include "gradwire/model/scenario.hpp"
#include "run_util.hpp"

namespace fs = std::filesystem;
using namespace gw;

namespace {

const std::string kData = std::string(GW_SOURCE_DIR) + "/tests/data/nccl-tests/";
const std::string kA3 = kData + "a3mega-2x8-h100-all_reduce_perf.log";
const std::string k2080Reduce = kData + "rtx2080ti-1x2-all_reduce_perf.log";
const std::string k2080Gather = kData + "rtx2080ti-1x2-all_gather_perf.log";

test::RunResult gradwire(std::vector<std::string> args) {
  args.insert(args.begin(), GW_GRADWIRE_BIN);
  return test::run(args);
}

std::string parse_error(const std::string& text, const std::string& file) {
  try {
    nccl_tests::parse_log(text, file);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(NcclTestsLog, MultiNodeMultiProcessLog) {
  const auto log = nccl_tests::load_log(kA3);
  EXPECT_EQ(log.world_size(), 16);  // 16 "# Rank" lines, nGpus 1 per process
  EXPECT_EQ(log.gpus_per_thread, 1);
  EXPECT_EQ(log.nodes(), 2);  // two hosts
  EXPECT_EQ(log.gpu(), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(log.iters, 20);
  ASSERT_TRUE(log.op);
  EXPECT_EQ(*log.op, CollectiveOp::AllReduce);
  ASSERT_EQ(log.rows.size(), 31u);  // 8 B .. 8 GiB
  EXPECT_EQ(log.rows.front().bytes, 8);
  EXPECT_DOUBLE_EQ(log.rows.front().out_of_place.time, 135.8e-6);
  EXPECT_DOUBLE_EQ(log.rows.front().in_place.time, 123.5e-6);
  EXPECT_EQ(log.rows.back().bytes, 8589934592.0);
  EXPECT_EQ(log.rows.back().count, 2147483648.0);
  EXPECT_DOUBLE_EQ(log.rows.back().out_of_place.busbw, 338.82e9);
  EXPECT_DOUBLE_EQ(log.rows.back().in_place.algbw, 179.92e9);
  EXPECT_EQ(log.rows.back().redop, "sum");
  EXPECT_EQ(log.rows.back().root, -1);
  ASSERT_TRUE(log.avg_busbw);
  EXPECT_DOUBLE_EQ(*log.avg_busbw, 70.742e9);
}

TEST(NcclTestsLog, SingleProcessLogs) {
  const auto ar = nccl_tests::load_log(k2080Reduce);
  EXPECT_EQ(ar.world_size(), 2);
  EXPECT_EQ(ar.gpus_per_thread, 2);
  EXPECT_EQ(ar.nodes(), 1);
  EXPECT_EQ(ar.rows.size(), 28u);
  EXPECT_DOUBLE_EQ(ar.rows.back().out_of_place.time, 268588e-6);
  const auto ag = nccl_tests::load_log(k2080Gather);
  ASSERT_TRUE(ag.op);
  EXPECT_EQ(*ag.op, CollectiveOp::AllGather);  // from the file name
  EXPECT_EQ(ag.rows.front().bytes, 0);         // sizes below one element per rank print as 0
  EXPECT_EQ(ag.rows.front().redop, "none");
}

TEST(NcclTestsLog, OpFromTheBinaryLineOrTheRows) {
  const std::string row =
      "        1024           256     float     sum      -1    16.38    0.06    0.11      0    15.71    0.07    0.11   "
      "   0\n";
  EXPECT_EQ(nccl_tests::parse_log(row, "x.log").op, CollectiveOp::AllReduce);  // count x 4 B = size
  const std::string rs =
      "        1024            32     float     sum      -1    16.38    0.06    0.11      0    15.71    0.07    0.11   "
      "   0\n";
  EXPECT_FALSE(nccl_tests::parse_log(rs, "x.log").op);  // a reducescatter-like row: not guessed
  const auto named = nccl_tests::parse_log("# Collective test starting: reduce_scatter_perf\n" + rs, "x.log");
  EXPECT_EQ(named.op, CollectiveOp::ReduceScatter);
  const auto reduce = nccl_tests::parse_log("# Collective test starting: reduce_perf\n" + row, "x.log");
  EXPECT_EQ(reduce.binary, "reduce_perf");
  EXPECT_FALSE(reduce.op);  // measured, but not one gradwire simulates
}

TEST(NcclTestsLog, OldLayoutAndNcclLines) {
  // nccl-tests before 2.10: no Group, no root column, an "error" column.
  const std::string text =
      "# nThread 1 nGpus 1 minBytes 4 maxBytes 1024 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n"
      "#   Rank  0 Pid   1320 on ip-172-31-20-228 device  0 [0x00] Tesla V100-SXM2-16GB\n"
      "#   Rank  1 Pid   2066 on ip-172-31-22-230 device  0 [0x00] Tesla V100-SXM2-16GB\n"
      "NCCL version 2.4.8+cuda10.1\n"
      "host:1234:1234 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
      "           4             1     float     sum    47.54    0.00    0.00  0e+00    49.35    0.00    0.00  4e-07\n";
  const auto log = nccl_tests::parse_log(text, "old.log");
  EXPECT_EQ(log.world_size(), 2);
  EXPECT_EQ(log.nodes(), 2);
  EXPECT_EQ(log.gpu(), "Tesla V100-SXM2-16GB");
  ASSERT_EQ(log.rows.size(), 1u);
  EXPECT_FALSE(log.rows[0].root);
  EXPECT_EQ(log.rows[0].in_place.wrong, "4e-07");
  EXPECT_DOUBLE_EQ(log.rows[0].out_of_place.time, 47.54e-6);
}

TEST(NcclTestsLog, MalformedLinesNameFileAndLine) {
  EXPECT_NE(parse_error(test::read_text(kData + "bad/garbage-row.log"), "garbage-row.log").find("garbage-row.log:13:"),
            std::string::npos);
  const std::string shortrow = parse_error(test::read_text(kData + "bad/short-row.log"), "short-row.log");
  EXPECT_NE(shortrow.find("short-row.log:10:"), std::string::npos) << shortrow;
  EXPECT_NE(shortrow.find("11 to 13 columns"), std::string::npos) << shortrow;
  EXPECT_NE(parse_error("# hello\nsome words here\n", "p.log").find("p.log:2:1"), std::string::npos);
  EXPECT_NE(parse_error("# only comments\n", "c.log").find("no result rows"), std::string::npos);
  EXPECT_NE(parse_error("#  Rank x Group 0\n8 2 float sum -1 1 0 0 0 1 0 0 0\n", "r.log").find("r.log:1:"),
            std::string::npos);
  EXPECT_THROW(nccl_tests::load_log(kData + "missing.log"), InputError);
}

TEST(NcclTestsLog, SizeGrammarIsNcclTests) {
  EXPECT_EQ(nccl_tests::parse_size("8"), 8);
  EXPECT_EQ(nccl_tests::parse_size("128K"), 131072);
  EXPECT_EQ(nccl_tests::parse_size("8G"), 8589934592.0);
  EXPECT_EQ(nccl_tests::parse_size("1250M"), 1310720000.0);
  EXPECT_FALSE(nccl_tests::parse_size("8X"));
  EXPECT_FALSE(nccl_tests::parse_size(""));
}

// What `gradwire collective` prints, our parser reads back: sizes, counts,
// times (to the printed precision) and the rank count.
TEST(CollectiveCli, LayoutRoundTrip) {
  const std::string scenario = std::string(GW_SOURCE_DIR) + "/scenarios/default.yaml";
  const auto table = gradwire({"collective", "--scenario", scenario, "-b", "8", "-e", "64M", "-f", "8"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  const auto json =
      gradwire({"collective", "--scenario", scenario, "-b", "8", "-e", "64M", "-f", "8", "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto log = nccl_tests::parse_log(table.out, "collective.out");
  const auto doc = nlohmann::json::parse(json.out);
  const auto& results = doc["results"];
  ASSERT_EQ(log.rows.size(), results.size());
  EXPECT_EQ(log.world_size(), doc["gpus"].get<int>());
  EXPECT_EQ(log.op, CollectiveOp::AllReduce);
  for (std::size_t i = 0; i < log.rows.size(); ++i) {
    const auto& row = log.rows[i];
    EXPECT_EQ(row.bytes, results[i]["size_bytes"].get<double>());
    EXPECT_EQ(row.bytes, 8 * std::pow(8.0, static_cast<double>(i)));
    EXPECT_EQ(row.count, row.bytes / 4);
    const double us = results[i]["time_us"].get<double>();
    EXPECT_NEAR(row.out_of_place.time * 1e6, us, us >= 100 ? 0.05 : 0.005);
    EXPECT_EQ(row.in_place.time, row.out_of_place.time);
    EXPECT_EQ(row.out_of_place.wrong, "N/A");
  }
  EXPECT_NE(table.out.find("# Avg bus bandwidth    : "), std::string::npos);
  EXPECT_NE(table.out.find("#       size         count      type   redop    root     time   algbw   busbw #wrong"),
            std::string::npos);
}

TEST(CollectiveCli, NcclTestsOptionsAndOpDefaults) {
  const std::string scenario = std::string(GW_SOURCE_DIR) + "/scenarios/default.yaml";
  const auto both = gradwire({"collective", "--scenario", scenario, "-b", "8", "--sizes", "8B:1KiB"});
  EXPECT_EQ(both.exit_code, 2);
  const auto bad = gradwire({"collective", "--scenario", scenario, "-b", "8Q"});
  EXPECT_EQ(bad.exit_code, 2);
  // alltoall has no ring: auto runs direct, and says so per size.
  const auto a2a = gradwire({"collective", "--scenario", scenario, "--op", "alltoall", "-b", "1M", "-g", "4"});
  ASSERT_EQ(a2a.exit_code, 0) << a2a.err;
  EXPECT_NE(a2a.out.find("alltoall / auto / auto"), std::string::npos);
  EXPECT_NE(a2a.out.find("#   1.00 MiB .. 1.00 MiB: direct/Simple"), std::string::npos) << a2a.out;
  const auto log = nccl_tests::parse_log(a2a.out, "a2a.out");
  EXPECT_EQ(log.world_size(), 4);
  EXPECT_EQ(log.rows.at(0).count, 1048576.0 / 4 / 4);  // per rank, as nccl-tests counts
}

TEST(CollectiveCli, TheChosenPairPerSizeAndItsPins) {
  // One H100 node: NCCL's rule picks ring/LL for small sizes and NVLS/Simple
  // for large ones; the table says so after nccl-tests' footer, the CSV per row.
  const std::string node = std::string(GW_SOURCE_DIR) + "/validation/clusters/h100-sxm-1x8.yaml";
  const auto r = gradwire({"collective", node, "-b", "8", "-e", "8G", "-f", "1024"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("#   8 B .. 8.00 KiB: ring/LL\n#   8.00 MiB .. 8.00 GiB: nvls/Simple"), std::string::npos)
      << r.out;
  EXPECT_EQ(nccl_tests::parse_log(r.out, "auto.out").rows.size(), 4u);  // still nccl-tests' layout
  const auto csv =
      gradwire({"collective", node, "--sizes", "1GiB", "--algo", "ring", "--proto", "ll128", "--format", "csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_NE(csv.out.find(",ring,LL128\n"), std::string::npos) << csv.out;
  // NCCL_ALGO / NCCL_PROTO stand in for the options (one name each).
  ::setenv("NCCL_ALGO", "Ring", 1);
  ::setenv("NCCL_PROTO", "Simple", 1);
  const auto env = gradwire({"collective", node, "--sizes", "8B", "--format", "csv"});
  ::setenv("NCCL_PROTO", "LL,Simple", 1);
  const auto list = gradwire({"collective", node, "--sizes", "8B"});
  ::unsetenv("NCCL_ALGO");
  ::unsetenv("NCCL_PROTO");
  EXPECT_NE(env.out.find(",ring,Simple\n"), std::string::npos) << env.out << env.err;
  EXPECT_EQ(list.exit_code, 2);
  EXPECT_NE(list.err.find("NCCL_PROTO=LL,Simple"), std::string::npos) << list.err;
  // NVLS where the node has none (A100): an input error.
  const std::string a100 = std::string(GW_SOURCE_DIR) + "/validation/clusters/a100-sxm-1x8.yaml";
  EXPECT_EQ(gradwire({"collective", a100, "--algo", "nvls", "--sizes", "1M"}).exit_code, 2);
}

TEST(CollectiveCli, CompareOnARealLog) {
  const std::string cluster = std::string(GW_SOURCE_DIR) + "/validation/clusters/h100-a3-mega-2x8.yaml";
  const auto r = gradwire({"collective", "--scenario", cluster, "--compare", kA3});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("allreduce on 16 GPUs (2 node(s) measured"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("8589934592"), std::string::npos);
  EXPECT_NE(r.out.find("median |error| below 1 MiB"), std::string::npos);
  const auto json = gradwire({"collective", "--scenario", cluster, "--compare", kA3, "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto doc = nlohmann::json::parse(json.out);
  ASSERT_EQ(doc["schema"], "gradwire-compare/1");
  const auto& points = doc["case"]["points"];
  ASSERT_EQ(points.size(), 31u);
  // The measured busbw is the log's own, from the median of its two times as
  // calibrate takes it: 47535 and 47743 us at 8 GiB -> 338.08 GB/s (the
  // out-of-place column alone prints 338.82).
  EXPECT_EQ(points[30]["size_bytes"].get<double>(), 8589934592.0);
  EXPECT_NEAR(points[30]["published_busbw_bytes_per_s"].get<double>() / 1e9, 338.08, 0.02);
  EXPECT_GT(points[30]["predicted_busbw_bytes_per_s"].get<double>(), 0);
  // An op that contradicts the log, and a log larger than the cluster.
  EXPECT_EQ(gradwire({"collective", "--scenario", cluster, "--compare", kA3, "-g", "8"}).exit_code, 2);
  const auto wrong_op = gradwire({"collective", "--scenario", cluster, "--compare", kA3, "--op", "allgather"});
  EXPECT_EQ(wrong_op.exit_code, 2);
  const std::string small = std::string(GW_SOURCE_DIR) + "/validation/clusters/rtx2080ti-pcie-1x2.yaml";
  EXPECT_EQ(gradwire({"collective", "--scenario", small, "--compare", kA3}).exit_code, 2);
  const auto ag = gradwire({"collective", "--scenario", small, "--compare", k2080Gather});
  EXPECT_EQ(ag.exit_code, 0) << ag.err;
  EXPECT_NE(ag.out.find("allgather on 2 GPUs"), std::string::npos);
  const auto malformed = gradwire({"collective", "--scenario", small, "--compare", kData + "bad/garbage-row.log"});
  EXPECT_EQ(malformed.exit_code, 2);
  EXPECT_NE(malformed.err.find("garbage-row.log:13:"), std::string::npos) << malformed.err;
}

TEST(CalibrateFromNcclTests, FitsLoadAndSimulate) {
  const fs::path dir = fs::temp_directory_path() / ("gw-nccl-tests-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string out = (dir / "fitted.yaml").string();
  const auto r =
      gradwire({"calibrate", "--from-nccl-tests", kA3, k2080Reduce, k2080Gather, "--profile", "h100", "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Profile p = load_profile_file(out);
  const CollectiveCost* multi = p.collective(CollectiveOp::AllReduce, 16, 2);
  ASSERT_NE(multi, nullptr);
  EXPECT_EQ(multi->points.size(), 31u);
  EXPECT_GT(multi->fit.alpha, 50e-6);  // the log's ~120 us floor
  EXPECT_GT(multi->fit.beta, 100e9);   // ~180 GB/s algbw at 8 GiB
  EXPECT_GT(multi->fit.max_rel_residual, 0);
  ASSERT_NE(p.collective(CollectiveOp::AllReduce, 2), nullptr);
  ASSERT_NE(p.collective(CollectiveOp::AllGather, 2), nullptr);
  EXPECT_EQ(p.collective(CollectiveOp::AllGather, 2)->points.size(), 26u);  // the 0 B rows left out
  const auto sim = gradwire({"simulate", "--profile", out, std::string(GW_SOURCE_DIR) + "/scenarios/default.yaml"});
  EXPECT_EQ(sim.exit_code, 0) << sim.err;
  // On the logs' own cluster (2 nodes x 8 H100), simulate times every
  // all-reduce with the measured curve instead of the network model, and
  // says so (tests/validate/test_measured_curves.cpp: every bundled log).
  const std::string a3 = (dir / "a3mega.yaml").string();
  {
    std::ofstream f(a3);
    f << "cluster:\n  nodes: 2\n  gpus_per_node: 8\n  gpu: h100\n"
         "  intra_node: {bandwidth: 450GB/s, latency: 1us, transport: nvswitch}\n"
         "  nics: {count: 8, bandwidth: 200Gbps, latency: 5us, transport: tcpx}\n"
         "  fabric: {topology: switch, latency: 1us}\nworkload:\n  model: bert-base\n  micro_batch: 8\n";
  }
  const auto measured = gradwire({"simulate", "--profile", out, a3, "--format", "json"});
  ASSERT_EQ(measured.exit_code, 0) << measured.err;
  const auto j = nlohmann::json::parse(measured.out);
  EXPECT_EQ(j.at("measured_collectives"), nlohmann::json::array({"allreduce on 16 GPUs, 2 nodes"}));
  PiecewiseLogFit curve;
  curve.knots = multi->points;
  int steps = 0;
  for (const auto& b : j.at("buckets")) {
    for (const auto& st : b.at("steps")) {
      const double bytes = st.at("size_bytes").get<double>();
      EXPECT_NEAR(st.at("end_s").get<double>() - st.at("start_s").get<double>(), curve.evaluate(bytes),
                  1e-6 * curve.evaluate(bytes));
      ++steps;
    }
  }
  EXPECT_GT(steps, 0);
  const auto modelled = gradwire({"simulate", "--profile", "h100", a3, "--format", "json"});
  ASSERT_EQ(modelled.exit_code, 0) << modelled.err;
  EXPECT_FALSE(nlohmann::json::parse(modelled.out).contains("measured_collectives"));
  // A sweep over node counts: only the logs' own cluster says it was measured.
  {
    std::ofstream f(dir / "nodes.yaml");
    f << "base:\n  cluster:\n    nodes: 2\n    gpus_per_node: 8\n    gpu: " << out
      << "\n    intra_node: {bandwidth: 450GB/s, latency: 1us, transport: nvswitch}\n"
         "    nics: {count: 8, bandwidth: 200Gbps, latency: 5us, transport: tcpx}\n"
         "    fabric: {topology: switch, latency: 1us}\n"
         "  workload: {model: bert-base, micro_batch: 8}\naxes:\n  cluster.nodes: [2, 4]\n";
  }
  const std::string results = (dir / "nodes.jsonl").string();
  const auto swept = gradwire({"sweep", (dir / "nodes.yaml").string(), "--out", results, "-j", "1"});
  ASSERT_EQ(swept.exit_code, 0) << swept.err;
  std::ifstream in(results);
  int records = 0;
  for (std::string line; std::getline(in, line); ++records) {
    const auto rec = nlohmann::json::parse(line);
    const bool two = rec.at("nodes").get<int>() == 2;
    EXPECT_EQ(rec.contains("measured_collectives"), two) << line;
    if (two) {
      EXPECT_EQ(rec.at("measured_collectives"), nlohmann::json::array({"allreduce on 16 GPUs, 2 nodes"}));
    }
  }
  EXPECT_EQ(records, 2);
  // Never over an input; a log without a simulated op is refused with its name.
  EXPECT_EQ(gradwire({"calibrate", "--from-nccl-tests", kA3, "--profile", "h100", "--out", kA3}).exit_code, 2);
  const std::string reduce = (dir / "x.log").string();
  {
    std::ofstream f(reduce);
    f << "# Collective test starting: reduce_perf\n"
         "           8             2     float     sum       0    10.39    0.00    0.00      0     9.88    0.00    "
         "0.00      0\n";
  }
  const auto refused = gradwire({"calibrate", "--from-nccl-tests", reduce, "--profile", "h100", "--out", out + "2"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("reduce_perf is not a collective gradwire simulates"), std::string::npos) << refused.err;
  EXPECT_EQ(gradwire({"calibrate", "--from-nccl-tests", kA3, "--out", out + "3"}).exit_code, 2);  // no --profile
  fs::remove_all(dir);
}

TEST(CalibrateFromNcclTests, AFitTheLoaderWouldRefuseIsNotWritten) {
  // Times that barely grow give a bandwidth of about 10^17 B/s, outside the
  // profile's plausible range: the calibrator reads its profile back first
  // and fails (exit 1) naming the field, instead of writing a profile that
  // `check` and `simulate` refuse.
  const fs::path dir = fs::temp_directory_path() / ("gw-nccl-flat-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string out = (dir / "flat.yaml").string();
  const auto r = gradwire(
      {"calibrate", "--from-nccl-tests", kData + "bad/flat-times.log", "--profile", "a100-80gb", "--out", out});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("would not load, so nothing is written"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(".beta: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("out of the plausible range"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
  fs::remove_all(dir);
}

// An appended log (tests/data/nccl-tests/good/): --compare takes one run,
// the one of --op, and says which rows it left out.
TEST(CollectiveCli, CompareTakesOneRunOfAnAppendedLog) {
  const std::string small = std::string(GW_SOURCE_DIR) + "/validation/clusters/rtx2080ti-pcie-1x2.yaml";
  const std::string named = kData + "good/appended-named-runs.log";
  const auto both = gradwire({"collective", "--scenario", small, "--compare", named});
  EXPECT_EQ(both.exit_code, 2) << both.err;
  EXPECT_NE(
      both.err.find("appended-named-runs.log:42:1: a second run to compare (line 1: all_reduce_perf, 2 ranks on 1 "
                    "node; line 42: all_gather_perf, 2 ranks on 1 node): choose one with --op OP"),
      std::string::npos)
      << both.err;
  const auto ag =
      gradwire({"collective", "--scenario", small, "--compare", named, "--op", "allgather", "--format", "json"});
  ASSERT_EQ(ag.exit_code, 0) << ag.err;
  EXPECT_EQ(nlohmann::json::parse(ag.out)["case"]["points"].size(), 26u);  // the all_gather run's sizes above 0 B
  // The run compared and the one left out are said (the latter was dropped silently).
  EXPECT_EQ(ag.err, "gradwire collective: note: " + named +
                        ":1:1: run left out: all_reduce_perf, 2 ranks on 1 node, "
                        "not the collective asked for; using the run at line 42: all_gather_perf, 2 ranks on 1 node\n");
  // The log: the all_gather run names no op; --op allgather takes it.
  const auto unnamed =
      gradwire({"collective", "--scenario", small, "--compare", kData + "good/appended-ops.log", "--op", "allgather"});
  EXPECT_EQ(unnamed.exit_code, 0) << unnamed.err;
  EXPECT_NE(unnamed.out.find("allgather on 2 GPUs"), std::string::npos) << unnamed.out;
  const auto wrong =
      gradwire({"collective", "--scenario", small, "--compare", kData + "good/wrong-rows.log", "--format", "json"});
  ASSERT_EQ(wrong.exit_code, 0) << wrong.err;
  EXPECT_EQ(nlohmann::json::parse(wrong.out)["case"]["points"].size(), 26u);  // 28 rows, 2 left out
  EXPECT_NE(wrong.err.find("gradwire collective: note: " + kData + "good/wrong-rows.log:23:"), std::string::npos)
      << wrong.err;
}

// `calibrate --from-nccl-tests LOG --write-cluster FILE` (issue 31, item 5),
// a measurement and back: the engine prints a log on a cluster of known NICs
// (4 x 8 A100, 4 x 200 Gbps InfiniBand of 30 us per node), the cluster fitted
// to that log has those NICs (rate within 0.1%, latency within 1%), loads
// with `check`, and `collective --compare` of the log on it gives every size
// back within 1% (the log prints 4 to 6 digits; closed forms and the engine
// agree within 0.1% on ring and tree, the pairs NCCL's rule picks here).
TEST(CalibrateFromNcclTests, AClusterFittedToALogGivesItBack) {
  const fs::path dir = fs::temp_directory_path() / ("gw-write-cluster-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string truth = (dir / "truth.yaml").string(), log = (dir / "truth.log").string();
  {
    std::ofstream f(truth);  // intra_node from the a100-40gb profile, as the fitted cluster takes it
    f << "cluster:\n  nodes: 4\n  gpus_per_node: 8\n  gpu: a100-40gb\n"
         "  nics: {count: 4, bandwidth: 200Gbps, latency: 30us, transport: ib}\n  fabric: {topology: switch}\n";
  }
  const auto printed = gradwire({"collective", truth, "-b", "8", "-e", "1G", "-f", "2"});
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  std::ofstream(log) << printed.out;
  const std::string out = (dir / "fitted.yaml").string();
  const auto r = gradwire({"calibrate", "--from-nccl-tests", log, "--write-cluster", out, "--nics", "4",
                           "--nic-transport", "ib", "--name", "my cluster"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(
      r.err.find("gradwire calibrate: wrote " + out + " (4 x 8 a100-40gb; 4 NICs of 200.00 Gbps, latency 30.00 us;"),
      std::string::npos)
      << r.err;
  const auto check = gradwire({"check", out});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  const Scenario s = load_scenario(out);
  EXPECT_EQ(s.name, "my cluster");
  EXPECT_EQ(s.cluster.nodes, 4);
  EXPECT_EQ(s.cluster.gpus_per_node, 8);
  EXPECT_EQ(s.cluster.gpu, "a100-40gb");
  EXPECT_EQ(s.cluster.nic_count, 4);
  EXPECT_EQ(s.cluster.nic.transport, Transport::IB);
  EXPECT_NEAR(s.cluster.nic.bandwidth / 25e9, 1.0, 1e-3);
  EXPECT_NEAR(s.cluster.nic.latency / 30e-6, 1.0, 1e-2);
  const auto cmp = gradwire({"collective", out, "--compare", log, "--format", "json"});
  ASSERT_EQ(cmp.exit_code, 0) << cmp.err;
  const auto points = nlohmann::json::parse(cmp.out)["case"]["points"];
  ASSERT_EQ(points.size(), 28u);  // 8 B .. 1 GiB
  for (const auto& p : points) {
    EXPECT_NEAR(p["predicted_busbw_bytes_per_s"].get<double>() / p["published_busbw_bytes_per_s"].get<double>(), 1.0,
                0.01)
        << p["size_bytes"];
  }
  fs::remove_all(dir);
}

// The bundled A3 Mega log (2 x 8 H100; the fit's figures against the model:
// tests/model/test_cluster_fit.cpp): the defaults (8 NICs, one per GPU;
// transport network; intra_node from the h100 profile) and a file `check` and
// `collective` load.
TEST(CalibrateFromNcclTests, AClusterFromTheA3MegaLog) {
  const fs::path dir = fs::temp_directory_path() / ("gw-write-cluster-a3-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string out = (dir / "a3mega.yaml").string();
  const auto r = gradwire({"calibrate", "--from-nccl-tests", kA3, "--write-cluster", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("gradwire calibrate: wrote " + out + " (2 x 8 h100; 8 NICs of "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("allreduce busbw at 8.00 GiB: 338.09 GB/s measured, 338.09 GB/s modelled)"), std::string::npos)
      << r.err;
  EXPECT_EQ(gradwire({"check", out}).exit_code, 0);
  const Scenario s = load_scenario(out);
  EXPECT_EQ(s.cluster.nic_count, 8);
  EXPECT_EQ(s.cluster.nic.transport, Transport::Network);
  // The h100 profile's 8-GPU all-reduce fit: beta x 2(G-1)/G.
  EXPECT_NEAR(
      s.cluster.intra_node.bandwidth / (load_profile("h100").collective(CollectiveOp::AllReduce, 8)->fit.beta * 14 / 8),
      1.0, 1e-8);
  EXPECT_EQ(gradwire({"collective", out, "--compare", kA3}).exit_code, 0);
  fs::remove_all(dir);
}

TEST(CalibrateFromNcclTests, AClusterIsNotFittedWithoutANetwork) {
  const fs::path dir = fs::temp_directory_path() / ("gw-write-cluster-bad-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string out = (dir / "c.yaml").string();
  // One node: no network to fit; one line naming the log, exit 2, nothing written.
  const auto one = gradwire({"calibrate", "--from-nccl-tests", k2080Reduce, "--write-cluster", out});
  EXPECT_EQ(one.exit_code, 2);
  EXPECT_EQ(one.err, "gradwire calibrate: " + k2080Reduce +
                         ":1:1: all_reduce_perf, 2 ranks on 1 node: no network to fit; a cluster is fitted to a log "
                         "across nodes\n");
  // A multi-process log without "#  Rank" lines: its hosts are not known.
  const std::string bare = (dir / "bare.log").string();
  {
    std::ofstream f(bare);
    f << "# nThread 1 nGpus 16 minBytes 8 maxBytes 1048576 step: 1024(factor) warmup iters: 5 iters: 20\n"
         "           8             2     float     sum      -1    123.5    0.00    0.00      0    123.5    0.00    "
         "0.00      0\n"
         "        8192          2048     float     sum      -1    131.6    0.06    0.12      0    130.6    0.06    "
         "0.12      0\n"
         "     1048576        262144     float     sum      -1    203.2    5.16    9.68      0    207.2    5.06    "
         "9.49      0\n";
  }
  const auto no_hosts = gradwire({"calibrate", "--from-nccl-tests", bare, "--write-cluster", out});
  EXPECT_EQ(no_hosts.exit_code, 2);
  EXPECT_NE(no_hosts.err.find(bare + ":1:1: all_reduce_perf, 16 ranks on 1 node (no \"#  Rank\" lines name the hosts): "
                                     "no network to fit"),
            std::string::npos)
      << no_hosts.err;
  EXPECT_FALSE(fs::exists(out));
  // Never over the log; not with --out; not without a log; options in range.
  EXPECT_EQ(gradwire({"calibrate", "--from-nccl-tests", kA3, "--write-cluster", kA3}).exit_code, 2);
  EXPECT_EQ(nccl_tests::load_log(kA3).rows.size(), 31u);
  EXPECT_EQ(gradwire({"calibrate", "--from-nccl-tests", kA3, "--write-cluster", out, "--out", out + "2"}).exit_code, 2);
  EXPECT_EQ(gradwire({"calibrate", "--write-cluster", out}).exit_code, 2);
  EXPECT_EQ(gradwire({"calibrate", "--from-nccl-tests", kA3, "--write-cluster", out, "--nics", "0"}).exit_code, 2);
  const auto transport =
      gradwire({"calibrate", "--from-nccl-tests", kA3, "--write-cluster", out, "--nic-transport", "nvlink"});
  EXPECT_EQ(transport.exit_code, 2);
  EXPECT_NE(transport.err.find("--nic-transport must be one of network, ib, roce, efa, socket, tcpx"),
            std::string::npos)
      << transport.err;
  EXPECT_EQ(
      gradwire({"calibrate", "--from-nccl-tests", kA3, "--profile", "h100", "--out", out, "--nics", "4"}).exit_code, 2);
  // A directory as the output.
  EXPECT_EQ(gradwire({"calibrate", "--from-nccl-tests", kA3, "--write-cluster", dir.string()}).exit_code, 2);
  EXPECT_FALSE(fs::exists(out));
  fs::remove_all(dir);
}
