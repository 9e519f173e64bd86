// Measured curves reproduce themselves (issue 31, item 4): a profile made by
// `calibrate --from-nccl-tests` from each bundled log (tests/data/nccl-tests/)
// gives that log back on a cluster of its shape, within 2% at every size,
// under `auto` and under every pin NCCL accepts (`collective --compare`),
// and in `simulate`'s buckets; the outputs say which sizes were measured
// and which modelled, and beyond the measured sizes the model joins the
// curve at its end. docs/model.md, "Collectives measured on the cluster".
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gradwire/model/closed_form.hpp"
#include "gradwire/model/measured_collective.hpp"
#include "gradwire/model/nccl_tests_log.hpp"
#include "gradwire/model/profile.hpp"
#include "gradwire/model/scenario.hpp"
#include "run_util.hpp"

namespace fs = std::filesystem;
using namespace gw;

namespace {

const std::string kSource = GW_SOURCE_DIR;
const std::string kData = kSource + "/tests/data/nccl-tests/";
const std::string kClusters = kSource + "/validation/clusters/";

test::RunResult gradwire(std::vector<std::string> args) {
  args.insert(args.begin(), GW_GRADWIRE_BIN);
  return test::run(args);
}

// A scratch folder with the profile calibrated from `log` over `base` and
// a scenario: `cluster` (a validation cluster of the log's shape) with that
// profile, and `workload` when given.
struct Calibrated {
  fs::path dir;
  std::string profile, scenario;
  Profile p;
};

void calibrate(Calibrated& c, const std::string& log, const std::string& base, const std::string& cluster,
               const std::string& workload = "") {
  c.dir = test::temp_scratch("gw-measured-curves", fs::path(log).stem().string());
  c.profile = (c.dir / "profile.yaml").string();
  const auto r = gradwire({"calibrate", "--from-nccl-tests", log, "--profile", base, "--out", c.profile});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  c.p = load_profile_file(c.profile);
  c.scenario = (c.dir / "scenario.yaml").string();
  std::ofstream(c.scenario) << test::read_text(kClusters + cluster) << "profile: " << c.profile << "\n" << workload;
}

// The log's op, GPUs and nodes, and its entry in the profile.
const CollectiveCost& entry_of(const Profile& p, const nccl_tests::Log& log) {
  const CollectiveCost* cc = p.collective(*log.op, log.world_size(), log.nodes());
  if (cc == nullptr) throw std::logic_error("no entry for the log");
  return *cc;
}

// Every pin of --algo x --proto: NCCL's algorithms for the op and auto, each
// with every protocol and auto; an all-reduce's hierarchical, gradwire's own
// (Simple only), with auto.
std::vector<std::pair<Algorithm, Protocol>> every_pin(CollectiveOp op) {
  std::vector<Algorithm> algos = nccl_algorithms(op);
  algos.push_back(Algorithm::Auto);
  std::vector<std::pair<Algorithm, Protocol>> pins;
  for (Algorithm a : algos) {
    pins.push_back({a, Protocol::Auto});
    for (const auto& p : protocols()) pins.push_back({a, p.protocol});
  }
  if (op == CollectiveOp::AllReduce) pins.push_back({Algorithm::Hierarchical, Protocol::Auto});
  return pins;
}

// `collective --compare LOG` under each pin: where NCCL accepts it, every
// size's predicted time is the profile's point (the median of the log's
// out-of-place and in-place times) within 2%, and so is the measured time
// compare prints (the same median) and its error; a pin NCCL refuses is
// refused (exit 2), and hierarchical, gradwire's own, is modelled.
void expect_log_reproduced(const std::string& log_file, const std::string& base, const std::string& cluster) {
  Calibrated c;
  calibrate(c, log_file, base, cluster);
  const nccl_tests::Log log = nccl_tests::load_log(log_file);
  const CollectiveCost& measured = entry_of(c.p, log);
  const ClusterSpec spec = load_scenario(c.scenario).cluster;
  const NcclShape shape = collective_shape(spec, log.world_size());
  int accepted = 0;
  for (const auto& [a, p] : every_pin(*log.op)) {
    const std::string pin = to_string(a) + "/" + to_string(p);
    SCOPED_TRACE(pin);
    const auto r = gradwire({"collective", c.scenario, "--compare", log_file, "--format", "json", "--algo",
                             to_string(a), "--proto", to_string(p)});
    if (a == Algorithm::Hierarchical) {
      ASSERT_EQ(r.exit_code, 0) << r.err;
      EXPECT_EQ(r.err.find("times measured on this cluster's shape"), std::string::npos) << r.err;
      continue;
    }
    if (!nccl_accepts(*log.op, a, p, spec, shape)) {
      EXPECT_EQ(r.exit_code, 2) << r.out;
      continue;
    }
    ++accepted;
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("times measured on this cluster's shape: " + to_string(*log.op)), std::string::npos) << r.err;
    const auto points = nlohmann::json::parse(r.out)["case"]["points"];
    ASSERT_EQ(points.size(), measured.points.size());
    for (std::size_t i = 0; i < points.size(); ++i) {
      const double bytes = points[i]["size_bytes"].get<double>();
      ASSERT_EQ(bytes, measured.points[i].x);
      const double predicted = points[i]["predicted_time_s"].get<double>();
      EXPECT_NEAR(predicted / measured.points[i].seconds, 1.0, 0.02) << bytes;
      const auto& row = log.rows[i + (log.rows.size() - points.size())];
      ASSERT_EQ(row.bytes, bytes);
      // busbw x time is the same product for both columns when the measured
      // busbw is the median of the two timings'.
      const double median = (row.out_of_place.time + row.in_place.time) / 2;
      EXPECT_NEAR(points[i]["published_busbw_bytes_per_s"].get<double>() * median /
                      (points[i]["predicted_busbw_bytes_per_s"].get<double>() * predicted),
                  1.0, 1e-9)
          << bytes;
      EXPECT_LE(std::abs(points[i]["error"].get<double>()), 0.02) << bytes;
    }
  }
  EXPECT_GE(accepted, 2);
}

