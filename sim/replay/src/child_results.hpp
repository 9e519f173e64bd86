// Results of replay children, kept per process (docs/engine.md, "Replay
// children's results, reused"). A replay child (replay.cpp, replay_in_child)
// computes a deterministic function of what it is given: the cluster, the
// fields of the plan it reads, the replay options and the collective
// durations it is seeded with. Two calls with all of these equal give the
// same outcome, so the second need not fork: its outcome is the first's.
//
// Exact by construction: the child is handed child_plan(plan), a plan with
// only the fields it reads copied (every other field left at its default),
// and the key is every field of that copy (doubles by their bits), the
// options and the seed, with the cluster compared by ClusterSpec's defaulted
// ==. A field the child reads but child_plan does not copy would change the
// results of every replay, cached or not (scripts/compare_builds.sh and the
// replay tests see it), not make a cached result differ from a fresh one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gradwire/model/iteration_model.hpp"
#include "gradwire/model/scenario.hpp"
#include "gradwire/replay/collective_memo.hpp"

namespace gw::detail {

/// What one replay child returned, decoded.
struct ChildOutcome {
  bool exact = true;                    ///< the memo's conditions held (CollectiveMemo::exact)
  long simulated = 0;                   ///< collectives simulated in full
  long replayed = 0;                    ///< collectives replayed from the memo
  CollectiveMemo::Durations durations;  ///< what the child's memo held at its end
  IterationResult result;               ///< the child's timeline (from t = 0)
  bool reused = false;                  ///< from find_child_outcome, not a fork
};

/// A ChildOutcome as the message the replay child sends its parent: every
/// field but `reused`, exact (gw::wire: doubles by their bits), in a message
/// of kind kOutcomeKind and version kOutcomeVersion. Internal to one
/// gradwire executable: unrelated to the public JSON (result_to_json).
std::string encode_outcome(const ChildOutcome& outcome);
/// Back; gw::wire::Malformed, naming what is wrong, for a message that is
/// not one (truncated, another kind or version, bytes left over).
ChildOutcome decode_outcome(std::string_view message);
inline constexpr std::string_view kOutcomeKind = "RPLY";
/// Bumped when a field of ChildOutcome or of the structs it holds changes.
inline constexpr std::uint32_t kOutcomeVersion = 1;

/// The plan the replay child is given: the fields replay_in_child reads
/// (world size, overlap, forward, per-tensor backward and copy-in, buckets,
/// their steps, launches and straggler delays, the three interference
/// factors), every other field at its default.
IterationPlan child_plan(const IterationPlan& plan);

/// Every field of child_plan(p), then the granularity, the memo switch and
/// the seed, in one exact string (gw::wire).
std::string child_key(const IterationPlan& child, int granularity, bool memo_on, const CollectiveMemo::Durations& seed);

/// The outcome recorded for (cluster, key), or nullptr.
const ChildOutcome* find_child_outcome(const ClusterSpec& cluster, const std::string& key);
/// Records an outcome; the oldest goes once kChildOutcomes are kept.
void keep_child_outcome(const ClusterSpec& cluster, std::string key, const ChildOutcome& outcome);
inline constexpr std::size_t kChildOutcomes = 256;
/// Drops every outcome kept.
void forget_child_outcomes();

}  // namespace gw::detail
