// `gradwire simulate` end to end: table, JSON, CSV and trace outputs of a small
// scenario, exit code 2 with the position for bad input, and the memory
// verdict (exit code 3 for a configuration that does not fit).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "gradwire/core/atomic_file.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/model/memory.hpp"
#include "gradwire/model/scenario.hpp"
#include "gradwire/model/scenario_refs.hpp"
#include "gradwire/model/sharding.hpp"
#include "run_util.hpp"

namespace {

struct Run {
  int code = -1;
  std::string out;
};

Run run(const std::string& args) {
  const auto r = gw::test::run(gw::test::argv_of(GW_GRADWIRE_BIN, "simulate " + args));
  return {r.exit_code, r.all()};
}

/// Standard output only (stderr dropped).
Run run_stdout(const std::string& args) {
  const auto r = gw::test::run(gw::test::argv_of(GW_GRADWIRE_BIN, "simulate " + args));
  return {r.exit_code, r.out};
}

const std::string kData = GW_REPLAY_TEST_DATA;

TEST(SimulateCli, JsonBreakdownAddsUpAndNamesTheProfile) {
  const auto r = run(kData + "/tiny-8gpu.yaml --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  const auto& s = j.at("critical_path");
  // The straggler wait (8 ranks at the devset's fitted jitter) is a term of its own.
  EXPECT_GT(s.at("straggler_wait_s").get<double>(), 0);
  const double sum = s.at("forward_s").get<double>() + s.at("backward_s").get<double>() +
                     s.at("exposed_communication_s").get<double>() + s.at("optimizer_s").get<double>() +
                     s.at("straggler_wait_s").get<double>();
  // DDP's overheads (on by default) are their own terms of the total.
  const auto& d = j.at("ddp_overheads");
  EXPECT_TRUE(d.at("on").get<bool>());
  EXPECT_GT(d.at("bucket_copy_in_s").get<double>(), 0);
  const double ddp = d.at("bucket_copy_in_s").get<double>() + d.at("bucket_host_s").get<double>() +
                     d.at("bucket_copy_out_s").get<double>() + d.at("fixed_work_s").get<double>() +
                     s.at("input_wait_s").get<double>();
  EXPECT_NEAR(s.at("total_s").get<double>(), sum + ddp, 1e-12);
  EXPECT_EQ(j.at("profile").at("name"), "h100");
  EXPECT_EQ(j.at("profile").at("source"), "datasheet");
  EXPECT_EQ(j.at("accumulation"), 4);
  EXPECT_DOUBLE_EQ(j.at("global_batch").get<double>(), 32.0 * 4 * 8);
  EXPECT_GT(j.at("buckets").size(), 1u);
  // Top-K at 1% as PyTorch users run it (implementation pytorch, GRACE's
  // code): every bucket all-gathers k fp32 values and k int64 indices,
  // 12 ceil(0.01 n) bytes per worker.
  double wire = 0;
  for (const auto& b : j.at("buckets")) {
    const double k = std::ceil(0.01 * b.at("elements").get<double>());
    wire += 7.0 / 8 * 8 * 12 * k;
  }
  EXPECT_NEAR(j.at("wire_per_gpu_bytes").get<double>(), wire, 1e-6);
}

TEST(SimulateCli, TableShowsTheProfileKindAndTraceIsWritten) {
  const auto trace =
      (std::filesystem::temp_directory_path() / ("gw-sim-cli-" + std::to_string(::getpid()) + ".json")).string();
  const auto r = run(kData + "/tiny-8gpu.yaml --trace " + trace);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("profile: h100 (datasheet-derived)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("exposed communication"), std::string::npos);
  EXPECT_NE(r.out.find("samples/s"), std::string::npos);
  EXPECT_NE(r.out.find("bytes on the wire per GPU"), std::string::npos);
  const auto j = nlohmann::json::parse(gw::read_file(trace));
  std::filesystem::remove(trace);
  EXPECT_GT(j.at("traceEvents").size(), 10u);
}

TEST(SimulateCli, CsvHasHeaderAndOneRow) {
  // Standard output only: the profile is of another GPU than the scenario's,
  // which stderr warns about.
  const auto r = run_stdout(kData + "/tiny-8gpu.yaml --format csv --profile a100-80gb");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2);
  EXPECT_NE(r.out.find("tiny-8gpu,tiny-convnet,a100-80gb,datasheet,8,32,4"), std::string::npos) << r.out;
}

TEST(SimulateCli, BadInputExitsTwoWithFileLineAndKey) {
  auto r = run(kData + "/bad-rank-for-topk.yaml");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("bad-rank-for-topk.yaml:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rank"), std::string::npos) << r.out;
  r = run(kData + "/tiny-8gpu.yaml --profile no-such-gpu");
  EXPECT_EQ(r.code, 2) << r.out;
  r = run(kData + "/tiny-8gpu.yaml --format xml");
  EXPECT_EQ(r.code, 2) << r.out;
}

// workload.compute: the table says where the compute was measured; a
// scenario whose micro-batch differs from the measurement's exits 2 at the
// line and column of workload.compute with nothing on standard output.
TEST(SimulateCli, MeasuredComputeIsNamedAndAMismatchExitsTwo) {
  auto r = run_stdout(kData + "/tiny-measured.yaml");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("compute: measured on Test GPU, 2026-12-01"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("compute efficiency"), std::string::npos) << r.out;
  std::ifstream in(kData + "/tiny-measured.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto set = [&](const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
  };
  set("micro_batch: 32", "micro_batch: 16");
  set("model: tiny-convnet.yaml", "model: " + kData + "/tiny-convnet.yaml");
  set("compute: tiny-convnet-measured.yaml", "compute: " + kData + "/tiny-convnet-measured.yaml");
  const auto path =
      (std::filesystem::temp_directory_path() / ("gw-measured-mismatch-" + std::to_string(::getpid()) + ".yaml"))
          .string();
  std::ofstream(path) << text;
  r = run_stdout(path);
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(r.out.empty()) << r.out;
  const auto all = run(path);
  EXPECT_NE(all.out.find(path + ":19:12: workload.compute: "), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("micro-batch 32, the scenario's is 16"), std::string::npos) << all.out;
  std::filesystem::remove(path);
}

// workload.compute_precision on a GPU without that rate: exit 2, one line at
// the field's line and column naming the rates the profile has, nothing on
// standard output; with a rate it has, the header names the compute precision.
TEST(SimulateCli, ComputePrecisionTheProfileLacksExitsTwoAtTheField) {
  std::ifstream in(kData + "/tiny-8gpu.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto set = [&](const std::string& from, const std::string& to) {
    text.replace(text.find(from), from.size(), to);
  };
  set("gpu: h100", "gpu: v100");
  set("model: tiny-convnet.yaml", "model: " + kData + "/tiny-convnet.yaml");
  set("  precision: fp32\n", "  precision: fp32\n  compute_precision: tf32\n");  // line 16
  const auto path =
      (std::filesystem::temp_directory_path() / ("gw-precision-" + std::to_string(::getpid()) + ".yaml")).string();
  std::ofstream(path) << text;
  auto r = run_stdout(path);
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(r.out.empty()) << r.out;
  const auto all = run(path);
  EXPECT_EQ(all.out, "gradwire simulate: " + path +
                         ":16:22: workload.compute_precision: profile 'v100' has no tf32 GEMM rate "
                         "(gemm_flops.tf32); it has fp16, fp32\n");
  const auto check = gw::test::run(gw::test::argv_of(GW_GRADWIRE_BIN, "check " + path));  // the same place
  EXPECT_EQ(check.exit_code, 2);
  EXPECT_NE(check.all().find(path + ":16:22: workload.compute_precision: profile 'v100' has no tf32"),
            std::string::npos)
      << check.all();
  set("compute_precision: tf32", "compute_precision: fp16");
  std::ofstream(path) << text;
  r = run_stdout(path);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("compute: fp16 "), std::string::npos) << r.out;
  std::filesystem::remove(path);
}

