// Ring reduce-scatter: n-1 steps, each rank sends one partially reduced block
// of S/n bytes (S = input per rank). Aggregated: one phase, NCCL's latency
// applied by the driver. Closed form: ring_reducescatter_time(n, S, ab, cost, per_step).
#include <span>

#include "collective.hpp"

namespace gw::engine::detail {
namespace {

void schedule(const ScheduleInput& in, const EmitPhase& emit) {
  const int n = static_cast<int>(in.ranks.size());
  emit_ring_steps({in.ranks}, n - 1, in.bytes / n, in.granularity, emit, false);
}

}  // namespace

std::span<const AlgorithmDescriptor> algo_ring_reducescatter() {
  static constexpr AlgorithmDescriptor kDescriptors[] = {
      {CollectiveOp::ReduceScatter, Algorithm::Ring, &schedule},
  };
  return kDescriptors;
}

}  // namespace gw::engine::detail
