// Platform construction: hosts are GPUs; every link is split-duplex.
//
//   a node: each GPU's intra-node link (intra_node usable bandwidth: line
//     rate x the transport's achievable fraction, transports.hpp; latency) to
//     the node's switch, and one link of the node's aggregate usable NIC
//     bandwidth (nic_count x usable nic bandwidth: NCCL stripes its channels
//     over all NICs) with latency nic.latency + fabric.latency. A GPU's route
//     out of the node is [its intra link, the NIC link], with the GPU's own
//     connection link (per_connection x connections) between them when the NIC
//     transport limits connections (TCP sockets); between two GPUs of one node
//     a bypass route [intra link of one, intra link of the other], through the
//     node's shared host-memory link when the intra-node transport is
//     host-staged (PCIe without P2P) (see build_node).
//   fabric, Switch: one non-blocking star zone holding every node's GPUs.
//   fabric, FatTree: a spine star zone over leaf star zones; each leaf holds
//     the GPUs of its nodes as above; each leaf hangs on the spine by an uplink of
//     nodes_per_leaf x node bandwidth / oversubscription with latency
//     fabric.latency (the leaf's gateway router sits in a zone of its own, see
//     build_platform). Linear placement puts node k on leaf k / nodes_per_leaf,
//     interleaved on leaf k mod leaves (the rules: gradwire/model/topology.hpp).
#include "platform.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "gradwire/model/topology.hpp"

namespace gw::engine::detail {
namespace s4u = simgrid::s4u;

namespace {

constexpr double kHostSpeed = 1e12;  // flops; the engine never computes

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("cluster: " + what);
}

bool positive(double x) { return std::isfinite(x) && x > 0; }
bool non_negative(double x) { return std::isfinite(x) && x >= 0; }

s4u::Link* duplex(s4u::NetZone* zone, const std::string& name, double bw, double lat) {
  return zone->create_split_duplex_link(name, bw)->set_latency(lat)->seal();
}

void attach(s4u::NetZone* parent, s4u::NetZone* child, s4u::Link* link, simgrid::kernel::routing::NetPoint* gateway) {
  parent->add_route(child->get_netpoint(), nullptr, gateway, nullptr,
                    {s4u::LinkInRoute(link, s4u::LinkInRoute::Direction::UP)}, true);
}

// One node's GPUs, created directly in `zone` (the fabric or a leaf star zone):
// each GPU's route to the rest of the zone is its intra-node link then the
// node's NIC link; between two GPUs of the node a bypass route uses only their
// two intra-node links. (One SimGrid zone per node would be the natural shape,
// but SimGrid 3.32 checks every new host and link name by a search through all
// zones, which made building 32,768 GPUs in 4,096 node zones take minutes.)
void build_node(const ClusterSpec& c, int node, s4u::NetZone* zone, s4u::Link* nic, std::vector<s4u::Host*>& hosts) {
  const int g = c.gpus_per_node;
  const double intra_bw = c.intra_node.usable_bandwidth();
  const double conn_cap = c.nic.connection_limit();
  std::vector<s4u::Link*> intra(g);
  for (int j = 0; j < g; ++j) {
    const int rank = node * g + j;
    const std::string host = "gpu-" + std::to_string(rank);
    auto* h = zone->create_host(host, kHostSpeed);
    intra[j] = duplex(zone, host + "-intra", intra_bw, c.intra_node.latency);
    std::vector<s4u::LinkInRoute> out{s4u::LinkInRoute(intra[j], s4u::LinkInRoute::Direction::UP)};
    if (conn_cap > 0) {  // the NIC transport's per-connection limit on this GPU's flows out of the node
      out.emplace_back(duplex(zone, host + "-conn", conn_cap, 0), s4u::LinkInRoute::Direction::UP);
    }
    out.emplace_back(nic, s4u::LinkInRoute::Direction::UP);
    zone->add_route(h->get_netpoint(), nullptr, nullptr, nullptr, out, true);
    hosts[rank] = h;
  }
  // Host-staged copies (PCIe without P2P) all cross the node's one path
  // through host memory, shared by every copy of the node, at the rate NCCL's
  // SHM transport reaches through the CPU (LinkSpec::staged_bandwidth).
  s4u::Link* staging = nullptr;
  if (c.intra_node.host_staged() && g > 1) {
    const double host_bw = c.intra_node.staged_bandwidth();
    staging = zone->create_link("node-" + std::to_string(node) + "-host", host_bw)->set_latency(0)->seal();
  }
  for (int a = 0; a < g; ++a)
    for (int b = 0; b < g; ++b) {
      if (a == b) continue;
      std::vector<s4u::LinkInRoute> route{s4u::LinkInRoute(intra[a], s4u::LinkInRoute::Direction::UP)};
      if (staging != nullptr) route.emplace_back(staging);
      route.emplace_back(intra[b], s4u::LinkInRoute::Direction::DOWN);
      zone->add_bypass_route(hosts[node * g + a]->get_netpoint(), hosts[node * g + b]->get_netpoint(), nullptr, nullptr,
                             route);
    }
}

}  // namespace

