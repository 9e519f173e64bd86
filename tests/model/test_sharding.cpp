// Sharded data parallelism (gradwire/model/sharding.hpp): the
// `workload.sharding` reader, the collectives of one optimizer step per
// scheme and accumulation mode against the volumes the frameworks and the
// ZeRO / ZeRO++ papers state, and the memory per GPU against the ZeRO
// paper's 2 + 2 + K bytes per parameter.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "gradwire/core/error.hpp"
#include "gradwire/core/yaml_reader.hpp"
#include "gradwire/model/model_desc.hpp"
#include "gradwire/model/sharded_wire.hpp"
#include "gradwire/model/sharding.hpp"

namespace {

using gw::CollectiveOp;
using gw::ShardPhase;

gw::ShardingSpec parse(const std::string& text) {
  auto doc = gw::yaml::load_string("sharding: " + text + "\n", "s.yaml");
  return gw::parse_sharding(doc.root().required("sharding"));
}

gw::InputError parse_error(const std::string& text) {
  try {
    parse(text);
  } catch (const gw::InputError& e) {
    return e;
  }
  ADD_FAILURE() << text << " was accepted";
  return gw::InputError("", 0, 0, "", "");
}

TEST(ShardingParse, SchemesAndTheirFrameworkDefaults) {
  gw::ShardingSpec s = parse("zero3");
  EXPECT_EQ(s.scheme, gw::ShardingScheme::Zero3);
  EXPECT_EQ(s.framework, gw::ShardingFramework::DeepSpeed);
  EXPECT_EQ(s.gradient_sync, gw::GradientSync::EveryMicroStep);
  EXPECT_EQ(s.reshard_after_forward, gw::kReshardFull);
  s = parse("zero1");
  EXPECT_EQ(s.gradient_sync, gw::GradientSync::LastMicroStep);  // ZeRO-1 reduces at the boundary
  s = parse("shard_grad_op");
  EXPECT_EQ(s.scheme, gw::ShardingScheme::Zero2);
  EXPECT_EQ(s.framework, gw::ShardingFramework::Fsdp1);
  EXPECT_EQ(s.reshard_after_forward, gw::kReshardNone);
  s = parse("zero++");
  EXPECT_EQ(s.scheme, gw::ShardingScheme::ZeroPP);
  EXPECT_TRUE(s.qwz && s.hpz && s.qgz);
  EXPECT_EQ(gw::to_string(s.scheme), "zeropp");
  s = parse(
      "{scheme: zero3, framework: fsdp2, reshard_after_forward: 8, gradient_sync: last, "
      "reshard_after_backward: false, prefetch: 2, reduce_dtype: fp32, param_dtype: bf16}");
  EXPECT_EQ(s.framework, gw::ShardingFramework::Fsdp2);
  EXPECT_EQ(s.reshard_after_forward, 8);
  EXPECT_EQ(s.gradient_sync, gw::GradientSync::LastMicroStep);
  EXPECT_FALSE(s.reshard_after_backward);
  EXPECT_EQ(s.prefetch, 2);
  EXPECT_EQ(s.reduce_bytes, 4);
  EXPECT_EQ(s.gather_bytes, 2);
  s = parse("{scheme: hsdp, group: 16}");
  EXPECT_EQ(s.group, 16);
  s = parse("{scheme: zeropp, qgz: false}");
  EXPECT_TRUE(s.qwz && s.hpz);
  EXPECT_FALSE(s.qgz);
  auto doc = gw::yaml::load_string("a: selective\n", "a.yaml");
  EXPECT_EQ(gw::parse_activation_checkpointing(doc.root().required("a")), gw::ActivationCheckpointing::Selective);
  EXPECT_EQ(gw::to_string(gw::ActivationCheckpointing::Full), "full");
}

TEST(ShardingParse, RefusalsNameTheKeyAndSuggest) {
  gw::InputError e = parse_error("zer03");
  EXPECT_EQ(e.file(), "s.yaml");
  EXPECT_EQ(e.line(), 1);
  EXPECT_EQ(e.column(), 11);
  EXPECT_EQ(e.key(), "sharding");
  EXPECT_NE(e.reason().find("did you mean \"zero3\""), std::string::npos) << e.what();
  e = parse_error("{scheme: zero3, gradient_synk: last}");
  EXPECT_EQ(e.key(), "sharding.gradient_synk");
  EXPECT_NE(e.reason().find("did you mean \"gradient_sync\""), std::string::npos) << e.what();
  e = parse_error("{scheme: zero2, gradient_sync: last}");  // DeepSpeed refuses no_sync with ZeRO-2/3
  EXPECT_EQ(e.key(), "sharding.gradient_sync");
  EXPECT_NE(e.reason().find("every backward"), std::string::npos) << e.what();
  e = parse_error("{scheme: full_shard, reshard_after_backward: false}");
  EXPECT_EQ(e.key(), "sharding.reshard_after_backward");
  e = parse_error("{scheme: zero3, qwz: true}");
  EXPECT_EQ(e.key(), "sharding.qwz");
  e = parse_error("{scheme: hsdp, framework: deepspeed}");
  EXPECT_EQ(e.key(), "sharding.framework");
  e = parse_error("{scheme: zero3, framework: fsdp2, reshard_after_forward: false}");
  EXPECT_NE(e.reason().find("zero2"), std::string::npos) << e.what();
  e = parse_error("{scheme: zero3, framework: fsdp2, reshard_after_forward: 1}");
  EXPECT_EQ(e.key(), "sharding.reshard_after_forward");
  try {
    auto doc = gw::yaml::load_string("a: fulll\n", "a.yaml");
    gw::parse_activation_checkpointing(doc.root().required("a"));
    ADD_FAILURE() << "fulll was accepted";
  } catch (const gw::InputError& x) {
    EXPECT_NE(x.reason().find("did you mean \"full\""), std::string::npos) << x.what();
  }
  e = parse_error("{framework: fsdp2}");
  EXPECT_EQ(e.key(), "sharding.scheme");
}

constexpr std::int64_t kPsi = 7'000'000'000;
constexpr double kM = 2.0 * kPsi;  // the model in bf16: the papers' M

gw::ShardingPlan plan(const std::string& spec, int k, gw::ShardTopology t = {1024, 8}) {
  return gw::sharding_plan(parse(spec), t, kPsi, 2, k);
}

double ag(int n) { return (n - 1.0) / n; }  // all-gather / reduce-scatter bus factor

TEST(ShardingTraffic, OneMicroStepMatchesTheZeroPaper) {
  const int w = 1024;
  const double ddp = plan("ddp", 1).wire_bytes_per_gpu();
  EXPECT_DOUBLE_EQ(ddp, 2 * ag(w) * kM);  // ring all-reduce: 2 (n-1)/n M
  // ZeRO paper, section 7: stages 1 and 2 move what DDP does, stage 3 1.5x.
  EXPECT_DOUBLE_EQ(plan("zero1", 1).wire_bytes_per_gpu(), ddp);
  EXPECT_DOUBLE_EQ(plan("zero2", 1).wire_bytes_per_gpu(), ddp);
  EXPECT_DOUBLE_EQ(plan("shard_grad_op", 1).wire_bytes_per_gpu(), ddp);
  EXPECT_DOUBLE_EQ(plan("zero3", 1).wire_bytes_per_gpu(), 1.5 * ddp);
  EXPECT_DOUBLE_EQ(plan("full_shard", 1).wire_bytes_per_gpu(), 1.5 * ddp);
}

struct Counts {
  long long forward_gather, backward_gather, reduce, step_gather;
};

Counts counts(const gw::ShardingPlan& p) {
  return {p.count(CollectiveOp::AllGather, ShardPhase::Forward), p.count(CollectiveOp::AllGather, ShardPhase::Backward),
          p.count(CollectiveOp::ReduceScatter, ShardPhase::Backward) +
              p.count(CollectiveOp::AllReduce, ShardPhase::Backward),
          p.count(CollectiveOp::AllGather, ShardPhase::Step)};
}

void expect_counts(const std::string& spec, int k, Counts want) {
  const gw::ShardingPlan p = plan(spec, k);
  const Counts c = counts(p);
  EXPECT_EQ(c.forward_gather, want.forward_gather) << spec << " k=" << k;
  EXPECT_EQ(c.backward_gather, want.backward_gather) << spec << " k=" << k;
  EXPECT_EQ(c.reduce, want.reduce) << spec << " k=" << k;
  EXPECT_EQ(c.step_gather, want.step_gather) << spec << " k=" << k;
  // Bytes per optimizer step: M per all-gather or reduce-scatter pass, 2M per all-reduce.
  const double ar = p.count(CollectiveOp::AllReduce, ShardPhase::Backward);
  const double passes = c.forward_gather + c.backward_gather + c.reduce - ar + c.step_gather + 2 * ar;
  EXPECT_DOUBLE_EQ(p.wire_bytes_per_gpu(), passes * ag(1024) * kM) << spec;
}

// Passes per optimizer step for each accumulation mode (docs/model.md,
// "Accumulation"), k = 4 and k = 32,768.
TEST(ShardingTraffic, AccumulationModesPerFramework) {
  for (long long k : {4LL, 32768LL}) {
    const int ki = static_cast<int>(k);
    expect_counts("ddp", ki, {0, 0, 1, 0});  // no_sync
    expect_counts("{scheme: ddp, gradient_sync: every}", ki, {0, 0, k, 0});
    expect_counts("zero1", ki, {0, 0, 1, 1});  // boundary only
    expect_counts("zero2", ki, {0, 0, k, 1});  // every backward
    expect_counts("zero3", ki, {k, k, k, 0});
    expect_counts("full_shard", ki, {k, k, k, 0});                                 // FSDP1, synced
    expect_counts("{scheme: full_shard, gradient_sync: last}", ki, {k, k, 1, 0});  // no_sync
    expect_counts("shard_grad_op", ki, {k, 0, k, 0});
    expect_counts("{scheme: shard_grad_op, gradient_sync: last}", ki, {1, 0, 1, 0});  // keeps params
    const std::string f2 = "{framework: fsdp2, ";
    expect_counts(f2 + "scheme: zero3}", ki, {k, k, k, 0});  // FSDP2 default
    expect_counts(f2 + "scheme: zero3, gradient_sync: last}", ki, {k, k, 1, 0});
    expect_counts(f2 + "scheme: zero3, gradient_sync: last, reshard_after_backward: false}", ki, {1, k, 1, 0});
    expect_counts(f2 + "scheme: zero2}", ki, {k, 0, k, 0});
    expect_counts(f2 + "scheme: zero2, gradient_sync: last, reshard_after_backward: false}", ki, {1, 0, 1, 0});
  }
}

TEST(ShardingTraffic, ZeroPlusPlusCutsCrossNodeVolumeFourfold) {
  const int gpn = 8, w = 1024, nodes = w / gpn;
  const double zero3 = plan("zero3", 1).cross_node_bytes_per_node(gpn);
  EXPECT_DOUBLE_EQ(zero3, 3 * ag(w) * kM);
  // qwZ: forward all-gather in int8 (M/2); hpZ: backward all-gather in the
  // node (0 across); qgZ: int4 gradients whose inter-node all-to-all moves
  // the node's reduced slice (M/4 per node).
  const gw::ShardingPlan pp = plan("zeropp", 1);
  // qwZ's fp32 scales, one per 8,000 elements of each rank's shard
  // (sharded_wire.hpp), all-gathered beside the int8 weights.
  const double scales = 4.0 * std::ceil(kPsi / w / gw::kQwzGroupElements) * w;
  EXPECT_DOUBLE_EQ(pp.cross_node_bytes_per_node(gpn), ag(w) * (kM / 2 + scales) + ag(nodes) * kM / 4);
  // ZeRO++ paper (Wang et al. 2023, section 3): 3M -> 0.75M.
  EXPECT_NEAR(pp.cross_node_bytes_per_node(gpn) / zero3, 0.75 / 3, 0.002);
  // Each part alone.
  EXPECT_DOUBLE_EQ(plan("{scheme: zeropp, hpz: false, qgz: false}", 1).cross_node_bytes_per_node(gpn),
                   ag(w) * (kM / 2 + scales) * 2 + ag(w) * kM);
  EXPECT_DOUBLE_EQ(plan("{scheme: zeropp, qwz: false, qgz: false}", 1).cross_node_bytes_per_node(gpn), 2 * ag(w) * kM);
  // The in-node parts still run: hpZ's backward all-gather over 8 GPUs in 16-bit.
  EXPECT_EQ(pp.count(CollectiveOp::AllGather, ShardPhase::Backward), 1);
  EXPECT_EQ(pp.count(CollectiveOp::AllToAll, ShardPhase::Backward), 2);
}

TEST(ShardingTraffic, HybridShardingCrossesNodesOnlyToAllReduceShards) {
  const gw::ShardTopology t{64, 8};
  const gw::ShardingPlan p = gw::sharding_plan(parse("hsdp"), t, kPsi, 2, 1);
  EXPECT_EQ(p.degree, 8);
  // In the node: all-gather twice and reduce-scatter (M each); across: the
  // 1/8 shard all-reduced among the 8 replicas, one GPU per node.
  EXPECT_DOUBLE_EQ(p.wire_bytes_per_gpu(), 3 * ag(8) * kM + 2 * ag(8) * kM / 8);
  EXPECT_DOUBLE_EQ(p.cross_node_bytes_per_node(8), 8 * 2 * ag(8) * kM / 8);
  // FSDP2 reshard_after_forward: 8 on 64 GPUs: backward gathers in the node.
  const auto r = gw::sharding_plan(parse("{scheme: zero3, framework: fsdp2, reshard_after_forward: 8}"), t, kPsi, 2, 1);
  EXPECT_DOUBLE_EQ(r.cross_node_bytes_per_node(8), 2 * ag(64) * kM);
  // Shard groups that do not divide the world are refused.
  EXPECT_THROW(gw::sharding_plan(parse("{scheme: hsdp, group: 3}"), t, kPsi, 2, 1), std::invalid_argument);
  EXPECT_THROW(gw::sharding_plan(parse("{scheme: zero3, framework: fsdp2, reshard_after_forward: 64}"), t, kPsi, 2, 1),
               std::invalid_argument);
  EXPECT_THROW(gw::sharding_plan(parse("zero3"), t, kPsi, 2, 0), std::invalid_argument);
}

TEST(ShardingTraffic, ReduceAndGatherPrecisions) {
  // FSDP MixedPrecision(param_dtype=bf16, reduce_dtype=fp32) on fp32 gradients.
  const auto p =
      gw::sharding_plan(parse("{scheme: full_shard, param_dtype: bf16, reduce_dtype: fp32}"), {16, 8}, kPsi, 4, 1);
  EXPECT_DOUBLE_EQ(p.wire_bytes_per_gpu(), ag(16) * (2 * 2.0 * kPsi + 4.0 * kPsi));
}

// --- Memory ------------------------------------------------------------------

gw::ModelDesc one_tensor_model(std::int64_t parameters) {
  gw::ModelDesc m;
  m.name = "flat";
  m.parameters = parameters;
  m.tensors.push_back({"weight", {parameters}, parameters, "fp32", 0, 0});
  return m;
}

gw::ShardedMemory memory(const gw::ModelDesc& m, const gw::WorkloadSpec& w, const std::string& spec,
                         gw::ShardTopology t) {
  return gw::sharded_memory(m, w, parse(spec), t, {}, 80e9);
}

// ZeRO paper (Rajbhandari et al. 2020, "ZeRO: Memory Optimizations Toward
// Training Trillion Parameter Models", Figure 1 and section 5): Psi = 7.5B
// parameters on N_d = 64 GPUs, mixed-precision Adam (K = 12): baseline 120 GB,
// P_os 31.4 GB, P_os+g 16.6 GB, P_os+g+p 1.9 GB.
TEST(ShardingMemory, ModelStatesMatchTheZeroPaper) {
  const std::int64_t psi = 7'500'000'000;
  const gw::ModelDesc m = one_tensor_model(psi);
  gw::WorkloadSpec w;
  w.precision = gw::Precision::FP16;
  w.optimizer.kind = "adam";
  const gw::ShardTopology t{64, 8};
  const double p = static_cast<double>(psi);
  const auto z1 = memory(m, w, "zero1", t), z2 = memory(m, w, "zero2", t), z3 = memory(m, w, "zero3", t);
  EXPECT_DOUBLE_EQ(z1.model_states(), (2 + 2) * p + 12 * p / 64);
  EXPECT_DOUBLE_EQ(z2.model_states(), 2 * p + (2 + 12) * p / 64);
  EXPECT_DOUBLE_EQ(z3.model_states(), (2 + 2 + 12) * p / 64);
  EXPECT_NEAR(z1.model_states() / 1e9, 31.4, 0.05);
  EXPECT_NEAR(z2.model_states() / 1e9, 16.6, 0.05);
  EXPECT_NEAR(z3.model_states() / 1e9, 1.88, 0.005);
  // DDP is memory_per_gpu unchanged: fp32 master 4, gradients 2, Adam 8 and
  // the bucket copy 2 bytes per parameter, the paper's 16 x Psi = 120 GB.
  const auto ddp = memory(m, w, "ddp", t);
  const auto base = gw::memory_per_gpu(m, w, {}, 80e9);
  EXPECT_DOUBLE_EQ(ddp.total, base.total);
  EXPECT_DOUBLE_EQ(ddp.model_states() + ddp.other, 120e9);
  // fp32 training: no separate master copy, 4 + 4 + 8 bytes sharded.
  w.precision = gw::Precision::FP32;
  EXPECT_DOUBLE_EQ(memory(m, w, "zero3", t).model_states(), 16 * p / 64);
  EXPECT_DOUBLE_EQ(memory(m, w, "zero3", t).master, 0);
  EXPECT_DOUBLE_EQ(memory(m, w, "zero1", t).model_states(), 4 * p + 4 * p + 8 * p / 64);
}

const std::string kZoo = std::string(GW_SOURCE_DIR) + "/models";

TEST(ShardingMemory, UnitsAndBlocksOfLlama) {
  const gw::ModelDesc l = gw::load_model("llama2-7b", {kZoo});
  const auto units = gw::shard_units(l);
  ASSERT_EQ(units.size(), 35u);  // lm_head, model.norm, 32 blocks, model.embed_tokens
  EXPECT_EQ(units.front().name, "lm_head");
  EXPECT_EQ(units[2].name, "model.layers.31");
  EXPECT_EQ(units.back().name, "model.embed_tokens");
  std::int64_t sum = 0;
  for (const auto& u : units) sum += u.parameters;
  EXPECT_EQ(sum, l.parameters);
  // One block: q, k, v, o (4 h^2), gate, up, down (3 h f), two RMSNorm scales.
  EXPECT_EQ(units[2].parameters, 4LL * 4096 * 4096 + 3LL * 4096 * 11008 + 2 * 4096);
  const gw::BlockShape b = gw::block_shape(l);
  EXPECT_EQ(b.layers, 32);
  EXPECT_EQ(b.hidden, 4096);
  EXPECT_EQ(gw::block_shape(one_tensor_model(10)).layers, 0);
}

TEST(ShardingMemory, BuffersAccumulationAndCheckpointing) {
  const gw::ModelDesc l = gw::load_model("llama2-7b", {kZoo});
  gw::WorkloadSpec w;
  w.precision = gw::Precision::BF16;
  w.optimizer.kind = "adamw";
  const gw::ShardTopology t{8, 8};
  const double block = 4.0 * 4096 * 4096 + 3.0 * 4096 * 11008 + 2 * 4096;
  const double p = static_cast<double>(l.parameters);
  // FULL_SHARD, prefetch 1: two blocks gathered in bf16 and one block's gradient.
  auto z3 = memory(l, w, "full_shard", t);
  EXPECT_DOUBLE_EQ(z3.unit_buffers, 2 * block * 2 + block * 2);
  EXPECT_DOUBLE_EQ(z3.accumulated_gradients, 0);
  // SHARD_GRAD_OP keeps every unit unsharded between forward and backward.
  EXPECT_DOUBLE_EQ(memory(l, w, "shard_grad_op", t).unit_buffers, p * 2 + block * 2);
  // Accumulating without sync keeps the full gradients; with sync it does not.
  w.accumulation = 4;
  EXPECT_DOUBLE_EQ(memory(l, w, "{scheme: full_shard, gradient_sync: last}", t).accumulated_gradients, p * 2);
  EXPECT_DOUBLE_EQ(memory(l, w, "full_shard", t).accumulated_gradients, 0);
  w.accumulation = 1;
  // Checkpointing (Korthikanti et al. 2022): selective keeps 34 / (34 + 5 a s / h).
  const double a = gw::activation_bytes_per_sample(l, w);
  EXPECT_DOUBLE_EQ(gw::checkpointed_activation_bytes(l, w, gw::ActivationCheckpointing::Selective, 32),
                   a * 34 / (34 + 5.0 * 32));
  EXPECT_DOUBLE_EQ(gw::checkpointed_activation_bytes(l, w, gw::ActivationCheckpointing::Full),
                   32.0 * 4096 * 4096 * 2 + a / 32);
  EXPECT_THROW(gw::checkpointed_activation_bytes(l, w, gw::ActivationCheckpointing::Selective), std::invalid_argument);
  EXPECT_DOUBLE_EQ(gw::recompute_flops_per_sample(l, gw::ActivationCheckpointing::Selective),
                   4.0 * 4096 * 4096 * 4096 * 32);
  EXPECT_DOUBLE_EQ(gw::recompute_flops_per_sample(l, gw::ActivationCheckpointing::Full), l.forward_flops_per_sample);
  // Llama-2-7B on 8 x 80 GB at micro-batch 1: DDP and FULL_SHARD without
  // checkpointing do not fit; FULL_SHARD with full checkpointing does.
  EXPECT_FALSE(memory(l, w, "ddp", t).fits());
  EXPECT_FALSE(z3.fits());
  const auto ck = gw::sharded_memory(l, w, parse("full_shard"), t, {}, 80e9, gw::ActivationCheckpointing::Full);
  EXPECT_TRUE(ck.fits()) << ck.total;
  EXPECT_DOUBLE_EQ(ck.total, ck.model_states() + ck.unit_buffers + ck.activations + ck.reserve);
  // Which schemes fit: on one node none without checkpointing, every ZeRO
  // stage with full checkpointing, never DDP (16 bytes per parameter).
  std::vector<std::string> fit;
  for (const auto& c : gw::scheme_candidates(l, w, t, {}, 80e9)) {
    if (c.memory.fits()) fit.push_back(gw::to_string(c.spec.scheme) + "/" + gw::to_string(c.checkpointing));
  }
  EXPECT_EQ(fit, (std::vector<std::string>{"zero1/full", "zero2/full", "zero3/full"}));
  EXPECT_EQ(gw::scheme_candidates(l, w, {64, 8}, {}, 80e9).size(), 12u);  // hsdp and zeropp join
  EXPECT_EQ(gw::sharding_defaults(gw::ShardingScheme::Hsdp).framework, gw::ShardingFramework::Fsdp2);
  EXPECT_EQ(gw::sharding_defaults(gw::ShardingScheme::Zero2).framework, gw::ShardingFramework::DeepSpeed);
}

}  // namespace
