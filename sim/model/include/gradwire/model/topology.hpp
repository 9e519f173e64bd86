// The cluster's topology rules, defined once: which leaf switch a node hangs
// on, when traffic crosses the spine, and what a leaf's uplink carries. The
// SimGrid platform (sim/engine/src/platform.cpp) builds its zones and links
// from these, and the closed-form collective times (closed_form.hpp) read
// them. Plain C++, no SimGrid.
#pragma once

#include "gradwire/model/scenario.hpp"

namespace gw {

/// Leaf switches: ceil(nodes / nodes_per_leaf) on a fat-tree, 1 on a switch.
int leaf_count(const ClusterSpec& c);
/// Node index (in rank order) -> leaf index: node / nodes_per_leaf (linear
/// placement) or node mod leaves (interleaved); 0 on a switch.
int leaf_of_node(const ClusterSpec& c, int node);
/// True when inter-node traffic crosses the spine (more than one leaf).
bool crosses_spine(const ClusterSpec& c);
/// A leaf's uplink to the spine: nodes_per_leaf x node bandwidth / oversubscription.
double leaf_uplink_bandwidth(const ClusterSpec& c);
/// One node's share of the fabric: its NIC bandwidth, divided by the
/// oversubscription when traffic crosses the spine.
double node_fabric_bandwidth(const ClusterSpec& c);
/// One-way latency of the platform's route between two GPUs:
///   same node   : 2 x intra latency (one GPU link up, one down);
///   other node  : 2 x intra + 2 x (NIC + fabric latency) (each node's NIC link
///                 carries nic.latency + fabric.latency), plus 2 x fabric latency
///                 (two leaf uplinks) when the cluster crosses the spine: the
///                 worst inter-node route, the one a ring's step waits for.
double route_latency(const ClusterSpec& c, bool across_nodes);

}  // namespace gw