void validate_cluster(const ClusterSpec& c) {
  require(c.nodes >= 1, "nodes must be at least 1");
  require(c.gpus_per_node >= 1, "gpus_per_node must be at least 1");
  require(c.nic_count >= 1, "nic_count must be at least 1");
  require(positive(c.intra_node.bandwidth), "intra_node bandwidth must be positive");
  require(non_negative(c.intra_node.latency), "intra_node latency must be >= 0");
  require(positive(c.nic.bandwidth), "nic bandwidth must be positive");
  require(non_negative(c.nic.latency), "nic latency must be >= 0");
  require(non_negative(c.fabric.latency), "fabric latency must be >= 0");
  require(positive(c.network.tcp_gamma), "network tcp_gamma must be positive");
  if (c.fabric.topology == FabricTopology::FatTree) {
    require(c.fabric.nodes_per_leaf >= 1, "fat-tree nodes_per_leaf must be at least 1");
    require(std::isfinite(c.fabric.oversubscription) && c.fabric.oversubscription >= 1,
            "fat-tree oversubscription must be >= 1");
  }
}

void configure_network(const NetworkModelSpec& net) {
  s4u::Engine::set_config("network/model:" + net.model);
  s4u::Engine::set_config("network/crosstraffic", net.crosstraffic);
  s4u::Engine::set_config("network/TCP-gamma", net.tcp_gamma);
}

std::vector<s4u::Host*> build_platform(const ClusterSpec& c) {
  std::vector<s4u::Host*> hosts(static_cast<std::size_t>(c.world_size()));
  const double node_bw = c.usable_node_bandwidth();
  const double nic_lat = c.nic.latency + c.fabric.latency;
  if (c.fabric.topology == FabricTopology::Switch) {
    auto* fabric = s4u::create_star_zone("fabric");
    for (int k = 0; k < c.nodes; ++k) {
      auto* nic = duplex(fabric, "node-" + std::to_string(k) + "-nic", node_bw, nic_lat);
      build_node(c, k, fabric, nic, hosts);
    }
    fabric->seal();
    return hosts;
  }
  auto* spine = s4u::create_star_zone("spine");
  const int leaves = leaf_count(c);
  const double uplink_bw = leaf_uplink_bandwidth(c);
  std::vector<s4u::NetZone*> leaf(leaves);
  std::vector<simgrid::kernel::routing::NetPoint*> leaf_gw(leaves);
  for (int l = 0; l < leaves; ++l) {
    const std::string name = "leaf-" + std::to_string(l);
    leaf[l] = s4u::create_star_zone(name);
    leaf[l]->set_parent(spine);
    // The leaf's gateway router sits in a zone of its own inside the leaf:
    // SimGrid 3.32 resolves a route from a host two levels down to a router
    // directly in the leaf as if the host were in the leaf (wrong links).
    auto* sw = s4u::create_star_zone(name + "-switch");
    sw->set_parent(leaf[l]);
    leaf_gw[l] = sw->create_router(name + "-gw");
    sw->seal();
    leaf[l]->add_route(sw->get_netpoint(), nullptr, leaf_gw[l], nullptr, {}, true);
  }
  for (int k = 0; k < c.nodes; ++k) {
    auto* parent = leaf[leaf_of_node(c, k)];
    auto* nic = duplex(parent, "node-" + std::to_string(k) + "-nic", node_bw, nic_lat);
    build_node(c, k, parent, nic, hosts);
  }
  for (int l = 0; l < leaves; ++l) {
    leaf[l]->seal();
    attach(spine, leaf[l], duplex(spine, leaf[l]->get_name() + "-up", uplink_bw, c.fabric.latency), leaf_gw[l]);
  }
  spine->seal();
  return hosts;
}

}  // namespace gw::engine::detail
