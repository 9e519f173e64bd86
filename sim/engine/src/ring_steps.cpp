// The ring pass shared by the ring algorithms (see collective.hpp).
#include "collective.hpp"

namespace gw::engine::detail {

void emit_ring_steps(const std::vector<std::vector<int>>& rings, int steps, double chunk,
                     Granularity granularity, const EmitPhase& emit, bool fold_latency) {
  std::size_t edges = 0;
  for (const auto& ring : rings)
    if (ring.size() >= 2) edges += ring.size();
  if (edges == 0 || steps <= 0) return;
  auto add_edges = [&](Phase& p, double bytes) {
    p.flows.reserve(edges);
    for (const auto& ring : rings) {
      const std::size_t n = ring.size();
      if (n < 2) continue;
      for (std::size_t i = 0; i < n; ++i) p.flows.push_back({ring[i], ring[(i + 1) % n], bytes});
    }
  };
  if (granularity == Granularity::PerStep) {
    for (int s = 0; s < steps; ++s) {
      Phase p;
      add_edges(p, chunk);
      emit(p);
    }
    return;
  }
  Phase p;
  add_edges(p, chunk * steps);
  p.extra_latency_steps = fold_latency ? steps - 1 : 0;
  emit(p);
}

}  // namespace gw::engine::detail
