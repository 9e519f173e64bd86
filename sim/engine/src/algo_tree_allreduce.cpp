// NCCL's tree all-reduce as NCCL builds it (collective::nccl_trees): the ranks
// of each node form a chain, the nodes a double binary tree, two trees (the
// chain mirrored in the second) each carrying S/2 in K pipeline chunks:
// reduce up the tree, then broadcast down, pipelined
// (collective::tree_allreduce_schedule gives the rounds). Ranks are grouped by
// node in the order they appear (ring order: node by node).
// PerStep: one phase per round, one message per chunk and tree edge, in
// lock-step (every round pays its worst route latency: the upper bound).
// Aggregated (NCCL's pipelining: the chunks overlap, and NCCL's tree latency,
// which the driver applies, stands for the pipeline's depth, as in NCCL's
// tuning model): one flow per tree edge and direction, all at once, each
// carrying its tree's S/2; no latency steps.
// Closed form: collective::tree_allreduce_time(node_sizes, S, links, cost, per_step).
#include <span>

#include "collective.hpp"
#include "gradwire/model/closed_form.hpp"
#include "gradwire/model/collective_model.hpp"

namespace gw::engine::detail {
namespace {

void schedule(const ScheduleInput& in, const EmitPhase& emit) {
  const int n = static_cast<int>(in.ranks.size());
  if (n < 2) return;
  std::vector<int> sizes, r;  // ranks per node; the trees' positions -> ranks
  for (const auto& node : ranks_by_node(in)) {
    sizes.push_back(static_cast<int>(node.size()));
    r.insert(r.end(), node.begin(), node.end());
  }
  const auto trees = collective::nccl_trees(sizes);
  const auto s = collective::tree_allreduce_schedule(sizes, in.bytes, tree_links(*in.cluster));
  const double chunk = in.bytes / 2 / s.chunks;
  const int k = s.chunks;
  const int h = s.height;
  if (in.granularity == Granularity::PerStep) {
    for (int round = 0; round < s.rounds; ++round) {
      Phase p;
      for (const auto& t : trees) {
        for (int v = 0; v < n; ++v) {
          if (t.parent[v] < 0) continue;
          const int d = t.depth[v];
          const int up = round - (h - d);  // chunk going up this round
          if (up >= 0 && up < k) p.flows.push_back({r[v], r[t.parent[v]], chunk});
          const int down = round - (h + d - 1);  // chunk coming down this round
          if (down >= 0 && down < k) p.flows.push_back({r[t.parent[v]], r[v], chunk});
        }
      }
      emit(p);
    }
    return;
  }
  const double per_edge = in.bytes / 2;  // every chunk of one tree, at once
  Phase p;
  p.flows.reserve(4 * static_cast<std::size_t>(n));
  for (const auto& t : trees) {
    for (int v = 0; v < n; ++v) {
      if (t.parent[v] < 0) continue;
      p.flows.push_back({r[v], r[t.parent[v]], per_edge});
      p.flows.push_back({r[t.parent[v]], r[v], per_edge});
    }
  }
  emit(p);
}

}  // namespace

std::span<const AlgorithmDescriptor> algo_tree_allreduce() {
  static constexpr AlgorithmDescriptor kDescriptors[] = {
      {CollectiveOp::AllReduce, Algorithm::Tree, &schedule},
  };
  return kDescriptors;
}

}  // namespace gw::engine::detail
