// Hierarchical all-to-all (ZeRO++ qgZ's two-stage all-to-all: DeepSpeed
// deepspeed/runtime/comm/coalesced_collectives.py, all_to_all_quant_reduce):
// (1) direct all-to-all of S inside every node (blocks S/g), (2) direct
// all-to-all of S/g among the ranks with the same local index on every node
// (g groups side by side, sharing the nodes' NICs; blocks S/(g n)). What runs
// between the two stages (qgZ's reduction of the node's slices) is not the
// collective's: the caller times it. Every node must hold the same number g
// of participating ranks. Closed form: collective::hierarchical_alltoall_time().
#include <span>

#include "collective.hpp"

namespace gw::engine::detail {
namespace {

// Direct all-to-all in each group side by side, each rank sending S/n to
// every other rank of its group (n ranks per group).
void emit_groups(const std::vector<std::vector<int>>& groups, double bytes, Granularity granularity,
                 const EmitPhase& emit) {
  const int n = static_cast<int>(groups.front().size());
  if (n < 2) return;
  const double block = bytes / n;
  auto add_step = [&](Phase& p, int k) {
    for (const auto& r : groups)
      for (int i = 0; i < n; ++i) p.flows.push_back({r[i], r[(i + k) % n], block});
  };
  if (granularity == Granularity::PerStep) {
    for (int k = 1; k < n; ++k) {
      Phase p;
      add_step(p, k);
      emit(p);
    }
    return;
  }
  Phase p;
  for (int k = 1; k < n; ++k) add_step(p, k);
  p.extra_latency_steps = n - 2;
  emit(p);
}

void schedule(const ScheduleInput& in, const EmitPhase& emit) {
  const auto [intra, inter] = node_groups(in, "hierarchical all-to-all");
  emit_groups(intra, in.bytes, in.granularity, emit);
  emit_groups(inter, in.bytes / static_cast<double>(inter.size()), in.granularity, emit);
}

}  // namespace

std::span<const AlgorithmDescriptor> algo_hierarchical_alltoall() {
  static constexpr AlgorithmDescriptor kDescriptors[] = {
      {CollectiveOp::AllToAll, Algorithm::Hierarchical, &schedule},
  };
  return kDescriptors;
}

}  // namespace gw::engine::detail
