// The measured-compute document (gradwire-compute/1): the hand-written fixture
// loads with its values, writes and reads back unchanged, and every kind of
// malformed document is refused at the file, line, column and key of the
// problem. The match with a scenario and its use in the iteration are tested
// in tests/replay (ReplayMeasured.*).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gradwire/core/error.hpp"
#include "gradwire/model/measured_compute.hpp"
#include "gradwire/model/model_desc.hpp"
#include "gradwire/model/scenario.hpp"

namespace fs = std::filesystem;

namespace gw {
namespace {

const std::string kFixture = std::string(GW_REPLAY_TEST_DATA) + "/tiny-convnet-measured.yaml";

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string write_temp(const std::string& name, const std::string& text) {
  const auto p = fs::temp_directory_path() / ("gw-measured-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(p) << text;
  return p.string();
}

TEST(MeasuredCompute, FixtureLoadsWithItsValues) {
  const MeasuredCompute m = load_measured_compute(kFixture);
  EXPECT_EQ(m.label(), "measured on Test GPU, 2026-12-01");
  EXPECT_EQ(m.model, "tiny-convnet");
  EXPECT_EQ(m.parameters, 411786);
  EXPECT_EQ(m.micro_batch, 32);
  EXPECT_EQ(m.compute_precision, "amp-bf16");
  EXPECT_EQ(m.gradient_precision, "fp32");
  EXPECT_DOUBLE_EQ(m.forward.median, 1.5e-3);
  EXPECT_DOUBLE_EQ(m.backward.spread, 0.03e-3);
  EXPECT_EQ(m.optimizer, "adam");
  ASSERT_TRUE(m.hook_dispatch);
  EXPECT_DOUBLE_EQ(m.hook_dispatch->median, 20e-6);
  ASSERT_EQ(m.comm_hooks.size(), 1u);
  EXPECT_EQ(m.comm_hooks[0].first, "fp16_compress");
  ASSERT_EQ(m.tensors.size(), 8u);
  EXPECT_EQ(m.tensors[2].name, "conv3.weight");
  // Backward durations telescope to the ready times; the last one takes the
  // remainder of the backward pass.
  const auto d = measured_tensor_backward(m);
  EXPECT_NEAR(d[0], 0.1e-3, 1e-15);
  EXPECT_NEAR(d[2], 0.7e-3, 1e-15);
  EXPECT_NEAR(d[7], 0.1e-3, 1e-15);
  double sum = 0;
  for (double x : d) sum += x;
  EXPECT_NEAR(sum, m.backward.median, 1e-15);
}

TEST(MeasuredCompute, WritesWhatItReadsBack) {
  MeasuredCompute m = load_measured_compute(kFixture);
  m.host = "node \"7\": a # b";
  m.cuda_version = "13.0";
  m.sequence_length = 512;
  const std::string path = write_temp("roundtrip.yaml", measured_compute_yaml(m));
  const MeasuredCompute back = load_measured_compute(path);
  EXPECT_EQ(measured_compute_yaml(back), measured_compute_yaml(m));
  EXPECT_EQ(back.host, m.host);
  EXPECT_EQ(back.cuda_version, "13.0");
  EXPECT_EQ(back.sequence_length, 512);
  EXPECT_DOUBLE_EQ(back.tensors[3].ready.median, m.tensors[3].ready.median);
  EXPECT_DOUBLE_EQ(back.optimizer_step.median, m.optimizer_step.median);
  fs::remove(path);
}

struct Bad {
  std::string from, to;  ///< one replacement in the fixture's text
  int line;
  std::string key, reason;
};

TEST(MeasuredCompute, MalformedDocumentsNameFileLineColumnAndKey) {
  const std::string good = read_text(kFixture);
  const std::vector<Bad> cases{
      {"schema: gradwire-compute/1", "schema: gradwire-compute/2", 5, "schema", "unsupported schema"},
      {"device: \"Test GPU\"", "devise: \"Test GPU\"", 6, "devise", "unknown key"},
      {"micro_batch: 32", "micro_batch: 0", 13, "micro_batch", ""},
      {"compute_precision: amp-bf16", "compute_precision: int4", 14, "compute_precision", "amp-bf16"},
      {"timer: perf-counter", "timer: wall", 10, "timer", "cuda-events"},
      {"forward: {median: 1.5ms, spread: 0.02ms}", "forward: {median: 1.5, spread: 0.02ms}", 18, "forward.median", ""},
      {"forward: {median: 1.5ms, spread: 0.02ms}", "forward: {median: 1.5ms}", 18, "forward", "spread"},
      {"optimizer: {name: adam,", "optimizer: {name: rmsprop,", 20, "optimizer.name", "adam"},
      {"- {name: conv3.bias, ready: 1.05ms", "- {name: conv3.bias, ready: 0.9ms", 30, "ready", "must not decrease"},
      {"- {name: conv3.bias,", "- {name: conv3.weight,", 30, "name", "duplicate tensor name"},
      {"backward: {median: 2.5ms", "backward: {median: 2.4ms", 19, "backward.median", "ends before the last gradient"},
      {"  fp16_compress: {median: 30us, spread: 2us}", "  fp16_compress: {median: 30us, spread: 2us, p90: 3us}", 25,
       "comm_hooks.fp16_compress", "p90"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    SCOPED_TRACE(c.to);
    const auto at = good.find(c.from);
    ASSERT_NE(at, std::string::npos);
    std::string text = good;
    text.replace(at, c.from.size(), c.to);
    const std::string path = write_temp("bad" + std::to_string(i) + ".yaml", text);
    try {
      (void)load_measured_compute(path);
      ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), path);
      EXPECT_EQ(e.line(), c.line) << e.what();
      EXPECT_GT(e.column(), 0) << e.what();
      EXPECT_NE(e.key().find(c.key), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.reason), std::string::npos) << e.what();
    }
    fs::remove(path);
  }
}

TEST(MeasuredCompute, MatchNamesTheFirstDifference) {
  const MeasuredCompute m = load_measured_compute(kFixture);
  ModelDesc model = load_model(std::string(GW_REPLAY_TEST_DATA) + "/tiny-convnet.yaml");
  WorkloadSpec w;
  w.micro_batch = 32;
  w.optimizer.kind = "adam";
  EXPECT_NO_THROW(check_measured_matches(m, model, w));
  ModelDesc renamed = model;
  renamed.tensors[0].name = "head.bias";
  try {
    check_measured_matches(m, renamed, w);
    ADD_FAILURE();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("a tensor \"fc.bias\" that model tiny-convnet does not have"),
              std::string::npos)
        << e.what();
  }
  ModelDesc longer = model;
  longer.sequence_length = 128;  // measured as an image model
  EXPECT_THROW(check_measured_matches(m, longer, w), std::invalid_argument);
  ModelDesc fewer = model;
  fewer.tensors.pop_back();
  EXPECT_THROW(check_measured_matches(m, fewer, w), std::invalid_argument);
  w.optimizer.step_time = 1e-3;  // a given step time needs no measured optimizer
  w.optimizer.kind = "sgd";
  EXPECT_NO_THROW(check_measured_matches(m, model, w));
}

}  // namespace
}  // namespace gw
