// The compressor table (gradwire/model/compressors.hpp): every consumer reads its
// rows, so a compressor added as one row is parsed, planned and labelled.
// The throwaway "test_ternary" row below stands for a new compressor: it is
// registered at run time, exactly as a row in compressors.cpp would be.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "gradwire/model/compressors.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/model/scenario.hpp"
#include "gradwire/model/scenario_yaml.hpp"

namespace {

// Ternary {-1, 0, +1} codes, 2 bits per element, and a 4-byte scale per chunk,
// all-gathered.
double ternary_bytes(std::int64_t n, std::int64_t chunk) {
  return std::ceil(static_cast<double>(n) / 4) + 4 * std::ceil(static_cast<double>(n) / static_cast<double>(chunk));
}

void register_ternary() {
  if (gw::find_compressor("test_ternary") != nullptr) return;
  gw::Compressor row;
  row.name = "test_ternary";
  row.pattern = gw::CommOp::AllGather;
  row.codecs = {"test_ternary"};
  row.error_feedback = true;
  row.params = {gw::CompressorParam::Chunk};
  row.label = [](const gw::CompressionSpec& c) { return "ternary / " + std::to_string(c.chunk); };
  row.plan = [](gw::BucketPlanner& b) {
    b.encode(b.codec_time(true, b.dn));
    b.all_gather("all-gather ternary", ternary_bytes(b.n, b.spec.chunk));
    b.decode(b.workers * b.codec_time(false, b.dn));
  };
  gw::register_compressor(std::move(row));
}

gw::Scenario scenario_with(const std::string& compression) {
  const std::string text =
      "cluster: {nodes: 2, gpus_per_node: 4, gpu: h100, intra_node: {bandwidth: 450GB/s, latency: 2us},\n"
      "          nics: {count: 1, bandwidth: 400Gbps, latency: 5us}, fabric: {topology: switch}}\n"
      "workload: {model: resnet50, micro_batch: 32, compression: " +
      compression + "}\n";
  return gw::parse_scenario(gw::yaml::load_string(text, "ternary.yaml"));
}

}  // namespace

TEST(CompressorTable, BuiltInRowsInScenarioOrder) {
  const std::vector<std::string> want{"none",          "fp16", "bf16",    "int8",    "sign",
                                      "majority_vote", "topk", "randomk", "powersgd"};
  std::vector<std::string> names;
  for (const auto& r : gw::compressors()) names.push_back(r.name);
  ASSERT_GE(names.size(), want.size());
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 9), want);
  EXPECT_EQ(gw::compressor("sign").pattern, gw::CommOp::AllGather);
  EXPECT_EQ(gw::compressor("randomk").pattern, gw::CommOp::AllReduce);
  EXPECT_FALSE(gw::compressor("fp16").error_feedback);
  EXPECT_TRUE(gw::compressor("topk").error_feedback);
  EXPECT_EQ(gw::compressor_of_codec("powersgd_ef"), &gw::compressor("powersgd"));
  EXPECT_EQ(gw::compressor_of_codec("qsgd"), nullptr);
  EXPECT_THROW(gw::compressor("qsgd"), std::invalid_argument);
}

TEST(CompressorTable, PlannerLabels) {
  gw::CompressionSpec c;
  EXPECT_EQ(gw::compressor_label(c), "uncompressed");
  c.kind = "powersgd";
  c.rank = 8;
  EXPECT_EQ(gw::compressor_label(c), "PowerSGD rank 8");
  c.kind = "topk";
  c.ratio = 0.001;
  EXPECT_EQ(gw::compressor_label(c), "Top-K 0.1%");
  c.kind = "randomk";
  EXPECT_EQ(gw::compressor_label(c), "Random-K 0.1%");
  c.kind = "sign";
  EXPECT_EQ(gw::compressor_label(c), "signSGD");
  c.kind = "majority_vote";
  EXPECT_EQ(gw::compressor_label(c), "majority vote");
  c.kind = "bf16";
  EXPECT_EQ(gw::compressor_label(c), "bf16");
}

