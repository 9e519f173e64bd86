// Honest plans (issue 16, items 1-4), through the real executable: a fixed
// global batch whose k follows memory and is explained, plans that never
// compare different global batches silently, memory verdicts with a fixed
// batch, prices of your own and user catalogs added to the bundled one, plans
// ranked by time without a price, simulate's time-to-train and cost, and the
// measured profile preferred for an instance's GPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "run_util.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kBin = GW_GRADWIRE_BIN;
const std::string kSource = GW_SOURCE_DIR;

fs::path scratch(const std::string& name) { return gw::test::temp_scratch("gradwire-plans", name); }

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

/// The first line of `text` that starts with `prefix`, "" when none.
std::string line_starting(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(prefix, 0) == 0) return line;
  return "";
}

const char* kSpelledCluster =
    "cluster:\n  nodes: 2\n  gpus_per_node: 8\n  gpu: a100-80gb\n"
    "  intra_node: {bandwidth: 300GB/s, latency: 1us}\n"
    "  nics: {count: 1, bandwidth: 100Gbps, latency: 5us}\n"
    "  fabric: {topology: switch, latency: 1us}\n";

const char* kGpt2 = "workload:\n  model: gpt2\n  micro_batch: 8\n  precision: fp32\n  optimizer: {kind: adamw}\n";

