// The sharded schedule (gradwire/model/sharded_iteration.hpp; docs/model.md,
// section 7c, "The sharded schedule"): programs per distinct micro-step and
// their closed-form evaluation.
#include "gradwire/model/sharded_iteration.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "gradwire/core/error.hpp"
#include "gradwire/model/closed_form.hpp"

namespace gw {
namespace {

/// What gradwire simulates of the schemes: the rest is refused in one line.
void check_simulated(const WorkloadSpec& w, const ShardingSpec& s) {
  const std::string later =
      " (its traffic and memory are in docs/model.md, section 7c; simulated: zero1, zero2, zero3, zeropp with "
      "hpz: false)";
  if (s.scheme == ShardingScheme::Hsdp)
    throw std::invalid_argument("scheme " + to_string(s.scheme) + " is not simulated yet" + later);
  if (s.scheme == ShardingScheme::ZeroPP && s.reshard_after_forward > 0)
    throw std::invalid_argument("zeropp's hpz (the secondary shard in the node) is not simulated yet" + later);
  if (s.reshard_after_forward > 0)
    throw std::invalid_argument("reshard_after_forward as a number of ranks is not simulated yet" + later);
  // No framework compresses sharded gradients the way `compression:` does
  // DDP's buckets; the compressed formats they have are sharding's own keys.
  if (w.compression.kind != "none")
    throw std::invalid_argument("compression " + w.compression.kind +
                                " with sharding: no framework runs it; the compressed sharded formats are "
                                "zeropp's qwz and qgz and FSDP2's float8_all_gather");
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
/// waits): slot c < U is unit c's forward, slot c >= U unit 2U - 1 - c's backward.
struct ProgramBuilder {
  const std::vector<UnitCompute>& units;
  const MicroStepPasses& m;
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
  ShardOp collective(std::string label, CollectiveOp op, double bytes, std::vector<int> after, double kernel = 0) {
    ShardOp o{true, std::move(label), 0, op, bytes, std::move(after)};
    o.kernel = kernel;
    return o;
  }
  // The all-gather of slot t (qwZ: then its scales'), after compute slot t - 1 - p.
  void issue_gather(int t) {
    if (t >= slots || !(t < n ? m.forward_gather : m.backward_gather)) return;
    const GatherWire& g = unit(t).gather;
    std::vector<int> after;
    if (t - 1 - prefetch >= 0) after.push_back(compute[static_cast<std::size_t>(t - 1 - prefetch)]);
    int last =
        push(collective("all-gather " + unit(t).name, CollectiveOp::AllGather, g.bytes, after, g.sender_seconds));
    if (g.scale_bytes > 0)
      last = push(collective("all-gather scales " + unit(t).name, CollectiveOp::AllGather, g.scale_bytes, {}));
    gather[static_cast<std::size_t>(t)] = last;
  }
  // Slot c's compute, after its all-gather (and its dequantisation, qwZ).
  void issue_compute(int c) {
    const bool backward = c >= n;
    const int g = gather[static_cast<std::size_t>(c)];
    std::vector<int> after;
    if (g >= 0) after.push_back(g);
    if (g >= 0 && unit(c).gather.receiver_seconds > 0) {
      push({false, "dequantise " + unit(c).name, unit(c).gather.receiver_seconds, CollectiveOp::AllGather, 0, after});
      after.clear();
    }
    compute[static_cast<std::size_t>(c)] =
        push({false, (backward ? "backward " : "forward ") + unit(c).name,
              backward ? unit(c).backward : unit(c).forward, CollectiveOp::AllGather, 0, after});
  }
  // Slot c's gradient reduction: a reduce-scatter, or qgZ's all-to-all and
  // the reduce-scatter of what it does not take.
  void issue_reduce(int c) {
    const ReduceWire& r = unit(c).reduce;
    const int done = compute[static_cast<std::size_t>(c)];
    if (r.all_to_all_bytes > 0)
      push(collective("all-to-all (int4) " + unit(c).name, CollectiveOp::AllToAll, r.all_to_all_bytes, {done},
                      r.seconds));
    if (r.reduce_scatter_bytes > 0)
      push(collective("reduce-scatter " + unit(c).name, CollectiveOp::ReduceScatter, r.reduce_scatter_bytes, {done}));
  }
};

ShardProgram micro_step_program(const std::vector<UnitCompute>& units, const MicroStepPasses& m, int prefetch) {
  ProgramBuilder b{units, m, prefetch};
  for (int c = 0; c < b.slots; ++c) {
    if (c == 0)
      for (int t = 0; t < prefetch; ++t) b.issue_gather(t);
    b.issue_gather(c + prefetch);
    b.issue_compute(c);
    if (c >= b.n && m.reduce) b.issue_reduce(c);
  }
  return std::move(b.p);
}

/// DeepSpeed ZeRO-1/2 keep the 16-bit parameters replicated: after the step
/// on the shard they all-gather them (stage_1_and_2.py, step).
bool gathers_after_step(const ShardingSpec& s) {
  return s.scheme == ShardingScheme::Zero1 ||
         (s.scheme == ShardingScheme::Zero2 && s.framework == ShardingFramework::DeepSpeed);
}

/// torchao's precompute_float8_dynamic_scale_for_fsdp after the optimizer
/// step: the amax of every Float8Linear weight's shard (read once), then one
/// all-reduce of the fp32 amaxes.
ShardOp float8_scales(const ModelDesc& model, int world, double element_bytes, const WireKernels& k) {
  double weights = 0;
  for (const auto& u : shard_units(model))
    for (int i : u.tensors) weights += u.repeated && model.tensors[static_cast<std::size_t>(i)].shape.size() == 2;
  ShardOp o{true, "all-reduce float8 scales", 0, CollectiveOp::AllReduce, 4.0 * weights, {0}};
  o.kernel = k.bandwidth_bound(model_elements(model, world).float8 / world * element_bytes);
  return o;
}

const char* micro_step_name(std::size_t i, std::size_t count) {
  if (i == 0) return count == 1 ? "micro-step" : "first micro-step";
  return i + 1 == count ? "last micro-step" : "middle micro-step";
}

}  // namespace

ShardedIterationPlan plan_sharded_iteration(const WorkloadSpec& w, const ClusterSpec& cluster, const ModelDesc& model,
                                            IterationPlan base, const WireKernels& kernels) {
  const ShardTopology topo{cluster.world_size(), cluster.gpus_per_node};
  const ShardingSpec spec = effective_spec(w.sharding, topo);
  check_simulated(w, spec);
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
  const auto kinds = micro_steps(spec, w.accumulation);
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    ShardProgram prog = micro_step_program(units, kinds[i].passes, spec.prefetch);
    prog.what = micro_step_name(i, kinds.size());
    prog.times = kinds[i].times;
    p.programs.push_back(std::move(prog));
  }
  // The optimizer on this GPU's shard: the whole model's step time x 1 / D.
  p.optimizer = base.optimizer / p.traffic.degree;
  ShardProgram step{"optimizer step", 1, {{false, "optimizer (shard)", p.optimizer, CollectiveOp::AllGather, 0, {}}}};
  if (gathers_after_step(spec))
    step.ops.push_back({true,
                        "all-gather parameters",
                        0,
                        CollectiveOp::AllGather,
                        static_cast<double>(model.parameters) * format.gather_bytes,
                        {0}});
  if (format.float8) step.ops.push_back(float8_scales(model, topo.world, e, kernels));
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
    ends[i] = start + (o.collective ? o.kernel + time(o.op, o.bytes) : o.seconds);
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
  const NcclShape shape = collective_shape(c, c.world_size());
  return [=](CollectiveOp op, double bytes) {
    return shape.ranks <= 1 ? 0.0 : choose_collective(op, sharded_algorithm(op), Protocol::Auto, c, shape, bytes).time;
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
