#include "gradwire/model/topology.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "gradwire/core/units.hpp"

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
  return c.fabric.nodes_per_leaf * c.usable_node_bandwidth() / c.fabric.oversubscription;
}

double node_fabric_bandwidth(const ClusterSpec& c) {
  return c.usable_node_bandwidth() / (crosses_spine(c) ? c.fabric.oversubscription : 1.0);
}

double intra_flow_bandwidth(const ClusterSpec& c, int flows) {
  const LinkSpec& l = c.intra_node;
  return l.host_staged() ? l.staged_bandwidth() / std::max(1, flows) : l.usable_bandwidth();
}

double connection_limit(const ClusterSpec& c) {
  const double cap = c.nic.connection_limit();
  return cap > 0 ? cap : std::numeric_limits<double>::infinity();
}

double route_latency(const ClusterSpec& c, bool across_nodes) {
  const double intra = 2 * c.intra_node.latency;
  if (!across_nodes) return intra;
  return intra + 2 * (c.nic.latency + c.fabric.latency) + (crosses_spine(c) ? 2 * c.fabric.latency : 0.0);
}

namespace {

// "<rate> <transport>" and, when the transport takes a share or limits
// connections, "(NN% usable: <rate>[, <rate> per connection x k])".
std::string describe_link(const LinkSpec& l, double count) {
  const TransportInfo& row = transport_info(l.transport);
  const bool ideal = l.transport == Transport::GpuLink || l.transport == Transport::Network;
  std::string s = units::format_bandwidth(l.bandwidth) + (ideal ? "" : std::string(" ") + row.label);
  std::string extra;
  if (l.fraction != 1.0) {
    extra = std::to_string(static_cast<int>(std::lround(l.fraction * 100))) +
            "% usable: " + units::format_bandwidth(l.usable_bandwidth() * count);
  }
  if (l.per_connection > 0) {
    extra += (extra.empty() ? "" : ", ") + units::format_bandwidth(l.per_connection) + " per connection x " +
             std::to_string(l.connections) + " per GPU";
  }
  if (row.host_staged) {
    extra += (extra.empty() ? "" : ", ") + std::string("copies staged through host memory at ") +
             units::format_bandwidth(l.staged_bandwidth());
  }
  return extra.empty() ? s : s + " (" + extra + ")";
}

// "on one switch" or "on a fat-tree (N nodes per leaf, R:1 oversubscribed,
// interleaved placement)", and the latency of one switch hop.
std::string describe_fabric(const ClusterSpec& c) {
  std::string s;
  if (c.fabric.topology == FabricTopology::FatTree) {
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%g", c.fabric.oversubscription);
    s = " on a fat-tree (" + std::to_string(c.fabric.nodes_per_leaf) + " nodes per leaf, " + ratio +
        ":1 oversubscribed, " + (c.placement == Placement::Interleaved ? "interleaved" : "linear") + " placement)";
  } else {
    s = " on one switch";
  }
  if (c.fabric.latency > 0) s += ", " + units::format_time(c.fabric.latency) + " per switch hop";
  return s;
}

}  // namespace

std::string describe_network(const ClusterSpec& c) {
  std::string s = "network: ";
  s += c.nodes > 1 ? std::to_string(c.nic_count) + " x " + describe_link(c.nic, c.nic_count) + " per node, " +
                         units::format_time(c.nic.latency) + " latency, " + std::to_string(c.nodes) + " nodes" +
                         describe_fabric(c)
                   : std::string("one node");
  if (c.gpus_per_node > 1) {
    s += "; " + std::to_string(c.gpus_per_node) + " GPUs per node, each " + describe_link(c.intra_node, 1) + ", " +
         units::format_time(c.intra_node.latency) + " latency";
  }
  return s;
}

}  // namespace gw
