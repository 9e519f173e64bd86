// The one driver of every collective algorithm: looks the algorithm up, lets it
// emit its phases and runs each phase as simulated flows from the calling
// actor (see collective.hpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "collective.hpp"
#include "simulation_impl.hpp"

namespace gw::engine {
namespace s4u = simgrid::s4u;

namespace {

constexpr const detail::AlgorithmDescriptor* kAlgorithms[] = {
    &detail::kRingAllReduce,     &detail::kRingAllGather,      &detail::kRingReduceScatter,
    &detail::kTreeAllReduce,     &detail::kHierarchicalAllReduce,
    &detail::kPipelineBroadcast, &detail::kDirectAllToAll,
};

const detail::AlgorithmDescriptor& find_algorithm(CollectiveOp op, Algorithm a) {
  for (const auto* d : kAlgorithms)
    if (d->op == op && d->algorithm == a) return *d;
  throw std::invalid_argument("no " + to_string(a) + " algorithm for " + to_string(op) +
                              " (available: ring for allreduce, allgather, reducescatter and "
                              "broadcast; tree and hierarchical for allreduce; direct for "
                              "alltoall)");
}

}  // namespace

std::string to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::AllReduce: return "allreduce";
    case CollectiveOp::AllGather: return "allgather";
    case CollectiveOp::ReduceScatter: return "reducescatter";
    case CollectiveOp::Broadcast: return "broadcast";
    case CollectiveOp::AllToAll: return "alltoall";
  }
  return "?";
}

std::string to_string(Algorithm a) {
  switch (a) {
    case Algorithm::Ring: return "ring";
    case Algorithm::Tree: return "tree";
    case Algorithm::Hierarchical: return "hierarchical";
    case Algorithm::Direct: return "direct";
  }
  return "?";
}

CollectiveOp parse_op(const std::string& s) {
  for (auto op : {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter,
                  CollectiveOp::Broadcast, CollectiveOp::AllToAll})
    if (s == to_string(op)) return op;
  throw std::invalid_argument("unknown collective '" + s +
                              "' (allreduce, allgather, reducescatter, broadcast, alltoall)");
}

Algorithm parse_algorithm(const std::string& s) {
  for (auto a : {Algorithm::Ring, Algorithm::Tree, Algorithm::Hierarchical, Algorithm::Direct})
    if (s == to_string(a)) return a;
  throw std::invalid_argument("unknown algorithm '" + s + "' (ring, tree, hierarchical, direct)");
}

double Simulation::run_collective(const CollectiveRequest& request) {
  const auto& algo = find_algorithm(request.op, request.algorithm);
  if (!(std::isfinite(request.bytes) && request.bytes >= 0))
    throw std::invalid_argument("collective size must be a finite number of bytes >= 0");
  detail::ScheduleInput in;
  in.cluster = &impl_->cluster;
  in.bytes = request.bytes;
  in.granularity = request.granularity;
  if (request.ranks.empty()) {
    in.ranks.resize(impl_->hosts.size());
    for (std::size_t i = 0; i < in.ranks.size(); ++i) in.ranks[i] = static_cast<int>(i);
  } else {
    in.ranks = request.ranks;
    std::vector<bool> seen(impl_->hosts.size());
    for (int r : in.ranks) {
      if (r < 0 || r >= world_size())
        throw std::invalid_argument("collective rank " + std::to_string(r) + " out of range");
      if (seen[r]) throw std::invalid_argument("collective rank " + std::to_string(r) + " twice");
      seen[r] = true;
    }
  }
  const double start = now();
  const auto& hosts = impl_->hosts;
  std::vector<s4u::CommPtr> comms;
  algo.schedule(in, [&](detail::Phase& phase) {
    comms.clear();
    comms.reserve(phase.flows.size());
    for (const auto& f : phase.flows)
      comms.push_back(s4u::Comm::sendto_async(hosts[f.src], hosts[f.dst],
                                              static_cast<std::uint64_t>(std::llround(f.bytes))));
    s4u::Comm::wait_all(comms);
    comms.clear();
    if (phase.extra_latency_steps > 0) {
      double alpha = 0;
      for (const auto& f : phase.flows) alpha = std::max(alpha, route(f.src, f.dst).first);
      sleep_for(phase.extra_latency_steps * alpha);
    }
  });
  return now() - start;
}

}  // namespace gw::engine
