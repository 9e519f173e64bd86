// Units, activation checkpointing and the memory of one GPU under a sharding
// scheme (gradwire/model/sharding.hpp; docs/model.md, "Sharded data
// parallelism"). The per-parameter terms start from memory_per_gpu's DDP
// breakdown and divide what each ZeRO stage shards.
#include <algorithm>
#include <cctype>
#include <map>
#include <stdexcept>
#include <string>

#include "gradwire/model/sharded_wire.hpp"
#include "gradwire/model/sharding.hpp"

namespace gw {

namespace {

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

/// "model.layers.7.mlp.up_proj.weight" -> "model.layers.7" (a block);
/// "lm_head.weight" -> "lm_head"; "scale" -> "scale".
std::string unit_key(const std::string& name, bool& repeated) {
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = name.find('.', start);
    const std::string part = name.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (all_digits(part)) {
      repeated = true;
      return name.substr(0, dot == std::string::npos ? name.size() : dot);
    }
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  repeated = false;
  const std::size_t last = name.rfind('.');
  return last == std::string::npos ? name : name.substr(0, last);
}

bool sixteen_bit(const WorkloadSpec& w, const MemoryOptions& o) {
  return bytes_per_element(w.precision) < o.master_bytes;
}

/// ZeRO stage of a scheme: 1 shards optimizer states (and master weights),
/// 2 also gradients, 3 also parameters.
int zero_stage(const ShardingSpec& s) {
  if (s.scheme == ShardingScheme::Zero1) return 1;
  if (s.scheme == ShardingScheme::Zero2) return 2;
  return 3;
}

/// The model states: 2 + 2 + K bytes per parameter in 16-bit training (the
/// working copy, gradients, K = fp32 master + optimizer states), fp32
/// parameters + gradients + states in fp32 training, divided by stage.
void model_states(const MemoryBreakdown& base, const WorkloadSpec& w, const ShardingSpec& s, double d,
                  const MemoryOptions& o, double parameters, ShardedMemory& m) {
  const bool half = sixteen_bit(w, o);
  const double working = half ? parameters * bytes_per_element(w.precision) : base.parameters;
  const int stage = zero_stage(s);
  const bool sharded_at_rest = stage == 3 || s.framework != ShardingFramework::DeepSpeed;
  m.parameters = sharded_at_rest ? working / d : working;
  m.master = half ? base.parameters / d : 0;
  m.gradients = stage >= 2 ? base.gradients / d : base.gradients;
  m.optimizer_states = base.optimizer_states / d;
}

/// Unsharded parameters in flight (the unit computing and `prefetch` ahead),
/// all of them when kept after forward, 1/R of them when partly resharded,
/// and the unsharded gradient of the unit being reduced, in the formats of
/// sharded_wire.hpp (fp8 weights under float8_all_gather); `wire`: the
/// compressed receive buffers of the units in flight and of qgZ's reduction.
double unit_buffers(const ModelDesc& model, const WorkloadSpec& w, const ShardingSpec& s, const ShardTopology& t,
                    int degree, double& wire) {
  ShardUnit largest;
  for (const auto& u : shard_units(model))
    if (u.parameters > largest.parameters) largest = u;
  const ShardWireFormat f = wire_format(s, bytes_per_element(w.precision), w.precision == Precision::BF16);
  const UnitElements unit = unit_elements(model, largest, t.world);
  const GatherWire g = gather_wire(f, unit, degree, {});
  UnitElements everything = model_elements(model, t.world);
  everything.all = static_cast<double>(model.parameters);  // as the model file states it
  const double all = gather_wire(f, everything, degree, {}).unsharded_bytes;
  const double gradient = static_cast<double>(largest.parameters) * f.reduce_bytes;
  wire = (1.0 + s.prefetch) * g.buffer_bytes + reduce_wire(f, unit, t, {}).buffer_bytes;
  if (s.reshard_after_forward == kReshardNone) return all + gradient;
  const double in_flight = (1.0 + s.prefetch) * g.unsharded_bytes;
  const double kept = s.reshard_after_forward > 0 ? all / s.reshard_after_forward : 0.0;
  return in_flight + kept + gradient;
}

bool replicated(const ShardingSpec& s) {
  return s.scheme == ShardingScheme::Zero1 ||
         (s.scheme == ShardingScheme::Zero2 && s.framework == ShardingFramework::DeepSpeed);
}

}  // namespace

std::vector<ShardUnit> shard_units(const ModelDesc& model) {
  std::vector<ShardUnit> units;
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < model.tensors.size(); ++i) {
    bool repeated = false;
    const std::string key = unit_key(model.tensors[i].name, repeated);
    auto [it, fresh] = index.emplace(key, units.size());
    if (fresh) units.push_back({key, 0, {}, repeated});
    ShardUnit& u = units[it->second];
    u.parameters += model.tensors[i].numel;
    u.tensors.push_back(static_cast<int>(i));
  }
  return units;
}

BlockShape block_shape(const ModelDesc& model) {
  BlockShape b;
  for (const auto& u : shard_units(model)) {
    if (!u.repeated) continue;
    ++b.layers;
    if (b.layers > 1) continue;
    for (int i : u.tensors) {
      const auto& t = model.tensors[static_cast<std::size_t>(i)];
      if (t.shape.size() == 1 && (b.hidden == 0 || t.numel < b.hidden)) b.hidden = t.numel;
    }
  }
  if (b.hidden == 0) b.layers = 0;
  return b;
}

