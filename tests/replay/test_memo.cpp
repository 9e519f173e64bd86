// Memoised collectives (gradwire/replay/collective_memo.hpp, docs/engine.md,
// "Memoised collectives"): the replay with the memo equals the full
// simulation to 1e-9 relative, in every time it reports, on every bundled
// scenario at two GPU counts, on an oversubscribed fat-tree with interleaved
// placement, with compression (a PyTorch hook and a gradwire codec) and with
// accumulation; and the memo's run-time check catches a network that is not
// idle.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include "gradwire/engine/engine.hpp"
#include "gradwire/model/model_desc.hpp"
#include "gradwire/model/profile.hpp"
#include "gradwire/model/scenario.hpp"
#include "gradwire/model/scenario_refs.hpp"
#include "gradwire/replay/collective_memo.hpp"
#include "gradwire/replay/replay.hpp"

namespace gw {
namespace {

namespace fs = std::filesystem;

constexpr double kRel = 1e-9;

void expect_close(double full, double memo, const std::string& what) {
  const double scale = std::max({std::abs(full), std::abs(memo), 1e-300});
  EXPECT_LE(std::abs(full - memo), kRel * scale) << what << ": full " << full << ", memoised " << memo;
}

/// Every time of the two results, field by field.
void expect_same_timeline(const IterationResult& full, const IterationResult& memo, const std::string& where) {
  expect_close(full.total, memo.total, where + " total");
  expect_close(full.backward_start, memo.backward_start, where + " backward_start");
  expect_close(full.backward_end, memo.backward_end, where + " backward_end");
  expect_close(full.exposed_communication, memo.exposed_communication, where + " exposed_communication");
  ASSERT_EQ(full.tensor_end.size(), memo.tensor_end.size()) << where;
  for (std::size_t j = 0; j < full.tensor_end.size(); ++j)
    expect_close(full.tensor_end[j], memo.tensor_end[j], where + " tensor_end " + std::to_string(j));
  ASSERT_EQ(full.buckets.size(), memo.buckets.size()) << where;
  for (std::size_t b = 0; b < full.buckets.size(); ++b) {
    const auto& f = full.buckets[b];
    const auto& m = memo.buckets[b];
    const std::string at = where + " bucket " + std::to_string(b);
    expect_close(f.ready, m.ready, at + " ready");
    expect_close(f.start, m.start, at + " start");
    expect_close(f.end, m.end, at + " end");
    ASSERT_EQ(f.steps.size(), m.steps.size()) << at;
    for (std::size_t s = 0; s < f.steps.size(); ++s) {
      EXPECT_EQ(f.steps[s].label, m.steps[s].label) << at;
      expect_close(f.steps[s].start, m.steps[s].start, at + " step " + f.steps[s].label + " start");
      expect_close(f.steps[s].end, m.steps[s].end, at + " step " + f.steps[s].label + " end");
    }
  }
}

/// Runs `scenario` with the memo and in full, checks they agree; returns how
/// many collectives the memo replayed.
long check_memo_equals_full(const Scenario& scenario, const ModelDesc& model, const Profile& profile,
                            const std::string& where) {
  ReplayOptions::Stats memo_stats, full_stats;
  ReplayOptions memo_opts, full_opts;
  memo_opts.stats = &memo_stats;
  full_opts.stats = &full_stats;
  full_opts.full_simulation = true;
  const IterationResult memo = simulate_iteration(scenario, model, profile, memo_opts);
  const IterationResult full = simulate_iteration(scenario, model, profile, full_opts);
  EXPECT_EQ(full_stats.replayed, 0) << where;
  EXPECT_FALSE(memo_stats.fell_back) << where;
  EXPECT_EQ(memo_stats.simulated + memo_stats.replayed, full_stats.simulated) << where;
  expect_same_timeline(full, memo, where);
  return memo_stats.replayed;
}

struct Loaded {
  Scenario scenario;
  ModelDesc model;
  Profile profile;
};

Loaded load(const std::string& path) {
  Loaded l{load_scenario(path), {}, {}};
  const ScenarioRefs refs = resolve_scenario_references(l.scenario, path, std::nullopt);
  l.model = *refs.model;
  l.profile = refs.profile;
  return l;
}

std::vector<std::string> bundled_scenarios() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(std::string(GW_SOURCE_DIR) + "/scenarios")) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() == ".yaml" && name.rfind("study-", 0) != 0) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ReplayMemo, EveryBundledScenarioAtTwoGpuCountsEqualsTheFullSimulation) {
  const auto paths = bundled_scenarios();
  ASSERT_GE(paths.size(), 4u);
  long replayed = 0;  // ResNet-50's few buckets all differ in size: nothing to replay there
  for (const auto& path : paths) {
    Loaded l = load(path);
    ASSERT_TRUE(l.scenario.workload) << path;
    for (int nodes : {2, 3}) {
      l.scenario.cluster.nodes = nodes;
      replayed +=
          check_memo_equals_full(l.scenario, l.model, l.profile, path + " at " + std::to_string(nodes) + " nodes");
    }
  }
  EXPECT_GT(replayed, 0) << "the memo replayed nothing, the comparison shows nothing";
}

