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

// SimGrid 3.32 unregisters a finished activity from its actor's list by a
// linear search, so one actor waiting on F flows costs O(F^2): 3.3 s for the
// 16,384 flows of one ring at 16,384 GPUs. Phases with more flows than this
// are started by helper actors (all at the same simulated instant), each
// owning at most this many flows; the driver joins them.
constexpr std::size_t kFlowsPerActor = 256;

void run_flows(const std::vector<s4u::Host*>& hosts, const std::vector<detail::Flow>& flows,
               std::size_t begin, std::size_t end) {
  std::vector<s4u::CommPtr> comms;
  comms.reserve(end - begin);
  for (std::size_t i = begin; i < end; ++i) {
    const auto& f = flows[i];
    comms.push_back(s4u::Comm::sendto_async(hosts[f.src], hosts[f.dst],
                                            static_cast<std::uint64_t>(std::llround(f.bytes))));
  }
  s4u::Comm::wait_all(comms);
}

}  // namespace

std::string to_string(Algorithm a) {
  switch (a) {
    case Algorithm::Ring: return "ring";
    case Algorithm::Tree: return "tree";
    case Algorithm::Hierarchical: return "hierarchical";
    case Algorithm::Direct: return "direct";
  }
  return "?";
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
  algo.schedule(in, [&](detail::Phase& phase) {
    const auto& flows = phase.flows;
    if (flows.size() <= kFlowsPerActor) {
      run_flows(hosts, flows, 0, flows.size());
    } else {
      std::vector<s4u::ActorPtr> helpers;
      helpers.reserve(flows.size() / kFlowsPerActor + 1);
      for (std::size_t b = 0; b < flows.size(); b += kFlowsPerActor) {
        const std::size_t e = std::min(b + kFlowsPerActor, flows.size());
        helpers.push_back(s4u::Actor::create("flows", s4u::this_actor::get_host(),
                                             [&hosts, &flows, b, e] { run_flows(hosts, flows, b, e); }));
      }
      for (auto& h : helpers) h->join();
    }
    if (phase.extra_latency_steps > 0) {
      double alpha = 0;
      for (const auto& f : phase.flows) alpha = std::max(alpha, route(f.src, f.dst).first);
      sleep_for(phase.extra_latency_steps * alpha);
    }
  });
  return now() - start;
}

}  // namespace gw::engine
