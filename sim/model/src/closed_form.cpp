#include "gradwire/model/closed_form.hpp"

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

std::optional<NcclCost> collective_cost(CollectiveOp op, Algorithm a, Protocol p, const ClusterSpec& c,
                                        NcclShape shape, double bytes) {
  return nccl_cost(op, a, p, c, shape, bytes, collective_link(c, shape).bandwidth);
}

namespace {

// gradwire's own alpha-beta schedules (no NCCL latency model).
double alpha_beta_time(CollectiveOp op, Algorithm a, const ClusterSpec& c, NcclShape shape, double bytes) {
  const int n = shape.ranks;
  const collective::AlphaBeta flat = collective_link(c, shape);
  if (a == Algorithm::Direct) return collective::direct_alltoall_time(n, bytes, flat);
  if (op == CollectiveOp::Broadcast) return collective::pipeline_broadcast_time(n, bytes, flat);
  const int g = std::min(n, c.gpus_per_node), m = shape.nodes;
  const double out_cap = std::min(c.intra_node.usable_bandwidth(), connection_limit(c));
  const collective::AlphaBeta intra{route_latency(c, false), intra_flow_bandwidth(c, g)};
  const collective::AlphaBeta inter{route_latency(c, true), std::min(out_cap, node_fabric_bandwidth(c) / g)};
  return collective::hierarchical_allreduce_time(m, g, bytes, intra, inter);
}

// The tree's links as NCCL's tuning model sees them: the collective link for
// every flow (its bandwidth already holds the connection cap and a host path's
// share).
collective::TreeLinks graph_links(collective::AlphaBeta flat) {
  const double none = std::numeric_limits<double>::infinity();
  return {flat, flat, none, none};
}

// NVLS+tree: the engine's flows on the platform's link classes (tree_links),
// or, as NCCL's tuning model prices it, the GPU's NVLS bandwidth (the one-node
// NVLS link) against the node's NICs (capped by its GPUs' connections).
double nvlstree_time(const ClusterSpec& c, NcclShape shape, double bytes, NcclCost cost, bool tuning) {
  const int g = shape.ranks / shape.nodes;
  const collective::TreeLinks links = tree_links(c);
  if (!tuning) return collective::nvlstree_allreduce_time(shape.nodes, g, bytes, links, cost);
  const double inter = std::min(links.inter.bandwidth, g * links.connection);
  return collective::nvlstree_tuning_time(shape.nodes, bytes, intra_flow_bandwidth(c, g), inter, links.inter.alpha,
                                          cost);
}

// The Aggregated schedule's time of (op, a) under `cost`. `tuning`: as NCCL's
// tuning model compares it, every algorithm on the one bandwidth of NCCL's
// graph (the collective link; tuning.cc gives tree and ring the same
// nChannels x bw), so the tree's flows all get the collective link rather than
// the platform's link classes (tree_links).
double time_under(CollectiveOp op, Algorithm a, const ClusterSpec& c, NcclShape shape, double bytes, NcclCost cost,
                  bool tuning = false) {
  const int n = shape.ranks;
  if (n <= 1) return 0.0;
  const collective::AlphaBeta flat = collective_link(c, shape);
  if (a == Algorithm::Tree)
    return collective::tree_allreduce_time(collective_node_sizes(c, n), bytes, tuning ? graph_links(flat) : tree_links(c),
                                           cost);
  if (a == Algorithm::NVLS) return collective::nvls_allreduce_time(n, bytes, flat, cost);
  if (a == Algorithm::NvlsTree) return nvlstree_time(c, shape, bytes, cost, tuning);
  if (a == Algorithm::Pat)
    return tuning ? collective::pat_tuning_time(bytes, flat, cost) : collective::pat_time(n, bytes, flat, cost);
  if (a == Algorithm::Ring && op == CollectiveOp::AllReduce) return collective::ring_allreduce_time(n, bytes, flat, cost);
  if (a == Algorithm::Ring && (op == CollectiveOp::AllGather || op == CollectiveOp::ReduceScatter))
    return collective::ring_allgather_time(n, bytes, flat, cost);
  return alpha_beta_time(op, a, c, shape, bytes);
}

}  // namespace

std::optional<double> collective_time(CollectiveOp op, Algorithm a, Protocol p, const ClusterSpec& c,
                                      NcclShape shape, double bytes) {
  const auto cost = collective_cost(op, a, p, c, shape, bytes);
  if (!cost) return std::nullopt;
  return time_under(op, a, c, shape, bytes, *cost);
}

CollectiveChoice choose_collective(CollectiveOp op, Algorithm a, Protocol p, const ClusterSpec& c,
                                   NcclShape shape, double bytes) {
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
      NcclCost tuning = *cost;
      tuning.efficiency = cost->tuning_efficiency;
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
  const PreparedIteration prepared = prepare_iteration(scenario, model, profile);
  IterationResult r = evaluate_closed_form(prepared.plan, closed_form_collective_time(prepared.cluster));
  label_result(r, scenario, profile);
  return r;
}

}  // namespace gw
