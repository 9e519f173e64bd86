// The sharded schedule (gradwire/model/sharded_iteration.hpp; docs/model.md,
// section 7c, "The sharded schedule"): programs per distinct micro-step and
// their closed-form evaluation.
#include "gradwire/model/sharded_iteration.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "gradwire/core/error.hpp"
#include "gradwire/model/closed_form.hpp"
#include "gradwire/model/shard_groups.hpp"

namespace gw {
namespace {

/// What gradwire simulates of the schemes (sharding_not_simulated).
void check_simulated(const WorkloadSpec& w, const ShardingSpec& s) {
  const std::string why = sharding_not_simulated(w, s);
  if (!why.empty()) throw std::invalid_argument(why);
}

/// A unit's compute in one micro-step (forward order).
struct UnitCompute {
  std::string name;
  std::int64_t parameters = 0;
  double forward = 0, backward = 0;
  UnitElements elements;
  GatherWire gather;  ///< its all-gather's format (sharded_wire.hpp)
  ReduceWire reduce;  ///< its gradient reduction's
};

/// The units in forward order with their share of the plan's compute: a
/// unit's backward is the sum of its tensors' (plan.tensor_backward, by
/// name), its forward the plan's forward in the same proportion; activation
/// checkpointing adds its recompute to the backward (full: the unit's
/// forward; selective: the attention products' share of it).
std::vector<UnitCompute> unit_compute(const ModelDesc& model, const IterationPlan& base, ActivationCheckpointing ac,
                                      int world) {
  std::map<std::string, double> backward_of;
  for (std::size_t j = 0; j < base.tensor_names.size() && j < base.tensor_backward.size(); ++j)
    backward_of[base.tensor_names[j]] = base.tensor_backward[j];
  std::vector<UnitCompute> units;
  double total = 0;
  for (const auto& u : shard_units(model)) {
    UnitCompute c{u.name, u.parameters, 0, 0, unit_elements(model, u, world), {}, {}};
    for (int i : u.tensors) c.backward += backward_of[model.tensors[static_cast<std::size_t>(i)].name];
    total += c.backward;
    units.push_back(c);
  }
  std::reverse(units.begin(), units.end());  // shard_units: gradient-ready order
  const double recompute =
      model.forward_flops_per_sample > 0 ? recompute_flops_per_sample(model, ac) / model.forward_flops_per_sample : 0.0;
  for (auto& c : units) {
    c.forward = total > 0 ? base.forward * c.backward / total : base.forward / static_cast<double>(units.size());
    c.backward += recompute * c.forward;
  }
  return units;
}

/// Builds the program of one micro-step (header comment: issue order and
/// waits; the groups each collective runs over: shard_groups.hpp; the wire
/// format of each unit's traffic and its kernels: sharded_wire.hpp).
struct ProgramBuilder {
  ProgramBuilder(const std::vector<UnitCompute>& u, const MicroStepPasses& passes, const ScheduleGroups& g, int ahead,
                 const ShardCommGroup& everyone)
      : units(u), m(passes), groups(g), world(everyone), prefetch(ahead) {}
  const std::vector<UnitCompute>& units;
  const MicroStepPasses& m;
  const ScheduleGroups& groups;
  const ShardCommGroup& world;
  int prefetch;
  int n = static_cast<int>(units.size()), slots = 2 * n;
  ShardProgram p;
  std::vector<int> compute = std::vector<int>(static_cast<std::size_t>(slots), -1);
  std::vector<int> gather = std::vector<int>(static_cast<std::size_t>(slots), -1);

