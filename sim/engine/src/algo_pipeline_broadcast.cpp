// Pipelined (ring) broadcast: the first rank of the ring order is the root; the
// message moves down the chain of n-1 hops in K chunks (pipeline_chunks()).
// PerStep: K+n-2 rounds, hop h sends chunk t-h in round t. Aggregated: every
// hop at once in one flow of (K+n-2) chunks -- what the busiest link costs in
// the per-step schedule, pipeline fill included -- plus K+n-3 latency steps.
// Closed form (both): pipeline_broadcast_time().
#include <span>

#include "collective.hpp"

#include "gradwire/model/collective_model.hpp"

namespace gw::engine::detail {
namespace {

void schedule(const ScheduleInput& in, const EmitPhase& emit) {
  const auto& r = in.ranks;
  const int n = static_cast<int>(r.size());
  if (n < 2) return;
  const int k = collective::pipeline_chunks(in.bytes);
  const int hops = n - 1;
  if (in.granularity == Granularity::PerStep) {
    const double chunk = in.bytes / k;
    for (int t = 0; t < k + hops - 1; ++t) {
      Phase p;
      for (int h = 0; h < hops; ++h) {
        const int c = t - h;
        if (c >= 0 && c < k) p.flows.push_back({r[h], r[h + 1], chunk});
      }
      emit(p);
    }
    return;
  }
  Phase p;
  p.flows.reserve(hops);
  const double per_hop = in.bytes / k * (k + hops - 1);
  for (int h = 0; h < hops; ++h) p.flows.push_back({r[h], r[h + 1], per_hop});
  p.extra_latency_steps = k + hops - 2;
  emit(p);
}

}  // namespace

std::span<const AlgorithmDescriptor> algo_pipeline_broadcast() {
  static constexpr AlgorithmDescriptor kDescriptors[] = {
      {CollectiveOp::Broadcast, Algorithm::Ring, &schedule},
  };
  return kDescriptors;
}

}  // namespace gw::engine::detail
