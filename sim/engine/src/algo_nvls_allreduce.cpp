// NVLS all-reduce (NVLink SHARP) on one NVSwitch node: every GPU writes its
// buffer to the switch, which reduces it and multicasts the result back, so
// each GPU's link carries S up and S down. The switch is not a host of the
// platform: the flows go GPU i -> GPU i+1 (ring order), which puts S on every
// GPU's link in each direction. One phase at both granularities; NCCL's NVLS
// latency and its 5/6 algorithm-bandwidth ratio are applied by the driver.
// Closed form: collective::nvls_allreduce_time().
#include <span>
#include <stdexcept>

#include "collective.hpp"

namespace gw::engine::detail {
namespace {

// NVLS multicasts within one NVSwitch: every rank on the first rank's node.
void require_one_node(const ScheduleInput& in) {
  const int gpn = in.cluster->gpus_per_node;
  for (int rank : in.ranks)
    if (rank / gpn != in.ranks.front() / gpn)
      throw std::invalid_argument("nvls all-reduce runs on the GPUs of one node");
}

void schedule(const ScheduleInput& in, const EmitPhase& emit) {
  if (in.ranks.size() < 2) return;
  require_one_node(in);
  Phase p;
  const std::size_t count = in.ranks.size();
  p.flows.reserve(count);
  for (std::size_t i = 0; i < count; ++i) p.flows.push_back({in.ranks[i], in.ranks[(i + 1) % count], in.bytes});
  emit(p);
}

}  // namespace

std::span<const AlgorithmDescriptor> algo_nvls_allreduce() {
  static constexpr AlgorithmDescriptor kDescriptors[] = {
      {CollectiveOp::AllReduce, Algorithm::NVLS, &schedule},
  };
  return kDescriptors;
}

}  // namespace gw::engine::detail