  const UnitCompute& unit(int c) const { return units[static_cast<std::size_t>(c < n ? c : slots - 1 - c)]; }
  int push(ShardOp o) {
    p.ops.push_back(std::move(o));
    return static_cast<int>(p.ops.size()) - 1;
  }
  static ShardOp collective(std::string label, CollectiveOp op, double bytes, std::vector<int> after,
                            const ShardCommGroup& group, double kernel = 0) {
    ShardOp o{true, std::move(label), 0, op, bytes, std::move(after), group};
    o.kernel = kernel;
    return o;
  }
  /// Slot t's all-gather (qwZ: then its scales'): forward over the shard
  /// group; backward over it when resharded fully, over the R ranks when
  /// partly (reshard_after_forward R, hpZ); none when the parameters were kept.
  void issue_gather(int t) {
    if (t >= slots) return;
    const bool forward = t < n;
    if (forward ? !m.forward_gather : !(m.backward_gather || m.backward_regather)) return;
    const ShardCommGroup& g = !forward && m.backward_regather ? groups.reshard : groups.shard;
    const GatherWire& w = unit(t).gather;
    std::vector<int> after;
    if (t - 1 - prefetch >= 0) after.push_back(compute[static_cast<std::size_t>(t - 1 - prefetch)]);
    int last =
        push(collective("all-gather " + unit(t).name, CollectiveOp::AllGather, w.bytes, after, g, w.sender_seconds));
    if (w.scale_bytes > 0)
      last = push(collective("all-gather scales " + unit(t).name, CollectiveOp::AllGather, w.scale_bytes, {}, g));
    gather[static_cast<std::size_t>(t)] = last;
  }
  /// Slot c's compute, after its all-gather (and its dequantisation, qwZ).
  void issue_compute(int c) {
    const bool backward = c >= n;
    const int g = gather[static_cast<std::size_t>(c)];
    std::vector<int> after;
    if (g >= 0) after.push_back(g);
    if (g >= 0 && unit(c).gather.receiver_seconds > 0) {
      push({false,
            "dequantise " + unit(c).name,
            unit(c).gather.receiver_seconds,
            CollectiveOp::AllGather,
            0,
            after,
            {}});
      after.clear();
    }
    compute[static_cast<std::size_t>(c)] = push({false,
                                                 (backward ? "backward " : "forward ") + unit(c).name,
                                                 backward ? unit(c).backward : unit(c).forward,
                                                 CollectiveOp::AllGather,
                                                 0,
                                                 after,
                                                 {}});
  }
  /// Slot c's gradient reduction after its backward: qgZ's all-to-all (over
  /// every rank, the hierarchical two-stage one) and the reduce-scatter of
  /// what it does not take over the shard group, then (HSDP) the all-reduce
  /// of the shard over its replicas on the same stream (its issue order).
  void issue_reduce(int c) {
    const ReduceWire& r = unit(c).reduce;
    const int done = compute[static_cast<std::size_t>(c)];
    if (r.all_to_all_bytes > 0)
      push(collective("all-to-all (int4) " + unit(c).name, CollectiveOp::AllToAll, r.all_to_all_bytes, {done}, world,
                      r.seconds));
    if (r.reduce_scatter_bytes > 0) {
      push(collective("reduce-scatter " + unit(c).name, CollectiveOp::ReduceScatter, r.reduce_scatter_bytes, {done},
                      groups.shard));
      if (groups.replicas.size > 1)
        push(collective("all-reduce (replicas) " + unit(c).name, CollectiveOp::AllReduce,
                        r.reduce_scatter_bytes / groups.shard.size, {}, groups.replicas));
    }
  }
  ShardProgram build() {
    for (int c = 0; c < slots; ++c) {
      if (c == 0)
        for (int t = 0; t < prefetch; ++t) issue_gather(t);
      issue_gather(c + prefetch);
      issue_compute(c);
      if (c >= n && m.reduce) issue_reduce(c);
    }
    return std::move(p);
  }
};

/// DeepSpeed ZeRO-1/2 keep the 16-bit parameters replicated: after the step
/// on the shard they all-gather them (stage_1_and_2.py, step).
bool gathers_after_step(const ShardingSpec& s) {
  return s.scheme == ShardingScheme::Zero1 ||
         (s.scheme == ShardingScheme::Zero2 && s.framework == ShardingFramework::DeepSpeed);
}

/// torchao's precompute_float8_dynamic_scale_for_fsdp after the optimizer
/// step: the amax of every Float8Linear weight's shard (read once), then one
/// all-reduce of the fp32 amaxes.
ShardOp float8_scales(const ModelDesc& model, int world, double element_bytes, const WireKernels& k,
                      const ShardCommGroup& everyone) {
  double weights = 0;
  for (const auto& u : shard_units(model))
    for (int i : u.tensors) weights += u.repeated && model.tensors[static_cast<std::size_t>(i)].shape.size() == 2;
  ShardOp o{true, "all-reduce float8 scales", 0, CollectiveOp::AllReduce, 4.0 * weights, {0}, everyone};
  o.kernel = k.bandwidth_bound(model_elements(model, world).float8 / world * element_bytes);
  return o;
}

const char* micro_step_name(std::size_t i, std::size_t count) {
  if (i == 0) return count == 1 ? "micro-step" : "first micro-step";
  return i + 1 == count ? "last micro-step" : "middle micro-step";
}

}  // namespace

std::string sharding_not_simulated(const WorkloadSpec& w, const ShardingSpec&) {
  // No framework compresses sharded gradients the way `compression:` does
  // DDP's buckets; the compressed formats they have are sharding's own keys.
  if (w.compression.kind != "none")
    return "compression " + w.compression.kind +
           " with sharding: no framework runs it; the compressed sharded formats are zeropp's qwz and qgz and "
           "FSDP2's float8_all_gather";
  return "";
}

ShardedIterationPlan plan_sharded_iteration(const WorkloadSpec& w, const ClusterSpec& cluster, const ModelDesc& model,
                                            IterationPlan base, const WireKernels& kernels) {
  const ShardTopology topo{cluster.world_size(), cluster.gpus_per_node};
  const ShardingSpec spec = effective_spec(w.sharding, topo);
  check_simulated(w, w.sharding);
  const double e = bytes_per_element(w.precision);
  const ShardWireFormat format = wire_format(spec, e, w.precision == Precision::BF16);
  ShardedIterationPlan p;
  const UnitElements all = model_elements(model, topo.world);
  p.traffic = sharding_plan(w.sharding, topo, model.parameters, e, w.accumulation, &all);
  std::vector<UnitCompute> units = unit_compute(model, base, w.activation_checkpointing, topo.world);
  for (auto& u : units) {
    u.gather = gather_wire(format, u.elements, p.traffic.degree, kernels);
    u.reduce = reduce_wire(format, u.elements, topo, kernels);
  }
  p.units = static_cast<int>(units.size());
  if (format.qwz || format.qgz || format.float8) p.wire = wire_label(format);
  for (const auto& u : units) {
    p.forward += u.forward;
    p.backward += u.backward;
  }
  const ScheduleGroups groups = schedule_groups(spec, topo, p.traffic.degree);
  const ShardCommGroup world{ShardGroupKind::World, topo.world, 1};
  const auto kinds = micro_steps(spec, w.accumulation);
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    ShardProgram prog = ProgramBuilder(units, kinds[i].passes, groups, spec.prefetch, world).build();
    prog.what = micro_step_name(i, kinds.size());
    prog.times = kinds[i].times;
    p.programs.push_back(std::move(prog));
  }
  // The optimizer on this GPU's shard: the whole model's step time x 1 / D.
  p.optimizer = base.optimizer / p.traffic.degree;
  ShardProgram step{
      "optimizer step", 1, {{false, "optimizer (shard)", p.optimizer, CollectiveOp::AllGather, 0, {}, {}}}};
  if (gathers_after_step(spec))
    step.ops.push_back({true,
                        "all-gather parameters",
                        0,
                        CollectiveOp::AllGather,
                        static_cast<double>(model.parameters) * format.gather_bytes,
                        {0},
                        world});
  if (format.float8) step.ops.push_back(float8_scales(model, topo.world, e, kernels, world));
  p.programs.push_back(std::move(step));
  p.base = std::move(base);
  return p;
}

