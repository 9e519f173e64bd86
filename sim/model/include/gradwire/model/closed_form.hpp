// The closed-form evaluator: the iteration model (iteration_model.hpp)
// evaluated with alpha-beta collective times on the cluster, no SimGrid.
// Beside collective_model.hpp, whose formulas it applies. docs/planning.md
// ("Closed-form evaluator") and docs/model.md section 6.
#pragma once

#include "gradwire/model/iteration_model.hpp"
#include "gradwire/model/model_desc.hpp"
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

/// One iteration of `scenario`: prepare_iteration, then evaluate_closed_form
/// with closed_form_collective_time. Throws what prepare_iteration throws.
IterationResult closed_form_iteration(const Scenario& scenario, const ModelDesc& model, const Profile& profile);

}  // namespace gw
