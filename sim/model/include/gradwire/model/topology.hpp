// The cluster's topology rules, defined once: which leaf switch a node hangs
// on, when traffic crosses the spine, and what a leaf's uplink carries. The
// SimGrid platform (sim/engine/src/platform.cpp) builds its zones and links
// from these, and the closed-form collective times (closed_form.hpp) read
// them. Plain C++, no SimGrid.
#pragma once

#include <string>

#include "gradwire/model/scenario.hpp"

namespace gw {

/// Leaf switches: ceil(nodes / nodes_per_leaf) on a fat-tree, 1 on a switch.
int leaf_count(const ClusterSpec& c);
/// Node index (in rank order) -> leaf index: node / nodes_per_leaf (linear
/// placement) or node mod leaves (interleaved); 0 on a switch.
int leaf_of_node(const ClusterSpec& c, int node);
/// True when inter-node traffic crosses the spine (more than one leaf).
bool crosses_spine(const ClusterSpec& c);
/// A leaf's uplink to the spine: nodes_per_leaf x usable node bandwidth / oversubscription.
double leaf_uplink_bandwidth(const ClusterSpec& c);
/// One node's share of the fabric: its usable NIC bandwidth, divided by the
/// oversubscription when traffic crosses the spine.
double node_fabric_bandwidth(const ClusterSpec& c);
/// The rate one flow between two GPUs of a node reaches when `flows` such
/// flows of the node run at once: the intra-node link's usable bandwidth
/// (line rate x transport fraction); when the transport is host-staged every
/// copy of the node crosses one host-memory path of LinkSpec::staged_bandwidth
/// (the usable rate x the transport's host_path share), shared `flows` ways
/// (transports.hpp).
double intra_flow_bandwidth(const ClusterSpec& c, int flows);
/// The cap on one GPU's flows out of its node from the NIC transport's
/// per-connection limit (per_connection x connections); infinity when none.
double connection_limit(const ClusterSpec& c);
/// One-way latency of the platform's route between two GPUs:
///   same node   : 2 x intra latency (one GPU link up, one down);
///   other node  : 2 x intra + 2 x (NIC + fabric latency) (each node's NIC link
///                 carries nic.latency + fabric.latency), plus 2 x fabric latency
///                 (two leaf uplinks) when the cluster crosses the spine: the
///                 worst inter-node route, the one a ring's step waits for.
double route_latency(const ClusterSpec& c, bool across_nodes);

/// The network the platform builds, in one line (what `simulate` and
/// `collective` print): NICs per node, their line rate and transport, the
/// usable share when the transport takes one, the per-connection limit, and
/// the GPUs' intra-node links likewise. E.g. "network: 4 x 100.00 Gbps EFA per
/// node (96% usable: 384.00 Gbps); 8 GPUs per node, each 2.40 Tbps NVSwitch
/// (80% usable: 1.92 Tbps)".
std::string describe_network(const ClusterSpec& c);

}  // namespace gw
