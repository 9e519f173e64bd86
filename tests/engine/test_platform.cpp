// Platform construction: route latencies and bandwidths follow the cluster.
#include <gtest/gtest.h>

#include <sstream>

#include "engine_test_util.hpp"
#include "gradwire/model/topology.hpp"

namespace gw::engine {
namespace {
using namespace test;

std::pair<double, double> route_of(const ClusterSpec& c, int src, int dst) {
  const auto text = run_in_child([&] {
    Simulation sim(c);
    auto [a, b] = sim.route(src, dst);
    std::ostringstream out;
    out.precision(17);
    out << a << ' ' << b;
    return out.str();
  });
  std::istringstream in(text);
  double a = 0, b = 0;
  in >> a >> b;
  return {a, b};
}

TEST(Platform, SwitchRoutes) {
  auto c = switch_cluster(4, 8);
  c.nic_count = 4;
  // Same node: two intra-node links.
  auto [a1, b1] = route_of(c, 0, 7);
  EXPECT_DOUBLE_EQ(a1, 2 * kIntraLat);
  EXPECT_DOUBLE_EQ(b1, kIntraBw);
  // Across nodes: intra up, NIC up, NIC down, intra down; NICs aggregated.
  auto [a2, b2] = route_of(c, 3, 30);
  EXPECT_DOUBLE_EQ(a2, 2 * kIntraLat + 2 * (kNicLat + kFabricLat));
  EXPECT_DOUBLE_EQ(b2, 4 * kNicBw);
}

// One GB200 NVL72 rack is one node of 72 GPUs (kMaxGpusPerNode): every pair
// of its GPUs has its route, and the memory estimate counts those routes
// beyond an 8-GPU node's (docs/engine.md, "Scale").
TEST(Platform, ANodeOf72GpusRoutesEveryPairAndItsEstimateCountsTheRoutes) {
  auto c = switch_cluster(2, 72);
  auto [a1, b1] = route_of(c, 0, 71);
  EXPECT_DOUBLE_EQ(a1, 2 * kIntraLat);
  EXPECT_DOUBLE_EQ(b1, kIntraBw);
  auto [a2, b2] = route_of(c, 70, 73);
  EXPECT_DOUBLE_EQ(a2, 2 * kIntraLat + 2 * (kNicLat + kFabricLat));
  const auto estimate = [](int nodes, int gpus) { return simulation_memory_estimate(switch_cluster(nodes, gpus)); };
  EXPECT_DOUBLE_EQ(estimate(72, 8), 40e6 + 5e3 * 576);  // the measured 8-GPU-node rule, unchanged
  EXPECT_DOUBLE_EQ(estimate(576, 1), estimate(72, 8));
  EXPECT_DOUBLE_EQ(estimate(8, 72), 40e6 + (5e3 + 300 * 64) * 576);  // 64 more routes a GPU
  EXPECT_GT(estimate(8, 72), estimate(9, 64));
}

TEST(Platform, FatTreeRoutesCrossTheSpineBetweenLeaves) {
  auto c = switch_cluster(8);
  c.fabric.topology = FabricTopology::FatTree;
  c.fabric.nodes_per_leaf = 4;
  c.fabric.oversubscription = 8;  // uplink 4 x B / 8 = B / 2
  // Linear: nodes 0..3 on leaf 0, so 0 -> 1 stays on the leaf ...
  auto [a1, b1] = route_of(c, 0, 1);
  EXPECT_DOUBLE_EQ(a1, 2 * kIntraLat + 2 * (kNicLat + kFabricLat));
  EXPECT_DOUBLE_EQ(b1, kNicBw);
  // ... and 3 -> 4 crosses two uplinks.
  auto [a2, b2] = route_of(c, 3, 4);
  EXPECT_DOUBLE_EQ(a2, 2 * kIntraLat + 2 * (kNicLat + kFabricLat) + 2 * kFabricLat);
  EXPECT_DOUBLE_EQ(b2, kNicBw / 2);
  // Interleaved: consecutive nodes on different leaves.
  c.placement = Placement::Interleaved;
  auto [a3, b3] = route_of(c, 0, 1);
  EXPECT_DOUBLE_EQ(a3, a2);
  EXPECT_DOUBLE_EQ(b3, kNicBw / 2);
  auto [a4, b4] = route_of(c, 0, 2);  // leaf 0 -> leaf 0
  EXPECT_DOUBLE_EQ(a4, a1);
  EXPECT_DOUBLE_EQ(b4, kNicBw);
}

// The platform follows the topology rules of gradwire/model/topology.hpp (the ones
// the closed form reads): a route between two nodes crosses two uplinks
// exactly when leaf_of_node differs, and is then capped by the leaf uplink.
TEST(Platform, FollowsTheTopologyRules) {
  auto c = switch_cluster(6);
  c.fabric.topology = FabricTopology::FatTree;
  c.fabric.nodes_per_leaf = 4;
  c.fabric.oversubscription = 16;  // uplink 4 x B / 16 = B / 4
  EXPECT_EQ(leaf_count(c), 2);
  EXPECT_TRUE(crosses_spine(c));
  EXPECT_DOUBLE_EQ(leaf_uplink_bandwidth(c), kNicBw / 4);
  EXPECT_DOUBLE_EQ(node_fabric_bandwidth(c), kNicBw / 16);
  for (auto placement : {Placement::Linear, Placement::Interleaved}) {
    c.placement = placement;
    for (int a = 0; a < c.nodes; ++a) {
      for (int b = 0; b < c.nodes; ++b) {
        if (a == b) continue;
        const bool cross = leaf_of_node(c, a) != leaf_of_node(c, b);
        auto [lat, bw] = route_of(c, a * c.gpus_per_node, b * c.gpus_per_node);
        EXPECT_DOUBLE_EQ(lat, 2 * kIntraLat + 2 * (kNicLat + kFabricLat) + (cross ? 2 * kFabricLat : 0))
            << a << " -> " << b;
        // The closed form's alpha is the worst such route.
        if (cross) {
          EXPECT_DOUBLE_EQ(lat, route_latency(c, true)) << a << " -> " << b;
        }
        EXPECT_DOUBLE_EQ(bw, cross ? leaf_uplink_bandwidth(c) : kNicBw) << a << " -> " << b;
      }
    }
  }
  // One leaf holds every node: no spine, the node keeps its whole NIC.
  c.fabric.nodes_per_leaf = 6;
  EXPECT_EQ(leaf_count(c), 1);
  EXPECT_FALSE(crosses_spine(c));
  EXPECT_DOUBLE_EQ(node_fabric_bandwidth(c), kNicBw);
  EXPECT_DOUBLE_EQ(route_of(c, 0, c.gpus_per_node).first, route_latency(c, true));
  EXPECT_EQ(leaf_count(switch_cluster(6)), 1);
  EXPECT_EQ(leaf_of_node(switch_cluster(6), 5), 0);
}

TEST(Platform, RejectsImpossibleClusters) {
  auto c = switch_cluster(2);
  c.nic.bandwidth = 0;
  EXPECT_THROW(run_in_child([&] {
                 Simulation sim(c);
                 return std::string();
               }),
               std::runtime_error);
}

}  // namespace
}  // namespace gw::engine
