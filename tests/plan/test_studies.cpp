// The bundled studies reach their expected qualitative outcomes, and the
// report renders from them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "gradwire/core/atomic_file.hpp"
#include "gradwire/plan/report.hpp"
#include "gradwire/plan/sweep.hpp"

namespace gw::plan {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// Runs a sweep with the closed form and returns its records.
std::vector<json> run_spec(const SweepSpec& spec, const std::string& out) {
  RunOptions o;
  o.jobs = 2;
  o.out = out;
  o.progress = RunOptions::Progress::None;
  const auto sum = run_sweep(spec, o, closed_form_iteration, "closed form");
  EXPECT_EQ(sum.failed, 0u);
  std::vector<json> recs;
  for (const auto& l : read_results(out)) recs.push_back(json::parse(l.text));
  EXPECT_EQ(recs.size(), spec.points);
  return recs;
}

std::vector<json> run_study(const std::string& name, const std::string& out) {
  return run_spec(load_sweep(std::string(GW_SOURCE_DIR) + "/scenarios/" + name), out);
}

// The bundled study with some axes cut down (the full grid is documented in
// the study file and docs/planning.md): the same base and compressors.
std::vector<json> run_reduced_study(const std::string& name, const std::map<std::string, YAML::Node>& axes,
                                    const std::string& out) {
  const std::string dir = std::string(GW_SOURCE_DIR) + "/scenarios";
  YAML::Node tree = YAML::LoadFile(dir + "/" + name);
  for (const auto& [key, values] : axes) tree["axes"][key] = values;
  YAML::Emitter emit;
  emit << tree;
  return run_spec(parse_sweep(emit.c_str(), name, dir), out);
}

struct Tmp {
  fs::path dir;
  Tmp() {
    std::string t = (fs::temp_directory_path() / "gw-study-XXXXXX").string();
    dir = ::mkdtemp(t.data());
  }
  ~Tmp() { fs::remove_all(dir); }
};

// Issue 16, item 1: at a fixed global batch, k follows the GPUs' memory (the
// smallest split that fits, with the reason in the record), never the network,
// and compression is what changes the cost where bandwidth is scarce.
TEST(Studies, AccumulationAtAFixedGlobalBatchFollowsMemoryAndCompressionPaysWhereBandwidthIsScarce) {
  Tmp t;
  const auto recs = run_study("study-accumulation.yaml", (t.dir / "acc.jsonl").string());
  std::map<std::string, std::map<std::string, double>> cost;  // instance -> compressor -> USD
  std::map<std::string, int> k;
  for (const auto& r : recs) {
    ASSERT_EQ(r["status"], "ok") << r.dump();
    EXPECT_EQ(r["global_batch"].get<double>(), 1024) << r.dump();
    EXPECT_EQ(r["micro_batch"].get<int>() * r["accumulation"].get<int>() * r["world"].get<int>(), 1024);
    EXPECT_NE(r["batch_split"].get<std::string>().find("the smallest that fits in memory"), std::string::npos);
    // The next smaller k does not fit: its memory exceeds the GPU's.
    const int kk = r["accumulation"].get<int>();
    if (kk > 1) {
      EXPECT_NE(r["batch_split"].get<std::string>().find("k = " + std::to_string(kk / 2) + " (micro-batch "),
                std::string::npos)
          << r.dump();
    }
    EXPECT_LE(r["memory"]["total_bytes"].get<double>(), r["memory"]["capacity_bytes"].get<double>());
    k[r["instance"]] = kk;
    cost[r["instance"]][r["compression_kind"]] = r["cost"]["on_demand_usd"].get<double>();
  }
  // 32 samples per GPU of BERT-large (1.06 GB of activations each, fp16 Adam
  // state ~7.5 GB): 16 GiB V100 -> 8 a micro-step, 24 GiB A10G -> 16, 40 GiB A100 -> 32.
  EXPECT_EQ(k["p3.16xlarge"], 4);
  EXPECT_EQ(k["g5.48xlarge"], 2);
  EXPECT_EQ(k["ND96asr_v4"], 1);
  std::map<std::string, double> gain;  // PowerSGD's saving at the same global batch
  for (const auto& [inst, by] : cost) gain[inst] = 1 - by.at("powersgd") / by.at("none");
  // PowerSGD's hook runs its first part (error feedback, P = M Q) on the
  // backward's stream (docs/model.md, "Where the hooks' kernels run"): it
  // pays where the network is scarce, and costs where it is not.
  // 25 Gbps for 8 V100s: 17.8% since issue 32 (the hook's Python per-op
  // cost and the fitted interference and rank jitter, docs/model.md).
  EXPECT_GT(gain["p3.16xlarge"], 0.15);
  EXPECT_LT(gain["g5.48xlarge"], 0.05);  // 100 Gbps for 8 A10Gs: little or nothing to gain
  EXPECT_LT(gain["ND96asr_v4"], 0.0);    // 1.6 Tbps: nothing to gain, the hook's work to pay
  EXPECT_GT(gain["p3.16xlarge"], gain["g5.48xlarge"] + 0.1);
  EXPECT_GT(gain["g5.48xlarge"], gain["ND96asr_v4"]);
}

TEST(Studies, CompressionPaysAtLowBandwidthNotAtHighAndAllGatherLosesWithScale) {
  Tmp t;
  const auto recs = run_study("study-compression.yaml", (t.dir / "comp.jsonl").string());
  std::map<std::tuple<int, double, std::string>, double> it;  // (GPUs, Gbps, compressor) -> s
  for (const auto& r : recs) {
    ASSERT_EQ(r["status"], "ok") << r.dump();
    it[{r["world"].get<int>(), r["node_bandwidth_bytes_per_s"].get<double>() * 8 / 1e9,
        r["compression"].get<std::string>()}] = r["iteration_s"].get<double>();
  }
  auto speedup = [&](int gpus, double gbps, const std::string& c) {
    return it.at({gpus, gbps, "uncompressed"}) / it.at({gpus, gbps, c});
  };
  // At a fixed global batch of 2,048 (k = 8, 2, 1 at 32, 128, 256 GPUs: the
  // fewer the GPUs, the more micro-steps share one synchronization).
  for (const auto& r : recs) EXPECT_EQ(r["global_batch"].get<double>(), 2048) << r.dump();
  for (int gpus : {32, 128, 256}) {
    for (double gbps : {1.0, 10.0}) {
      EXPECT_GT(speedup(gpus, gbps, "PowerSGD rank 4"), 1.5) << gpus << " GPUs, " << gbps << " Gbps";
      EXPECT_GT(speedup(gpus, gbps, "fp16"), 1.2) << gpus << " GPUs, " << gbps << " Gbps";
    }
    // At 400 Gbps no compressor gains more than 15%.
    for (const char* c : {"fp16", "PowerSGD rank 4", "Top-K 1%", "signSGD"})
      EXPECT_LT(speedup(gpus, 400, c), 1.15) << c << " at " << gpus << " GPUs";
  }
  // All-gather compressors lose ground as the GPU count grows, at every bandwidth.
  for (double gbps : {1.0, 10.0, 25.0, 100.0, 400.0}) {
    for (const char* c : {"Top-K 1%", "signSGD"}) {
      EXPECT_GT(speedup(32, gbps, c), speedup(128, gbps, c)) << c << " " << gbps;
      EXPECT_GT(speedup(128, gbps, c), speedup(256, gbps, c)) << c << " " << gbps;
    }
  }
  EXPECT_LT(speedup(256, 400, "Top-K 1%"), 1.0);  // it hurts at scale on a fast network

  // The report renders from these results: its figures in SVG and PNG and a page.
  const auto rep = render_report((t.dir / "comp.jsonl").string(), (t.dir / "report").string());
  for (const char* f : {"index.html", "iteration-vs-bandwidth.svg", "iteration-vs-bandwidth.png", "breakdown.svg",
                        "breakdown.png", "breakdown-share.svg", "breakdown-share.png"}) {
    EXPECT_TRUE(fs::exists(t.dir / "report" / f)) << f;
  }
  // Every data row of the bars is a configuration with four non-negative
  // phase times (a header read as a row would draw an empty bar).
  std::istringstream bars(read_file((t.dir / "report" / "breakdown.dat").string()));
  std::size_t rows = 0;
  for (std::string line; std::getline(bars, line);) {
    if (line.empty() || line[0] == '#') continue;
    ++rows;
    std::istringstream fields(line.substr(line.rfind('"') + 1));
    double v = -1;
    int count = 0;
    while (fields >> v) {
      EXPECT_GE(v, 0.0) << line;
      ++count;
    }
    EXPECT_EQ(count, 4) << line;
    EXPECT_EQ(line[0], '"') << line;
  }
  EXPECT_GT(rows, 0u);
  const std::string png = read_file((t.dir / "report" / "breakdown.png").string());
  EXPECT_EQ(png.substr(1, 3), "PNG");
  const std::string html = read_file((t.dir / "report" / "index.html").string());
  EXPECT_NE(html.find("<img src=\"iteration-vs-bandwidth.svg\""), std::string::npos);
  EXPECT_EQ(rep.ok, 100);
}

}  // namespace
}  // namespace gw::plan