std::vector<double> schedule_program(const ShardProgram& program, const ShardCollectiveTimeFn& time) {
  std::vector<double> ends(program.ops.size(), 0.0);
  double stream_end[2] = {0, 0};
  for (std::size_t i = 0; i < program.ops.size(); ++i) {
    const ShardOp& o = program.ops[i];
    double& free_at = stream_end[o.collective ? 1 : 0];
    double start = free_at;
    for (int a : o.after) start = std::max(start, ends.at(static_cast<std::size_t>(a)));
    ends[i] = start + (o.collective ? o.kernel + time(o.op, o.bytes, o.group) : o.seconds);
    free_at = ends[i];
  }
  return ends;
}

double program_seconds(const std::vector<double>& ends) {
  double t = 0;
  for (double e : ends) t = std::max(t, e);
  return t;
}

IterationResult sharded_result(const ShardedIterationPlan& plan, const std::vector<double>& lengths,
                               const std::string& method) {
  if (lengths.size() != plan.programs.size()) throw std::logic_error("one length per program");
  const IterationPlan& b = plan.base;
  IterationResult r;
  r.method = method;
  r.model = b.model;
  r.compression = plan.wire;
  r.compute_precision = b.compute_precision;
  r.allreduce_algorithm = "-";
  r.sharding = to_string(plan.traffic.spec.scheme) + " (" + to_string(plan.traffic.spec.framework) + ")";
  r.world_size = b.world_size;
  r.micro_batch = b.micro_batch;
  r.accumulation = b.accumulation;
  r.overlap = true;
  r.compute_efficiency = b.compute_efficiency;
  r.compute_efficiency_default = b.compute_efficiency_default;
  r.compute_measured = b.compute_measured;
  r.global_batch = b.global_batch();
  r.forward = plan.forward * b.accumulation;
  r.backward = plan.backward * b.accumulation;
  r.optimizer = plan.optimizer;
  for (std::size_t i = 0; i < lengths.size(); ++i) r.total += static_cast<double>(plan.programs[i].times) * lengths[i];
  for (const auto& prog : plan.programs)
    for (const auto& o : prog.ops) r.encode += static_cast<double>(prog.times) * (o.collective ? o.kernel : 0.0);
  r.exposed_communication = std::max(0.0, r.total - r.forward - r.backward - r.optimizer);
  r.band_low = r.band_high = r.total;
  r.samples_per_second = r.total > 0 ? r.global_batch / r.total : 0;
  r.wire_bytes_per_gpu = plan.traffic.wire_bytes_per_gpu();
  r.folded = r.total - lengths.back() - (lengths.size() > 1 ? lengths[lengths.size() - 2] : 0.0);
  r.optimizer_start = r.total - lengths.back();
  r.backward_end = r.optimizer_start;
  return r;
}

