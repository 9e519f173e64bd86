// The engine layer: the only part of gradwire that includes SimGrid.
// It builds a SimGrid platform from a ClusterSpec, runs actors, and provides
// the collectives as simulated message flows. Everything else (replay,
// planning) talks to SimGrid only through this header.
//
// SimGrid allows one engine per process: every simulation runs in a forked
// child (run_in_child) and returns its result as bytes through a socket.
#pragma once

#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "gradwire/model/collectives.hpp"
#include "gradwire/model/nccl_model.hpp"
#include "gradwire/model/scenario.hpp"

namespace gw::engine {

/// The collectives: the model's vocabulary (gradwire/model/collectives.hpp).
using CollectiveOp = gw::CollectiveOp;
/// The algorithms and protocols: the model's vocabulary
/// (gradwire/model/nccl_model.hpp): ring, tree (NCCL double binary tree,
/// all-reduce), nvls (all-reduce on one NVSwitch node), hierarchical
/// (all-reduce: intra-node reduce-scatter, inter-node all-reduce among peers
/// of the same local rank, intra-node all-gather; gradwire's, not NCCL's),
/// direct (all-to-all pairwise), auto; protocols LL, LL128, Simple, auto.
using Algorithm = gw::Algorithm;
using Protocol = gw::Protocol;
/// PerStep: every chunk of every algorithm step is its own message (exact,
/// O(N^2) flows). Aggregated: one flow per edge carrying the step total, the
/// remaining per-step latency added as a delay (O(N) flows, contention kept).
enum class Granularity { Aggregated, PerStep };

using gw::parse_algorithm;  ///< throws std::invalid_argument
using gw::parse_protocol;   ///< throws std::invalid_argument
using gw::to_string;        ///< CollectiveOp, Algorithm, Protocol
/// gw::parse_collective_op: throws std::invalid_argument.
inline CollectiveOp parse_op(const std::string& s) { return parse_collective_op(s); }

struct CollectiveRequest {
  CollectiveOp op = CollectiveOp::AllReduce;
  /// auto: the (algorithm, protocol) pair of NCCL's rule at this size
  /// (gw::choose_collective); a named one pins it.
  Algorithm algorithm = Algorithm::Ring;
  Protocol protocol = Protocol::Auto;
  Granularity granularity = Granularity::Aggregated;
  /// Size in bytes as nccl-tests reports it: the per-rank buffer for all-reduce
  /// and broadcast; the total (gathered) size for all-gather and reduce-scatter;
  /// the total sent by one rank for all-to-all.
  double bytes = 0;
  /// Ranks taking part, in ring order; empty = all ranks 0..N-1.
  std::vector<int> ranks;
  /// Other groups running the same collective at the same time (each in
  /// ring order, disjoint from `ranks` and each other): their flows join
  /// each phase of `ranks`'s. NCCL's choice and cost are `ranks`'s on the
  /// cluster as it sees it beside them (gw::nic_share_cluster, with
  /// gw::nic_sharing of these groups): HSDP's replica all-reduces, one group
  /// per local rank on every node's NICs (gradwire/model/shard_groups.hpp).
  std::vector<std::vector<int>> alongside;
};

namespace detail {
struct PreparedCollective;  // collective.hpp
}

/// A simulation in progress. Create it inside run_in_child.
class Simulation {
 public:
  explicit Simulation(const ClusterSpec& cluster);
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  const ClusterSpec& cluster() const;
  int world_size() const;
  /// Adds an actor running `body` on the GPU host of `rank`.
  void add_actor(const std::string& name, int rank, std::function<void()> body);
  /// Runs until every actor has finished; returns the simulated end time (s).
  double run();

  // --- Callable from inside actors -----------------------------------------
  /// Current simulated time (s).
  static double now();
  /// Blocks the calling actor for `seconds` of simulated time.
  static void sleep_for(double seconds);
  /// Runs one collective on behalf of all its ranks (data-parallel ranks are
  /// symmetric, so one actor drives all flows). Blocks the calling actor until
  /// the last flow has finished; returns the simulated duration (s).
  double run_collective(const CollectiveRequest& request);
  /// The same for a request prepared outside the actors
  /// (detail::prepare_collective, engine-internal): a refusal is raised
  /// before the simulation runs, and the request is not prepared twice.
  double run_collective(const detail::PreparedCollective& prepared);

  /// What the network has done, for checks that a span of time had it to
  /// itself (the replay's memoised collectives, docs/engine.md): how many
  /// flows (SimGrid network actions, whoever started them) have ended so far,
  /// counted from SimGrid's Link::on_communication_state_change signal.
  struct NetworkActivity {
    long flows_ended = 0;
  };
  NetworkActivity network_activity() const;

