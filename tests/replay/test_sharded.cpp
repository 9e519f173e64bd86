// The sharded schedule (gradwire/model/sharded_iteration.hpp) and its replay
// (gradwire/replay/sharded_replay.hpp): the recurrence by hand, the bytes
// each accumulation mode moves per optimizer step as the frameworks'
// documentation gives them, the closed form against the SimGrid replay,
// folded micro-steps, the bundled Llama-2-7B FULL_SHARD scenario, refusals.
#include <gtest/gtest.h>

#include "gradwire/core/error.hpp"
#include "gradwire/model/closed_form.hpp"
#include "gradwire/model/memory.hpp"
#include "gradwire/model/profile.hpp"
#include "gradwire/model/sharded_iteration.hpp"
#include "gradwire/model/sharding.hpp"
#include "gradwire/replay/sharded_replay.hpp"
#include "gradwire/core/yaml_reader.hpp"
#include "sharded_fixtures.hpp"

namespace gw {
namespace {

using test::gpt2_scenario;
using test::hand_base;
using test::spec_of;
using test::two_blocks;
using test::workload_with;

// All-gathers and reduce-scatters take 0.5 s each.
const ShardCollectiveTimeFn kHalfSecond = [](CollectiveOp, double, const ShardCommGroup&) { return 0.5; };

// FULL_SHARD, prefetch 1, two units (F 1, B 2, collectives 0.5):
//   NCCL   : AG0 [0, .5]  AG1 [.5, 1]  AG(B1) [1.5, 2] after F0  AG(B0) [2.5, 3] after F1
//            RS1 [4.5, 5] after B1  RS0 [6.5, 7] after B0
//   compute: F0 [.5, 1.5]  F1 [1.5, 2.5]  B1 [2.5, 4.5]  B0 [4.5, 6.5]
// micro-step 7 s: 6 s of compute + the first all-gather + the last
// reduce-scatter; the optimizer on the shard 8 / 8 = 1 s.
TEST(ShardedSchedule, FullShardByHand) {
  const auto plan =
      plan_sharded_iteration(workload_with("full_shard", 1), test::cluster(1, 8), two_blocks(), hand_base(1));
  ASSERT_EQ(plan.units, 2);
  ASSERT_EQ(plan.programs.size(), 2u);
  const auto ends = schedule_program(plan.programs[0], kHalfSecond);
  EXPECT_DOUBLE_EQ(program_seconds(ends), 7.0);
  const auto r = evaluate_sharded_closed_form(plan, kHalfSecond);
  EXPECT_DOUBLE_EQ(r.total, 8.0);
  EXPECT_DOUBLE_EQ(r.forward, 2.0);
  EXPECT_DOUBLE_EQ(r.backward, 4.0);
  EXPECT_DOUBLE_EQ(r.optimizer, 1.0);
  EXPECT_DOUBLE_EQ(r.exposed_communication, 1.0);
  EXPECT_EQ(r.sharding, "zero3 (fsdp1)");
}

// SHARD_GRAD_OP keeps the parameters from forward to backward: no backward
// all-gather, so B1 starts at F1's end: 0.5 + 2 + 4 + 0.5 = 7 s as well, with
// two all-gathers fewer. DeepSpeed ZeRO-2: none in forward either, and after
// the step on the shard the parameters' all-gather (0.5 s).
TEST(ShardedSchedule, ShardGradOpAndZeroTwoByHand) {
  const auto sgo =
      plan_sharded_iteration(workload_with("shard_grad_op", 1), test::cluster(1, 8), two_blocks(), hand_base(1));
  EXPECT_DOUBLE_EQ(program_seconds(schedule_program(sgo.programs[0], kHalfSecond)), 7.0);
  EXPECT_EQ(sgo.programs[0].ops.size(), 2u + 4u + 2u);  // 2 AG, 4 compute, 2 RS
  const auto z2 = plan_sharded_iteration(workload_with("zero2", 1), test::cluster(1, 8), two_blocks(), hand_base(1));
  // F0 F1 B1 [RS1 beside B0] B0 RS0: 6 + 0.5.
  EXPECT_DOUBLE_EQ(program_seconds(schedule_program(z2.programs[0], kHalfSecond)), 6.5);
  EXPECT_DOUBLE_EQ(program_seconds(schedule_program(z2.programs.back(), kHalfSecond)), 1.0 + 0.5);
}

// Bytes per optimizer step of each accumulation mode (docs/model.md,
// "Accumulation modes"), counted from the schedule's ops: all-gathered and
// reduce-scattered bytes in units of M = parameters x 2 bytes, k = 4.
struct ModeBytes {
  const char* sharding;
  double gathered, reduced;  ///< x M
};

TEST(ShardedSchedule, BytesPerOptimizerStepOfEachAccumulationMode) {
  const int k = 4;
  const ModeBytes modes[] = {
      {"{scheme: full_shard, gradient_sync: every}", 2.0 * k, k},  // FSDP1 synced: AG fwd + bwd, RS each
      {"{scheme: full_shard, gradient_sync: last}", 2.0 * k, 1},   // FSDP1 no_sync: still all-gathers each
      {"{scheme: shard_grad_op, gradient_sync: last}", 1, 1},      // no_sync keeps the parameters
      {"{scheme: zero3, framework: fsdp2}", 2.0 * k, k},           // FSDP2 default: sync every micro-step
      {"{scheme: zero3, framework: fsdp2, gradient_sync: last}", 2.0 * k, 1},
      {"{scheme: zero3, framework: fsdp2, gradient_sync: last, reshard_after_backward: false}", 1.0 + k, 1},
      {"{scheme: zero2, framework: fsdp2, gradient_sync: last, reshard_after_backward: false}", 1, 1},
      {"zero1", 1, 1},  // DeepSpeed: reduce at the boundary, all-gather after the step
      {"zero2", 1, k},  // reduce after every backward
      {"zero3", 2.0 * k, k},
  };
  const double m = 2000 * 2.0;
  for (const auto& mode : modes) {
    const auto w = workload_with(mode.sharding, k);
    const auto plan = plan_sharded_iteration(w, test::cluster(1, 8), two_blocks(), hand_base(k));
    double gathered = 0, reduced = 0;
    for (const auto& prog : plan.programs)
      for (const auto& op : prog.ops) {
        if (!op.collective) continue;
        (op.op == CollectiveOp::AllGather ? gathered : reduced) += static_cast<double>(prog.times) * op.bytes;
      }
    EXPECT_DOUBLE_EQ(gathered, mode.gathered * m) << mode.sharding;
    EXPECT_DOUBLE_EQ(reduced, mode.reduced * m) << mode.sharding;
    // The schedule moves what sharding_plan counts: per GPU (N-1)/N of it.
    EXPECT_NEAR(plan.traffic.wire_bytes_per_gpu(), (gathered + reduced) * 7.0 / 8.0, 1e-6) << mode.sharding;
  }
}

// k micro-steps cost three programs to evaluate, whatever k: the middle one
// counted k - 2 times.
TEST(ShardedSchedule, MicroStepsAreFolded) {
  const auto plan = plan_sharded_iteration(workload_with("{scheme: full_shard, gradient_sync: every}", 32768),
                                           test::cluster(1, 8), two_blocks(), hand_base(32768));
  ASSERT_EQ(plan.programs.size(), 4u);  // first, middle, last, optimizer step
  EXPECT_EQ(plan.programs[1].times, 32766);
  const auto r = evaluate_sharded_closed_form(plan, kHalfSecond);
  EXPECT_DOUBLE_EQ(r.total, 32768 * 7.0 + 1.0);
  // Under no_sync the middle micro-steps reduce nothing: 6.5 s each.
  const auto no_sync = plan_sharded_iteration(workload_with("{scheme: full_shard, gradient_sync: last}", 4),
                                              test::cluster(1, 8), two_blocks(), hand_base(4));
  EXPECT_DOUBLE_EQ(evaluate_sharded_closed_form(no_sync, kHalfSecond).total, 3 * 6.5 + 7.0 + 1.0);
}

// ZeRO++'s quantised traffic (qwZ, qgZ, on by default) and compression
// with sharding are refused (test_sharded_groups.cpp: what runs over groups).
TEST(ShardedSchedule, CompressionWithShardingIsRefusedInOneLine) {
  WorkloadSpec w = workload_with("zero3", 1);
  w.compression.kind = "int8";
  try {
    plan_sharded_iteration(w, test::cluster(1, 8), two_blocks(), hand_base(1));
    ADD_FAILURE() << "compression with sharding was simulated";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no framework runs it"), std::string::npos) << e.what();
  }
}

// ZeRO++ qwZ without hpZ (one node), two units, no kernel costs: each
// all-gather is followed by its scales' all-gather (0.5 s each):
//   NCCL   : AG0 [0, .5] S0 [.5, 1]  AG1 [1, 1.5] S1 [1.5, 2]
//            AG(B1) [2, 2.5] S [2.5, 3] after F0  AG(B0) [3, 3.5] S [3.5, 4] after F1
//            RS1 [5, 5.5]  RS0 [7, 7.5]
//   compute: F0 [1, 2]  F1 [2, 3]  B1 [3, 5]  B0 [5, 7]
// The one-dimensional tensors leave qgZ nothing to quantise: reduce-scatters.
TEST(ShardedSchedule, QwzGathersInt8AndScalesByHand) {
  const auto plan = plan_sharded_iteration(workload_with("{scheme: zeropp, hpz: false}", 1), test::cluster(1, 8),
                                           two_blocks(), hand_base(1));
  EXPECT_EQ(plan.wire, "int8 weights + int4 gradients");
  const auto ends = schedule_program(plan.programs[0], kHalfSecond);
  EXPECT_DOUBLE_EQ(program_seconds(ends), 7.5);
  double int8 = 0, reduced = 0;
  for (const auto& op : plan.programs[0].ops) {
    if (op.op == CollectiveOp::AllGather && op.label.rfind("all-gather layers", 0) == 0) int8 += op.bytes;
    if (op.op == CollectiveOp::ReduceScatter) reduced += op.bytes;
    EXPECT_NE(op.op, CollectiveOp::AllToAll);
  }
  EXPECT_DOUBLE_EQ(int8, 2 * 2000.0);     // forward and backward, one byte per element
  EXPECT_DOUBLE_EQ(reduced, 2000 * 2.0);  // bf16
}

ModelDesc gpt2() { return load_model("gpt2"); }

// The closed form equals the SimGrid replay within 0.1% on contention-free
// clusters (one node on NVSwitch; four nodes of one GPU, a NIC each): the
// replay runs one collective at a time, as NCCL's one stream per device does.
TEST(ShardedReplay, ClosedFormEqualsTheReplay) {
  const Profile p = load_profile("h100");
  const ModelDesc m = gpt2();
  for (const auto& cluster : {test::cluster(1, 8), test::cluster(4, 1)}) {
    for (const std::string sharding :
         {"full_shard", "shard_grad_op", "zero1", "zero2", "zero3", "{scheme: zero3, framework: fsdp2}",
          "{scheme: full_shard, gradient_sync: last}"}) {
      for (const int k : {1, 4}) {
        const Scenario s = gpt2_scenario(cluster, sharding, k);
        const auto closed = closed_form_iteration(s, m, p);
        const auto sim = simulate_iteration(s, m, p);
        EXPECT_EQ(sim.method, "simulation");
        EXPECT_GT(sim.simulated_activities, 0);
        EXPECT_GT(closed.exposed_communication, 0) << sharding;
        EXPECT_NEAR(sim.total / closed.total, 1.0, 1e-3)
            << sharding << " k " << k << " on " << cluster.nodes << " x " << cluster.gpus_per_node;
      }
    }
  }
}

// Compressed sharded traffic, closed form against the replay within 0.1%:
// ZeRO++ qwZ and qgZ (alone and together, hpZ off) and FSDP2's fp8
// all-gather, at k = 1 and 4, on one node, four nodes of one GPU and two
// nodes of four (where qgZ's all-to-all has both stages).
TEST(ShardedReplay, CompressedTrafficClosedFormEqualsTheReplay) {
  const Profile p = load_profile("h100");
  const ModelDesc m = gpt2();
  for (const auto& cluster : {test::cluster(1, 8), test::cluster(4, 1), test::cluster(2, 4)}) {
    for (const std::string sharding :
         {"{scheme: zeropp, hpz: false}", "{scheme: zeropp, hpz: false, qgz: false}",
          "{scheme: zeropp, hpz: false, qwz: false}", "{scheme: zero3, framework: fsdp2, float8_all_gather: true}"}) {
      for (const int k : {1, 4}) {
        const Scenario s = gpt2_scenario(cluster, sharding, k);
        const auto closed = closed_form_iteration(s, m, p);
        const auto sim = simulate_iteration(s, m, p);
        EXPECT_GT(closed.encode, 0) << sharding;  // the quantisation kernels are charged
        EXPECT_NEAR(sim.total / closed.total, 1.0, 1e-3)
            << sharding << " k " << k << " on " << cluster.nodes << " x " << cluster.gpus_per_node;
      }
    }
  }
}

// k = 64 simulates the collectives k = 1 does, no more: each distinct one in
// full once, the rest as their recorded duration.
TEST(ShardedReplay, AccumulationDoesNotGrowTheSimulation) {
  const Profile p = load_profile("h100");
  const ModelDesc m = gpt2();
  ReplayOptions::Stats one, many;
  ReplayOptions o1, o64;
  o1.stats = &one;
  o64.stats = &many;
  const auto r1 = simulate_iteration(gpt2_scenario(test::cluster(1, 8), "full_shard", 1), m, p, o1);
  const auto r64 = simulate_iteration(gpt2_scenario(test::cluster(1, 8), "full_shard", 64), m, p, o64);
  EXPECT_EQ(many.simulated, one.simulated);
  EXPECT_LE(r64.simulated_activities, 3 * r1.simulated_activities);
  EXPECT_GT(r64.total, 60 * (r1.total - r1.optimizer));
}

TEST(ShardedReplay, ARefusedSchemeIsAnInputErrorAtTheKey) {
  const Profile p = load_profile("h100");
  Scenario s = gpt2_scenario(test::cluster(2, 8), "zero3", 1);
  s.workload->compression.kind = "fp16";
  s.workload->sharding_line = 7;
  s.workload->sharding_column = 13;
  try {
    closed_form_iteration(s, gpt2(), p);
    ADD_FAILURE() << "compression with sharding was simulated";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "workload.sharding");
    EXPECT_EQ(e.line(), 7);
  }
}

}  // namespace
}  // namespace gw

