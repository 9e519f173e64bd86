// Transports as data (gradwire/model/transports.hpp): the table, the scenario
// keys that name them, what they change in the closed forms (usable
// bandwidth, per-connection caps, host-staged copies) and the network line.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "gradwire/core/error.hpp"
#include "gradwire/model/closed_form.hpp"
#include "gradwire/model/profile.hpp"
#include "gradwire/model/collective_model.hpp"
#include "gradwire/model/scenario_yaml.hpp"
#include "gradwire/model/topology.hpp"
#include "gradwire/model/transports.hpp"

namespace gw {
namespace {

ClusterSpec cluster_of(const std::string& intra, const std::string& nics, int nodes = 2, int gpus = 8) {
  const std::string text = "cluster:\n  nodes: " + std::to_string(nodes) +
                           "\n  gpus_per_node: " + std::to_string(gpus) + "\n  gpu: h100\n  intra_node: {" + intra +
                           "}\n  nics: {" + nics + "}\n  fabric: {topology: switch, latency: 1us}\n";
  return parse_scenario(yaml::load_string(text, "t.yaml")).cluster;
}

TEST(Transports, TableRowsAreComplete) {
  std::set<std::pair<std::string, int>> names;
  for (const auto& row : transports()) {
    EXPECT_TRUE(names.insert({row.name, static_cast<int>(row.place)}).second) << row.name;
    EXPECT_GT(row.fraction, 0.0) << row.name;
    EXPECT_LE(row.fraction, 1.0) << row.name;
    EXPECT_GE(row.per_connection, 0.0) << row.name;
    EXPECT_GE(row.connections, 1) << row.name;
    EXPECT_NE(std::string(row.source), "") << row.name;
    EXPECT_EQ(&transport_info(row.id), &row);
    // Only a GPU's link inside a node is NVLink or PCI class; NICs are Net.
    EXPECT_EQ(row.place == TransportPlace::Network, row.nccl_class == NcclLinkClass::Net) << row.name;
  }
  EXPECT_EQ(transport_info(Transport::NVSwitch).nccl_class, NcclLinkClass::NVLink);
  EXPECT_EQ(transport_info(Transport::PcieHost).nccl_class, NcclLinkClass::PCI);
  EXPECT_EQ(transport_info(Transport::EFA).nccl_class, NcclLinkClass::Net);
  // The ideal defaults change nothing.
  EXPECT_EQ(transport_info(Transport::GpuLink).fraction, 1.0);
  EXPECT_EQ(transport_info(Transport::Network).fraction, 1.0);
  EXPECT_TRUE(transport_info(Transport::PcieHost).host_staged);
  // Only host-staged rows have a host path of their own (NCCL SHM: 9 of 12).
  for (const auto& row : transports()) {
    EXPECT_EQ(row.host_path, row.host_staged ? 9.0 / 12.0 : 1.0) << row.name;
  }
  EXPECT_EQ(find_transport("ib", TransportPlace::IntraNode), nullptr);
  EXPECT_EQ(find_transport("nvswitch", TransportPlace::IntraNode)->id, Transport::NVSwitch);
}

TEST(Transports, DefaultIsTheLinkAsWritten) {
  const ClusterSpec c = cluster_of("bandwidth: 300GB/s, latency: 1us", "count: 4, bandwidth: 100Gbps, latency: 5us");
  EXPECT_EQ(c.intra_node.transport, Transport::GpuLink);
  EXPECT_EQ(c.nic.transport, Transport::Network);
  EXPECT_EQ(c.intra_node.usable_bandwidth(), 300e9);
  EXPECT_EQ(c.usable_node_bandwidth(), 4 * 100e9 / 8);
  EXPECT_EQ(c.nic.connection_limit(), 0.0);
  EXPECT_EQ(describe_network(c),
            "network: 4 x 100.00 Gbps per node, 5.00 us latency, 2 nodes on one switch, 1.00 us per switch hop; "
            "8 GPUs per node, each 2.40 Tbps, 1.00 us latency");
}

TEST(Transports, TheNetworkLineNamesTheFabric) {
  const std::string text =
      "cluster:\n  nodes: 8\n  gpus_per_node: 4\n  gpu: h100\n  intra_node: {bandwidth: 300GB/s, latency: 2us}\n"
      "  nics: {count: 1, bandwidth: 200Gbps, latency: 3us}\n"
      "  fabric: {topology: fat-tree, nodes_per_leaf: 2, oversubscription: 2.5, latency: 500ns}\n"
      "  placement: interleaved\n";
  const ClusterSpec c = parse_scenario(yaml::load_string(text, "t.yaml")).cluster;
  EXPECT_EQ(describe_network(c),
            "network: 1 x 200.00 Gbps per node, 3.00 us latency, 8 nodes on a fat-tree (2 nodes per leaf, 2.5:1 "
            "oversubscribed, interleaved placement), 500.0 ns per switch hop; 4 GPUs per node, each 2.40 Tbps, "
            "2.00 us latency");
}

TEST(Transports, ScenarioNamesThem) {
  const ClusterSpec c = cluster_of("bandwidth: 450GB/s, latency: 1us, transport: nvswitch",
                                   "count: 4, bandwidth: 100Gbps, latency: 5us, transport: efa");
  EXPECT_EQ(c.intra_node.transport, Transport::NVSwitch);
  EXPECT_DOUBLE_EQ(c.intra_node.usable_bandwidth(), 450e9 * 20.0 / 25.0);
  EXPECT_DOUBLE_EQ(c.usable_node_bandwidth(), 4 * 100e9 / 8 * 12.0 / 12.5);
  EXPECT_DOUBLE_EQ(c.node_bandwidth(), 4 * 100e9 / 8);
  EXPECT_EQ(describe_network(c),
            "network: 4 x 100.00 Gbps EFA (96% usable: 384.00 Gbps) per node, 5.00 us latency, 2 nodes on one "
            "switch, 1.00 us per switch hop; 8 GPUs per node, each 3.60 Tbps NVSwitch (80% usable: 2.88 Tbps), "
            "1.00 us latency");
  const ClusterSpec s = cluster_of("bandwidth: 150GB/s, latency: 1us",
                                   "count: 1, bandwidth: 32Gbps, latency: 5us, transport: socket, connections: 4");
  EXPECT_EQ(s.nic.connections, 4);
  EXPECT_DOUBLE_EQ(s.nic.connection_limit(), 4 * 10e9 / 8);
  EXPECT_DOUBLE_EQ(connection_limit(s), 4 * 10e9 / 8);
  // A host-staged link names the host path's rate (9 of 12 GB/s usable).
  const ClusterSpec h = cluster_of("bandwidth: 15.75GB/s, latency: 7us, transport: pcie-host",
                                   "count: 1, bandwidth: 10Gbps, latency: 5us", 1, 2);
  EXPECT_NE(describe_network(h).find("each 126.00 Gbps PCIe via host memory (76% usable: 96.00 Gbps, copies "
                                     "staged through host memory at 72.00 Gbps)"),
            std::string::npos)
      << describe_network(h);
}

// A cluster whose cloud documents its own per-flow rate states it: EC2's
// single-flow limit is 10 Gbps inside a cluster placement group (the table's
// figure) and 5 Gbps outside one (Amazon EC2 User Guide, "Amazon EC2 instance
// network bandwidth"). The cap is per_connection x connections.
TEST(Transports, PerConnectionRateIsTheClustersWhereGiven) {
  const ClusterSpec s = cluster_of("bandwidth: 150GB/s, latency: 1us",
                                   "count: 1, bandwidth: 25Gbps, latency: 5us, transport: socket, connections: 2, "
                                   "per_connection: 5Gbps");
  EXPECT_DOUBLE_EQ(s.nic.per_connection, 5e9 / 8);
  EXPECT_DOUBLE_EQ(connection_limit(s), 2 * 5e9 / 8);
  EXPECT_NE(describe_network(s).find("5.00 Gbps per connection x 2 per GPU"), std::string::npos) << describe_network(s);
  // An instance's socket NICs take it too.
  const auto o = parse_scenario(
      yaml::load_string("cluster: {instance: p3.16xlarge, nodes: 2, nics: {per_connection: 5Gbps}}\n", "o.yaml"));
  EXPECT_DOUBLE_EQ(o.cluster.nic.per_connection, 5e9 / 8);
  EXPECT_EQ(o.cluster.nic.connections, 16);
  // Without it, the table's figure.
  const ClusterSpec t =
      cluster_of("bandwidth: 150GB/s, latency: 1us", "count: 1, bandwidth: 25Gbps, latency: 5us, transport: socket");
  EXPECT_DOUBLE_EQ(t.nic.per_connection, transport_info(Transport::Socket).per_connection);
}

TEST(Transports, PerConnectionNeedsALimitedTransport) {
  for (const char* nics : {"count: 1, bandwidth: 25Gbps, latency: 5us, transport: efa, per_connection: 5Gbps",
                           "count: 1, bandwidth: 25Gbps, latency: 5us, per_connection: 5Gbps"}) {
    try {
      cluster_of("bandwidth: 150GB/s, latency: 1us", nics);
      FAIL() << nics;
    } catch (const InputError& e) {
      EXPECT_EQ(e.key(), "cluster.nics.per_connection") << nics;
      EXPECT_NE(e.reason().find("socket"), std::string::npos) << e.reason();
    }
  }
  try {
    cluster_of("bandwidth: 150GB/s, latency: 1us",
               "count: 1, bandwidth: 25Gbps, latency: 5us, transport: socket, per_connection: 1bps");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "cluster.nics.per_connection");
  }
}

TEST(Transports, InstanceNicsOverride) {
  const auto s = parse_scenario(yaml::load_string(
      "cluster: {instance: p4d.24xlarge, nodes: 2, nics: {transport: socket, connections: 16}}\n", "o.yaml"));
  EXPECT_EQ(s.cluster.nic.transport, Transport::Socket);
  EXPECT_EQ(s.cluster.nic.connections, 16);
  EXPECT_EQ(s.cluster.nic_count, 4);
}

TEST(Transports, BadKeysNameTheirPlace) {
  try {
    cluster_of("bandwidth: 300GB/s, latency: 1us", "count: 1, bandwidth: 1Gbps, latency: 5us, transport: nvlink");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "cluster.nics.transport");
    EXPECT_NE(e.reason().find("tcpx"), std::string::npos) << e.reason();
  }
}

