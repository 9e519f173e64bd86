// The one driver of every collective algorithm: looks the algorithm up (its
// schedule among engine_algorithms(), one per row of the algorithm table), lets it
// emit its phases and runs each phase as simulated flows from the calling
// actor (see collective.hpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "collective.hpp"
#include "gradwire/model/closed_form.hpp"
#include "gradwire/model/shard_groups.hpp"
#include "simulation_impl.hpp"

namespace gw::engine {
namespace s4u = simgrid::s4u;

namespace {

const detail::AlgorithmDescriptor& find_algorithm(CollectiveOp op, Algorithm a) {
  for (const auto* d : detail::engine_algorithms())
    if (d->op == op && d->algorithm == a) return *d;
  throw std::invalid_argument("no " + to_string(a) + " algorithm for " + to_string(op) +
                              " (available: " + algorithms_by_ops() + ")");
}

// The nodes the ranks span (ranks are numbered node by node).
NcclShape shape_of(const std::vector<int>& ranks, int gpus_per_node) {
  std::vector<int> nodes;
  for (int r : ranks) nodes.push_back(r / gpus_per_node);
  std::sort(nodes.begin(), nodes.end());
  return {static_cast<int>(ranks.size()), static_cast<int>(std::unique(nodes.begin(), nodes.end()) - nodes.begin())};
}

std::vector<int> checked_ranks(const std::vector<int>& requested, int world) {
  std::vector<int> ranks = requested;
  if (ranks.empty()) {
    ranks.resize(world);
    for (int i = 0; i < world; ++i) ranks[i] = i;
    return ranks;
  }
  std::vector<bool> seen(world);
  for (int r : ranks) {
    if (r < 0 || r >= world) throw std::invalid_argument("collective rank " + std::to_string(r) + " out of range");
    if (seen[r]) throw std::invalid_argument("collective rank " + std::to_string(r) + " twice");
    seen[r] = true;
  }
  return ranks;
}

// The groups beside the request's: each checked as its ranks, none sharing a rank.
std::vector<std::vector<int>> checked_alongside(const CollectiveRequest& request, const std::vector<int>& ranks,
                                                int world) {
  std::vector<int> all = ranks;
  for (const auto& g : request.alongside) {
    if (g.size() != ranks.size())
      throw std::invalid_argument("a collective group alongside has " + std::to_string(g.size()) + " ranks, not " +
                                  std::to_string(ranks.size()));
    all.insert(all.end(), g.begin(), g.end());
  }
  checked_ranks(all, world);
  return request.alongside;
}

// The phases of every group, merged phase by phase: congruent groups (one
// shape, one algorithm) emit the same phases, so phase i of all of them run
// as one.
void schedule_alongside(const detail::PreparedCollective& p, const detail::EmitPhase& emit) {
  std::vector<detail::Phase> merged;
  p.algo->schedule(p.in, [&](detail::Phase& phase) { merged.push_back(phase); });
  for (const auto& group : p.alongside) {
    detail::ScheduleInput in = p.in;
    in.ranks = group;
    std::size_t i = 0;
    p.algo->schedule(in, [&](detail::Phase& phase) {
      if (i >= merged.size()) throw std::logic_error("collective groups alongside emit different phases");
      auto& flows = merged[i++].flows;
      flows.insert(flows.end(), phase.flows.begin(), phase.flows.end());
    });
  }
  for (auto& phase : merged) emit(phase);
}

}  // namespace

detail::PreparedCollective detail::prepare_collective(const ClusterSpec& cluster, int world,
                                                      const CollectiveRequest& request) {
  if (!(std::isfinite(request.bytes) && request.bytes >= 0))
    throw std::invalid_argument("collective size must be a finite number of bytes >= 0");
  PreparedCollective p;
  p.in.cluster = &cluster;
  p.in.bytes = request.bytes;
  p.in.granularity = request.granularity;
  p.in.ranks = checked_ranks(request.ranks, world);
  p.alongside = checked_alongside(request, p.in.ranks, world);
  const NcclShape shape = shape_of(p.in.ranks, cluster.gpus_per_node);
  // The cluster as this group sees it beside the others (the closed form's view too).
  const ClusterSpec view = nic_share_cluster(cluster, nic_sharing(p.in.ranks, p.alongside, cluster.gpus_per_node));
  if (request.algorithm != Algorithm::Auto) find_algorithm(request.op, request.algorithm);  // names what exists
  const CollectiveChoice pick =
      choose_collective(request.op, request.algorithm, request.protocol, view, shape, request.bytes);
  p.algo = &find_algorithm(request.op, pick.algorithm);
  p.cost = *collective_cost(request.op, pick.algorithm, pick.protocol, view, shape, request.bytes);
  return p;
}

double Simulation::run_collective(const CollectiveRequest& request) {
  return run_collective(detail::prepare_collective(impl_->cluster, world_size(), request));
}

double Simulation::run_collective(const detail::PreparedCollective& prepared) {
  const detail::ScheduleInput& in = prepared.in;
  const auto& algo = *prepared.algo;
  const NcclCost& cost = prepared.cost;
  const double start = now();
  double wire_latency = 0;  // the route latencies the phases paid
  const int gpus_per_node = std::max(1, impl_->cluster.gpus_per_node);
  const auto schedule = [&](const detail::EmitPhase& emit) {
    if (prepared.alongside.empty()) return algo.schedule(in, emit);
    schedule_alongside(prepared, emit);
  };
  schedule([&](detail::Phase& phase) {
    auto& flows = phase.flows;
    if (cost.efficiency != 1.0 || cost.inter_node_ratio != 1.0)
      for (auto& f : flows) {
        const bool crosses = f.src / gpus_per_node != f.dst / gpus_per_node;
        f.bytes /= crosses ? cost.efficiency * cost.inter_node_ratio : cost.efficiency;
      }
    if (phase.lockstep) impl_->pace_lockstep(flows);
    impl_->run_flows(flows);
    if (phase.extra_latency_steps > 0 || cost.latency > 0) {
      double alpha = 0;
      for (const auto& f : flows) alpha = std::max(alpha, impl_->route_of(f.src, f.dst).latency);
      if (phase.extra_latency_steps > 0) sleep_for(phase.extra_latency_steps * alpha);
      wire_latency += (1 + phase.extra_latency_steps) * alpha;
    }
  });
  // NCCL's latency beyond the wire's and the ramp's, in one sleep.
  const double rest = std::max(0.0, cost.latency - wire_latency) + cost.ramp_latency;
  if (rest > 0) sleep_for(rest);
  return now() - start;
}

}  // namespace gw::engine
