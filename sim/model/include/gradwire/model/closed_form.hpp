// The closed-form evaluator: the iteration model (iteration_model.hpp)
// evaluated with alpha-beta collective times on the cluster, no SimGrid.
// Beside collective_model.hpp, whose formulas it applies. docs/planning.md
// ("Closed-form evaluator") and docs/model.md section 6.
#pragma once

#include <optional>

#include "gradwire/model/collective_model.hpp"
#include "gradwire/model/iteration_model.hpp"
#include "gradwire/model/model_desc.hpp"
#include "gradwire/model/nccl_model.hpp"
#include "gradwire/model/scenario.hpp"

namespace gw {

struct Profile;

/// Alpha-beta collective times on a cluster: alpha is the platform's route
/// latency (topology.hpp, route_latency: within a node 2 x intra latency;
/// between nodes 2 x intra + 2 x (NIC + fabric latency), + 2 x fabric latency
/// across the spine); an inter-node flow gets min(intra bandwidth, connection
/// limit, node fabric bandwidth / g) in the hierarchical all-reduce and
/// min(intra, connection limit, node fabric bandwidth) in flat rings and
/// all-gathers; bandwidths are usable ones (line rate x transport fraction),
/// and a host-staged intra-node link is shared by the ring's concurrent
/// intra-node flows (topology.hpp, transports.hpp).
CollectiveTimeFn closed_form_collective_time(const ClusterSpec& cluster);

/// The first `ranks` ranks of `c` (ranks are numbered node by node): their
/// count and the nodes they span.
NcclShape collective_shape(const ClusterSpec& c, int ranks);
/// The cluster as one of `sharing` groups that cross the network at once
/// from the same nodes sees it (HSDP's replica all-reduces, one group per
/// local rank: shard_groups.hpp): each NIC's bandwidth / sharing, the rest
/// as is; `c` itself for sharing <= 1. NCCL's choice and cost of such a
/// group's collective are taken on it, in the closed form and the engine.
ClusterSpec nic_share_cluster(const ClusterSpec& c, int sharing);
/// The route a collective's steps wait for and what one flow gets on it:
/// within one node (2 x intra latency, the intra link's usable bandwidth,
/// shared by the node's ring flows when host-staged); across nodes the worst
/// inter-node route and min(intra ring flow, the connection cap, node fabric
/// bandwidth) (transports.hpp, topology.hpp).
collective::AlphaBeta collective_link(const ClusterSpec& c, NcclShape shape);
/// The ranks per node of the first `ranks` ranks of `c` (node by node: full
/// nodes, then the rest): the nodes NCCL's tree chains (collective::nccl_trees).
std::vector<int> collective_node_sizes(const ClusterSpec& c, int ranks);
/// What the tree's flows cross on `c` (collective::TreeLinks): the route
/// latencies within and across nodes (route_latency), each GPU's usable
/// intra-node bandwidth, a node's fabric share (node_fabric_bandwidth), the
/// NIC transport's connection cap (connection_limit) and, host-staged, the
/// node's one host path (LinkSpec::staged_bandwidth).
collective::TreeLinks tree_links(const ClusterSpec& c);
/// NCCL's cost of (op, a, p) over `shape` on `c` at `bytes`, with the link of
/// collective_link (nccl_model.hpp nccl_cost); nullopt where NCCL lacks the pair.
/// `ramp`: the per-size ramp's constants (a fit tries others).
std::optional<NcclCost> collective_cost(CollectiveOp op, Algorithm a, Protocol p, const ClusterSpec& c, NcclShape shape,
                                        double bytes, const NcclRamp& ramp = nccl_ramp());
/// Closed-form time of (op, a, p) over `shape` at `bytes` (the Aggregated
/// schedule's), nullopt where NCCL lacks the pair. a and p are not auto.
std::optional<double> collective_time(CollectiveOp op, Algorithm a, Protocol p, const ClusterSpec& c, NcclShape shape,
                                      double bytes, const NcclRamp& ramp = nccl_ramp());

struct CollectiveChoice {
  Algorithm algorithm = Algorithm::Ring;
  Protocol protocol = Protocol::Simple;
  double time = 0;         ///< closed-form seconds, on the channels the size gets
  double tuning_time = 0;  ///< the same under NCCL's tuning model (every channel): what was compared
};
/// NCCL's rule: among the pairs available for `op` on `c` (nccl_algorithms x
/// protocols; `a` or `p` other than auto pins it), the one with the lowest
/// closed-form time under NCCL's tuning model (NcclCost::tuning_efficiency:
/// every channel, as NCCL compares before it trims channels for small sizes;
/// every algorithm on the collective link, as NCCL's model gives tree and ring
/// one graph bandwidth: the tree's flows are not priced per link class here);
/// ties go to the earlier algorithm, then protocol (LL, LL128, Simple).
/// `time` is the chosen pair's closed form as it runs (NcclCost::efficiency).
/// Throws std::invalid_argument when no pair fits the pins.
/// The engine, `gradwire collective` and `simulate`'s buckets all use it.
CollectiveChoice choose_collective(CollectiveOp op, Algorithm a, Protocol p, const ClusterSpec& c, NcclShape shape,
                                   double bytes);

/// One iteration of `scenario`: prepare_iteration, then evaluate_closed_form
/// with closed_form_collective_time. Throws what prepare_iteration throws.
IterationResult closed_form_iteration(const Scenario& scenario, const ModelDesc& model, const Profile& profile);

}  // namespace gw