// Closed forms read the usable bandwidth, the connection cap and the shared
// host path: the link a collective's closed form uses (collective_link) has
// those rates, and the ring all-reduce's closed time is NCCL's cost on it.
namespace {
double ring_time_on(const ClusterSpec& c, double bytes, double alpha, double bandwidth) {
  const NcclShape shape = collective_shape(c, c.world_size());
  const CollectiveChoice pick =
      choose_collective(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::Auto, c, shape, bytes);
  const auto cost = nccl_cost(CollectiveOp::AllReduce, Algorithm::Ring, pick.protocol, c, shape, bytes, bandwidth);
  return collective::ring_allreduce_time(c.world_size(), bytes, {alpha, bandwidth}, *cost);
}
}  // namespace

TEST(Transports, ClosedFormUsesUsableRates) {
  CommStep step;
  step.op = CommOp::AllReduce;
  step.algorithm = "ring";
  step.bytes = step.contributed = 256.0 * (1 << 20);
  // One node of 8 on NVSwitch: the ring runs at 80% of the line rate.
  const ClusterSpec one = cluster_of("bandwidth: 450GB/s, latency: 1us, transport: nvswitch",
                                     "count: 1, bandwidth: 100Gbps, latency: 5us", 1, 8);
  EXPECT_DOUBLE_EQ(collective_link(one, collective_shape(one, 8)).bandwidth, 450e9 * 0.8);
  EXPECT_DOUBLE_EQ(closed_form_collective_time(one)(step), ring_time_on(one, step.bytes, 2e-6, 450e9 * 0.8));
  // Host-staged PCIe: the 4 concurrent copies of the node share one host path,
  // which carries NCCL's SHM rate through the CPU: 9 of PCI_BW's 12 GB/s
  // (NVIDIA/nccl#406); the GPU's own PCIe link keeps its 12.
  const ClusterSpec pcie = cluster_of("bandwidth: 15.75GB/s, latency: 7us, transport: pcie-host",
                                      "count: 1, bandwidth: 10Gbps, latency: 5us", 1, 4);
  EXPECT_DOUBLE_EQ(pcie.intra_node.usable_bandwidth(), 12e9);
  EXPECT_DOUBLE_EQ(pcie.intra_node.staged_bandwidth(), 9e9);
  EXPECT_DOUBLE_EQ(intra_flow_bandwidth(pcie, 4), 9e9 / 4);
  EXPECT_DOUBLE_EQ(intra_flow_bandwidth(pcie, 1), 9e9);
  EXPECT_DOUBLE_EQ(collective_link(pcie, collective_shape(pcie, 4)).bandwidth, 9e9 / 4);
  EXPECT_DOUBLE_EQ(closed_form_collective_time(pcie)(step), ring_time_on(pcie, step.bytes, 14e-6, 9e9 / 4));
  // P2P PCIe stages nothing: the ring runs at the link's usable 12 GB/s.
  const ClusterSpec p2p = cluster_of("bandwidth: 15.75GB/s, latency: 7us, transport: pcie",
                                     "count: 1, bandwidth: 10Gbps, latency: 5us", 1, 4);
  EXPECT_DOUBLE_EQ(p2p.intra_node.staged_bandwidth(), 12e9);
  EXPECT_DOUBLE_EQ(intra_flow_bandwidth(p2p, 4), 12e9);
  // Sockets, one GPU per node: each GPU's flow is capped by its connections.
  const ClusterSpec tcp =
      cluster_of("bandwidth: 150GB/s, latency: 1us",
                 "count: 1, bandwidth: 100Gbps, latency: 5us, transport: socket, connections: 2", 4, 1);
  EXPECT_DOUBLE_EQ(collective_link(tcp, collective_shape(tcp, 4)).bandwidth, 2 * 10e9 / 8);
  EXPECT_DOUBLE_EQ(closed_form_collective_time(tcp)(step),
                   ring_time_on(tcp, step.bytes, route_latency(tcp, true), 2 * 10e9 / 8));
}

// A profile's measured figures replace the table's for the links whose
// transport it names (resolve_cluster), and nothing else.
TEST(Transports, ProfileFiguresOverrideTheTable) {
  Scenario s;
  s.cluster = cluster_of("bandwidth: 450GB/s, latency: 1us, transport: nvswitch",
                         "count: 1, bandwidth: 100Gbps, latency: 5us, transport: socket, connections: 2");
  Profile p;
  p.transports["socket"] = {0.9, 30e-6, 1.5e9};
  const ClusterSpec c = resolve_cluster(s, p);
  EXPECT_EQ(c.nic.fraction, 0.9);
  EXPECT_EQ(c.nic.latency, 30e-6);
  EXPECT_EQ(c.nic.connection_limit(), 2 * 1.5e9);
  EXPECT_EQ(c.intra_node.fraction, transport_info(Transport::NVSwitch).fraction);
  p.transports["nvswitch"] = {std::nullopt, 2e-6, std::nullopt};
  const ClusterSpec d = resolve_cluster(s, p);
  EXPECT_EQ(d.intra_node.latency, 2e-6);
  EXPECT_EQ(d.intra_node.fraction, transport_info(Transport::NVSwitch).fraction);
}

}  // namespace
}  // namespace gw