  /// How the collectives' phases ran (docs/engine.md, "Symmetry classes of
  /// flows and links"): evaluated by symmetry classes (exact, checked per
  /// phase) or simulated in full. `overlapped` counts phases that began
  /// while a phase evaluated by classes was in flight: that one's time
  /// assumed an idle network, so run() then throws std::logic_error (run
  /// with GRADWIRE_FULL_SIMULATION=1). `last_refusal` says why the last
  /// phase that was considered went to the full simulation ("" if none).
  struct PhaseStats {
    long by_classes = 0;
    long in_full = 0;
    long overlapped = 0;
    long reused = 0;            ///< verdicts taken from an equal earlier phase (verdict_of)
    int last_flow_classes = 0;  ///< of the last phase evaluated or refused
    std::string last_refusal;
  };
  const PhaseStats& phase_stats() const;
  /// Turns the symmetry classes on or off for the phases that follow (on
  /// unless full_simulation_requested() at construction); off, every phase
  /// is simulated in full.
  void use_symmetry_classes(bool on);

  /// Route latency (s) and bottleneck bandwidth (bytes/s) between two ranks,
  /// read from the platform; for closed-form checks.
  std::pair<double, double> route(int src_rank, int dst_rank) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// GRADWIRE_FULL_SIMULATION is set to anything but "" or "0": the full
/// simulation everywhere (no symmetry classes here, no memoised collectives
/// in the replay; docs/engine.md).
bool full_simulation_requested();

/// A counting signal between actors (compute stream -> comm stream).
class Signal {
 public:
  Signal();
  ~Signal();
  void release();  ///< adds one token
  void acquire();  ///< blocks the calling actor until a token is available
 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Forks a child process, runs `body` there (which may create one Simulation)
/// and returns the string (any bytes) it produced. An exception in the child is rethrown in
/// the parent as std::runtime_error (gw::InputError keeps its fields; a
/// std::bad_alloc becomes ChildOutOfMemory). The child dies with the calling
/// process (SIGKILL included).
std::string run_in_child(const std::function<std::string()>& body);

/// Simulated durations (s) of one collective at each of `sizes` (bytes, as
/// CollectiveRequest::bytes) on `cluster`: one child process, one simulation,
/// the collectives back to back on an idle network. A request the algorithm
/// refuses throws gw::InputError naming `source` and the key "collective".
std::vector<double> collective_times(const ClusterSpec& cluster, const CollectiveRequest& base,
                                     const std::vector<double>& sizes, const std::string& source);

/// The child ran out of memory (a std::bad_alloc there).
class ChildOutOfMemory : public std::bad_alloc {
 public:
  const char* what() const noexcept override;
};

/// From now on run_in_child prints "LABEL, T s elapsed" to stderr while it
/// waits for a child: first after GRADWIRE_PROGRESS_AFTER seconds (default 2;
/// "off" for never), then every 5 s. Off until called; stdout is untouched.
/// For commands (simulate, collective), not for sweep workers.
void enable_progress(std::string label);

/// Memory of one simulation, said before it runs (docs/engine.md, "Scale").
/// The simulation child's peak resident memory for `cluster`, estimated
/// from its size alone: the platform holds a host, links and routes per GPU
/// and a phase of a data-parallel collective (aggregated, the only kind the
/// replay runs) O(GPUs) flows in O(1) symmetry classes, so memory grows
/// linearly: a fixed part plus a measured cost per GPU (bytes).
double simulation_memory_estimate(const ClusterSpec& cluster);
/// The most memory one simulation may take (bytes): GRADWIRE_MAX_MEMORY (a
/// size, e.g. "8GiB"; gw::InputError naming the variable when it is not
/// one), else the memory available now (/proc/meminfo's MemAvailable, and
/// the cgroup's memory.max less its memory.current when lower); nullopt when
/// neither is known.
std::optional<double> simulation_memory_bound();
/// Refuses a simulation whose estimate exceeds the bound: std::runtime_error
/// naming both ("simulating N GPUs needs about X of memory (estimate), more
/// than the Y ..."). Simulation's constructor calls it before it builds the
/// platform, so every command that simulates refuses at once.
void check_simulation_memory(const ClusterSpec& cluster);
/// For commands (simulate, collective): when the estimate reaches 512 MiB,
/// prints "LABEL: about X of memory (estimate; docs/engine.md, \"Scale\")"
/// to stderr at once, before the run.
void announce_simulation_memory(const std::string& label, const ClusterSpec& cluster);

}  // namespace gw::engine
