// NCCL-style double-binary-tree all-reduce. Two complementary binary trees over
// the ring order (collective::double_binary_tree), each carrying S/2 in K
// pipeline chunks: reduce up the tree, then broadcast down, pipelined
// (collective::tree_allreduce_schedule gives the rounds).
// PerStep: one phase per round, one message per chunk and tree edge, in
// lock-step (every round pays a route latency: the upper bound).
// Aggregated (NCCL's pipelining: the chunks' latencies overlap): one flow per
// tree edge and direction, all at once, each carrying sum_r loads[r] /
// max_load chunks, so that the busiest rank link -- max_load flows -- takes
// what it takes in the per-step rounds, pipeline fill included; no latency
// steps: the driver applies NCCL's tree latency.
// Closed form: collective::tree_allreduce_time(n, S, ab, cost, per_step).
#include "collective.hpp"

#include "gradwire/model/collective_model.hpp"

namespace gw::engine::detail {
namespace {

void schedule(const ScheduleInput& in, const EmitPhase& emit) {
  const auto& r = in.ranks;
  const int n = static_cast<int>(r.size());
  if (n < 2) return;
  const auto trees = collective::double_binary_tree(n);
  const auto s = collective::tree_allreduce_schedule(n, in.bytes);
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
          const int up = round - (h - d);        // chunk going up this round
          if (up >= 0 && up < k) p.flows.push_back({r[v], r[t.parent[v]], chunk});
          const int down = round - (h + d - 1);  // chunk coming down this round
          if (down >= 0 && down < k) p.flows.push_back({r[t.parent[v]], r[v], chunk});
        }
      }
      emit(p);
    }
    return;
  }
  const double per_edge = s.load_sum / s.max_load * chunk;
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

const AlgorithmDescriptor kTreeAllReduce{CollectiveOp::AllReduce, Algorithm::Tree,
                                         &schedule};

}  // namespace gw::engine::detail
