// Direct (pairwise) all-to-all: n-1 steps; in step k rank i sends its block of
// S/n bytes to rank i+k (ring order). Aggregated: all n(n-1) blocks at once,
// n-2 latency steps added. Closed form: direct_alltoall_time().
#include <span>

#include "collective.hpp"

namespace gw::engine::detail {
namespace {

void schedule(const ScheduleInput& in, const EmitPhase& emit) {
  const auto& r = in.ranks;
  const int n = static_cast<int>(r.size());
  if (n < 2) return;
  const double block = in.bytes / n;
  if (in.granularity == Granularity::PerStep) {
    for (int k = 1; k < n; ++k) {
      Phase p;
      p.flows.reserve(n);
      for (int i = 0; i < n; ++i) p.flows.push_back({r[i], r[(i + k) % n], block});
      emit(p);
    }
    return;
  }
  Phase p;
  p.flows.reserve(static_cast<std::size_t>(n) * (n - 1));
  for (int k = 1; k < n; ++k)
    for (int i = 0; i < n; ++i) p.flows.push_back({r[i], r[(i + k) % n], block});
  p.extra_latency_steps = n - 2;
  emit(p);
}

}  // namespace

std::span<const AlgorithmDescriptor> algo_direct_alltoall() {
  static constexpr AlgorithmDescriptor kDescriptors[] = {
      {CollectiveOp::AllToAll, Algorithm::Direct, &schedule},
  };
  return kDescriptors;
}

}  // namespace gw::engine::detail