// Bullet 1: the accumulation study at a fixed global batch; its plan states
// the batch and explains k by the memory limit. (f2c0d4f: the study had no
// global batch and the plan compared k = 8's 8x larger batch with k = 1.)
TEST(PlansCli, AccumulationStudyPlanStatesTheGlobalBatchAndWhyKIsWhatItIs) {
  const fs::path d = scratch("study");
  const auto r = gw::test::run(
      {kBin, "plan", kSource + "/scenarios/study-accumulation.yaml", (d / "acc.jsonl").string(), "-j", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.out.find("global batch: 1024 samples per optimizer step, for every point"), std::string::npos) << r.out;
  const std::string rec = line_starting(r.out, "recommendation: ");
  EXPECT_NE(rec.find("global batch 1024"), std::string::npos) << rec;
  EXPECT_NE(rec.find("the smallest that fits in memory (micro-batch "), std::string::npos) << rec;
  EXPECT_NE(rec.find("GiB available"), std::string::npos) << rec;
  EXPECT_EQ(r.out.find("different global batches"), std::string::npos) << r.out;
}

// Bullet 1: a sweep whose k grows the batch is planned per global batch, and says so.
TEST(PlansCli, PlanDoesNotCompareDifferentGlobalBatchesSilently) {
  const fs::path d = scratch("batches");
  write(d / "base.yaml", std::string(kSpelledCluster) + "  cloud: onprem\n  price_per_gpu_hour: 2\n" + kGpt2 +
                             "training: {samples: 1000000}\n");
  write(d / "sweep.yaml",
        "base: base.yaml\naxes:\n  workload.accumulation: [1, 4]\n"
        "  workload.compression: [{kind: none}, {kind: fp16}]\n");
  const auto r = gw::test::run({kBin, "plan", (d / "sweep.yaml").string(), "-j", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.out.find("note: the points have 2 different global batches (128, 512), compared only within each"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("== global batch 128 =="), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("== global batch 512 =="), std::string::npos) << r.out;
  // Each recommendation names its own batch.
  std::istringstream in(r.out);
  std::string line;
  int recs = 0;
  while (std::getline(in, line)) {
    if (line.rfind("recommendation: ", 0) != 0) continue;
    ++recs;
    EXPECT_NE(line.find(recs == 1 ? "global batch 128)" : "global batch 512)"), std::string::npos) << line;
  }
  EXPECT_EQ(recs, 2);
}

// Bullet 1: with a stated convergence cost (the critical-batch law), points at
// different global batches are compared, the larger batch paying for its samples.
TEST(PlansCli, TheCriticalBatchLawComparesDifferentGlobalBatches) {
  const fs::path d = scratch("law");
  write(d / "base.yaml", std::string(kSpelledCluster) + "  cloud: onprem\n  price_per_gpu_hour: 2\n" + kGpt2 +
                             "training: {samples: 1000000, reference_batch: 128, critical_batch: 256}\n");
  write(d / "sweep.yaml", "base: base.yaml\naxes:\n  workload.accumulation: [1, 4]\n");
  const auto r = gw::test::run({kBin, "plan", (d / "sweep.yaml").string(), (d / "r.jsonl").string(), "-j", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.out.find("note: global batches 128 to 512 compared with the critical-batch law"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("== global batch"), std::string::npos) << r.out;
  std::ifstream in(d / "r.jsonl");
  std::map<double, double> samples;  // global batch -> samples to train
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    samples[j["global_batch"].get<double>()] = j["training"]["samples"].get<double>();
    EXPECT_EQ(j["training"]["critical_batch"].get<double>(), 256);
  }
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_DOUBLE_EQ(samples[128], 1e6);                          // the reference batch
  EXPECT_DOUBLE_EQ(samples[512], 1e6 * (1 + 2.0) / (1 + 0.5));  // (1 + B/Bn) / (1 + R/Bn)
}

// Bullet 1 in simulate: micro-batch and k follow training.global_batch, and a
// global batch that does not divide is an input error at its key.
TEST(PlansCli, SimulateSplitsAFixedGlobalBatchByMemory) {
  const fs::path d = scratch("simbatch");
  write(d / "s.yaml",
        "cluster: {instance: p3.16xlarge, nodes: 4}\n"
        "workload:\n  model: bert-large\n  precision: fp16\n  optimizer: {kind: adamw}\n"
        "training: {samples: 1000000, global_batch: 1024}\n");
  auto r = gw::test::run({kBin, "simulate", (d / "s.yaml").string()});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.out.find("micro-batch: 8   accumulation: 4   global batch: 1024"), std::string::npos) << r.out;
  const std::string batch = line_starting(r.out, "batch: ");
  EXPECT_EQ(batch.rfind("batch: global batch 1024 = micro-batch 8 x k = 4 x 32 GPUs (training.global_batch; k = 4, "
                        "the smallest that fits in memory (micro-batch 8 needs ",
                        0),
            0u)
      << r.out;
  EXPECT_NE(batch.find("16.0 GiB available): k = 2 (micro-batch 16) needs "), std::string::npos) << batch;
  // check reports the same split without simulating.
  const auto c = gw::test::run({kBin, "check", (d / "s.yaml").string()});
  ASSERT_EQ(c.exit_code, 0) << c.all();
  EXPECT_NE(c.out.find("; global batch 1024: micro-batch 8, k = 4, the smallest that fits in memory"),
            std::string::npos)
      << c.out;
  write(d / "bad.yaml",
        "cluster: {instance: p3.16xlarge, nodes: 4}\n"
        "workload:\n  model: bert-large\n  accumulation: 3\n"
        "training: {samples: 1000000, global_batch: 1000}\n");
  r = gw::test::run({kBin, "simulate", (d / "bad.yaml").string()});
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("bad.yaml:5:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("training.global_batch"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not a multiple of 32 GPUs x accumulation 3"), std::string::npos) << r.err;
  // and check refuses it at the same place.
  const auto cb = gw::test::run({kBin, "check", (d / "bad.yaml").string()});
  EXPECT_EQ(cb.exit_code, 2) << cb.all();
  EXPECT_NE(cb.err.find("bad.yaml:5:"), std::string::npos) << cb.err;
  EXPECT_NE(cb.err.find("training.global_batch"), std::string::npos) << cb.err;
}

// Bullet 2 with a fixed global batch: no split fits, simulate refuses (exit 3)
// and plan names the memory limit as the reason for every point.
TEST(PlansCli, NothingFitsAtAFixedGlobalBatch) {
  const fs::path d = scratch("nofit");
  write(d / "base.yaml",
        "cluster: {instance: p4d.24xlarge, nodes: 2}\n"
        "workload:\n  model: llama2-7b\n  precision: fp32\n  optimizer: {kind: adam}\n"
        "training: {samples: 1000000, global_batch: 256}\n");
  auto r = gw::test::run({kBin, "simulate", (d / "base.yaml").string()});
  EXPECT_EQ(r.exit_code, 3) << r.all();
  EXPECT_NE(r.err.find("does not fit in GPU memory"), std::string::npos) << r.err;
  write(d / "sweep.yaml", "base: base.yaml\naxes:\n  cluster.nodes: [1, 2]\n");
  r = gw::test::run({kBin, "plan", (d / "sweep.yaml").string(), "-j", "1"});
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_NE(r.out.find("no recommendation: all 2 points need more memory than the GPUs have"), std::string::npos)
      << r.out;
}

// Bullets 3 and 4: a cluster of your own is priced; simulate prints the
// time-to-train and the cost, whose figures agree with each other.
TEST(PlansCli, SimulatePrintsTimeToTrainAndTheCostOfAnOnPremisesCluster) {
  const fs::path d = scratch("onprem");
  write(d / "s.yaml", std::string(kSpelledCluster) + "  cloud: onprem\n  price_per_gpu_hour: 2.5\n" + kGpt2 +
                          "training: {samples: 12800000}\n");
  const auto r = gw::test::run({kBin, "simulate", (d / "s.yaml").string()});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  const std::string ttt = line_starting(r.out, "time-to-train: ");
  const std::string cost = line_starting(r.out, "cost: ");
  double iterations = 0, seconds = 0, usd = 0, node_price = 0;
  int h = 0, m = 0, s = 0, billed_h = 0, billed_m = 0, billed_s = 0;  // durations as h:mm:ss
  ASSERT_EQ(std::sscanf(ttt.c_str(), "time-to-train: %lf iterations x %lf s = %d:%d:%d (h:mm:ss", &iterations, &seconds,
                        &h, &m, &s),
            5)
      << ttt;
  const double hours = h + m / 60.0 + s / 3600.0;
  EXPECT_DOUBLE_EQ(iterations, 12800000.0 / 128);                 // global batch 8 x 16 GPUs
  EXPECT_NEAR(hours, iterations * seconds / 3600, hours * 1e-3);  // seconds printed to 4 digits
  ASSERT_EQ(std::sscanf(cost.c_str(), "cost: $%lf on demand (2 x onprem at $%lf per node hour, %d:%d:%d billed each)",
                        &usd, &node_price, &billed_h, &billed_m, &billed_s),
            5)
      << cost;
  EXPECT_DOUBLE_EQ(node_price, 20.0);  // 8 GPUs x $2.5
  EXPECT_NEAR(usd, 2 * 20.0 * hours, usd * 1e-3);
  EXPECT_NEAR(usd, 2 * 20.0 * (billed_h + billed_m / 60.0 + billed_s / 3600.0), 2 * 20.0 / 3600);
  // The same figures in --format json.
  const auto j = gw::test::run({kBin, "simulate", (d / "s.yaml").string(), "--format", "json"});
  ASSERT_EQ(j.exit_code, 0) << j.all();
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_DOUBLE_EQ(doc["training"]["iterations"].get<double>(), iterations);
  EXPECT_DOUBLE_EQ(doc["training"]["global_batch"].get<double>(), 128);
  EXPECT_EQ(doc["cost"]["priced_by"], "onprem");
  EXPECT_NEAR(doc["cost"]["on_demand_usd"].get<double>(), usd, 0.01);
  EXPECT_DOUBLE_EQ(doc["cost"]["usd_per_hour"].get<double>(), 40.0);
  EXPECT_TRUE(doc["cost"]["spot_usd"].is_null());
  // And in --format csv: the last three columns (no spot price: empty).
  const auto c = gw::test::run({kBin, "simulate", (d / "s.yaml").string(), "--format", "csv"});
  ASSERT_EQ(c.exit_code, 0) << c.all();
  const std::string header = c.out.substr(0, c.out.find('\n'));
  const std::string row = c.out.substr(c.out.find('\n') + 1);
  const std::string last = ",band_high_s,time_to_train_hours,cost_on_demand_usd,cost_spot_usd";
  EXPECT_EQ(header.rfind(last), header.size() - last.size()) << header;
  double csv_hours = 0, csv_usd = 0;
  const std::string tail = row.substr(row.rfind(',', row.rfind(',', row.rfind(',') - 1) - 1) + 1);
  ASSERT_EQ(std::sscanf(tail.c_str(), "%lf,%lf,", &csv_hours, &csv_usd), 2) << row;
  EXPECT_NEAR(csv_hours, doc["training"]["hours"].get<double>(), 1e-9 * csv_hours);
  EXPECT_NEAR(csv_usd, doc["cost"]["on_demand_usd"].get<double>(), 1e-6 * csv_usd);
  EXPECT_EQ(row.substr(row.size() - 2), ",\n") << row;  // the spot column is empty
}

// Bullet 3: GRADWIRE_CATALOG adds to the bundled catalog (f2c0d4f: it
// replaced it, so p4d.24xlarge became unknown).
TEST(PlansCli, AUserCatalogAddsToTheBundledOne) {
  const fs::path d = scratch("catalog");
  write(d / "mine.yaml",
        "schema: gradwire-catalog/2\ncurrency: USD\ninstances:\n"
        "  - {name: lab-box, cloud: onprem, region: here, gpu: a100-80gb, gpus: 8, gpu_memory: 80GiB,\n"
        "     intra_node: {bandwidth: 300GB/s, latency: 1us}, nics: {count: 1, bandwidth: 100Gbps, latency: 5us},\n"
        "     price: {on_demand: 12}, source: our invoice, as_of: 2025-01-01}\n");
  write(d / "p4d.yaml",
        std::string("cluster: {instance: p4d.24xlarge, nodes: 1}\n") + kGpt2 + "training: {samples: 1000000}\n");
  write(d / "lab.yaml",
        std::string("cluster: {instance: lab-box, nodes: 1}\n") + kGpt2 + "training: {samples: 1000000}\n");
  gw::test::RunOptions o;
  o.env = {"GRADWIRE_CATALOG=" + (d / "mine.yaml").string()};
  auto r = gw::test::run({kBin, "simulate", (d / "p4d.yaml").string()}, o);
  EXPECT_EQ(r.exit_code, 0) << r.all();
  r = gw::test::run({kBin, "simulate", (d / "lab.yaml").string()}, o);
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(line_starting(r.out, "cost: ").find("1 x lab-box at $12 per node hour"), std::string::npos) << r.out;
}

// Issue 29, item 7: an instance name with a line feed in a catalog of yours
// forged a line of plan's text output ("recommendation: FAKE cheapest,
// $0.01"). The catalog is refused at load, at the name, before any point runs.
TEST(PlansCli, AnInstanceNameThatForgesAPlanLineIsRefusedAtLoad) {
  const fs::path d = scratch("forged");
  const std::string forged = "FAKE\\nrecommendation: FAKE cheapest, $0.01";  // YAML escape: a line feed
  write(d / "mine.yaml",
        "schema: gradwire-catalog/2\ncurrency: USD\ninstances:\n"
        "  - name: \"" +
            forged +
            "\"\n"
            "    cloud: onprem\n    region: here\n    gpu: a100-80gb\n    gpus: 8\n    gpu_memory: 80GiB\n"
            "    intra_node: {bandwidth: 300GB/s, latency: 1us}\n"
            "    nics: {count: 1, bandwidth: 100Gbps, latency: 5us}\n"
            "    price: {on_demand: 0.01}\n    source: mine\n    as_of: 2026-01-01\n");
  write(d / "base.yaml",
        std::string("cluster: {instance: p4d.24xlarge, nodes: 1}\n") + kGpt2 + "training: {samples: 1000000}\n");
  write(d / "sweep.yaml", "base: base.yaml\naxes:\n  cluster.instance: [p4d.24xlarge, \"" + forged + "\"]\n");
  gw::test::RunOptions o;
  o.env = {"GRADWIRE_CATALOG=" + (d / "mine.yaml").string()};
  const auto r = gw::test::run({kBin, "plan", (d / "sweep.yaml").string(), (d / "out.jsonl").string(), "-j", "1"}, o);
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_EQ(line_starting(r.out, "recommendation: FAKE"), "") << r.out;
  EXPECT_EQ(line_starting(r.err, "recommendation: FAKE"), "") << r.err;
  EXPECT_NE(r.err.find((d / "mine.yaml").string() + ":4:11: instances[0].name: a name is one line"), std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(d / "out.jsonl"));
}

// Bullet 3: without any price, plan ranks by time instead of refusing.
TEST(PlansCli, PlanRanksByTimeWhenNoPriceIsKnown) {
  const fs::path d = scratch("noprice");
  write(d / "base.yaml", std::string(kSpelledCluster) + kGpt2 + "training: {samples: 1000000, global_batch: 128}\n");
  write(d / "sweep.yaml", "base: base.yaml\naxes:\n  workload.compression: [{kind: none}, {kind: fp16}]\n");
  const auto r = gw::test::run({kBin, "plan", (d / "sweep.yaml").string(), "-j", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.out.find("rule: the fastest configuration (no price is known: ranked by time)"), std::string::npos)
      << r.out;
  EXPECT_NE(line_starting(r.out, "recommendation: ").find("than uncompressed k = 1"), std::string::npos) << r.out;
}

// Bullet 4: an instance scenario takes the measured profile bundled for its
// GPU over the datasheet one, and says so.
TEST(PlansCli, AnInstanceTakesTheMeasuredProfileOfItsGpuAndSaysSo) {
  const fs::path d = scratch("measured");
  write(d / "s.yaml", std::string("cluster: {instance: p5en.48xlarge, nodes: 1}\n") + kGpt2);
  const auto r = gw::test::run({kBin, "simulate", (d / "s.yaml").string()});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.out.find("profile: h200-measured"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("profile choice: h200-measured, the measured profile of the instance's GPU, preferred over "
                       "the datasheet h200"),
            std::string::npos)
      << r.out;
}

}  // namespace
