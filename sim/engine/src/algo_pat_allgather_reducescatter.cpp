// PAT (NCCL's Parallel Aggregated Trees, NCCL 2.23+): all-gather and
// reduce-scatter at one GPU per node. NCCL runs a Bruck-style exchange over
// D = ceil(log2 n) dimensions: in dimension d rank r sends to r + 2^d (mod n)
// and receives from r - 2^d (proxy.cc's PAT peers), the blocks of S/n it has
// aggregated for that distance, min(2^d, n - 2^d) of them, so every rank sends
// and receives n - 1 blocks in all. All-gather walks the distances upwards
// (1, 2, 4, ...), reduce-scatter downwards (the same exchanges reversed).
// PerStep: one phase per dimension. Aggregated: NCCL pipelines the dimensions
// (its steps overlap in flight), so one phase holds every dimension's flow,
// each with its total; NCCL's PAT latency (the driver applies it) stands for
// the steps. On a switch each GPU's link carries (n-1)/n S each way:
//   max(L, w) + (n-1)/n S / (B e),  w = alpha (Aggregated), D alpha (PerStep)
// Closed form: collective::pat_time(n, S, ab, cost, per_step).
#include <span>
#include <utility>

#include "collective.hpp"
#include "gradwire/model/collective_model.hpp"

namespace gw::engine::detail {
namespace {

// The flows of dimension d: rank i -> rank i + 2^d (mod n), its blocks of S/n.
void add_dimension(const ScheduleInput& in, int d, Phase& p) {
  const int n = static_cast<int>(in.ranks.size());
  const double bytes = collective::pat_step_blocks(n, d) * in.bytes / n;
  for (int i = 0; i < n; ++i) p.flows.push_back({in.ranks[i], in.ranks[(i + (1 << d)) % n], bytes});
}

void schedule(const ScheduleInput& in, const EmitPhase& emit, bool upwards) {
  const int n = static_cast<int>(in.ranks.size());
  if (n < 2) return;
  const int steps = collective::pat_steps(n);
  Phase all;
  for (int k = 0; k < steps; ++k) {
    const int d = upwards ? k : steps - 1 - k;
    if (in.granularity == Granularity::Aggregated) {
      add_dimension(in, d, all);
      continue;
    }
    Phase p;
    add_dimension(in, d, p);
    emit(p);
  }
  if (in.granularity == Granularity::Aggregated) emit(all);
}

void allgather(const ScheduleInput& in, const EmitPhase& emit) { schedule(in, emit, true); }
void reducescatter(const ScheduleInput& in, const EmitPhase& emit) { schedule(in, emit, false); }

}  // namespace

std::span<const AlgorithmDescriptor> algo_pat_allgather_reducescatter() {
  static constexpr AlgorithmDescriptor kDescriptors[] = {
      {CollectiveOp::AllGather, Algorithm::Pat, &allgather},
      {CollectiveOp::ReduceScatter, Algorithm::Pat, &reducescatter},
  };
  return kDescriptors;
}

}  // namespace gw::engine::detail
