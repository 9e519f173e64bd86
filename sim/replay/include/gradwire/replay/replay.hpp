// Replay of one data-parallel training iteration on the engine (SimGrid
// behind gradwire/engine/engine.hpp). The iteration model (iteration_model.hpp)
// gives the plan; two actors on a representative rank execute it:
//   compute : sleeps through the forward pass, then the backward pass tensor
//             by tensor, releasing a signal each time a bucket's last
//             gradient is ready (all at the end when overlap is off);
//   comm    : takes the buckets in order, and for each runs its encode
//             (sleep), its collective(s) over all ranks (run_collective, or
//             the sleep of a memoised identical one: collective_memo.hpp) and
//             its decode (sleep).
// Ranks are identical, so one rank's streams stand for all. Gradient
// accumulation: only the synchronizing micro-step is simulated; the k-1
// others (no_sync) are added analytically, so the simulation does not grow
// with k. The optimizer step follows the last bucket. Every simulation runs
// in a forked child (engine::run_in_child); the result crosses as a typed
// message (src/child_results.hpp), not as the public JSON. A
// child equal to one run before in the process (same cluster, plan fields
// read, options and seed) is not run again: its outcome is reused
// (src/child_results.hpp; docs/engine.md, "Replay children's results, reused").
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "gradwire/engine/engine.hpp"
#include "gradwire/model/iteration_model.hpp"
#include "gradwire/model/memory.hpp"
#include "gradwire/model/model_desc.hpp"
#include "gradwire/model/profile.hpp"
#include "gradwire/model/scenario.hpp"

namespace gw {

namespace json_fields {
struct Info;  // gradwire/core/json_fields.hpp
}

struct ReplayOptions {
  /// How collectives become flows (engine::Granularity). Aggregated keeps
  /// contention and scales to thousands of GPUs.
  engine::Granularity granularity = engine::Granularity::Aggregated;
  /// Simulate every collective in full instead of replaying a repeated one
  /// as a sleep of its recorded duration (CollectiveMemo, docs/engine.md,
  /// "Memoised collectives"); also on when the environment sets
  /// GRADWIRE_FULL_SIMULATION to anything but "" or "0". The results are
  /// the same; this is for checking that they are.
  bool full_simulation = false;
  /// Seed the replay with the collective durations earlier replays in this
  /// process recorded on an equal cluster, and keep what it records for the
  /// next (docs/engine.md, "Memoised collectives", "Across iterations"). Off:
  /// the replay runs as in a fresh process (a sweep's points: each gives the
  /// figures it gives alone, whichever points its worker ran before).
  bool share_durations = true;
  /// When set, filled with how the collectives were run (tests, benchmarks).
  struct Stats {
    long simulated = 0;      ///< collectives simulated in full
    long replayed = 0;       ///< collectives replayed as their recorded duration
    bool fell_back = false;  ///< the memo's condition failed: run again in full
    bool reused = false;     ///< no child forked: an equal child's outcome (child_results.hpp)
  };
  Stats* stats = nullptr;
};

/// Drops the replay children's outcomes this process keeps: the next replay
/// forks its child (tests compare a reused outcome with a fresh one).
void forget_replay_children();

/// options.full_simulation, or GRADWIRE_FULL_SIMULATION set (not "" or "0").
bool full_simulation(const ReplayOptions& options);

/// Predicts one iteration of `scenario` (its workload is required): the plan
/// from prepare_iteration, replayed. Bad input (no workload, unknown
/// compressor or optimizer, a codec or GEMM rate the profile lacks) throws
/// gw::InputError naming the file and key.
IterationResult simulate_iteration(const Scenario& scenario, const ModelDesc& model, const Profile& profile,
                                   const ReplayOptions& options = {});

/// Replays an already built plan on `cluster` (tests use hand-made costs).
IterationResult simulate_plan(const ClusterSpec& cluster, const IterationPlan& plan, const ReplayOptions& options = {});

/// JSON form of a result (the `--format json` output, gradwire-iteration/2),
/// and back (gradwire reads no /1 document); both made from one table of the
/// fields (src/result_json.cpp). With `memory`, a "memory_per_gpu" object
/// (bytes, capacity, fits) is added after the other fields (result_from_json
/// ignores it). The replay child does not use this form: it sends its
/// parent a typed message (src/child_results.hpp).
std::string result_to_json(const IterationResult& result, int indent = 2, const MemoryBreakdown* memory = nullptr);
/// The same document as an object ("schema" first), for an output that adds
/// fields after the result's (simulate's training and cost).
nlohmann::ordered_json result_json(const IterationResult& result, const MemoryBreakdown* memory = nullptr);
IterationResult result_from_json(const std::string& text);
/// The fields result_to_json writes, from its table (all but "schema" and
/// memory_per_gpu): what tests compare docs/schemas/ with.
std::vector<json_fields::Info> iteration_json_fields();

}  // namespace gw