/// The per-GPU memory of a scenario file, from the model the sweep uses.
gw::MemoryBreakdown expected_memory(const std::string& path) {
  const gw::Scenario s = gw::load_scenario(path);
  const gw::ScenarioRefs refs = gw::resolve_scenario_references(s, path, std::nullopt);
  const gw::WorkloadSpec& w = *s.workload;
  return gw::memory_per_gpu(*refs.model, w, gw::compressor_memory(w, s.cluster, *refs.model, refs.profile),
                            refs.profile.memory_bytes);
}

const std::string kLlama = kData + "/llama2-7b-ddp-80gb.yaml";

TEST(SimulateCli, ConfigurationThatDoesNotFitIsRefusedWithNeedAndAvailable) {
  const auto m = expected_memory(kLlama);
  ASSERT_FALSE(m.fits());
  ASSERT_GT(m.total, 800.0 * (1ull << 30));  // 16 B/parameter + 8 samples of ~97 GiB activations
  const auto r = run(kLlama);
  EXPECT_EQ(r.code, gw::kExitNoFit) << r.out;
  EXPECT_EQ(gw::kExitNoFit, 3);
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;  // one line, nothing simulated
  EXPECT_NE(r.out.find("does not fit in GPU memory: needs "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("80.0 GiB available"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--allow-oversubscribed-memory"), std::string::npos) << r.out;
}

TEST(SimulateCli, OversubscribedMemoryIsSimulatedOnRequestAndSaysItDoesNotFit) {
  auto r = run(kLlama + " --allow-oversubscribed-memory");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("warning: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("DOES NOT FIT"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("memory per GPU"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("optimizer states"), std::string::npos) << r.out;
  r = run_stdout(kLlama + " --allow-oversubscribed-memory --format csv");
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2) << r.out;
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find(",buckets,memory_parameters_bytes,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(",memory_capacity_bytes,memory_fits,ddp_bucket_copy_in_s,ddp_bucket_copy_out_s,"
                       "ddp_collective_launch_s,ddp_fixed_work_s,input_wait_s,straggler_wait_s,compute_jitter,"
                       "band_low_s,band_median_s,band_high_s,time_to_train_hours,cost_on_demand_usd,cost_spot_usd\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(",false,"), std::string::npos) << r.out;
}

TEST(SimulateCli, JsonMemoryFieldsAreTheMemoryModels) {
  for (const std::string& file : {kLlama, kData + "/tiny-8gpu.yaml"}) {
    const auto m = expected_memory(file);
    const auto r = run_stdout(file + " --format json --allow-oversubscribed-memory");
    ASSERT_EQ(r.code, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out).at("memory_per_gpu");
    EXPECT_DOUBLE_EQ(j.at("parameters_bytes").get<double>(), m.parameters);
    EXPECT_DOUBLE_EQ(j.at("gradients_bytes").get<double>(), m.gradients);
    EXPECT_DOUBLE_EQ(j.at("optimizer_states_bytes").get<double>(), m.optimizer_states);
    EXPECT_DOUBLE_EQ(j.at("activations_bytes").get<double>(), m.activations);
    EXPECT_DOUBLE_EQ(j.at("error_feedback_bytes").get<double>(), m.error_feedback);
    EXPECT_DOUBLE_EQ(j.at("compressor_state_bytes").get<double>(), m.compressor_state);
    EXPECT_DOUBLE_EQ(j.at("gather_buffer_bytes").get<double>(), m.gather_buffer);
    EXPECT_DOUBLE_EQ(j.at("buckets_bytes").get<double>(), m.buckets);
    EXPECT_DOUBLE_EQ(j.at("reserve_bytes").get<double>(), m.reserve);
    EXPECT_DOUBLE_EQ(j.at("total_bytes").get<double>(), m.total);
    EXPECT_DOUBLE_EQ(j.at("capacity_bytes").get<double>(), m.capacity);
    EXPECT_EQ(j.at("fits").get<bool>(), m.fits()) << file;
  }
}

}  // namespace

namespace {

/// Every number of `a` within 1e-9 relative of the same number of `b`, every
/// other value equal.
void expect_same_numbers(const nlohmann::json& a, const nlohmann::json& b, const std::string& at) {
  if (a.is_number() && b.is_number()) {
    const double x = a.get<double>(), y = b.get<double>();
    EXPECT_LE(std::abs(x - y), 1e-9 * std::max({std::abs(x), std::abs(y), 1e-300})) << at << ": " << x << " vs " << y;
  } else if (a.is_object() && b.is_object()) {
    ASSERT_EQ(a.size(), b.size()) << at;
    for (auto it = a.begin(); it != a.end(); ++it) {
      ASSERT_TRUE(b.contains(it.key())) << at << "." << it.key();
      expect_same_numbers(it.value(), b.at(it.key()), at + "." + it.key());
    }
  } else if (a.is_array() && b.is_array()) {
    ASSERT_EQ(a.size(), b.size()) << at;
    for (std::size_t i = 0; i < a.size(); ++i) expect_same_numbers(a[i], b[i], at + "[" + std::to_string(i) + "]");
  } else {
    EXPECT_EQ(a, b) << at;
  }
}

}  // namespace

// Memoised collectives (docs/engine.md): --full-simulation and
// GRADWIRE_FULL_SIMULATION run every collective in full; the JSON is the same
// to 1e-9 relative in every number.
TEST(SimulateCli, FullSimulationGivesTheSameResult) {
  const std::string scenario = std::string(GW_SOURCE_DIR) + "/scenarios/gpt2-topk-lowbw.yaml --format json";
  const auto memo = run_stdout(scenario);
  const auto full = run_stdout(scenario + " --full-simulation");
  ASSERT_EQ(memo.code, 0) << memo.out;
  ASSERT_EQ(full.code, 0) << full.out;
  expect_same_numbers(nlohmann::json::parse(full.out), nlohmann::json::parse(memo.out), "result");
  ASSERT_EQ(::setenv("GRADWIRE_FULL_SIMULATION", "1", 1), 0);
  const auto env = run_stdout(scenario);
  ::unsetenv("GRADWIRE_FULL_SIMULATION");
  ASSERT_EQ(env.code, 0) << env.out;
  EXPECT_EQ(env.out, full.out);
}

// The bundled Llama-2-7B FULL_SHARD scenario on one 8 x H100 80 GB node: its
// DDP twin does not fit (above), FULL_SHARD with full checkpointing does:
// ZeRO-3's model states 16 bytes x 6,738,415,616 / 8 per GPU (bf16 working
// copy and gradients, fp32 master and two AdamW states), plus the
// checkpointed activations, the unit buffers and the reserve; simulate prints
// the iteration, the time-to-train and the cost.
TEST(SimulateCli, LlamaFullShardOnEightH100FitsAndIsSimulated) {
  const std::string path = std::string(GW_SOURCE_DIR) + "/scenarios/llama2-7b-fsdp-8xh100.yaml";
  const gw::Scenario s = gw::load_scenario(path);
  const gw::ScenarioRefs refs = gw::resolve_scenario_references(s, path, std::nullopt);
  const gw::WorkloadSpec& w = *s.workload;
  const auto m = gw::workload_memory(*refs.model, w, {8, 8}, {}, 80.0 * (1ull << 30));
  EXPECT_DOUBLE_EQ(m.parameters + m.gradients + m.optimizer_states, 16.0 * 6738415616 / 8);
  EXPECT_TRUE(m.fits()) << m.total;
  const auto r = run(path);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("sharding: zero3 (fsdp1)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fits"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("time-to-train: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cost: $"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("does not fit"), std::string::npos) << r.out;
}

// Llama-2-7B under DDP at micro-batch 1 does not fit on 80 GB; the refusal
// (still one line) names the schemes that fit, with their memory and
// closed-form iteration time: ZeRO-1/2/3 with full activation checkpointing.
TEST(SimulateCli, ARefusalNamesTheShardingSchemesThatFit) {
  std::string text = gw::test::read_text(kLlama);
  text.replace(text.find("micro_batch: 8"), 14, "micro_batch: 1");
  const auto path = std::filesystem::temp_directory_path() / ("gw-fit-" + std::to_string(::getpid()) + ".yaml");
  gw::test::write_text(path, text);
  const auto r = run(path.string());
  std::filesystem::remove(path);
  EXPECT_EQ(r.code, gw::kExitNoFit) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
  EXPECT_NE(r.out.find("; fits under workload.sharding: zero1 + full activation checkpointing ("), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("zero3 + full activation checkpointing ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" per iteration, closed form)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("ddp ("), std::string::npos) << r.out;
}

namespace {

/// The bundled Llama-2-7B FULL_SHARD scenario on two p5.48xlarge under
/// `sharding`, without checkpointing when `checkpointing` is false.
std::filesystem::path llama_on_two_nodes(const std::string& sharding, bool checkpointing) {
  std::string text = gw::test::read_text(std::string(GW_SOURCE_DIR) + "/scenarios/llama2-7b-fsdp-8xh100.yaml");
  text.replace(text.find("nodes: 1}"), 9, "nodes: 2}");
  const std::string old_sharding = "sharding: {scheme: full_shard, gradient_sync: every}";
  text.replace(text.find(old_sharding), old_sharding.size(), "sharding: " + sharding);
  if (!checkpointing) text.replace(text.find("activation_checkpointing: full"), 30, "");
  const auto path = std::filesystem::temp_directory_path() /
                    ("gw-hsdp-" + std::to_string(::getpid()) + (checkpointing ? "-ac" : "") + ".yaml");
  gw::test::write_text(path, text);
  return path;
}

}  // namespace

// HSDP on 2 x 8 H100 simulates (its name in the breakdown), and the
// refusal of the same job without checkpointing lists hsdp with its
// closed-form time among the schemes that fit; ZeRO++ with its quantised
// traffic (qwZ, qgZ: not simulated yet) only with its memory.
TEST(SimulateCli, HsdpRunsAndIsListedWithItsTimeWhenItFits) {
  const auto hsdp = llama_on_two_nodes("hybrid_shard", true);
  const auto r = run(hsdp.string());
  std::filesystem::remove(hsdp);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("sharding: hsdp (fsdp1)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("method: simulation"), std::string::npos) << r.out;
  const auto ddp = llama_on_two_nodes("ddp", false);
  const auto refused = run(ddp.string());
  std::filesystem::remove(ddp);
  EXPECT_EQ(refused.code, gw::kExitNoFit) << refused.out;
  EXPECT_NE(refused.out.find("hsdp + full activation checkpointing ("), std::string::npos) << refused.out;
  const auto at = refused.out.find("hsdp + full activation checkpointing (");
  EXPECT_NE(refused.out.find(" per iteration, closed form)", at), std::string::npos) << refused.out;
  const auto zpp = refused.out.find("zeropp + full activation checkpointing (");
  ASSERT_NE(zpp, std::string::npos) << refused.out;
  const std::string zpp_entry = refused.out.substr(zpp, refused.out.find(')', zpp) - zpp);
  EXPECT_NE(zpp_entry.find("per iteration"), std::string::npos) << zpp_entry;  // ZeRO++ simulated too
}