TEST(MeasuredCurves, TheA3MegaLogComesBackUnderEveryPinNcclAccepts) {
  expect_log_reproduced(kData + "a3mega-2x8-h100-all_reduce_perf.log", "h100", "h100-a3-mega-2x8.yaml");
}

TEST(MeasuredCurves, The2080TiAllReduceLogComesBackUnderEveryPinNcclAccepts) {
  expect_log_reproduced(kData + "rtx2080ti-1x2-all_reduce_perf.log", "v100", "rtx2080ti-pcie-1x2.yaml");
}

TEST(MeasuredCurves, The2080TiAllGatherLogComesBackUnderEveryPinNcclAccepts) {
  expect_log_reproduced(kData + "rtx2080ti-1x2-all_gather_perf.log", "v100", "rtx2080ti-pcie-1x2.yaml");
}

// simulate on the log's own cluster: every all-reduce bucket takes the curve
// at its size (the replay sleeps it; the closed form takes the same:
// ReplayProfile.AMeasuredCurveReplacesTheNetworkModel), under auto and a
// pinned ring, and the result says which collectives were measured;
// hierarchical keeps the model.
void expect_simulate_measured(const std::string& log_file, const std::string& base, const std::string& cluster,
                              const std::string& workload) {
  Calibrated c;
  calibrate(c, log_file, base, cluster, workload);
  const nccl_tests::Log log = nccl_tests::load_log(log_file);
  Profile only = c.p;
  only.collectives = {entry_of(c.p, log)};
  const MeasuredCollective curve = measured_collectives(only).at(0);
  const std::string label = curve.label();
  for (const char* algorithm : {"auto", "ring", "hierarchical"}) {
    SCOPED_TRACE(algorithm);
    const std::string scenario = (c.dir / (std::string(algorithm) + ".yaml")).string();
    std::ofstream(scenario) << test::read_text(c.scenario) << "  allreduce_algorithm: " << algorithm << "\n";
    const auto r = gradwire({"simulate", scenario, "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    const bool hierarchical = std::string(algorithm) == "hierarchical";
    EXPECT_EQ(j.contains("measured_collectives"), !hierarchical);
    if (hierarchical) continue;
    EXPECT_EQ(j.at("measured_collectives"), nlohmann::json::array({label}));
    int steps = 0;
    for (const auto& b : j.at("buckets")) {
      for (const auto& st : b.at("steps")) {
        const double bytes = st.at("size_bytes").get<double>();
        ASSERT_TRUE(curve.in_range(bytes));
        const double t = curve.curve.evaluate(bytes);
        EXPECT_NEAR(st.at("end_s").get<double>() - st.at("start_s").get<double>(), t, 1e-6 * t) << bytes;
        ++steps;
      }
    }
    EXPECT_GT(steps, 0);
  }
}

TEST(MeasuredCurves, SimulateTakesTheA3MegaCurve) {
  expect_simulate_measured(kData + "a3mega-2x8-h100-all_reduce_perf.log", "h100", "h100-a3-mega-2x8.yaml",
                           "workload:\n  model: bert-base\n  micro_batch: 8\n");
}

TEST(MeasuredCurves, SimulateTakesThe2080TiCurve) {
  expect_simulate_measured(kData + "rtx2080ti-1x2-all_reduce_perf.log", "v100", "rtx2080ti-pcie-1x2.yaml",
                           "workload:\n  model: resnet50\n  micro_batch: 16\n");
}

// The labelling and the ends: sizes beyond the log (16 and 32 GiB) are
// modelled, the model scaled to meet the curve at 8 GiB (the same profile
// without the measurement gives the model's times); the table, CSV and JSON
// say which sizes were measured.
TEST(MeasuredCurves, TheOutputsSayWhichSizesWereMeasured) {
  Calibrated c;
  calibrate(c, kData + "a3mega-2x8-h100-all_reduce_perf.log", "h100", "h100-a3-mega-2x8.yaml");
  const std::vector<std::string> sizes = {"--sizes", "4GiB:32GiB"};  // 4, 8 GiB measured; 16, 32 GiB beyond
  auto run = [&](const std::string& scenario, const std::string& format) {
    std::vector<std::string> args = {"collective", scenario, "--format", format};
    args.insert(args.end(), sizes.begin(), sizes.end());
    const auto r = gradwire(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  const auto j = nlohmann::json::parse(run(c.scenario, "json"));
  const auto model = nlohmann::json::parse(run(kClusters + "h100-a3-mega-2x8.yaml", "json"));
  EXPECT_FALSE(model.contains("measured"));
  EXPECT_FALSE(model["results"][0].contains("source"));
  ASSERT_EQ(j["results"].size(), 4u);
  EXPECT_EQ(
      j["measured"].get<std::string>().rfind("allreduce on 16 GPUs, 2 nodes, measured 8 B..8.00 GiB (profile ", 0), 0u)
      << j["measured"];
  const std::vector<std::string> source = {"measured", "measured", "modelled", "modelled"};
  const double at_end = j["results"][1]["time_us"].get<double>() / model["results"][1]["time_us"].get<double>();
  EXPECT_NEAR(j["results"][1]["time_us"].get<double>(), 47535.0 / 2 + 47743.0 / 2, 1e-6 * 47639);  // the log's 8 GiB
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(j["results"][i]["source"], source[i]) << i;
    if (i < 2) continue;
    // Beyond the log: the model's time x measured / modelled at 8 GiB (the
    // model here is the engine's; the curve's join is the closed form's,
    // equal to it on an idle network).
    EXPECT_NEAR(j["results"][i]["time_us"].get<double>() / model["results"][i]["time_us"].get<double>(), at_end,
                1e-3 * at_end)
        << i;
  }
  const std::string csv = run(c.scenario, "csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "size_B,count,type,time_us,algbw_GBps,busbw_GBps,algorithm,protocol,source");
  EXPECT_NE(csv.find(",measured\n"), std::string::npos);
  EXPECT_NE(csv.find(",modelled\n"), std::string::npos);
  const std::string model_csv = run(kClusters + "h100-a3-mega-2x8.yaml", "csv");
  EXPECT_EQ(model_csv.substr(0, model_csv.find('\n')),
            "size_B,count,type,time_us,algbw_GBps,busbw_GBps,algorithm,protocol");
  const std::string table = run(c.scenario, "table");
  EXPECT_NE(
      table.find("# times measured on this cluster's shape: allreduce on 16 GPUs, 2 nodes, measured 8 B..8.00 GiB"),
      std::string::npos)
      << table;
  EXPECT_NE(table.find("#   4.00 GiB .. 8.00 GiB: measured\n#   16.0 GiB .. 32.0 GiB: modelled\n"), std::string::npos)
      << table;
  // The table still parses as an nccl-tests log, with the curve's times.
  const auto parsed = nccl_tests::parse_log(table, "table");
  ASSERT_EQ(parsed.rows.size(), 4u);
  EXPECT_NEAR(parsed.rows[1].out_of_place.time, j["results"][1]["time_us"].get<double>() * 1e-6, 1e-8);
  // On 8 of the 16 GPUs (one node) the 2-node curve does not apply.
  const auto eight = gradwire({"collective", c.scenario, "-g", "8", "--sizes", "1MiB", "--format", "json"});
  ASSERT_EQ(eight.exit_code, 0) << eight.err;
  EXPECT_FALSE(nlohmann::json::parse(eight.out).contains("measured"));
}

}  // namespace
