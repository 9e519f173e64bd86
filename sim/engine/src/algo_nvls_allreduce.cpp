// NVLS all-reduce (NVLink SHARP) on one NVSwitch node: every GPU writes its
// buffer to the switch, which reduces it and multicasts the result back, so
// each GPU's link carries S up and S down. The switch is not a host of the
// platform: the flows go GPU i -> GPU i+1 (ring order), which puts S on every
// GPU's link in each direction. One phase at both granularities; NCCL's NVLS
// latency and its 5/6 algorithm-bandwidth ratio are applied by the driver.
// Closed form: collective::nvls_allreduce_time().
#include <stdexcept>

#include "collective.hpp"

namespace gw::engine::detail {
namespace {

void schedule(const ScheduleInput& in, const EmitPhase& emit) {
  const auto& r = in.ranks;
  const int n = static_cast<int>(r.size());
  if (n < 2) return;
  const int gpn = in.cluster->gpus_per_node;
  for (int rank : r)
    if (rank / gpn != r.front() / gpn)
      throw std::invalid_argument("nvls all-reduce runs on the GPUs of one node");
  Phase p;
  p.flows.reserve(n);
  for (int i = 0; i < n; ++i) p.flows.push_back({r[i], r[(i + 1) % n], in.bytes});
  emit(p);
}

}  // namespace

const AlgorithmDescriptor kNvlsAllReduce{CollectiveOp::AllReduce, Algorithm::NVLS, &schedule};

}  // namespace gw::engine::detail
