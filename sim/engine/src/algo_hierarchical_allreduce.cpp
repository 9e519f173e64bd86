// Hierarchical all-reduce: (1) ring reduce-scatter of S inside every node,
// (2) ring all-reduce of S/g among the ranks with the same local index on every
// node (g rings side by side, sharing the nodes' NICs), (3) ring all-gather of
// S inside every node. Ranks are grouped by node in the order they appear;
// every node must hold the same number g of participating ranks.
// Closed form: collective::hierarchical_allreduce_time().
#include <span>

#include "collective.hpp"

namespace gw::engine::detail {
namespace {

void schedule(const ScheduleInput& in, const EmitPhase& emit) {
  const auto [intra, inter] = node_groups(in, "hierarchical all-reduce");
  const int g = static_cast<int>(intra.front().size()), nodes = static_cast<int>(intra.size());

  emit_ring_steps(intra, g - 1, in.bytes / g, in.granularity, emit, true);
  emit_ring_steps(inter, 2 * (nodes - 1), in.bytes / g / nodes, in.granularity, emit, true);
  emit_ring_steps(intra, g - 1, in.bytes / g, in.granularity, emit, true);
}

}  // namespace

std::span<const AlgorithmDescriptor> algo_hierarchical_allreduce() {
  static constexpr AlgorithmDescriptor kDescriptors[] = {
      {CollectiveOp::AllReduce, Algorithm::Hierarchical, &schedule},
  };
  return kDescriptors;
}

}  // namespace gw::engine::detail
