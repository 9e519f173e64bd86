#include "gradwire/model/closed_form.hpp"

#include <algorithm>

#include "gradwire/model/collective_model.hpp"
#include "gradwire/model/topology.hpp"

namespace gw {

CollectiveTimeFn closed_form_collective_time(const ClusterSpec& c) {
  const int n = c.world_size(), g = c.gpus_per_node, m = c.nodes;
  const double node_bw = node_fabric_bandwidth(c);
  // Transports (transports.hpp): usable bandwidths, the host-staged copies'
  // shared path and the per-connection cap on flows out of a node.
  const double ring_bw = intra_flow_bandwidth(c, ring_intra_flows(c));
  const double out_cap = std::min(c.intra_node.usable_bandwidth(), connection_limit(c));
  const collective::AlphaBeta intra{route_latency(c, false), intra_flow_bandwidth(c, g)};
  const double alpha_o = route_latency(c, true);
  const collective::AlphaBeta flat{m > 1 ? alpha_o : intra.alpha,
                                   m > 1 ? std::min({ring_bw, out_cap, node_bw}) : ring_bw};
  const collective::AlphaBeta inter{alpha_o, std::min(out_cap, node_bw / g)};
  return [=](const CommStep& s) -> double {
    if (n <= 1) return 0.0;
    if (s.op == CommOp::AllGather) return collective::ring_allgather_time(n, s.bytes, flat);
    if (s.algorithm == "hierarchical") return collective::hierarchical_allreduce_time(m, g, s.bytes, intra, inter);
    if (s.algorithm == "tree") return collective::tree_allreduce_time(n, s.bytes, flat);
    return collective::ring_allreduce_time(n, s.bytes, flat);
  };
}

IterationResult closed_form_iteration(const Scenario& scenario, const ModelDesc& model, const Profile& profile) {
  const PreparedIteration prepared = prepare_iteration(scenario, model, profile);
  IterationResult r = evaluate_closed_form(prepared.plan, closed_form_collective_time(prepared.cluster));
  label_result(r, scenario, profile);
  return r;
}

}  // namespace gw
