// Ring all-gather: n-1 steps, each rank forwards one block of S/n bytes
// (S = gathered total). Aggregated: one phase, NCCL's latency applied by the
// driver. Closed form: ring_allgather_time(n, S, ab, cost, per_step).
#include <span>

#include "collective.hpp"

namespace gw::engine::detail {
namespace {

void schedule(const ScheduleInput& in, const EmitPhase& emit) {
  const int n = static_cast<int>(in.ranks.size());
  emit_ring_steps({in.ranks}, n - 1, in.bytes / n, in.granularity, emit, false);
}

}  // namespace

std::span<const AlgorithmDescriptor> algo_ring_allgather() {
  static constexpr AlgorithmDescriptor kDescriptors[] = {
      {CollectiveOp::AllGather, Algorithm::Ring, &schedule},
  };
  return kDescriptors;
}

}  // namespace gw::engine::detail