double checkpointed_activation_bytes(const ModelDesc& model, const WorkloadSpec& w, ActivationCheckpointing ac,
                                     int heads) {
  const double a = activation_bytes_per_sample(model, w);
  if (ac == ActivationCheckpointing::None) return a;
  const BlockShape b = block_shape(model);
  if (b.layers == 0 || model.sequence_length == 0)
    throw std::invalid_argument("activation checkpointing needs a sequence model with numbered blocks; " + model.name +
                                " has none");
  const double s = static_cast<double>(model.sequence_length), h = static_cast<double>(b.hidden);
  if (ac == ActivationCheckpointing::Full) {
    const double e =
        w.compute_precision.empty() ? bytes_per_element(w.precision) : activation_element_bytes(w.compute_precision);
    return b.layers * s * h * e + a / b.layers;
  }
  if (heads < 1) throw std::invalid_argument("selective checkpointing needs the model's attention heads");
  return a * 34.0 / (34.0 + 5.0 * heads * s / h);
}

double recompute_flops_per_sample(const ModelDesc& model, ActivationCheckpointing ac) {
  if (ac == ActivationCheckpointing::None) return 0;
  if (ac == ActivationCheckpointing::Full) return model.forward_flops_per_sample;
  const BlockShape b = block_shape(model);
  const double s = static_cast<double>(model.sequence_length);
  return 4.0 * s * s * static_cast<double>(b.hidden) * b.layers;
}

ShardedMemory sharded_memory(const ModelDesc& model, const WorkloadSpec& w, const ShardingSpec& spec,
                             const ShardTopology& t, const CompressorMemory& c, double capacity,
                             ActivationCheckpointing ac, int heads, const MemoryOptions& o) {
  const MemoryBreakdown base = memory_per_gpu(model, w, c, capacity, o);
  ShardedMemory m;
  m.capacity = capacity;
  m.reserve = base.reserve;
  m.activations = checkpointed_activation_bytes(model, w, ac, heads) * w.micro_batch;
  if (spec.scheme == ShardingScheme::Ddp) {  // today's model, as is
    m.parameters = base.parameters;
    m.gradients = base.gradients;
    m.optimizer_states = base.optimizer_states;
    m.other = base.error_feedback + base.buckets + base.compressor_state + base.gather_buffer;
    m.total = base.total - base.activations + m.activations;
    return m;
  }
  const ShardingSpec s = effective_spec(spec, t);
  const double d = shard_degree(s, t);
  const double p = static_cast<double>(model.parameters);
  model_states(base, w, s, d, o, p, m);
  if (!replicated(s)) m.unit_buffers = unit_buffers(model, w, s, t, static_cast<int>(d), m.wire_buffers);
  // Full unsharded gradients between micro-steps when sharded gradients are
  // not reduced until the last one (FSDP1 no_sync, FSDP2 without sync).
  if (s.gradient_sync == GradientSync::LastMicroStep && w.accumulation > 1 && zero_stage(s) >= 2)
    m.accumulated_gradients = p * bytes_per_element(w.precision);
  m.other = base.error_feedback + base.compressor_state + base.gather_buffer;
  m.total = m.model_states() + m.unit_buffers + m.wire_buffers + m.accumulated_gradients + m.activations + m.other +
            m.reserve;
  return m;
}

MemoryBreakdown workload_memory(const ModelDesc& model, const WorkloadSpec& w, const ShardTopology& t,
                                const CompressorMemory& c, double capacity, const MemoryOptions& o) {
  MemoryBreakdown b = memory_per_gpu(model, w, c, capacity, o);
  if (w.sharding.scheme == ShardingScheme::Ddp && w.activation_checkpointing == ActivationCheckpointing::None) return b;
  const ShardedMemory m = sharded_memory(model, w, w.sharding, t, c, capacity, w.activation_checkpointing, 0, o);
  if (w.sharding.scheme != ShardingScheme::Ddp) {
    b.parameters = m.parameters + m.master;
    b.gradients = m.gradients + m.accumulated_gradients;
    b.optimizer_states = m.optimizer_states;
    b.buckets = 0;
    b.gather_buffer = c.gather_buffer + m.unit_buffers + m.wire_buffers;
  }
  b.activations = m.activations;
  b.total = m.total;
  return b;
}

std::vector<SchemeFit> scheme_candidates(const ModelDesc& model, const WorkloadSpec& w, const ShardTopology& t,
                                         const CompressorMemory& c, double capacity, const MemoryOptions& o) {
  std::vector<ShardingScheme> schemes{ShardingScheme::Ddp, ShardingScheme::Zero1, ShardingScheme::Zero2,
                                      ShardingScheme::Zero3};
  if (t.world > t.gpus_per_node) {
    schemes.push_back(ShardingScheme::Hsdp);
    schemes.push_back(ShardingScheme::ZeroPP);
  }
  std::vector<ActivationCheckpointing> modes{ActivationCheckpointing::None};
  if (block_shape(model).layers > 0 && model.sequence_length > 0) modes.push_back(ActivationCheckpointing::Full);
  std::vector<SchemeFit> fits;
  for (ShardingScheme scheme : schemes) {
    const ShardingSpec s = sharding_defaults(scheme);
    for (ActivationCheckpointing ac : modes)
      fits.push_back({s, ac, sharded_memory(model, w, s, t, c, capacity, ac, 0, o)});
  }
  return fits;
}

}  // namespace gw
