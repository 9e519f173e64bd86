#include "gradwire/model/closed_form.hpp"
#include "gradwire/model/sharded_iteration.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "gradwire/model/collective_model.hpp"
#include "gradwire/model/topology.hpp"

namespace gw {

NcclShape collective_shape(const ClusterSpec& c, int ranks) {
  const int g = std::max(1, c.gpus_per_node);
  return {ranks, std::max(1, (ranks + g - 1) / g)};
}

ClusterSpec nic_share_cluster(const ClusterSpec& c, int sharing) {
  ClusterSpec view = c;
  if (sharing > 1) view.nic.bandwidth /= sharing;
  return view;
}

// Transports (transports.hpp): the usable bandwidths, the host-staged copies'
// shared path (a ring's concurrent intra-node flows share it) and the
// per-connection cap on a GPU's flows out of its node.
collective::AlphaBeta collective_link(const ClusterSpec& c, NcclShape shape) {
  const int g = std::max(1, std::min(c.gpus_per_node, shape.ranks));
  if (shape.nodes <= 1) return {route_latency(c, false), intra_flow_bandwidth(c, g)};
  const double ring_bw = intra_flow_bandwidth(c, g - 1);
  const double out_cap = std::min(c.intra_node.usable_bandwidth(), connection_limit(c));
  return {route_latency(c, true), std::min({ring_bw, out_cap, node_fabric_bandwidth(c)})};
}

std::vector<int> collective_node_sizes(const ClusterSpec& c, int ranks) {
  const int g = std::max(1, c.gpus_per_node);
  std::vector<int> sizes(static_cast<std::size_t>(std::max(1, (ranks + g - 1) / g)), g);
  sizes.back() = ranks - g * (static_cast<int>(sizes.size()) - 1);
  return sizes;
}

collective::TreeLinks tree_links(const ClusterSpec& c) {
  const double intra = c.intra_node.usable_bandwidth();
  const double none = std::numeric_limits<double>::infinity();
  return {{route_latency(c, false), intra},
          {route_latency(c, true), node_fabric_bandwidth(c)},
          connection_limit(c),
          c.intra_node.host_staged() ? c.intra_node.staged_bandwidth() : none};
}

namespace {

// The Aggregated schedule's time of (op, a) under `cost`: its row's closed
// form (collective_algorithms.hpp). `tuning`: as NCCL's tuning model compares
// it (the row's tuning form where it has one).
double time_under(CollectiveOp op, Algorithm a, const ClusterSpec& c, NcclShape shape, double bytes, NcclCost cost,
                  bool tuning = false) {
  if (shape.ranks <= 1) return 0.0;
  const AlgorithmRow& row = *find_algorithm_row(op, a);
  return (tuning && row.tuning_form ? row.tuning_form : row.closed_form)(c, shape, bytes, cost);
}

}  // namespace

// A host proxy posts the messages of one step while the GPUs fill the next
// (NCCL_STEPS slots in flight), so its messages overlap the transfer: what
// they take beyond the contention-free transfer (route latency and bytes at
// the cost's efficiency) is added once, as ramp latency.
std::optional<NcclCost> collective_cost(CollectiveOp op, Algorithm a, Protocol p, const ClusterSpec& c, NcclShape shape,
                                        double bytes, const NcclRamp& ramp) {
  auto cost = nccl_cost(op, a, p, c, shape, bytes, collective_link(c, shape).bandwidth, ramp);
  if (cost && cost->proxy_time > 0) {
    NcclCost wire = *cost;
    wire.latency = wire.ramp_latency = wire.proxy_time = 0;
    cost->ramp_latency += std::max(0.0, cost->proxy_time - time_under(op, a, c, shape, bytes, wire));
    cost->proxy_time = 0;
  }
  return cost;
}

std::optional<double> collective_time(CollectiveOp op, Algorithm a, Protocol p, const ClusterSpec& c, NcclShape shape,
                                      double bytes, const NcclRamp& ramp) {
  const auto cost = collective_cost(op, a, p, c, shape, bytes, ramp);
  if (!cost) return std::nullopt;
  return time_under(op, a, c, shape, bytes, *cost);
}

CollectiveChoice choose_collective(CollectiveOp op, Algorithm a, Protocol p, const ClusterSpec& c, NcclShape shape,
                                   double bytes) {
  std::vector<Algorithm> algos = nccl_algorithms(op);
  if (a != Algorithm::Auto) algos = {a};
  // NCCL compares its tuning model's times (every channel), then runs the
  // pair on the channels the size gets (nccl_channels).
  std::optional<CollectiveChoice> best;
  double best_tuning = 0;
  for (Algorithm algo : algos) {
    for (const auto& proto : protocols()) {
      if (p != Protocol::Auto && proto.protocol != p) continue;
      const auto cost = collective_cost(op, algo, proto.protocol, c, shape, bytes);
      if (!cost) continue;
      NcclCost tuning = *cost;  // NCCL's tuning model: no ramp, one factor
      tuning.efficiency = cost->tuning_efficiency;
      tuning.ramp_latency = 0;
      tuning.inter_node_ratio = 1;
      const double t = time_under(op, algo, c, shape, bytes, tuning, true);
      if (best && !(t < best_tuning)) continue;
      best_tuning = t;
      best = CollectiveChoice{algo, proto.protocol, time_under(op, algo, c, shape, bytes, *cost), t};
    }
  }
  if (!best) {
    // Each algorithm's reason (nccl_pair_refusal), each said once; with the
    // protocol left to NCCL, Simple's, which every algorithm runs when it runs.
    std::vector<std::string> why;
    for (Algorithm algo : algos) {
      std::string r = nccl_pair_refusal(op, algo, p == Protocol::Auto ? Protocol::Simple : p, c, shape);
      if (!r.empty() && std::find(why.begin(), why.end(), r) == why.end()) why.push_back(std::move(r));
    }
    std::string reasons;
    for (const auto& r : why) reasons += (reasons.empty() ? "" : "; ") + r;
    throw std::invalid_argument("no " + (a == Algorithm::Auto ? std::string("algorithm") : to_string(a)) +
                                (p == Protocol::Auto ? std::string() : " with protocol " + to_string(p)) + " for " +
                                to_string(op) + " on this cluster: " + reasons);
  }
  return *best;
}

CollectiveTimeFn closed_form_collective_time(const ClusterSpec& c) {
  const NcclShape shape = collective_shape(c, c.world_size());
  return [=](const CommStep& s) -> double {
    if (shape.ranks <= 1) return 0.0;
    const CollectiveOp op = s.op == CommOp::AllGather ? CollectiveOp::AllGather : CollectiveOp::AllReduce;
    const Algorithm a = op == CollectiveOp::AllGather ? Algorithm::Auto : parse_algorithm(s.algorithm);
    return choose_collective(op, a, Protocol::Auto, c, shape, s.bytes).time;
  };
}

IterationResult closed_form_iteration(const Scenario& scenario, const ModelDesc& model, const Profile& profile) {
  if (is_sharded(scenario)) return sharded_closed_form_iteration(scenario, model, profile);
  const PreparedIteration prepared = prepare_iteration(scenario, model, profile);
  IterationResult r = evaluate_closed_form(prepared.plan, closed_form_collective_time(prepared.cluster));
  label_result(r, scenario, profile);
  return r;
}

}  // namespace gw