TEST(Scenarios, CompressionImplementationDefaultsToPytorchAndRoundTrips) {
  EXPECT_EQ(scenario_with("{kind: fp16}").workload->compression.implementation, "pytorch");
  for (const char* impl : {"pytorch", "gradwire"}) {
    const gw::Scenario s = scenario_with(std::string("{kind: powersgd, rank: 2, implementation: ") + impl + "}");
    EXPECT_EQ(s.workload->compression.implementation, impl);
    EXPECT_EQ(s.workload->compression.rank, 2);
  }
}

TEST(Scenarios, CompressionImplementationBadValueNamesItsPosition) {
  try {
    scenario_with("{kind: fp16, implementation: apex}");
    FAIL();
  } catch (const gw::InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("ternary.yaml:3:"), std::string::npos) << what;
    EXPECT_NE(what.find("workload.compression.implementation"), std::string::npos) << what;
    EXPECT_NE(what.find("pytorch, gradwire"), std::string::npos) << what;
  }
}

TEST(CompressorTable, ParametersOfOtherKindsAreRefusedNamingTheirKinds) {
  try {
    scenario_with("{kind: sign, ratio: 0.1}");
    FAIL();
  } catch (const gw::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("only by topk, randomk"), std::string::npos) << e.what();
  }
  EXPECT_EQ(scenario_with("{kind: topk, ratio: 0.25}").workload->compression.ratio, 0.25);
  EXPECT_THROW(scenario_with("{kind: topk, ratio: 2}"), gw::InputError);  // outside [1e-6, 1]
}

TEST(CompressorTable, OneAddedRowIsParsedPlannedAndLabelled) {
  register_ternary();
  gw::Compressor again;
  again.name = "test_ternary";
  EXPECT_THROW(gw::register_compressor(again), std::invalid_argument);  // the name is taken

  // The scenario parser accepts the new kind and its parameter, and refuses
  // another kind's parameter naming the kinds that take it.
  const gw::Scenario s = scenario_with("{kind: test_ternary, chunk: 256}");
  const gw::CompressionSpec& c = s.workload->compression;
  EXPECT_EQ(c.kind, "test_ternary");
  EXPECT_EQ(c.chunk, 256);
  try {
    scenario_with("{kind: test_ternary, rank: 2}");
    FAIL();
  } catch (const gw::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not used by compression kind \"test_ternary\" (only by powersgd)"),
              std::string::npos)
        << e.what();
  }
  const auto& names = gw::compressor_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "test_ternary"), names.end());
  const auto chunked = gw::compressors_with_param(gw::CompressorParam::Chunk);
  EXPECT_EQ(chunked.back(), "test_ternary");

  // The wire plan sizes it: encode, an all-gather of N messages, decode.
  gw::ModelDesc model;
  model.tensors.push_back({"w", {1000, 10}, 10000, "fp32", 0, 0});
  gw::Bucket bucket;
  bucket.elements = 10000;
  gw::ClusterSpec cluster;
  cluster.nodes = 2;
  cluster.gpus_per_node = 4;
  const auto codec_time = [](const std::string& codec, bool encode, double elements) {
    EXPECT_EQ(codec, "test_ternary");
    return (encode ? 1e-9 : 2e-9) * elements;
  };
  const gw::BucketComm comm = gw::plan_bucket_comm(c, model, bucket, 4.0, cluster, "ring", codec_time);
  ASSERT_EQ(comm.steps.size(), 3u);
  EXPECT_EQ(comm.steps[1].op, gw::CommOp::AllGather);
  EXPECT_EQ(comm.steps[1].contributed, 2500 + 4 * 40);
  EXPECT_EQ(comm.steps[1].bytes, 8 * (2500 + 4 * 40));
  EXPECT_DOUBLE_EQ(comm.encode, 1e-5);
  EXPECT_DOUBLE_EQ(comm.decode, 8 * 2e-5);
  EXPECT_EQ(comm.error_feedback_bytes, 40000);  // lossy: a residual of n e bytes

  // The planner's label.
  EXPECT_EQ(gw::compressor_label(c), "ternary / 256");
  // The profile loader knows its codec keys.
  EXPECT_EQ(gw::compressor_of_codec("test_ternary_ef")->name, "test_ternary");
}
