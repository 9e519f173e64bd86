// The ring pass shared by the ring algorithms, and the ranks grouped by node
// (see collective.hpp).
#include <map>
#include <stdexcept>
#include <string>

#include "collective.hpp"

namespace gw::engine::detail {

std::vector<std::vector<int>> ranks_by_node(const ScheduleInput& in) {
  const int gpn = in.cluster->gpus_per_node;
  std::map<int, std::size_t> index;  // node -> its group
  std::vector<std::vector<int>> groups;
  for (int rank : in.ranks) {
    auto [it, fresh] = index.try_emplace(rank / gpn, groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(rank);
  }
  return groups;
}

NodeGroups node_groups(const ScheduleInput& in, const std::string& what) {
  NodeGroups out{ranks_by_node(in), {}};
  const std::size_t g = out.intra.front().size();
  for (const auto& ranks : out.intra)
    if (ranks.size() != g) throw std::invalid_argument(what + " needs the same number of ranks on every node");
  out.inter.resize(g);
  for (std::size_t l = 0; l < g; ++l)
    for (const auto& ranks : out.intra) out.inter[l].push_back(ranks[l]);
  return out;
}

void emit_ring_steps(const std::vector<std::vector<int>>& rings, int steps, double chunk, Granularity granularity,
                     const EmitPhase& emit, bool fold_latency) {
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
