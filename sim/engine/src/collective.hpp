// Internal: how a collective algorithm is described to the driver.
//
// An algorithm is a small descriptor whose schedule() emits phases in order.
// A phase is a set of flows that run at the same time (the driver starts them
// all, waits for all), followed by a delay of
//   extra_latency_steps x (largest route latency among the phase's flows)
// that stands for the latency of steps folded into the phase's flows.
// PerStep schedules emit one phase per algorithm step (every chunk a message,
// no delay); Aggregated schedules emit one phase per stage of the algorithm,
// one flow per edge carrying the stage total. gradwire's alpha-beta schedules
// (hierarchical, broadcast, direct) add the remaining steps' latency as the
// delay; NCCL's algorithms (ring, tree, nvls, nvlstree, pat) fold none: the driver applies
// NCCL's cost (nccl_model.hpp): every flow carries bytes / efficiency, and
// after the last phase the driver waits until NCCL's latency L has passed
// when the phases' route latencies (the wire) paid less.
// No SimGrid here: the driver owns all SimGrid calls.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "gradwire/engine/engine.hpp"
#include "gradwire/model/nccl_model.hpp"

namespace gw::engine::detail {

struct Flow {
  int src = 0;  ///< rank
  int dst = 0;  ///< rank
  double bytes = 0;
  double rate = 0;  ///< bytes/s cap (0: none); set for a lockstep phase's flows
};

struct Phase {
  std::vector<Flow> flows;
  int extra_latency_steps = 0;
  /// The flows are the stages of one pipeline that NCCL's flow control keeps
  /// in step (NVLSTree: the NVLS part and the node-level tree): every flow
  /// moves at one pace, its bytes over T, T the most loaded link's bytes over
  /// its capacity (Simulation::Impl::pace_lockstep), instead of max-min
  /// sharing alone, whose route-latency penalty (CM02) would starve the
  /// longer routes on a link both parts cross.
  bool lockstep = false;
};

struct ScheduleInput {
  const ClusterSpec* cluster = nullptr;
  std::vector<int> ranks;  ///< participating ranks in ring order (never empty)
  double bytes = 0;
  Granularity granularity = Granularity::Aggregated;
};

using EmitPhase = std::function<void(Phase&)>;

struct AlgorithmDescriptor {
  CollectiveOp op;
  Algorithm algorithm;
  /// Emits the phases of one collective; throws std::invalid_argument when the
  /// request does not fit the algorithm.
  void (*schedule)(const ScheduleInput& in, const EmitPhase& emit);
};

/// The engine's schedules, one per row of the algorithm table
/// (collective_algorithms.hpp). Each sim/engine/src/algo_<name>.cpp defines
/// `std::span<const AlgorithmDescriptor> algo_<name>()`, the descriptors of the
/// rows it schedules; sim/engine/CMakeLists.txt finds those files and
/// generates this list from them (algorithms.cpp.in), so a new algorithm's
/// file needs no other edit. tests/engine checks one descriptor per row.
const std::vector<const AlgorithmDescriptor*>& engine_algorithms();

/// The participating ranks grouped by node (rank / gpus_per_node), nodes in
/// the order their first rank appears, ranks in their order (the
/// hierarchical all-reduce's rings, the tree's chains).
std::vector<std::vector<int>> ranks_by_node(const ScheduleInput& in);

/// The hierarchical schedules' groups: the ranks of each node (intra, every
/// node holding the same number g of them, else std::invalid_argument
/// "`what` needs the same number of ranks on every node") and the g groups of
/// the ranks with the same local index on every node (inter).
struct NodeGroups {
  std::vector<std::vector<int>> intra, inter;
};
NodeGroups node_groups(const ScheduleInput& in, const std::string& what);

/// Ring pass shared by the ring algorithms: `steps` steps over `ranks` in
/// order, each rank sending `chunk` bytes to its successor per step. PerStep:
/// one phase per step; Aggregated: one phase, one flow of steps x chunk per
/// edge, steps - 1 latency steps when `fold_latency` (none for NCCL's ring,
/// whose latency is NCCL's model). Emits nothing for fewer than two ranks.
/// Several rings (`rings`) run side by side in the same phases.
void emit_ring_steps(const std::vector<std::vector<int>>& rings, int steps, double chunk, Granularity granularity,
                     const EmitPhase& emit, bool fold_latency);

/// Phases with more flows than this run through mailboxes instead of
/// host-to-host sends from the driver, when they can (flow_runner.cpp;
/// default 8,192). For tests that compare both ways; set it in the
/// simulation's process before its collectives run.
void set_flows_for_mailboxes(std::size_t flows);

/// Phases with more flows than this are evaluated by symmetry classes when
/// that is exact (flow_runner.cpp, symmetry.hpp; default 1,024; SIZE_MAX:
/// never). For tests that compare both ways; set it in the simulation's
/// process before its collectives run.
void set_flows_for_symmetry(std::size_t flows);

/// A collective request made ready to run: its schedule input, the
/// algorithm NCCL's rule (or the request) picks, and its cost.
struct PreparedCollective {
  ScheduleInput in;
  std::vector<std::vector<int>> alongside;  ///< CollectiveRequest::alongside, checked
  const AlgorithmDescriptor* algo = nullptr;
  NcclCost cost;
};
/// Prepares `request` on `cluster` of `world` ranks, as
/// Simulation::run_collective does (collective_driver.cpp); throws
/// std::invalid_argument, naming why, for a request it would refuse.
/// Callable outside actors, so that a refusal is raised before the
/// simulation runs (an exception thrown in an actor's context trips
/// AddressSanitizer's stack bookkeeping under SimGrid's context switches),
/// and the result runs without being prepared again.
PreparedCollective prepare_collective(const ClusterSpec& cluster, int world, const CollectiveRequest& request);

}  // namespace gw::engine::detail
