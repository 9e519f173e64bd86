// workload.compute_precision apart from the gradient precision: the compute
// time runs at the profile's rate for the compute precision (amp-* at the
// 16-bit rate), the wire keeps the gradient precision, a GPU without the rate
// is an input error at the field, and the table names what was used.
#include <gtest/gtest.h>

#include <string>

#include "gradwire/core/error.hpp"
#include "gradwire/core/yaml_reader.hpp"
#include "gradwire/model/closed_form.hpp"
#include "gradwire/model/iteration_model.hpp"
#include "gradwire/model/memory.hpp"
#include "gradwire/model/model_desc.hpp"
#include "gradwire/model/profile.hpp"
#include "gradwire/model/scenario.hpp"
#include "gradwire/model/scenario_yaml.hpp"
#include "gradwire/replay/report.hpp"

namespace gw {
namespace {

const std::string kData = GW_REPLAY_TEST_DATA;

ModelDesc tiny() { return load_model(kData + "/tiny-convnet.yaml"); }

/// A one-node scenario on `gpu` from YAML text; compute_precision on line 14
/// (column 24) when `compute_precision` is not empty.
Scenario scenario_on(const std::string& gpu, const std::string& compute_precision,
                     const std::string& gradient_precision = "fp32") {
  std::string text =
      "name: precision\n"
      "cluster:\n"
      "  nodes: 1\n"
      "  gpus_per_node: 4\n"
      "  gpu: " +
      gpu +
      "\n"
      "  intra_node: {bandwidth: 150GB/s, latency: 1us}\n"
      "  nics: {count: 1, bandwidth: 100Gbps, latency: 5us}\n"
      "  fabric: {topology: switch, latency: 1us}\n"
      "workload:\n"
      "  model: tiny-convnet\n"
      "  micro_batch: 8\n"
      "  precision: " +
      gradient_precision +
      "\n"
      "  compute_efficiency: 0.5\n";
  if (!compute_precision.empty()) text += "  compute_precision:   " + compute_precision + "\n";
  return parse_scenario(yaml::load_string(text, "precision.yaml"));
}

// F = forward FLOPs x b / (e R), B = backward FLOPs x b / (e R) with R the
// profile's rate for the compute precision; the gradients stay fp32 on the wire.
TEST(ComputePrecision, ComputeTimeRunsAtTheProfileRateOfTheComputePrecision) {
  const Profile h100 = load_profile("h100");
  const ModelDesc m = tiny();
  const PreparedIteration fp32_run = prepare_iteration(scenario_on("h100", "fp32"), m, h100);
  for (const std::string cp : {"fp32", "tf32", "fp16", "bf16", "amp-fp16", "amp-bf16"}) {
    SCOPED_TRACE(cp);
    const PreparedIteration p = prepare_iteration(scenario_on("h100", cp), m, h100);
    const double rate = h100.gemm_flops.at(cp == "amp-fp16" ? "fp16" : cp == "amp-bf16" ? "bf16" : cp);
    EXPECT_EQ(p.plan.compute_precision, cp);
    EXPECT_NEAR(p.plan.forward, m.forward_flops_per_sample * 8 / (0.5 * rate), 1e-15);
    EXPECT_NEAR(p.plan.backward(), m.backward_flops_per_sample * 8 / (0.5 * rate), 1e-14);
    double contributed = 0;  // fp32 gradients on the wire: 4 bytes a parameter
    for (const auto& b : p.plan.comm) contributed += b.contributed;
    EXPECT_DOUBLE_EQ(contributed, 4.0 * static_cast<double>(m.parameters));
    EXPECT_DOUBLE_EQ(p.plan.wire_bytes_per_gpu, fp32_run.plan.wire_bytes_per_gpu);
  }
  // The 16-bit rates are the H100's tensor-core ones: AMP is faster than TF32.
  EXPECT_LT(prepare_iteration(scenario_on("h100", "amp-bf16"), m, h100).plan.forward,
            prepare_iteration(scenario_on("h100", "tf32"), m, h100).plan.forward);
}

TEST(ComputePrecision, WithoutTheKeyTheRateFollowsTheGradientPrecisionAsBefore) {
  const ModelDesc m = tiny();
  const Profile h100 = load_profile("h100");
  const Profile v100 = load_profile("v100");
  EXPECT_EQ(prepare_iteration(scenario_on("h100", ""), m, h100).plan.compute_precision, "tf32");
  EXPECT_EQ(prepare_iteration(scenario_on("h100", "", "bf16"), m, h100).plan.compute_precision, "bf16");
  EXPECT_EQ(prepare_iteration(scenario_on("h100", "", "fp16"), m, h100).plan.compute_precision, "fp16");
  // A V100 has no TF32: fp32 training runs at its fp32 rate and says so.
  const auto v = prepare_iteration(scenario_on("v100", ""), m, v100);
  EXPECT_EQ(v.plan.compute_precision, "fp32");
  EXPECT_NEAR(v.plan.forward, m.forward_flops_per_sample * 8 / (0.5 * v100.gemm_flops.at("fp32")), 1e-15);
  EXPECT_EQ(v100.gemm_flops.count("tf32"), 0u);
  EXPECT_EQ(v100.gemm_flops.count("bf16"), 0u);
}

TEST(ComputePrecision, AGpuWithoutTheRateIsAnInputErrorAtTheField) {
  const ModelDesc m = tiny();
  const Profile v100 = load_profile("v100");
  for (const std::string cp : {"tf32", "bf16", "amp-bf16"}) {
    SCOPED_TRACE(cp);
    try {
      (void)prepare_iteration(scenario_on("v100", cp), m, v100);
      ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), "precision.yaml");
      EXPECT_EQ(e.line(), 14);
      EXPECT_EQ(e.column(), 24);
      EXPECT_EQ(e.key(), "workload.compute_precision");
      const std::string rate = cp == "tf32" ? "tf32" : "bf16";
      EXPECT_NE(e.reason().find("profile 'v100' has no " + rate + " GEMM rate"), std::string::npos) << e.what();
      EXPECT_NE(e.reason().find("it has fp16, fp32"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
  // The memory path (simulate's verdict, the sweep) reports the same place.
  try {
    (void)compressor_memory(scenario_on("v100", "tf32"), m, v100);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 14);
    EXPECT_EQ(e.key(), "workload.compute_precision");
  }
  for (const std::string cp : {"fp32", "fp16", "amp-fp16"})
    EXPECT_EQ(prepare_iteration(scenario_on("v100", cp), m, v100).plan.compute_precision, cp);
}

TEST(ComputePrecision, ParsesTheOneVocabularyAndRejectsOthers) {
  EXPECT_EQ(scenario_on("h100", "amp-bf16").workload->compute_precision, "amp-bf16");
  EXPECT_EQ(scenario_on("h100", "").workload->compute_precision, "");
  EXPECT_EQ(compute_precision_names(),
            (std::vector<std::string>{"fp32", "tf32", "fp16", "bf16", "amp-fp16", "amp-bf16"}));
  for (const std::string bad : {"fp8", "amp", "AMP-BF16", "tf16"}) {
    try {
      (void)scenario_on("h100", bad);
      ADD_FAILURE() << bad;
    } catch (const InputError& e) {
      EXPECT_EQ(e.line(), 14) << e.what();
      EXPECT_EQ(e.column(), 24) << e.what();
      EXPECT_NE(e.key().find("compute_precision"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(gemm_rate_of("amp-fp16"), "fp16");
  EXPECT_EQ(gemm_rate_of("amp-bf16"), "bf16");
  EXPECT_EQ(gemm_rate_of("tf32"), "tf32");
  EXPECT_DOUBLE_EQ(activation_element_bytes("tf32"), 4);
  EXPECT_DOUBLE_EQ(activation_element_bytes("amp-bf16"), 2);
}

TEST(ComputePrecision, TheTableNamesTheComputePrecisionAndItsRate) {
  const ModelDesc m = tiny();
  const auto amp = closed_form_iteration(scenario_on("h100", "amp-bf16"), m, load_profile("h100"));
  const std::string t = format_table(amp);
  EXPECT_NE(t.find("compute: amp-bf16"), std::string::npos) << t;
  EXPECT_NE(t.find("compute efficiency: 0.5 of the profile's bf16 GEMM rate"), std::string::npos) << t;
  const std::string v = format_table(closed_form_iteration(scenario_on("v100", ""), m, load_profile("v100")));
  EXPECT_NE(v.find("compute: fp32"), std::string::npos) << v;
  EXPECT_EQ(v.find("tf32"), std::string::npos) << v;
}

// A measured-compute document belongs to one compute precision: a scenario
// that names another is a mismatch at workload.compute; one that names none
// takes the document's.
TEST(ComputePrecision, MeasuredComputeMustMatchTheScenariosComputePrecision) {
  const Profile p = load_profile("h100");
  Scenario s = load_scenario(kData + "/tiny-measured.yaml");  // measured at amp-bf16
  EXPECT_EQ(prepare_iteration(s, tiny(), p).plan.compute_precision, "amp-bf16");
  s.workload->compute_precision = "amp-bf16";
  EXPECT_EQ(prepare_iteration(s, tiny(), p).plan.compute_precision, "amp-bf16");
  s.workload->compute_precision = "fp16";
  try {
    (void)prepare_iteration(s, tiny(), p);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "workload.compute") << e.what();
    EXPECT_NE(e.reason().find("compute precision amp-bf16, the scenario's is fp16"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gw
