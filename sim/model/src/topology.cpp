#include "gradwire/model/topology.hpp"

namespace gw {

int leaf_count(const ClusterSpec& c) {
  if (c.fabric.topology != FabricTopology::FatTree) return 1;
  return (c.nodes + c.fabric.nodes_per_leaf - 1) / c.fabric.nodes_per_leaf;
}

int leaf_of_node(const ClusterSpec& c, int node) {
  if (c.fabric.topology != FabricTopology::FatTree) return 0;
  return c.placement == Placement::Interleaved ? node % leaf_count(c) : node / c.fabric.nodes_per_leaf;
}

bool crosses_spine(const ClusterSpec& c) { return leaf_count(c) > 1; }

double leaf_uplink_bandwidth(const ClusterSpec& c) {
  return c.fabric.nodes_per_leaf * c.node_bandwidth() / c.fabric.oversubscription;
}

double node_fabric_bandwidth(const ClusterSpec& c) {
  return c.node_bandwidth() / (crosses_spine(c) ? c.fabric.oversubscription : 1.0);
}

double route_latency(const ClusterSpec& c, bool across_nodes) {
  const double intra = 2 * c.intra_node.latency;
  if (!across_nodes) return intra;
  return intra + 2 * (c.nic.latency + c.fabric.latency) + (crosses_spine(c) ? 2 * c.fabric.latency : 0.0);
}

}  // namespace gw