namespace gw {
namespace {

// The memory verdict of a fixed global batch takes the scheme's memory
// (workload_memory): Llama-2-7B, 64 sequences on 8 x 80 GB. FULL_SHARD with
// full checkpointing fits 8 sequences per GPU at once (k = 1: 16 bytes x
// parameters / 8 of model states + 8 checkpointed samples); under DDP even
// one sequence per GPU does not fit.
TEST(ShardedMemory, TheGlobalBatchSplitUsesTheSchemesMemory) {
  Scenario s = load_scenario(std::string(GW_SOURCE_DIR) + "/scenarios/llama2-7b-fsdp-8xh100.yaml");
  const ModelDesc m = load_model("llama2-7b");
  s.training->global_batch = 64;
  s.workload->micro_batch_given = false;
  s.workload->accumulation_given = false;
  const double capacity = 80.0 * (1ull << 30);
  const BatchSplit sharded = resolve_global_batch(s, m, {}, capacity);
  ASSERT_TRUE(sharded.found) << sharded.reason;
  EXPECT_EQ(sharded.accumulation, 1);
  EXPECT_EQ(sharded.micro_batch, 8);
  const auto states = 16.0 * static_cast<double>(m.parameters) / 8;
  EXPECT_DOUBLE_EQ(sharded.memory.parameters + sharded.memory.gradients + sharded.memory.optimizer_states, states);
  s.workload->sharding = ShardingSpec{};  // ddp, without checkpointing
  s.workload->activation_checkpointing = ActivationCheckpointing::None;
  const BatchSplit ddp = resolve_global_batch(s, m, {}, capacity);
  EXPECT_FALSE(ddp.found);
  EXPECT_TRUE(ddp.no_fit);
}

}  // namespace
}  // namespace gw
