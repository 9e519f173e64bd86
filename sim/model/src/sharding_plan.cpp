// The collectives of one optimizer step under a sharding scheme, in closed
// form (gradwire/model/sharding.hpp; docs/model.md, "Sharded data
// parallelism"). A micro-step is walked once for each distinct starting
// state (first, middle, last), so k = 32,768 costs what k = 1 does.
#include <stdexcept>
#include <string>

#include "gradwire/model/sharded_wire.hpp"
#include "gradwire/model/sharding.hpp"

namespace gw {

namespace {

/// Where a unit's parameters are between passes.
enum class Held { Sharded, Partial, Full };

/// Passes per optimizer step.
struct Tally {
  long long forward_gather = 0, backward_gather = 0, backward_regather = 0, reduce = 0;
  void add(const MicroStepPasses& o, long long times) {
    forward_gather += o.forward_gather ? times : 0;
    backward_gather += o.backward_gather ? times : 0;
    backward_regather += o.backward_regather ? times : 0;
    reduce += o.reduce ? times : 0;
  }
};

/// DDP and DeepSpeed ZeRO-1/2 keep full 16-bit parameters on every rank.
bool replicated_parameters(const ShardingSpec& s) {
  return s.scheme == ShardingScheme::Ddp || s.scheme == ShardingScheme::Zero1 ||
         (s.scheme == ShardingScheme::Zero2 && s.framework == ShardingFramework::DeepSpeed);
}

/// FSDP1 frees the parameters in backward under no_sync only for the
/// strategies that reshard after forward (FULL_SHARD, HYBRID_SHARD);
/// SHARD_GRAD_OP keeps them (_runtime_utils.py, _should_free_in_backward).
bool reshards_after_backward(const ShardingSpec& s) {
  if (s.framework == ShardingFramework::Fsdp1)
    return s.gradient_sync == GradientSync::EveryMicroStep || s.reshard_after_forward != kReshardNone;
  return s.reshard_after_backward;
}

/// One micro-step from `start`: its passes and the state it leaves.
Held micro_step(const ShardingSpec& s, Held start, bool last, MicroStepPasses& t) {
  const bool sync = last || s.gradient_sync == GradientSync::EveryMicroStep;
  if (replicated_parameters(s)) {
    t.reduce = sync;
    return Held::Full;
  }
  t.forward_gather = start == Held::Sharded;
  Held held = s.reshard_after_forward == kReshardFull   ? Held::Sharded
              : s.reshard_after_forward == kReshardNone ? Held::Full
                                                        : Held::Partial;
  t.backward_gather = held == Held::Sharded;
  t.backward_regather = held == Held::Partial;
  t.reduce = sync;
  return (last || reshards_after_backward(s)) ? Held::Sharded : Held::Full;
}

/// Passes per optimizer step: the first micro-step, k - 2 middle ones and
/// the last, the later ones all starting from the state the first leaves.
Tally optimizer_step(const ShardingSpec& s, int k) {
  Tally total;
  for (const auto& m : micro_steps(s, k)) total.add(m.passes, m.times);
  return total;
}

int in_node(int ranks, const ShardTopology& t) { return std::min(ranks, t.gpus_per_node); }

/// The resharded group's size: FSDP2's int, or hpZ's node.
int reshard_ranks(const ShardingSpec& s) { return s.reshard_after_forward > 0 ? s.reshard_after_forward : 0; }

/// One pass over the model: the elements, the plain all-gather and
/// reduction, and the primary group's formats (sharded_wire.hpp).
struct Sizes {
  double parameters = 0, gather = 0, reduce = 0;
  GatherWire primary;
  ReduceWire reduction;
};

void add(ShardingPlan& p, ShardCollective c) {
  if (c.count > 0) p.collectives.push_back(std::move(c));
}

void add_gathers(ShardingPlan& p, const ShardTopology& t, const Tally& n, const Sizes& z) {
  const ShardingSpec& s = p.spec;
  const auto group = p.degree == t.world ? ShardGroupKind::World : ShardGroupKind::Shard;
  const double primary = z.primary.bytes + z.primary.scale_bytes;  // qwZ: int8 + scales, fp8 weights
  const int g = in_node(p.degree, t);
  add(p, {"forward all-gather", CollectiveOp::AllGather, ShardPhase::Forward, group, p.degree, g, primary,
          n.forward_gather});
  add(p, {"backward all-gather", CollectiveOp::AllGather, ShardPhase::Backward, group, p.degree, g, primary,
          n.backward_gather});
  const int r = reshard_ranks(s);
  add(p, {"backward all-gather (resharded)", CollectiveOp::AllGather, ShardPhase::Backward, ShardGroupKind::Reshard, r,
          in_node(r, t), z.gather, n.backward_regather});
  if (replicated_parameters(s) && s.scheme != ShardingScheme::Ddp)
    add(p, {"parameter all-gather", CollectiveOp::AllGather, ShardPhase::Step, ShardGroupKind::World, t.world,
            in_node(t.world, t), z.gather, 1});
}

void add_reductions(ShardingPlan& p, const ShardTopology& t, long long count, const Sizes& z) {
  const ShardingSpec& s = p.spec;
  const int world_in_node = in_node(t.world, t);
  if (s.scheme == ShardingScheme::Ddp) {
    add(p, {"gradient all-reduce", CollectiveOp::AllReduce, ShardPhase::Backward, ShardGroupKind::World, t.world,
            world_in_node, z.reduce, count});
  } else if (s.scheme == ShardingScheme::Hsdp) {
    const int g = p.degree, replicas = t.world / p.degree;
    add(p, {"gradient reduce-scatter", CollectiveOp::ReduceScatter, ShardPhase::Backward, ShardGroupKind::Shard, g,
            in_node(g, t), z.reduce, count});
    add(p, {"gradient all-reduce (replicas)", CollectiveOp::AllReduce, ShardPhase::Backward, ShardGroupKind::Replicas,
            replicas, g >= t.gpus_per_node ? 1 : t.gpus_per_node / g, z.reduce / g, count});
  } else if (s.scheme == ShardingScheme::ZeroPP && s.qgz) {
    // qgZ (coalesced_collectives.py, all_to_all_quant_reduce): int4 gradients,
    // all-to-all inside the node, reduce, then all-to-all of the node's 1/g
    // slice among the GPUs of the same local rank on every node.
    // Scales included; tensors it cannot split fall back to a reduce-scatter.
    const double int4 = z.reduction.all_to_all_bytes;
    add(p, {"gradient all-to-all (node, int4)", CollectiveOp::AllToAll, ShardPhase::Backward, ShardGroupKind::Node,
            t.gpus_per_node, t.gpus_per_node, int4, count});
    add(p, {"gradient all-to-all (across nodes, int4)", CollectiveOp::AllToAll, ShardPhase::Backward,
            ShardGroupKind::CrossNode, t.nodes(), 1, int4 / t.gpus_per_node, count});
    if (z.reduction.reduce_scatter_bytes > 0)
      add(p, {"gradient reduce-scatter (not quantised)", CollectiveOp::ReduceScatter, ShardPhase::Backward,
              ShardGroupKind::World, t.world, world_in_node, z.reduction.reduce_scatter_bytes, count});
  } else {
    add(p, {"gradient reduce-scatter", CollectiveOp::ReduceScatter, ShardPhase::Backward, ShardGroupKind::World,
            t.world, world_in_node, z.reduce, count});
  }
}

}  // namespace

std::vector<MicroStepKind> micro_steps(const ShardingSpec& s, int k) {
  if (k < 1) throw std::invalid_argument("accumulation must be at least 1");
  std::vector<MicroStepKind> steps(1);
  steps[0].times = 1;
  const Held after_first = micro_step(s, Held::Sharded, k == 1, steps[0].passes);
  if (k == 1) return steps;
  if (k > 2) {
    MicroStepKind middle{{}, k - 2};
    micro_step(s, after_first, false, middle.passes);
    steps.push_back(middle);
  }
  MicroStepKind last{{}, 1};
  micro_step(s, after_first, true, last.passes);
  steps.push_back(last);
  return steps;
}

ShardingSpec effective_spec(const ShardingSpec& s, const ShardTopology& t) {
  ShardingSpec e = s;
  // hpZ: after forward each GPU keeps a secondary shard over its node
  // (zero_hpz_partition_size = GPUs per node), so backward gathers inside it.
  if (s.scheme == ShardingScheme::ZeroPP && s.hpz && t.gpus_per_node < t.world)
    e.reshard_after_forward = t.gpus_per_node;
  return e;
}

int shard_degree(const ShardingSpec& s, const ShardTopology& t) {
  if (t.world < 1 || t.gpus_per_node < 1 || t.world % std::min(t.world, t.gpus_per_node) != 0)
    throw std::invalid_argument("the data-parallel GPUs must be whole nodes");
  int d = t.world;
  if (s.scheme == ShardingScheme::Ddp) d = 1;
  if (s.scheme == ShardingScheme::Hsdp) d = s.group > 0 ? s.group : std::min(t.world, t.gpus_per_node);
  if (t.world % d != 0)
    throw std::invalid_argument("hsdp group " + std::to_string(d) + " does not divide the " + std::to_string(t.world) +
                                " GPUs");
  if (s.reshard_after_forward > 0 && (d % s.reshard_after_forward != 0 || s.reshard_after_forward >= d))
    throw std::invalid_argument("reshard_after_forward " + std::to_string(s.reshard_after_forward) +
                                " is not a divisor of the shard group of " + std::to_string(d) +
                                " GPUs other than 1 and itself");
  // Groups of consecutive ranks (shard_groups.hpp) lie inside one node or on
  // whole nodes, all alike: their size divides a node or is a multiple of it.
  const auto check_aligned = [&](const std::string& what, int ranks) {
    if (ranks % t.gpus_per_node == 0 || t.gpus_per_node % ranks == 0) return;
    throw std::invalid_argument(what + " " + std::to_string(ranks) + " neither divides the " +
                                std::to_string(t.gpus_per_node) +
                                " GPUs of a node nor is a multiple of them: its groups would straddle nodes");
  };
  if (d < t.world) check_aligned("hsdp group", d);
  if (s.reshard_after_forward > 0) check_aligned("reshard_after_forward", s.reshard_after_forward);
  return d;
}

double ShardCollective::wire_bytes_per_gpu() const {
  return static_cast<double>(count) * bus_bandwidth_factor(op, ranks) * bytes;
}

double ShardCollective::cross_node_bytes_per_node(int gpus_per_node) const {
  if (ranks <= 1 || gpus_per_node_in_group >= ranks) return 0;  // inside one node
  return static_cast<double>(gpus_per_node / gpus_per_node_in_group) * wire_bytes_per_gpu();
}

double ShardingPlan::wire_bytes_per_gpu() const {
  double sum = 0;
  for (const auto& c : collectives) sum += c.wire_bytes_per_gpu();
  return sum;
}

double ShardingPlan::cross_node_bytes_per_node(int gpus_per_node) const {
  double sum = 0;
  for (const auto& c : collectives) sum += c.cross_node_bytes_per_node(gpus_per_node);
  return sum;
}

long long ShardingPlan::count(CollectiveOp op, ShardPhase phase) const {
  long long n = 0;
  for (const auto& c : collectives) n += (c.op == op && c.phase == phase) ? c.count : 0;
  return n;
}

ShardingPlan sharding_plan(const ShardingSpec& s, const ShardTopology& t, std::int64_t parameters, double element_bytes,
                           int accumulation, const UnitElements* elements) {
  if (accumulation < 1) throw std::invalid_argument("accumulation must be at least 1");
  ShardingPlan p;
  p.spec = effective_spec(s, t);
  p.accumulation = accumulation;
  p.degree = shard_degree(p.spec, t);
  const double n = static_cast<double>(parameters);
  const ShardWireFormat f = wire_format(s, element_bytes);
  const UnitElements u = elements != nullptr ? *elements : uniform_elements(n);
  const Sizes z{n, n * f.gather_bytes, n * f.reduce_bytes, gather_wire(f, u, p.degree, {}), reduce_wire(f, u, t, {})};
  const Tally tally = optimizer_step(p.spec, accumulation);
  add_gathers(p, t, tally, z);
  add_reductions(p, t, tally.reduce, z);
  return p;
}

}  // namespace gw