namespace gw::plan {
namespace {

TEST(Studies, SeedLessonDirections) {
  Tmp t;
  const auto list = [](std::vector<std::string> v) {
    YAML::Node n;
    for (const auto& x : v) n.push_back(x);
    return n;
  };
  const auto recs = run_reduced_study("study-seed-lesson.yaml",
                                      {{"workload.model", list({"resnet50", "bert-base"})},
                                       {"cluster.nodes", list({"4", "32"})},
                                       {"cluster.nics.bandwidth", list({"1Gbps", "25Gbps", "100Gbps"})},
                                       {"workload.micro_batch", list({"16", "64"})}},
                                      (t.dir / "seed.jsonl").string());
  // (model, GPUs, Gbps per NIC, micro-batch, accumulation, kind) -> seconds
  // per sample and per iteration. The study's nodes have 8 NICs.
  using Key = std::tuple<std::string, int, double, int, int, std::string>;
  std::map<Key, double> per_sample, iteration;
  for (const auto& r : recs) {
    ASSERT_EQ(r["status"], "ok") << r.dump();
    const Key key{r["model"].get<std::string>(),
                  r["world"].get<int>(),
                  std::round(r["node_bandwidth_bytes_per_s"].get<double>() * 8 / 1e9 / 8),
                  r["micro_batch"].get<int>(),
                  r["accumulation"].get<int>(),
                  r["compression_kind"].get<std::string>()};
    per_sample[key] = 1 / r["samples_per_s"].get<double>();
    iteration[key] = r["iteration_s"].get<double>();
  }
  const auto speedup = [&](const std::string& m, int n, double g, int b, int k, const std::string& c) {
    return per_sample.at({m, n, g, b, k, "none"}) / per_sample.at({m, n, g, b, k, c});
  };
  const std::vector<std::string> kinds{"fp16", "powersgd", "topk", "sign", "majority_vote", "int8"};
  const std::vector<double> gbps{1, 25, 100};
  const std::vector<std::string> models{"resnet50", "bert-base"};
  for (const auto& m : models)
    for (int n : {32, 256})
      for (int k : {1, 4})
        for (const auto& c : kinds) {
          SCOPED_TRACE(m + " " + std::to_string(n) + " GPUs k=" + std::to_string(k) + " " + c);
          // Where it pays, the speedup falls as the bandwidth rises...
          for (int b : {16, 64})
            for (std::size_t i = 0; i + 1 < gbps.size(); ++i)
              if (speedup(m, n, gbps[i], b, k, c) > 1) {
                EXPECT_LE(speedup(m, n, gbps[i + 1], b, k, c), speedup(m, n, gbps[i], b, k, c) * (1 + 1e-9))
                    << "batch " << b << ", " << gbps[i] << " -> " << gbps[i + 1] << " Gbps";
              }
          // ... and as the batch grows.
          for (double g : gbps)
            if (speedup(m, n, g, 16, k, c) > 1) {
              EXPECT_LE(speedup(m, n, g, 64, k, c), speedup(m, n, g, 16, k, c) * (1 + 1e-9)) << g << " Gbps";
            }
        }
  // At 1 Gbps fp16 and PowerSGD pay; one byte per element all-gathered
  // (signs, int8) never does from 32 GPUs: (N-1) n bytes in against the
  // all-reduce's 2 (N-1)/N x 4n.
  for (const auto& m : models)
    for (int n : {32, 256})
      for (int b : {16, 64})
        for (double g : gbps) {
          if (g == 1) {
            EXPECT_GT(speedup(m, n, g, b, 1, "fp16"), 1.2) << m << " " << n;
            EXPECT_GT(speedup(m, n, g, b, 1, "powersgd"), 1.2) << m << " " << n;
          }
          for (const char* c : {"sign", "majority_vote", "int8"}) EXPECT_LT(speedup(m, n, g, b, 1, c), 1.0) << c;
        }
  // At 100 Gbps with overlap no compressor speeds ResNet-50 up by more than 5%.
  for (int n : {32, 256})
    for (int b : {16, 64})
      for (int k : {1, 4})
        for (const auto& c : kinds) EXPECT_LE(speedup("resnet50", n, 100, b, k, c), 1.05) << c << " " << n << " " << b;
  // From 32 to 256 GPUs the all-gather compressors' iteration grows; the
  // all-reduce ones' stays within 10% where the network's bandwidth is not
  // scarce (25 and 100 Gbps). At 1-10 Gbps NCCL's latency terms and the fewer
  // channels NCCL gives PowerSGD's small P and Q all-reduces make them grow
  // too (up to 2.9x at 1 Gbps: docs/planning.md), but less than every
  // all-gather compressor.
  for (const auto& m : models)
    for (double g : gbps)
      for (int b : {16, 64})
        for (int k : {1, 4}) {
          const auto growth = [&](const std::string& c) {
            return iteration.at({m, 256, g, b, k, c}) / iteration.at({m, 32, g, b, k, c});
          };
          double gather_growth = 1e300;
          for (const char* c : {"topk", "sign", "majority_vote", "int8"}) {
            EXPECT_GT(growth(c), 1.0) << m << " " << c;
            gather_growth = std::min(gather_growth, growth(c));
          }
          for (const char* c : {"none", "fp16", "powersgd"}) {
            if (g >= 25) {
              EXPECT_LE(growth(c), 1.10) << m << " " << c << " " << g << " Gbps";
            }
            EXPECT_LT(growth(c), gather_growth) << m << " " << c << " " << g << " Gbps";
          }
        }
  // Accumulation (k = 4 under no_sync) gains most per sample on slow networks.
  for (const auto& m : models)
    for (int n : {32, 256})
      for (int b : {16, 64}) {
        const auto gain = [&](double g) {
          return per_sample.at({m, n, g, b, 1, "none"}) / per_sample.at({m, n, g, b, 4, "none"});
        };
        EXPECT_GE(gain(1), gain(25) * (1 - 1e-9)) << m;
        EXPECT_GE(gain(25), gain(100) * (1 - 1e-9)) << m;
        EXPECT_GT(gain(1), 1.0) << m;
      }
}

}  // namespace
}  // namespace gw::plan

