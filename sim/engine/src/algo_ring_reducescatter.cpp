// Ring reduce-scatter: n-1 steps, each rank sends one partially reduced block
// of S/n bytes (S = input per rank). Closed form: ring_reducescatter_time().
#include "collective.hpp"

namespace gw::engine::detail {
namespace {

void schedule(const ScheduleInput& in, const EmitPhase& emit) {
  const int n = static_cast<int>(in.ranks.size());
  emit_ring_steps({in.ranks}, n - 1, in.bytes / n, in.granularity, emit);
}

}  // namespace

const AlgorithmDescriptor kRingReduceScatter{CollectiveOp::ReduceScatter,
                                             Algorithm::Ring, &schedule};

}  // namespace gw::engine::detail