IterationResult evaluate_sharded_closed_form(const ShardedIterationPlan& plan, const ShardCollectiveTimeFn& time) {
  std::vector<double> lengths;
  for (const auto& prog : plan.programs) lengths.push_back(program_seconds(schedule_program(prog, time)));
  return sharded_result(plan, lengths, "closed form");
}

Algorithm sharded_algorithm(CollectiveOp op) {
  return op == CollectiveOp::AllToAll ? Algorithm::Hierarchical : Algorithm::Auto;
}

ShardCollectiveTimeFn sharded_collective_time(const ClusterSpec& c) {
  return [=](CollectiveOp op, double bytes, const ShardCommGroup& g) {
    const NcclShape shape = group_shape(g, c.gpus_per_node);
    if (shape.ranks <= 1) return 0.0;
    const int sharing =
        nic_sharing(group_ranks(g, 0), groups_alongside(g, c.world_size(), c.gpus_per_node), c.gpus_per_node);
    return choose_collective(op, sharded_algorithm(op), Protocol::Auto, nic_share_cluster(c, sharing), shape, bytes)
        .time;
  };
}

IterationResult sharded_closed_form_iteration(const Scenario& scenario, const ModelDesc& model,
                                              const Profile& profile) {
  const PreparedShardedIteration prepared = prepare_sharded_iteration(scenario, model, profile);
  IterationResult r = evaluate_sharded_closed_form(prepared.plan, sharded_collective_time(prepared.cluster));
  label_result(r, scenario, profile);
  return r;
}

bool is_sharded(const Scenario& scenario) {
  return scenario.workload && scenario.workload->sharding.scheme != ShardingScheme::Ddp;
}

PreparedShardedIteration prepare_sharded_iteration(const Scenario& scenario, const ModelDesc& model,
                                                   const Profile& profile) {
  PreparedIteration prepared = prepare_iteration(scenario, model, profile);
  const WorkloadSpec& w = *scenario.workload;
  const DeviceCosts costs = scenario_device_costs(scenario, profile);
  try {
    return {prepared.cluster, plan_sharded_iteration(w, prepared.cluster, model, std::move(prepared.plan),
                                                     {costs.codec_time, costs.copy_bandwidth})};
  } catch (const std::invalid_argument& e) {
    throw InputError(scenario.file, w.sharding_line, w.sharding_column, "workload.sharding", e.what());
  }
}

}  // namespace gw