/// default.yaml's cluster and DDP settings with GPT-2 (124M): 25 MiB buckets
/// of equal size, so collectives repeat.
Loaded gpt2_on_default(int nodes) {
  Loaded l = load(std::string(GW_SOURCE_DIR) + "/scenarios/default.yaml");
  l.scenario.cluster.nodes = nodes;
  l.scenario.workload->model = "gpt2";
  l.scenario.workload->micro_batch = 4;
  l.model = load_model("gpt2");
  return l;
}

TEST(ReplayMemo, OversubscribedInterleavedFatTreeEqualsTheFullSimulation) {
  Loaded l = gpt2_on_default(8);
  l.scenario.cluster.fabric.topology = FabricTopology::FatTree;
  l.scenario.cluster.fabric.nodes_per_leaf = 2;
  l.scenario.cluster.fabric.oversubscription = 4;
  l.scenario.cluster.placement = Placement::Interleaved;
  EXPECT_GT(check_memo_equals_full(l.scenario, l.model, l.profile, "fat-tree 4:1 interleaved"), 0);
}

TEST(ReplayMemo, CompressionAndAccumulationEqualTheFullSimulation) {
  Loaded l = gpt2_on_default(2);
  auto& w = *l.scenario.workload;
  w.accumulation = 4;
  w.compression.kind = "powersgd";  // DDP's PowerSGD hook
  w.compression.rank = 2;
  EXPECT_GT(check_memo_equals_full(l.scenario, l.model, l.profile, "powersgd hook, k = 4"), 0);
  w.compression = CompressionSpec{};
  w.compression.kind = "int8";  // the project's codec, costed from the profile
  w.compression.implementation = "gradwire";
  EXPECT_GT(check_memo_equals_full(l.scenario, l.model, l.profile, "gradwire int8 codec, k = 4"), 0);
}

TEST(ReplayMemo, AnotherIterationOnAnEqualClusterReplaysWhatTheFirstRecorded) {
  // gpt2 at 5 nodes: a cluster no other test builds, so the first run records.
  Loaded l = gpt2_on_default(5);
  ReplayOptions::Stats first, second, other, full_stats;
  ReplayOptions o1, o2, o3, full_opts;
  o1.stats = &first;
  o2.stats = &second;
  o3.stats = &other;
  full_opts.stats = &full_stats;
  full_opts.full_simulation = true;
  const IterationResult a = simulate_iteration(l.scenario, l.model, l.profile, o1);
  const IterationResult b = simulate_iteration(l.scenario, l.model, l.profile, o2);
  EXPECT_GT(first.simulated, 0);
  EXPECT_EQ(second.simulated, 0) << "the second iteration simulated what the first recorded";
  EXPECT_EQ(second.replayed, first.simulated + first.replayed);
  const IterationResult full = simulate_iteration(l.scenario, l.model, l.profile, full_opts);
  expect_same_timeline(full, a, "first iteration");
  expect_same_timeline(full, b, "second iteration (seeded)");
  // Any field of the cluster differs: nothing is shared.
  l.scenario.cluster.nic.bandwidth /= 2;
  const IterationResult c = simulate_iteration(l.scenario, l.model, l.profile, o3);
  EXPECT_EQ(other.simulated, first.simulated);
  expect_same_timeline(simulate_iteration(l.scenario, l.model, l.profile, full_opts), c, "other cluster");
  ASSERT_FALSE(c.buckets.empty());
  // Its own figures (not necessarily slower: half the NIC rate gives NCCL
  // fewer channels, so a tree bucket's pipeline fills in fewer chunk times;
  // docs/engine.md, "The per-size ramp").
  EXPECT_NE(c.buckets[0].steps.back().end - c.buckets[0].steps.back().start,
            a.buckets[0].steps.back().end - a.buckets[0].steps.back().start);
}

