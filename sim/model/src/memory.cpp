#include "gradwire/model/memory.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "gradwire/model/catalog.hpp"
#include "gradwire/model/scenario.hpp"
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

CompressorMemory compressor_memory(const WorkloadSpec& w, const ClusterSpec& c, const ModelDesc& m,
                                   const Profile& p) {
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
  return memory_per_gpu(m, w, compressor_memory(s, m, p), gpu_capacity(s.cluster, p), o);
}

double activation_bytes_per_sample(const ModelDesc& model, const WorkloadSpec& w) {
  if (model.activation_dtype.empty()) return model.activation_bytes_per_sample;
  const double e = w.compute_precision.empty() ? bytes_per_element(w.precision)
                                               : activation_element_bytes(w.compute_precision);
  return model.activation_bytes_per_sample * e /
         static_cast<double>(dtype_bytes(model.activation_dtype));
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
                                        double capacity, long long global_batch, int world,
                                        const MemoryOptions& o) {
  FitChoice f;
  if (world < 1 || global_batch < 1) throw std::invalid_argument("global batch and world size must be positive");
  if (global_batch % world != 0) {
    f.reason = "global batch " + std::to_string(global_batch) + " is not a multiple of the " +
               std::to_string(world) + " GPUs";
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
    auto m = memory_per_gpu(model, w, c, capacity, o);
    f.memory = m;
    f.micro_batch = w.micro_batch;
    f.accumulation = w.accumulation;
    if (m.fits()) {
      f.found = true;
      return f;
    }
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

}  // namespace gw
