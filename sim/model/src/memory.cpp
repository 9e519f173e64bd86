#include "gradwire/model/memory.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "gradwire/model/catalog.hpp"
#include "gradwire/model/scenario.hpp"
#include "gradwire/model/sharding.hpp"
#include "gradwire/core/units.hpp"

namespace gw {

CompressorMemory compressor_memory(const IterationPlan& plan) {
  CompressorMemory m;
  m.error_feedback = plan.error_feedback_bytes;
  m.state = plan.state_bytes;
  for (const auto& bucket : plan.comm) {
    for (const auto& s : bucket.steps) {
      if (s.kind == CommStep::Kind::Collective && s.op == CommOp::AllGather)
        m.gather_buffer = std::max(m.gather_buffer, s.bytes);
    }
  }
  return m;
}

CompressorMemory compressor_memory(const WorkloadSpec& w, const ClusterSpec& c, const ModelDesc& m, const Profile& p) {
  return compressor_memory(plan_iteration(w, c, m, device_costs(p, w.precision, w.compute_precision)));
}

CompressorMemory compressor_memory(const Scenario& s, const ModelDesc& m, const Profile& p) {
  if (!s.workload) throw std::invalid_argument("the scenario has no workload");
  return compressor_memory(plan_iteration(*s.workload, s.cluster, m, scenario_device_costs(s, p)));
}

double gpu_capacity(const ClusterSpec& c, const Profile& p) {
  const InstanceType* type = c.instance ? default_catalog().find(*c.instance) : nullptr;
  return type != nullptr ? type->gpu_memory : p.memory_bytes;
}

MemoryBreakdown scenario_memory(const Scenario& s, const ModelDesc& m, const Profile& p, const MemoryOptions& o) {
  if (!s.workload) throw std::invalid_argument("the scenario has no workload");
  const WorkloadSpec& w = *s.workload;
  return workload_memory(m, w, {s.cluster.world_size(), s.cluster.gpus_per_node}, compressor_memory(s, m, p),
                         gpu_capacity(s.cluster, p), o);
}

double activation_bytes_per_sample(const ModelDesc& model, const WorkloadSpec& w) {
  if (model.activation_dtype.empty()) return model.activation_bytes_per_sample;
  const double e =
      w.compute_precision.empty() ? bytes_per_element(w.precision) : activation_element_bytes(w.compute_precision);
  return model.activation_bytes_per_sample * e / static_cast<double>(dtype_bytes(model.activation_dtype));
}

int optimizer_state_count(const std::string& kind) {
  if (kind == "sgd") return 0;
  if (kind == "momentum" || kind == "lars") return 1;
  if (kind == "adam" || kind == "adamw" || kind == "lamb") return 2;
  throw std::invalid_argument("unknown optimizer '" + kind + "'");
}

MemoryBreakdown memory_per_gpu(const ModelDesc& model, const WorkloadSpec& w, const CompressorMemory& c,
                               double capacity, const MemoryOptions& o) {
  const double p = static_cast<double>(model.parameters);
  const double e = bytes_per_element(w.precision);
  MemoryBreakdown m;
  m.parameters = p * o.master_bytes;
  m.gradients = p * e;
  m.optimizer_states = p * optimizer_state_count(w.optimizer.kind) * o.state_bytes;
  m.error_feedback = c.error_feedback;
  m.buckets = p * e;
  m.compressor_state = c.state;
  m.gather_buffer = c.gather_buffer;
  m.activations = activation_bytes_per_sample(model, w) * w.micro_batch;
  m.reserve = o.reserve;
  m.total = m.parameters + m.gradients + m.optimizer_states + m.error_feedback + m.buckets + m.compressor_state +
            m.gather_buffer + m.activations + m.reserve;
  m.capacity = capacity;
  return m;
}

FitChoice smallest_fitting_accumulation(const ModelDesc& model, WorkloadSpec w, const CompressorMemory& c,
                                        double capacity, long long global_batch, int world, const MemoryOptions& o,
                                        int gpus_per_node) {
  FitChoice f;
  if (world < 1 || global_batch < 1) throw std::invalid_argument("global batch and world size must be positive");
  if (global_batch % world != 0) {
    f.reason =
        "global batch " + std::to_string(global_batch) + " is not a multiple of the " + std::to_string(world) + " GPUs";
    return f;
  }
  const long long per_gpu = global_batch / world;
  // Every split per_gpu = micro_batch * k, smallest k first, within the
  // scenario's limits on both (2^20); the divisors come in pairs (d, per_gpu/d)
  // with d <= sqrt(per_gpu), so this is O(sqrt(global_batch)), not O(it).
  std::vector<long long> ks;
  for (long long d = 1; d * d <= per_gpu; ++d) {
    if (per_gpu % d != 0) continue;
    ks.push_back(d);
    if (d != per_gpu / d) ks.push_back(per_gpu / d);
  }
  std::sort(ks.begin(), ks.end());
  bool tried = false;
  for (long long k : ks) {
    if (per_gpu / k > kMaxMicroBatch) continue;  // micro-batch above the limit
    if (k > kMaxAccumulation) break;
    tried = true;
    w.micro_batch = static_cast<int>(per_gpu / k);
    w.accumulation = static_cast<int>(k);
    auto m = workload_memory(model, w, {world, gpus_per_node > 0 ? gpus_per_node : world}, c, capacity, o);
    if (m.fits()) {
      f.found = true;
      f.refused_micro_batch = f.micro_batch;
      f.refused_accumulation = f.accumulation;
      f.refused = f.memory;  // the previous split, which did not fit
      f.micro_batch = w.micro_batch;
      f.accumulation = w.accumulation;
      f.memory = m;
      return f;
    }
    f.micro_batch = w.micro_batch;
    f.accumulation = w.accumulation;
    f.memory = m;
  }
  if (!tried || f.micro_batch != 1) {
    f.reason = "global batch " + std::to_string(global_batch) + " over " + std::to_string(world) +
               " GPUs has no split into micro_batch x accumulation with both at most " +
               std::to_string(kMaxMicroBatch) + (tried ? " that fits in memory" : "");
    return f;
  }
  f.reason = "even micro_batch 1 needs " + units::format_size(f.memory.total) + " per GPU, more than the " +
             units::format_size(capacity) + " available";
  return f;
}

namespace {

std::string needs(const MemoryBreakdown& m) {
  return units::format_size(m.total) + " per GPU, " + units::format_size(m.capacity) + " available";
}

/// G = micro_batch x k x N with one of micro_batch or k given.
void split_as_given(const WorkloadSpec& w, int world, BatchSplit& b) {
  const long long g = b.global_batch;
  const std::string gs = std::to_string(g), ws = std::to_string(world);
  const int given = w.accumulation_given ? w.accumulation : w.micro_batch;
  const char* what = w.accumulation_given ? "accumulation" : "micro_batch";
  const long long split = static_cast<long long>(world) * given;
  if (g % split != 0) {
    b.reason =
        "training.global_batch " + gs + " is not a multiple of " + ws + " GPUs x " + what + " " + std::to_string(given);
    return;
  }
  const long long other = g / split;
  if (other > (w.accumulation_given ? kMaxMicroBatch : kMaxAccumulation)) {
    b.reason = "training.global_batch " + gs + " over " + ws + " GPUs x " + what + " " + std::to_string(given) +
               " leaves " + std::to_string(other) + ", above the limit";
    return;
  }
  b.micro_batch = w.accumulation_given ? static_cast<int>(other) : w.micro_batch;
  b.accumulation = w.accumulation_given ? w.accumulation : static_cast<int>(other);
  if (w.accumulation_given && w.micro_batch_given && w.micro_batch != b.micro_batch) {
    b.reason = "workload.micro_batch " + std::to_string(w.micro_batch) + " x accumulation " +
               std::to_string(w.accumulation) + " x " + ws + " GPUs is not training.global_batch " + gs +
               " (give micro_batch or accumulation, the other follows)";
    return;
  }
  b.found = true;
  b.how = w.accumulation_given ? "k = " + std::to_string(b.accumulation) + " as asked"
                               : "micro-batch " + std::to_string(b.micro_batch) + " as asked";
}

}  // namespace

BatchSplit resolve_global_batch(const Scenario& s, const ModelDesc& model, const CompressorMemory& c, double capacity,
                                const MemoryOptions& o) {
  BatchSplit b;
  if (!s.workload || !s.training || !s.training->global_batch) return b;
  b.fixed = true;
  b.global_batch = *s.training->global_batch;
  WorkloadSpec w = *s.workload;
  const int world = s.cluster.world_size();
  if (w.accumulation_given || w.micro_batch_given) {
    split_as_given(w, world, b);
    if (b.micro_batch > 0) {
      w.micro_batch = b.micro_batch;
      w.accumulation = b.accumulation;
      b.memory = workload_memory(model, w, {world, s.cluster.gpus_per_node}, c, capacity, o);
    }
    return b;
  }
  const FitChoice f =
      smallest_fitting_accumulation(model, w, c, capacity, b.global_batch, world, o, s.cluster.gpus_per_node);
  b.micro_batch = f.micro_batch;
  b.accumulation = f.accumulation;
  b.memory = f.memory;
  if (!f.found) {
    b.no_fit = f.micro_batch > 0;
    b.reason = f.reason;
    return b;
  }
  b.found = true;
  b.how = "k = " + std::to_string(f.accumulation) + ", the smallest that fits in memory (micro-batch " +
          std::to_string(f.micro_batch) + " needs " + needs(f.memory) + ")";
  if (f.refused_accumulation > 0) {
    b.how += ": k = " + std::to_string(f.refused_accumulation) + " (micro-batch " +
             std::to_string(f.refused_micro_batch) + ") needs " + needs(f.refused);
  }
  return b;
}

}  // namespace gw
