// NVLS+tree all-reduce (NCCL's NVLS_TREE) over NVSwitch nodes: inside each
// node NVLS (as algo_nvls_allreduce: every GPU writes S to the switch and
// reads the result back, the flows GPU i -> GPU i+1 of the node, S on every
// GPU's link each way); between nodes NCCL's double binary tree over the
// nodes (collective::double_binary_tree), each tree carrying S/2, split over
// the g rails: GPU j of a node exchanges S/(2g) per tree edge and direction
// with GPU j of its tree neighbours (each rail its own NIC share, as NCCL's
// channels each use one NIC). Pipelined as the tree's Aggregated schedule:
// every flow at once in one phase, at both granularities; NCCL's NVLS_TREE
// latency (the driver applies it) stands for the pipeline's depth. Every flow
// carries c = S/(2g) (NVLS's S as 2g flows of c). The phase is lockstep
// (Phase::lockstep): NCCL's flow control keeps the NVLS part and the tree in
// step, so every flow moves at the most loaded link's pace and the time is
// that link's bytes over its bandwidth, the parts overlapping. The driver
// divides the NVLS flows by NcclCost::efficiency and the flows between nodes
// by efficiency x inter_node_ratio: the trees are plain network traffic,
// without NVLS's ratio. (Max-min
// sharing alone weights a flow by its route latency under CM02: on a GPU link
// both parts cross, the 2 us NVLS flows took 7x the share of the 14 us
// inter-node ones, which then finished alone at the NIC's rate: 75.2 ms for
// 53.7 ms at 8 GiB on 2 x 8 H100, 8 x 200 Gb/s; issue 31.) With D the most
// tree edges at one node (collective::nvlstree_node_degree), each direction:
//   max(L, alpha_inter) + R + max((2g / e + D / e') c / B_gpu, D c / (B_conn e'), g D c / (B_node e'))
// Closed form: collective::nvlstree_allreduce_time(nodes, g, S, tree_links, cost).
#include <span>
#include <stdexcept>

#include "collective.hpp"
#include "gradwire/model/collective_model.hpp"

namespace gw::engine::detail {
namespace {

// The ranks by node, every node holding the same number of them.
std::vector<std::vector<int>> uniform_nodes(const ScheduleInput& in) {
  auto nodes = ranks_by_node(in);
  for (const auto& node : nodes)
    if (node.size() != nodes.front().size())
      throw std::invalid_argument("nvlstree all-reduce needs the same number of ranks on every node");
  return nodes;
}

void schedule(const ScheduleInput& in, const EmitPhase& emit) {
  if (in.ranks.size() < 2) return;
  const auto nodes = uniform_nodes(in);
  const int m = static_cast<int>(nodes.size());
  const int g = static_cast<int>(nodes.front().size());
  const double c = in.bytes / (2.0 * g);
  Phase p;
  p.lockstep = true;
  if (g > 1)
    for (const auto& node : nodes)
      for (int i = 0; i < g; ++i)
        for (int k = 0; k < 2 * g; ++k) p.flows.push_back({node[i], node[(i + 1) % g], c});
  if (m > 1)
    for (const auto& t : collective::double_binary_tree(m))
      for (int v = 0; v < m; ++v) {
        if (t.parent[v] < 0) continue;
        for (int j = 0; j < g; ++j) {
          p.flows.push_back({nodes[v][j], nodes[t.parent[v]][j], c});
          p.flows.push_back({nodes[t.parent[v]][j], nodes[v][j], c});
        }
      }
  emit(p);
}

}  // namespace

std::span<const AlgorithmDescriptor> algo_nvlstree_allreduce() {
  static constexpr AlgorithmDescriptor kDescriptors[] = {
      {CollectiveOp::AllReduce, Algorithm::NvlsTree, &schedule},
  };
  return kDescriptors;
}

}  // namespace gw::engine::detail
