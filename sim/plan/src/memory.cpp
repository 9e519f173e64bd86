#include "gradwire/plan/memory.hpp"

#include <algorithm>
#include <stdexcept>

#include "gradwire/units.hpp"

namespace gw::plan {

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
  m.activations = model.activation_bytes_per_sample * w.micro_batch;
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
  for (long long k = 1; k <= per_gpu; ++k) {
    if (per_gpu % k != 0) continue;
    w.micro_batch = static_cast<int>(per_gpu / k);
    w.accumulation = static_cast<int>(k);
    auto m = memory_per_gpu(model, w, c, capacity, o);
    if (m.fits()) {
      f.found = true;
      f.micro_batch = w.micro_batch;
      f.accumulation = w.accumulation;
      f.memory = m;
      return f;
    }
    f.memory = m;
    f.micro_batch = w.micro_batch;
    f.accumulation = w.accumulation;
  }
  f.reason = "even micro_batch 1 needs " + units::format_size(f.memory.total) + " per GPU, more than the " +
             units::format_size(capacity) + " available";
  return f;
}

}  // namespace gw::plan
