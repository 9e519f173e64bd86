// Memoised collectives (docs/engine.md, "Memoised collectives").
//
// In the replay one actor (the comm stream) runs every collective, one after
// another, and no other actor puts anything on the network. A collective that
// starts on an idle network and has the network to itself until it ends takes
// a time that depends only on the platform and on its request (op, requested
// algorithm and protocol, granularity, bytes, ranks), when the platform has no
// time-varying state (build_platform sets no bandwidth, latency or state
// profiles, and the network models keep nothing between flows). So the first
// such collective of each request is simulated in full and its duration
// recorded; a later identical one is a sleep of that duration.
//
// Checked at run time. Every collective of the replay runs through the memo,
// which counts those in flight: a duration is recorded only when no other
// collective was in flight as it began and none began before it ended; a
// recorded one is replayed only when no other collective is in flight, and
// a replay during which another collective began, or any flow ended (from
// whatever source: SimGrid's own count, Simulation::network_activity), marks
// the memo inexact (exact() == false): the caller then runs the whole
// simulation again without the memo (simulate_plan does).
//
// Across iterations: the durations a child recorded are returned to the
// process that forked it (in its message, child_results.hpp) and seed the next child that builds
// an equal platform (ClusterSpec's ==, every field): a recorded duration is a
// function of the platform and the request only, by the condition above, so
// it holds in any replay on an equal cluster; the run-time check applies to a
// seeded duration as to one recorded in the same child.
#pragma once

#include <istream>
#include <map>
#include <string>

#include "gradwire/engine/engine.hpp"

namespace gw {

class CollectiveMemo {
 public:
  /// disabled: every collective is simulated in full.
  explicit CollectiveMemo(bool enabled) : enabled_(enabled) {}

  using Durations = std::map<std::string, double>;  ///< key(request) -> seconds
  /// Durations recorded on an equal platform by an earlier memo (another
  /// iteration's child): replayed like this memo's own. No effect when disabled.
  void seed(const Durations& known) {
    if (enabled_) durations_.insert(known.begin(), known.end());
  }
  /// What this memo holds: seeded and recorded.
  const Durations& durations() const { return durations_; }

  /// Runs `request` from the calling actor: a recorded duration's sleep when
  /// the conditions above hold, else the full collective. Returns its duration.
  double run(engine::Simulation& sim, const engine::CollectiveRequest& request);

  /// False when a replayed duration overlapped other traffic: the timeline is
  /// not the full simulation's, run it again with the memo disabled.
  bool exact() const { return exact_; }
  long simulated() const { return simulated_; }  ///< collectives run in full
  long replayed() const { return replayed_; }    ///< collectives replayed as a sleep

  /// The memo's key of a request: every field that the duration depends on.
  static std::string key(const engine::CollectiveRequest& request);

 private:
  bool enabled_;
  bool exact_ = true;
  long simulated_ = 0;
  long replayed_ = 0;
  long runs_begun_ = 0;  ///< run() calls so far (another collective began meanwhile?)
  long in_flight_ = 0;   ///< run() calls not yet returned
  std::map<std::string, double> durations_;
};

}  // namespace gw
