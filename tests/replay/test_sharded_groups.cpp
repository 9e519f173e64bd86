// The sharded schedule over groups of ranks (gradwire/model/shard_groups.hpp):
// HSDP (reduce-scatter and all-gathers over the shard group, the shard's
// all-reduce over the replicas), FSDP2's reshard_after_forward: R and ZeRO++'s
// hpZ alone (backward all-gather inside R ranks / the node): the groups'
// ranks, the bytes per optimizer step on each link class against the
// frameworks' formulas, the closed form against the SimGrid replay, and HSDP
// against FULL_SHARD on H100 nodes.
#include <gtest/gtest.h>

#include "gradwire/core/yaml_reader.hpp"
#include "gradwire/model/closed_form.hpp"
#include "gradwire/model/profile.hpp"
#include "gradwire/model/shard_groups.hpp"
#include "gradwire/model/sharded_iteration.hpp"
#include "gradwire/model/sharding.hpp"
#include "gradwire/replay/sharded_replay.hpp"
#include "sharded_fixtures.hpp"

namespace gw {
namespace {

using namespace test;  // sharded_fixtures.hpp

const char* const kHpzAlone = "{scheme: zeropp, qwz: false, qgz: false}";

TEST(ShardGroups, RanksShapesAndTheGroupsBeside) {
  const ShardTopology t{32, 8};  // 4 nodes of 8
  const ScheduleGroups h = schedule_groups(effective_spec(spec_of("hsdp"), t), t, 8);
  EXPECT_EQ(h.shard, (ShardCommGroup{ShardGroupKind::Shard, 8, 1}));
  EXPECT_EQ(h.replicas, (ShardCommGroup{ShardGroupKind::Replicas, 4, 8}));
  EXPECT_EQ(group_ranks(h.replicas, 0), (std::vector<int>{0, 8, 16, 24}));
  EXPECT_EQ(group_shape(h.shard, 8).nodes, 1);
  EXPECT_EQ(group_shape(h.replicas, 8).nodes, 4);
  // The 7 other local ranks' replica groups cross the same NICs at once.
  const auto beside = groups_alongside(h.replicas, 32, 8);
  ASSERT_EQ(beside.size(), 7u);
  EXPECT_EQ(beside[6], (std::vector<int>{7, 15, 23, 31}));
  EXPECT_EQ(nic_sharing(group_ranks(h.replicas, 0), beside, 8), 8);
  // A shard group of 4: replicas 0, 4, 8, ... two per node, four groups.
  const ScheduleGroups h4 = schedule_groups(effective_spec(spec_of("{scheme: hsdp, group: 4}"), t), t, 4);
  EXPECT_EQ(group_shape(h4.replicas, 8).nodes, 4);
  EXPECT_EQ(nic_sharing(group_ranks(h4.replicas, 0), groups_alongside(h4.replicas, 32, 8), 8), 4);
  // hpZ: the backward all-gather over the node; FSDP2 R = 4: over 4 ranks.
  EXPECT_EQ(schedule_groups(effective_spec(spec_of(kHpzAlone), t), t, 32).reshard.size, 8);
  const auto r4 = spec_of("{scheme: zero3, framework: fsdp2, reshard_after_forward: 4}");
  EXPECT_EQ(schedule_groups(effective_spec(r4, t), t, 32).reshard, (ShardCommGroup{ShardGroupKind::Reshard, 4, 1}));
  EXPECT_TRUE(groups_alongside(h.shard, 32, 8).empty());
  // qgZ's groups: the node, and local rank 0 on every node beside 7 others.
  EXPECT_EQ(h.node, (ShardCommGroup{ShardGroupKind::Node, 8, 1}));
  EXPECT_EQ(group_ranks(h.cross_node, 0), (std::vector<int>{0, 8, 16, 24}));
  EXPECT_EQ(groups_alongside(h.cross_node, 32, 8).size(), 7u);
  // Groups that would straddle nodes are refused: a shard group of 4 on
  // nodes of 6, a reshard of 12 on nodes of 8.
  EXPECT_THROW(shard_degree(spec_of("{scheme: hsdp, group: 4}"), {24, 6}), std::invalid_argument);
  EXPECT_THROW(shard_degree(spec_of("{scheme: hsdp, group: 24, reshard_after_forward: 12}"), {48, 8}),
               std::invalid_argument);
  EXPECT_EQ(shard_degree(spec_of("{scheme: hsdp, group: 16, reshard_after_forward: 4}"), {32, 8}), 16);
  // The NIC share: each of 8 groups sees an eighth of the node's NICs.
  ClusterSpec c = test::cluster(4, 8);
  EXPECT_DOUBLE_EQ(nic_share_cluster(c, 8).usable_node_bandwidth(), c.usable_node_bandwidth() / 8);
  EXPECT_EQ(nic_share_cluster(c, 1), c);
}

/// Bytes one GPU sends per optimizer step on each link class, from the
/// schedule's ops: count x bus factor x size, inside a node or across.
struct LinkBytes {
  double intra = 0, inter = 0;
};
LinkBytes link_bytes(const ShardedIterationPlan& plan, int gpus_per_node) {
  LinkBytes b;
  for (const auto& prog : plan.programs)
    for (const auto& op : prog.ops) {
      if (!op.collective) continue;
      const double wire = static_cast<double>(prog.times) * bus_bandwidth_factor(op.op, op.group.size) * op.bytes;
      (group_shape(op.group, gpus_per_node).nodes > 1 ? b.inter : b.intra) += wire;
    }
  return b;
}

double f(int n) { return (n - 1.0) / n; }  // f_AG(n)

// Per GPU per optimizer step on 4 nodes of 8 (W = 32), M = 2,000 x 2 bytes,
// k micro-steps synchronised every one (docs/model.md, 7c, "Bytes per
// optimizer step"): FULL_SHARD 3 f(W) M per micro-step, all across nodes;
// HSDP (FSDP docs, HYBRID_SHARD: "FULL_SHARD within a node, replicate
// across nodes") 3 f(8) M inside the node and 2 f(4) M / 8 across; hpZ
// alone (ZeRO++ §3.2: the backward all-gather from the secondary partition
// in the node) 2 f(W) M across, f(8) M inside; FSDP2 R = 4 the same with
// f(4) inside. The ops agree with sharding_plan's count.
TEST(ShardedGroupSchedule, BytesPerOptimizerStepOnEachLinkClass) {
  const double m = 2000 * 2.0;
  const int w = 32;
  struct Row {
    const char* sharding;
    double intra, inter;  ///< per micro-step, x M
  } rows[] = {
      {"{scheme: zero3, framework: fsdp2}", 0, 3 * f(w)},
      {"hsdp", 3 * f(8), 2 * f(4) / 8},
      {"hybrid_shard", 3 * f(8), 2 * f(4) / 8},
      {kHpzAlone, f(8), 2 * f(w)},
      {"{scheme: zero3, framework: fsdp2, reshard_after_forward: 4}", f(4), 2 * f(w)},
      {"{scheme: hsdp, reshard_after_forward: 2}", 2 * f(8) + f(2), 2 * f(4) / 8},
  };
  for (const int k : {1, 4}) {
    for (const auto& row : rows) {
      const auto plan =
          plan_sharded_iteration(workload_with(row.sharding, k), test::cluster(4, 8), two_blocks(), hand_base(k, w));
      const LinkBytes b = link_bytes(plan, 8);
      EXPECT_NEAR(b.intra, k * row.intra * m, 1e-6) << row.sharding << " k " << k;
      EXPECT_NEAR(b.inter, k * row.inter * m, 1e-6) << row.sharding << " k " << k;
      EXPECT_NEAR(b.intra + b.inter, plan.traffic.wire_bytes_per_gpu(), 1e-6) << row.sharding;
    }
  }
  // Across nodes per node (cross_node_bytes_per_node): HSDP's 8 replica
  // groups send 2 f(4) M; FULL_SHARD's rings 3 f(W) M; hpZ alone 2 f(W) M:
  // no backward all-gather crosses the network (ZeRO++: "hpZ ... 0").
  auto across = [&](const char* s) {
    return sharding_plan(spec_of(s), {w, 8}, 2000, 2.0, 1).cross_node_bytes_per_node(8);
  };
  EXPECT_NEAR(across("hsdp"), 2 * f(4) * m, 1e-6);
  EXPECT_NEAR(across("full_shard"), 3 * f(w) * m, 1e-6);
  EXPECT_NEAR(across(kHpzAlone), 2 * f(w) * m, 1e-6);
  EXPECT_NEAR(across(kHpzAlone) / across("full_shard"), 2.0 / 3.0, 1e-12);
}

// With gradient_sync: last (FSDP2 set_requires_gradient_sync(False), FSDP1
// no_sync: both gate the reduce-scatter and the all-reduce) HSDP reduces
// once per optimizer step and still all-gathers every micro-step.
TEST(ShardedGroupSchedule, HsdpNoSyncReducesOncePerOptimizerStep) {
  const double m = 2000 * 2.0;
  const auto plan = plan_sharded_iteration(workload_with("{scheme: hsdp, gradient_sync: last}", 4), test::cluster(4, 8),
                                           two_blocks(), hand_base(4, 32));
  const LinkBytes b = link_bytes(plan, 8);
  EXPECT_NEAR(b.intra, (4 * 2 * f(8) + f(8)) * m, 1e-6);
  EXPECT_NEAR(b.inter, 2 * f(4) / 8 * m, 1e-6);
}

// The all-reduce of the shard follows its reduce-scatter on the NCCL
// stream: FULL_SHARD by hand (test_sharded.cpp: 7 s a micro-step) with the
// all-reduces of 0.25 s added; the last one is exposed: 7.25 s.
TEST(ShardedGroupSchedule, HsdpAllReduceFollowsEachReduceScatter) {
  const auto plan =
      plan_sharded_iteration(workload_with("hsdp", 1), test::cluster(2, 8), two_blocks(), hand_base(1, 16));
  const ShardCollectiveTimeFn time = [](CollectiveOp op, double, const ShardCommGroup& g) {
    EXPECT_EQ(op == CollectiveOp::AllReduce, g.kind == ShardGroupKind::Replicas);
    return op == CollectiveOp::AllReduce ? 0.25 : 0.5;
  };
  EXPECT_DOUBLE_EQ(program_seconds(schedule_program(plan.programs[0], time)), 7.25);
  // The optimizer on the shard of G = 8: 8 / 8 s.
  EXPECT_DOUBLE_EQ(plan.optimizer, 1.0);
}

TEST(ShardedGroupSchedule, EverySchemeIsSimulated) {
  for (const std::string s : {"zeropp", "{scheme: zeropp, qgz: false}", "{scheme: zeropp, qwz: false}", "hsdp",
                              kHpzAlone, "{scheme: zero3, framework: fsdp2, reshard_after_forward: 4}"}) {
    EXPECT_EQ(sharding_not_simulated(workload_with(s, 1), spec_of(s)), "") << s;
    EXPECT_NO_THROW(plan_sharded_iteration(workload_with(s, 1), test::cluster(2, 8), two_blocks(), hand_base(1, 16)))
        << s;
  }
}

// The closed form equals the replay within 0.1% for the schemes over groups
// on clusters of several nodes of several GPUs (a switch; each node's NIC
// shared by the replica groups of its local ranks in both: nic_share_cluster
// in the closed form, the groups' flows side by side in the engine).
TEST(ShardedReplay, ClosedFormEqualsTheReplayOverGroups) {
  const Profile p = load_profile("h100");
  const ModelDesc m = load_model("gpt2");
  struct Case {
    ClusterSpec cluster;
    const char* sharding;
  } cases[] = {
      {test::cluster(2, 4), "hsdp"},
      {test::cluster(2, 4), "{scheme: hybrid_shard, gradient_sync: last}"},
      {test::cluster(4, 2), "{scheme: hsdp, group: 4}"},
      {test::cluster(2, 4), "{scheme: hsdp, group: 2}"},
      {test::cluster(2, 4), "{scheme: zero3, framework: fsdp2, reshard_after_forward: 4}"},
      {test::cluster(2, 4), "{scheme: hsdp, reshard_after_forward: 2}"},
      {test::cluster(2, 4), kHpzAlone},
      // ZeRO++ whole: hpZ's groups carrying qwZ's int8 and qgZ's all-to-all.
      {test::cluster(2, 4), "zeropp"},
      {test::cluster(2, 4), "{scheme: zeropp, qgz: false}"},
  };
  for (const auto& c : cases) {
    for (const int k : {1, 4}) {
      const Scenario s = gpt2_scenario(c.cluster, c.sharding, k);
      const auto closed = closed_form_iteration(s, m, p);
      const auto sim = simulate_iteration(s, m, p);
      EXPECT_EQ(sim.method, "simulation");
      EXPECT_GT(closed.exposed_communication, 0) << c.sharding;
      EXPECT_NEAR(sim.total / closed.total, 1.0, 1e-3)
          << c.sharding << " k " << k << " on " << c.cluster.nodes << " x " << c.cluster.gpus_per_node;
    }
  }
}

/// Llama-2-7B FULL_SHARD on p5.48xlarge (the bundled scenario) on `nodes`
/// nodes under `sharding`.
Scenario llama_on(int nodes, const std::string& sharding) {
  Scenario s = load_scenario(std::string(GW_SOURCE_DIR) + "/scenarios/llama2-7b-fsdp-8xh100.yaml");
  s.cluster.nodes = nodes;
  s.workload->sharding = spec_of(sharding);
  return s;
}

// On 2 and 4 nodes of 8 H100 HSDP sends less across the network than
// FULL_SHARD (2 f(n) M per node against 3 f(W) M); on one node the shard
// group is the node, there are no replicas, and HSDP is FULL_SHARD.
TEST(ShardedGroupSchedule, HsdpCrossesTheNetworkLessThanFullShard) {
  const ModelDesc m = load_model("llama2-7b");
  const Profile p = load_profile("h100");
  for (const int nodes : {2, 4}) {
    const auto hsdp = prepare_sharded_iteration(llama_on(nodes, "hsdp"), m, p);
    const auto full = prepare_sharded_iteration(llama_on(nodes, "{scheme: zero3, framework: fsdp2}"), m, p);
    const double h = hsdp.plan.traffic.cross_node_bytes_per_node(8);
    const double fs = full.plan.traffic.cross_node_bytes_per_node(8);
    const double big_m = static_cast<double>(m.parameters) * 2;
    EXPECT_NEAR(h, 8 * 2 * f(nodes) * big_m, 1e-6 * big_m);
    EXPECT_NEAR(fs, 8 * 3 * f(8 * nodes) * big_m, 1e-6 * big_m);  // 8 micro-steps
    EXPECT_LT(h, fs) << nodes << " nodes";
  }
  const auto one_h = closed_form_iteration(llama_on(1, "hsdp"), m, p);
  const auto one_f = closed_form_iteration(llama_on(1, "{scheme: zero3, framework: fsdp2}"), m, p);
  EXPECT_DOUBLE_EQ(one_h.total, one_f.total);
  EXPECT_DOUBLE_EQ(one_h.wire_bytes_per_gpu, one_f.wire_bytes_per_gpu);
}

}  // namespace
}  // namespace gw
