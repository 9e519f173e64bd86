// Ring all-reduce: reduce-scatter then all-gather around the ring,
// 2(n-1) steps of S/n bytes per rank. Aggregated: one phase, NCCL's latency applied by the driver.
// Closed form: ring_allreduce_time(n, S, ab, cost, per_step).
#include <span>

#include "collective.hpp"

namespace gw::engine::detail {
namespace {

void schedule(const ScheduleInput& in, const EmitPhase& emit) {
  const int n = static_cast<int>(in.ranks.size());
  emit_ring_steps({in.ranks}, 2 * (n - 1), in.bytes / n, in.granularity, emit, false);
}

}  // namespace

std::span<const AlgorithmDescriptor> algo_ring_allreduce() {
  static constexpr AlgorithmDescriptor kDescriptors[] = {
      {CollectiveOp::AllReduce, Algorithm::Ring, &schedule},
  };
  return kDescriptors;
}

}  // namespace gw::engine::detail
