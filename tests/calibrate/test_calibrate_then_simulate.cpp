// The whole pipeline on the CPU: `gradwire calibrate --device cpu` writes a
// profile, `gradwire simulate` predicts an iteration with it, and a profile
// whose int8 encode cost is tripled predicts an encode time three times larger.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gradwire/core/atomic_file.hpp"
#include "gradwire/model/profile.hpp"
#include "run_util.hpp"

namespace fs = std::filesystem;

namespace {

nlohmann::json simulate(const fs::path& scenario, const fs::path& profile) {
  const auto r = gw::test::run(
      {GW_GRADWIRE_BIN, "simulate", scenario.string(), "--profile", profile.string(), "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST(CalibrateThenSimulate, CpuProfileDrivesThePredictionAndItsCodecCosts) {
  const fs::path dir = fs::temp_directory_path() / ("gw-cal-sim-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path profile = dir / "cpu.yaml";
  // --max-seconds: no codec cut by the budget on a busy machine.
  const auto cal = gw::test::run(
      {GW_GRADWIRE_BIN, "calibrate", "--device", "cpu", "--quick", "--max-seconds", "600", "--out", profile.string()});
  ASSERT_EQ(cal.exit_code, 0) << cal.all();
  const gw::Profile p = gw::load_profile_file(profile.string());
  EXPECT_EQ(p.source, "measured");
  ASSERT_TRUE(p.codecs.count("int8"));

  const fs::path scenario = dir / "scenario.yaml";
  gw::write_file_atomic(scenario.string(), R"(cluster:
  nodes: 4
  gpus_per_node: 1
  gpu: cpu
  nics: {count: 1, bandwidth: 10Gbps, latency: 5us}
  fabric: {topology: switch}
workload:
  model: mlp-tiny
  micro_batch: 32
  compression: {kind: int8, implementation: gradwire}
)");
  const auto base = simulate(scenario, profile);
  EXPECT_EQ(base["profile"]["source"], "measured");
  EXPECT_EQ(base["profile"]["name"], p.name);
  // The calibration's interference figures drive the prediction: int8's own.
  ASSERT_TRUE(p.interference.codecs.count("int8") || p.interference.compute_under_codec) << cal.all();
  const auto& used = base["interference_detail"];
  EXPECT_EQ(used["source"], "profile (measured)");
  const gw::InterferenceFigures own = p.interference.for_codec("int8");
  EXPECT_DOUBLE_EQ(used["compute_under_codec"].get<double>(), own.compute_under_codec.value());
  EXPECT_DOUBLE_EQ(used["codec_under_compute"].get<double>(), own.codec_under_compute.value());
  const double encode = base["critical_path"]["encode_s"].get<double>();
  ASSERT_GT(encode, 0);

  // Triple every int8 encode cost (points and knots) and predict again.
  gw::Profile slower = p;
  auto& cost = slower.codecs.at("int8");
  for (auto& pt : cost.encode_points) pt.seconds *= 3;
  for (auto& k : cost.encode.knots) k.seconds *= 3;
  const fs::path slow_path = dir / "cpu-slow-int8.yaml";
  gw::write_file_atomic(slow_path.string(), gw::profile_to_yaml(slower));
  const auto slow = simulate(scenario, slow_path);
  EXPECT_NEAR(slow["critical_path"]["encode_s"].get<double>(), 3 * encode, 1e-6 * encode);
  EXPECT_NEAR(slow["critical_path"]["decode_s"].get<double>(), base["critical_path"]["decode_s"].get<double>(), 1e-12);
  fs::remove_all(dir);
}
