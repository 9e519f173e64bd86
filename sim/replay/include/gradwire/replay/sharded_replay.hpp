// Replay of one optimizer step under a sharding scheme (workload.sharding;
// gradwire/model/sharded_iteration.hpp) on the engine. Two actors on a
// representative rank run each program of the plan in turn:
//   compute : the units' forward and backward sleeps, each after the
//             all-gather it waits for;
//   NCCL    : the plan's collectives over their groups (all ranks, or rank
//             0's group of shard_groups.hpp with the groups beside it on its
//             NICs: CollectiveRequest::alongside), one at a time in issue
//             order (run_collective, or a memoised identical one's sleep:
//             collective_memo.hpp), each after the compute it waits for.
// A program ends when both are idle; the next starts then. Distinct
// micro-steps are simulated once each (first, middle, last) and multiplied,
// so the simulation does not grow with k. One actor runs every collective,
// so the closed form (evaluate_sharded_closed_form) and the replay differ
// only by the collectives' durations. The simulation runs in a forked child.
#pragma once

#include "gradwire/model/profile.hpp"
#include "gradwire/model/sharded_iteration.hpp"
#include "gradwire/replay/replay.hpp"

namespace gw {

/// Replays an already built sharded plan on `cluster`.
IterationResult simulate_sharded_plan(const ClusterSpec& cluster, const ShardedIterationPlan& plan,
                                      const ReplayOptions& options = {});

/// prepare_sharded_iteration, replayed and labelled (simulate_iteration calls
/// it for a sharded workload).
IterationResult simulate_sharded_iteration(const Scenario& scenario, const ModelDesc& model, const Profile& profile,
                                           const ReplayOptions& options = {});

}  // namespace gw