namespace gw::plan {
namespace {

// Issue 32, item 4: the compression study of Agarwal et al. (MLSys 2022) on
// its own cluster (64 V100 as 16 x 4, 1-25 Gbps). The directions the
// mechanisms give are asserted; the published figures (a win in about 6 of
// 200 configurations, break-even near 8 Gbps) judge the result in
// docs/planning.md and are not asserted: today's model finds more wins.
TEST(Studies, CompressionV100DirectionsAllReduceWinsFadeWithBandwidthAndBatchAllGatherLosesAtScale) {
  Tmp t;
  const std::vector<std::string> all_reduce{"fp16", "powersgd"}, all_gather{"topk", "sign", "int8"};
  // (model, micro-batch, Gbps, GPUs, kind) -> iteration seconds
  using Key = std::tuple<std::string, int, double, int, std::string>;
  std::map<Key, double> it;
  const auto collect = [&](const std::vector<json>& recs) {
    for (const auto& r : recs) {
      ASSERT_EQ(r["status"], "ok") << r.dump();
      it[{r["model"].get<std::string>(), r["micro_batch"].get<int>(),
          std::round(r["node_bandwidth_bytes_per_s"].get<double>() * 8 / 1e9), r["world"].get<int>(),
          r["compression_kind"].get<std::string>()}] = r["iteration_s"].get<double>();
    }
  };
  collect(run_study("study-compression-v100.yaml", (t.dir / "v100.jsonl").string()));
  // The same grid on 4 nodes (16 GPUs) at four of the bandwidths.
  YAML::Node nodes, gbps_few;
  nodes.push_back("4");
  for (const char* g : {"1Gbps", "5Gbps", "10Gbps", "25Gbps"}) gbps_few.push_back(g);
  collect(run_reduced_study("study-compression-v100.yaml",
                            {{"cluster.nodes", nodes}, {"cluster.nics.bandwidth", gbps_few}},
                            (t.dir / "v100-16.jsonl").string()));
  ASSERT_EQ(it.size(), 384u + 192u);
  const auto speedup = [&](const std::string& m, int b, double g, int n, const std::string& c) {
    return it.at({m, b, g, n, "none"}) / it.at({m, b, g, n, c});
  };
  const std::vector<double> gbps{1, 2, 5, 8, 10, 15, 20, 25};
  const std::vector<std::pair<std::string, std::vector<int>>> workloads{
      {"resnet50", {16, 32, 64}}, {"resnet101", {16, 32, 64}}, {"bert-base", {8, 16}}};
  for (const auto& [m, batches] : workloads)
    for (int b : batches) {
      SCOPED_TRACE(m + " batch " + std::to_string(b));
      // (1) Where an all-reduce compressor pays, its speedup falls as the
      // bandwidth rises: the communication it saves shrinks.
      for (const auto& c : all_reduce)
        for (std::size_t i = 0; i + 1 < gbps.size(); ++i)
          if (speedup(m, b, gbps[i], 64, c) > 1) {
            EXPECT_LE(speedup(m, b, gbps[i + 1], 64, c), speedup(m, b, gbps[i], 64, c) * (1 + 1e-9))
                << c << " " << gbps[i] << " -> " << gbps[i + 1] << " Gbps";
          }
      for (double g : gbps) {
        // (2) At 64 workers the best all-gather compressor loses against the
        // best all-reduce one, and one byte per element all-gathered (sign,
        // int8) against both all-reduce ones.
        double gather_best = 0;
        for (const auto& c : all_gather) gather_best = std::max(gather_best, speedup(m, b, g, 64, c));
        EXPECT_LT(gather_best, std::max(speedup(m, b, g, 64, "fp16"), speedup(m, b, g, 64, "powersgd")))
            << g << " Gbps";
        for (const char* c : {"sign", "int8"})
          for (const auto& r : all_reduce)
            EXPECT_LT(speedup(m, b, g, 64, c), speedup(m, b, g, 64, r)) << c << " " << g << " Gbps";
      }
    }
  // (3) A larger batch (more compute to hide behind) shrinks every winning
  // compressor's speedup.
  for (const auto& [m, batches] : workloads)
    for (std::size_t i = 0; i + 1 < batches.size(); ++i)
      for (double g : gbps)
        for (const auto& c : {"fp16", "powersgd", "topk", "sign", "int8"})
          if (speedup(m, batches[i], g, 64, c) > 1) {
            EXPECT_LE(speedup(m, batches[i + 1], g, 64, c), speedup(m, batches[i], g, 64, c) * (1 + 1e-9))
                << m << " " << c << " " << g << " Gbps, batch " << batches[i] << " -> " << batches[i + 1];
          }
  // (4) From 16 to 64 workers every all-gather compressor's iteration grows
  // more than every all-reduce one's (uncompressed included): each worker
  // receives the other N-1 workers' messages.
  for (const auto& [m, batches] : workloads)
    for (int b : batches)
      for (double g : {1.0, 5.0, 10.0, 25.0}) {
        const auto growth = [&](const std::string& c) { return it.at({m, b, g, 64, c}) / it.at({m, b, g, 16, c}); };
        double reduce_worst = growth("none");
        for (const auto& c : all_reduce) reduce_worst = std::max(reduce_worst, growth(c));
        for (const auto& c : all_gather)
          EXPECT_GT(growth(c), reduce_worst) << m << " batch " << b << ", " << g << " Gbps, " << c;
      }
}

// Issue 33, item 8: 7B-70B on 64-1,024 H100 at a fixed global batch of 1,024
// sequences, sharding scheme x accumulation (scenarios/study-sharding.yaml).
// Directions that follow from each scheme's mechanism (docs/model.md, 7c).
TEST(Studies, ShardingSchemesAtAFixedGlobalBatchFollowTheirMechanisms) {
  Tmp t;
  const auto recs = run_study("study-sharding.yaml", (t.dir / "sharding.jsonl").string());
  // 4 models x 3 node counts x 5 k x the schemes: the 4 simulated today,
  // and HSDP and ZeRO++ once they are uncommented in the study.
  ASSERT_EQ(recs.size() % (4 * 3 * 5), 0u);
  ASSERT_GE(recs.size(), 4u * 3 * 5 * 4);
  // (model, GPUs, scheme, k) -> the record
  using Key = std::tuple<std::string, int, std::string, int>;
  std::map<Key, json> at;
  for (const auto& r : recs) {
    const auto& p = r["params"];
    const int k = std::stoi(p["workload.accumulation"].get<std::string>());
    const int gpus = 8 * std::stoi(p["cluster.nodes"].get<std::string>());
    // A split that does not divide the global batch is invalid, nothing else.
    EXPECT_EQ(r["status"] == "invalid", 1024 % (gpus * k) != 0) << r.dump();
    if (r["status"] == "invalid") continue;
    ASSERT_TRUE(r["status"] == "ok" || r["status"] == "no_fit") << r.dump();
    EXPECT_EQ(r["micro_batch"].get<int>() * k * gpus, 1024) << r.dump();
    at[{p["workload.model"].get<std::string>(), gpus, p["workload.sharding"].get<std::string>(), k}] = r;
  }
  const auto ok = [&](const Key& key) { return at.count(key) && at.at(key)["status"] == "ok"; };
  const auto fig = [&](const Key& key, const char* f) { return at.at(key)[f].get<double>(); };
  const auto memory = [&](const Key& key) { return at.at(key)["memory"]["total_bytes"].get<double>(); };
  // (1) Memory follows what each scheme shards: 70B on 1,024 GPUs does not
  // fit under ZeRO-1 (16-bit parameters and gradients whole: 4 x 69.0e9
  // bytes > 80 GB) nor SHARD_GRAD_OP (parameters whole from forward to
  // backward), and fits under FULL_SHARD.
  EXPECT_FALSE(ok({"llama2-70b", 1024, "zero1", 1}));
  EXPECT_GT(memory({"llama2-70b", 1024, "zero1", 1}), 4 * 68.9e9);
  EXPECT_FALSE(ok({"llama2-70b", 1024, "shard_grad_op", 1}));
  EXPECT_TRUE(ok({"llama2-70b", 1024, "full_shard", 1}));
  const std::vector<std::string> models{"llama2-7b", "llama2-13b", "llama2-34b", "llama2-70b"};
  const std::vector<std::string> schemes{"full_shard", "shard_grad_op", "zero1", "zero3"};
  for (const auto& m : models)
    for (int gpus : {64, 256, 1024})
      for (int k : {1, 2, 4, 8, 16}) {
        if (!at.count({m, gpus, "zero1", k})) continue;
        SCOPED_TRACE(m + " on " + std::to_string(gpus) + " GPUs, k = " + std::to_string(k));
        EXPECT_LT(memory({m, gpus, "full_shard", k}), memory({m, gpus, "shard_grad_op", k}));
        EXPECT_LT(memory({m, gpus, "shard_grad_op", k}), memory({m, gpus, "zero1", k}));
        for (const auto& s : schemes) {
          // (2) More accumulation, smaller micro-batches: less memory, so a
          // split that fits stays fitting with more micro-steps.
          if (k > 1 && at.count({m, gpus, s, k / 2})) {
            EXPECT_LT(memory({m, gpus, s, k}), memory({m, gpus, s, k / 2})) << s;
            if (ok({m, gpus, s, k / 2})) EXPECT_TRUE(ok({m, gpus, s, k})) << s;
          }
          // (3) More GPUs at the same global batch: less compute each, a
          // shorter optimizer step for every scheme that fits both.
          if (gpus < 1024 && ok({m, gpus, s, k}) && ok({m, 4 * gpus, s, k}))
            EXPECT_LT(fig({m, 4 * gpus, s, k}, "iteration_s"), fig({m, gpus, s, k}, "iteration_s")) << s;
        }
        if (k == 1 || !ok({m, gpus, "full_shard", k / 2})) continue;
        // (4) FULL_SHARD (FSDP1, synchronizing every micro-step) gathers the
        // parameters twice and reduce-scatters the gradients in every
        // micro-step: twice the micro-steps, twice the bytes per optimizer
        // step, and more of them exposed at the same compute; ZeRO-1 reduces
        // once at the boundary: its bytes and its step do not move with k.
        const Key fs{m, gpus, "full_shard", k}, fs_half{m, gpus, "full_shard", k / 2};
        EXPECT_NEAR(fig(fs, "wire_per_gpu_bytes"), 2 * fig(fs_half, "wire_per_gpu_bytes"),
                    1e-9 * fig(fs, "wire_per_gpu_bytes"));
        EXPECT_GT(fig(fs, "exposed_communication_s"), fig(fs_half, "exposed_communication_s"));
        EXPECT_GT(fig(fs, "iteration_s"), fig(fs_half, "iteration_s"));
        const Key z1{m, gpus, "zero1", k}, z1_half{m, gpus, "zero1", k / 2};
        if (ok(z1) && ok(z1_half)) {
          EXPECT_DOUBLE_EQ(fig(z1, "wire_per_gpu_bytes"), fig(z1_half, "wire_per_gpu_bytes"));
          EXPECT_NEAR(fig(z1, "iteration_s"), fig(z1_half, "iteration_s"), 1e-9 * fig(z1, "iteration_s"));
        }
      }
  // (5) On 64 GPUs accumulation is what makes the larger models fit: the
  // smallest k that fits under FULL_SHARD grows with the model.
  const auto smallest_k = [&](const std::string& m) {
    for (int k : {1, 2, 4, 8, 16})
      if (ok({m, 64, "full_shard", k})) return k;
    return 0;
  };
  EXPECT_GE(smallest_k("llama2-7b"), 1);
  EXPECT_LE(smallest_k("llama2-7b"), smallest_k("llama2-13b"));
  EXPECT_LT(smallest_k("llama2-13b"), smallest_k("llama2-70b"));
}

}  // namespace
}  // namespace gw::plan