TEST(ReplayChildren, AnEqualChildIsReusedAndGivesTheFiguresOfAFreshOne) {
  // docs/engine.md, "Replay children's results, reused". 7 nodes: a cluster
  // no other test builds; not seeded (as a sweep's points).
  Loaded l = gpt2_on_default(7);
  auto& w = *l.scenario.workload;
  w.compression.kind = "powersgd";
  w.compression.rank = 2;
  w.compute_jitter = 0.0;  // no stragglers: their delays grow with the accumulation
  ReplayOptions o;
  o.share_durations = false;
  ReplayOptions::Stats st;
  o.stats = &st;
  forget_replay_children();
  const IterationResult k1 = simulate_iteration(l.scenario, l.model, l.profile, o);
  EXPECT_FALSE(st.reused);
  EXPECT_GT(st.simulated, 0);
  // Another accumulation: the child is given the same plan fields (the k-1
  // folded micro-steps are added outside it), so nothing is forked.
  w.accumulation = 4;
  const IterationResult k4 = simulate_iteration(l.scenario, l.model, l.profile, o);
  EXPECT_TRUE(st.reused);
  EXPECT_GT(k4.total, k1.total);
  forget_replay_children();
  const IterationResult fresh = simulate_iteration(l.scenario, l.model, l.profile, o);
  EXPECT_FALSE(st.reused);
  EXPECT_EQ(result_to_json(k4), result_to_json(fresh)) << "byte for byte";
  // A field the child reads differs: a child of its own.
  w.bucket_size /= 2;
  (void)simulate_iteration(l.scenario, l.model, l.profile, o);
  EXPECT_FALSE(st.reused);
  // So does any field of the cluster.
  w.bucket_size *= 2;
  l.scenario.cluster.nic.latency *= 2;
  (void)simulate_iteration(l.scenario, l.model, l.profile, o);
  EXPECT_FALSE(st.reused);
  // The full path forks every time.
  l.scenario.cluster.nic.latency /= 2;
  ReplayOptions full = o;
  full.full_simulation = true;
  (void)simulate_iteration(l.scenario, l.model, l.profile, full);
  EXPECT_FALSE(st.reused);
  (void)simulate_iteration(l.scenario, l.model, l.profile, full);
  EXPECT_FALSE(st.reused);
  // Seeded replays are reused only with the same seed.
  ReplayOptions seeded;
  seeded.stats = &st;
  (void)simulate_iteration(l.scenario, l.model, l.profile, seeded);  // records this cluster's durations
  (void)simulate_iteration(l.scenario, l.model, l.profile, seeded);  // seeded with them: another key
  EXPECT_FALSE(st.reused);
  EXPECT_EQ(st.simulated, 0);
  (void)simulate_iteration(l.scenario, l.model, l.profile, seeded);  // the same seed again
  EXPECT_TRUE(st.reused);
}

TEST(ReplayMemo, TheSwitchAndTheEnvironmentTurnTheMemoOff) {
  ReplayOptions o;
  ::unsetenv("GRADWIRE_FULL_SIMULATION");
  EXPECT_FALSE(full_simulation(o));
  ::setenv("GRADWIRE_FULL_SIMULATION", "0", 1);
  EXPECT_FALSE(full_simulation(o));
  ::setenv("GRADWIRE_FULL_SIMULATION", "1", 1);
  EXPECT_TRUE(full_simulation(o));
  ::unsetenv("GRADWIRE_FULL_SIMULATION");
  o.full_simulation = true;
  EXPECT_TRUE(full_simulation(o));
}

ClusterSpec small_cluster() {
  ClusterSpec c;
  c.nodes = 2;
  c.gpus_per_node = 2;
  c.intra_node = {100e9, 1e-6};
  c.nic = {10e9, 5e-6};
  c.fabric.latency = 1e-6;
  return c;
}

engine::CollectiveRequest ring_of(double bytes) {
  engine::CollectiveRequest r;
  r.bytes = bytes;
  return r;
}

// The memo on its own, in a child: "EXACT SIMULATED REPLAYED ENDED1 ENDED2":
// flows ended (the engine's count) after the first collective and after the
// replayed one.
std::string memo_run(bool intruder) {
  return engine::run_in_child([intruder] {
    engine::Simulation sim(small_cluster());
    CollectiveMemo memo(true);
    long ended1 = -1, ended2 = -1;
    sim.add_actor("comm", 0, [&] {
      memo.run(sim, ring_of(64e6));  // simulated, recorded
      ended1 = sim.network_activity().flows_ended;
      memo.run(sim, ring_of(64e6));  // replayed as a sleep
      ended2 = sim.network_activity().flows_ended;
    });
    if (intruder)
      sim.add_actor("intruder", 1, [&] {
        while (ended1 < 0) engine::Simulation::sleep_for(1e-4);  // the first one has ended
        sim.run_collective(ring_of(1e6));                        // other traffic, not through the memo
      });
    sim.run();
    return std::to_string(memo.exact()) + ' ' + std::to_string(memo.simulated()) + ' ' +
           std::to_string(memo.replayed()) + ' ' + std::to_string(ended1) + ' ' + std::to_string(ended2);
  });
}

// 2 nodes x 2 GPUs: a ring all-reduce is 4 flows (one per ring edge).
TEST(ReplayMemo, TheEngineCountsEndedFlowsAndTheMemoReplaysOnAnIdleNetwork) { EXPECT_EQ(memo_run(false), "1 1 1 4 4"); }

TEST(ReplayMemo, TrafficDuringAReplayedCollectiveMakesTheMemoInexact) { EXPECT_EQ(memo_run(true), "0 1 1 4 8"); }

TEST(ReplayMemo, ACollectiveThatSharedTheNetworkIsNotRecorded) {
  const std::string out = engine::run_in_child([] {
    engine::Simulation sim(small_cluster());
    CollectiveMemo memo(true);
    sim.add_actor("a", 0, [&] { memo.run(sim, ring_of(64e6)); });
    sim.add_actor("b", 1, [&] { memo.run(sim, ring_of(64e6)); });  // same request, same time: contended
    sim.run();
    return std::to_string(memo.simulated()) + ' ' + std::to_string(memo.replayed());
  });
  EXPECT_EQ(out, "2 0");
}

}  // namespace
}  // namespace gw
