// One optimizer step under a sharding scheme (workload.sharding; docs/model.md,
// section 7c, "The sharded schedule") as programs of work on two streams of
// a representative rank, and their closed-form evaluation:
//
//   compute : the forward of each unit (sharding.hpp's shard_units: a
//             transformer block, or one other module) in forward order, then
//             its backward in reverse order;
//   NCCL    : the all-gathers and reduce-scatters (and HSDP's all-reduce of
//             each shard across its replicas, after its reduce-scatter), each
//             over its group (shard_groups.hpp), one at a time in the order
//             the host issues them. FSDP's BackwardPrefetch docstring
//             (torch/distributed/fsdp/api.py): "For NCCL backend, any
//             collectives, even if issued in different streams, contend for
//             the same per-device NCCL stream, which is why the relative
//             order in which the collectives are issued matters".
//
// Issue order, with p = sharding.prefetch (units all-gathered ahead of the
// one computing) over the compute slots c = 0 .. 2U-1 (U forward units, then
// U backward units in reverse): at slot c the host issues the all-gather of
// slot c + p (c < p: those of slots 0 .. p as well), then slot c's compute
// (which waits for its all-gather), then in backward its reduce-scatter
// (which waits for that compute). The all-gather of slot t waits for the end
// of compute slot t - 1 - p: at most 1 + p unsharded units (FSDP1
// limit_all_gathers, FSDP2's all-gather state), and in backward the next
// all-gather is queued before the current reduce-scatter (FSDP1 BACKWARD_PRE;
// FSDP2 prefetches the next unit's all-gather in the current one's
// pre-backward). Each op starts at the later of its stream's previous end
// and the ends of what it waits for; a micro-step ends when both streams are
// idle (FSDP's post-backward final callback waits for the reduce-scatter
// stream; DeepSpeed's gradient epilogue synchronizes its reduction stream).
//
//   T = sum over distinct micro-steps m of times_m x T_m + T_step
//
// with the distinct micro-steps of sharding.hpp's micro_steps (first, k - 2
// middle, last), so k = 64 costs what k = 3 does to evaluate, and T_step the
// optimizer on the shard (the DDP optimizer time x shard / parameters)
// followed, for DeepSpeed ZeRO-1/2, by the all-gather of the updated
// parameters. Plain C++, no SimGrid.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "gradwire/model/iteration_model.hpp"
#include "gradwire/model/shard_groups.hpp"
#include "gradwire/model/sharded_wire.hpp"
#include "gradwire/model/sharding.hpp"

namespace gw {

/// One op of a program: compute on the compute stream or a collective on the
/// NCCL stream over `group` (shard_groups.hpp: the world, HSDP's shard group
/// or replicas, the resharded group).
struct ShardOp {
  bool collective = false;
  std::string label;                          ///< "forward model.layers.3", "all-gather model.layers.3", ...
  double seconds = 0;                         ///< compute: its duration
  CollectiveOp op = CollectiveOp::AllGather;  ///< collective: what it runs
  double bytes = 0;                           ///< collective: nccl-tests size (the gathered total)
  std::vector<int> after;                     ///< earlier ops on the other stream it waits for
  ShardCommGroup group;                       ///< collective: the ranks it runs over (rank 0's group)
  /// Collective: quantisation kernels on its stream around it (sharded_wire.hpp), s.
  double kernel = 0;
};

/// A micro-step (or the optimizer step) and how many of the optimizer step's run as it does.
struct ShardProgram {
  std::string what;  ///< "first micro-step", "middle micro-step", "last micro-step", "optimizer step"
  long long times = 1;
  std::vector<ShardOp> ops;
};

struct ShardedIterationPlan {
  IterationPlan base;    ///< the DDP plan: compute times, labels, batch, world
  ShardingPlan traffic;  ///< the collectives per optimizer step (sharding_plan)
  int units = 0;
  double forward = 0, backward = 0;  ///< one micro-step, all units (backward with recompute)
  double optimizer = 0;              ///< on the shard
  std::string wire = "none";         ///< the sharded traffic's compressed formats (wire_label), "none"
  std::vector<ShardProgram> programs;
};

/// Why gradwire does not simulate `s` under `w`, in one line; "" when it
/// does: compression of gradients (`compression:`) with sharding is refused
/// (no framework runs it; the compressed sharded formats are zeropp's qwz and
/// qgz and FSDP2's float8_all_gather, all simulated, as are zero1/2/3, hsdp,
/// an int reshard_after_forward and ZeRO++'s hpZ).
std::string sharding_not_simulated(const WorkloadSpec& w, const ShardingSpec& s);

/// The sharded plan of `w` from its DDP plan `base` (compute per tensor, the
/// optimizer of the whole model). Throws std::invalid_argument with
/// sharding_not_simulated's line, and what sharding_plan throws.
/// `kernels`: the quantisation kernels' costs (default: none).
ShardedIterationPlan plan_sharded_iteration(const WorkloadSpec& w, const ClusterSpec& cluster, const ModelDesc& model,
                                            IterationPlan base, const WireKernels& kernels = {});

/// Seconds of one collective op of a program over `group` (closed form or
/// measured). The all-to-all of a sharded schedule is qgZ's two-stage one
/// (sharded_algorithm: hierarchical); the rest take NCCL's rule.
using ShardCollectiveTimeFn = std::function<double(CollectiveOp op, double bytes, const ShardCommGroup& group)>;
/// The algorithm the closed form and the replay run `op` of a program with.
Algorithm sharded_algorithm(CollectiveOp op);

/// The end of each op of `program` started at 0 on idle streams, the
/// collectives timed by `time`.
std::vector<double> schedule_program(const ShardProgram& program, const ShardCollectiveTimeFn& time);
/// A program's length from its ops' ends (both streams idle).
double program_seconds(const std::vector<double>& ends);

/// The result from the programs' lengths (one per plan.programs entry):
/// total = sum of times x seconds, forward and backward all micro-steps,
/// exposed communication the rest after the optimizer; no band yet (low =
/// high = total). `method`: "simulation" or "closed form".
IterationResult sharded_result(const ShardedIterationPlan& plan, const std::vector<double>& program_lengths,
                               const std::string& method);

/// The closed form: every program scheduled with `time`.
IterationResult evaluate_sharded_closed_form(const ShardedIterationPlan& plan, const ShardCollectiveTimeFn& time);

/// The scenario's sharded plan (prepare_iteration's cluster and DDP plan
/// first); a scheme gradwire does not simulate yet throws gw::InputError at
/// workload.sharding.
struct PreparedShardedIteration {
  ClusterSpec cluster;
  ShardedIterationPlan plan;
};
PreparedShardedIteration prepare_sharded_iteration(const Scenario& scenario, const ModelDesc& model,
                                                   const Profile& profile);

/// NCCL's pair at each size over the op's group (its ranks and the nodes
/// they span, group_shape) on the cluster as the group sees it beside the
/// groups alongside (nic_share_cluster), its closed-form time
/// (closed_form.hpp, choose_collective): what the replay's engine runs.
ShardCollectiveTimeFn sharded_collective_time(const ClusterSpec& cluster);
/// prepare_sharded_iteration, then evaluate_sharded_closed_form with
/// sharded_collective_time, labelled (closed_form_iteration calls it for a
/// sharded workload).
IterationResult sharded_closed_form_iteration(const Scenario& scenario, const ModelDesc& model, const Profile& profile);

/// True when the scenario's workload shards (any scheme but ddp).
bool is_sharded(const Scenario& scenario);

}  // namespace gw
