// The two ways the driver starts a phase's flows give the same simulated
// times (collective_driver.cpp): host-to-host sends from the driver (phases of
// up to 256 flows) and one actor per host through mailboxes (bigger phases,
// which avoid SimGrid 3.32's O(F^2) bookkeeping of host-to-host sends). Each
// case runs both ways, forced by detail::set_flows_for_mailboxes, on the flat,
// two-level and oversubscribed interleaved fat-tree platforms, for every
// algorithm, and with two collectives in flight at once.
#include <gtest/gtest.h>

#include <cstddef>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "collective.hpp"
#include "engine_test_util.hpp"

namespace gw::engine::test {
namespace {

constexpr double kEqual = 1e-9;  // relative
constexpr std::size_t kAlwaysSendto = std::numeric_limits<std::size_t>::max();
constexpr std::size_t kAlwaysByHost = 0;

// Each group of requests runs on its own driver actor, all groups at once;
// within a group the requests run back to back. Returns every time, in order.
std::vector<double> run_groups(const ClusterSpec& c, const std::vector<std::vector<CollectiveRequest>>& groups,
                               std::size_t flows_per_actor) {
  const std::string text = run_in_child([&] {
    detail::set_flows_for_mailboxes(flows_per_actor);
    // Every phase through SimGrid, as this file compares SimGrid's two ways
    // (test_symmetry.cpp compares the classes with them).
    detail::set_flows_for_symmetry(std::numeric_limits<std::size_t>::max());
    Simulation sim(c);
    std::vector<std::vector<double>> times(groups.size());
    for (std::size_t g = 0; g < groups.size(); ++g)
      sim.add_actor("driver", 0, [&sim, &groups, &times, g] {
        for (const auto& r : groups[g]) times[g].push_back(sim.run_collective(r));
      });
    sim.run();
    std::ostringstream out;
    out.precision(17);
    for (const auto& group : times)
      for (double t : group) out << t << ' ';
    return out.str();
  });
  std::istringstream in(text);
  std::vector<double> times;
  double t;
  while (in >> t) times.push_back(t);
  return times;
}

void expect_same_both_ways(const ClusterSpec& c, const std::vector<std::vector<CollectiveRequest>>& groups) {
  const auto full = run_groups(c, groups, kAlwaysSendto);
  const auto fast = run_groups(c, groups, kAlwaysByHost);
  std::size_t count = 0;
  for (const auto& g : groups) count += g.size();
  ASSERT_EQ(full.size(), count);
  ASSERT_EQ(fast.size(), count);
  for (std::size_t i = 0; i < count; ++i) {
    EXPECT_GT(full[i], 0) << "request " << i;
    EXPECT_NEAR(fast[i], full[i], kEqual * full[i]) << "request " << i;
  }
}

CollectiveRequest simple(CollectiveOp op, Algorithm a, double bytes, Granularity g = Granularity::Aggregated) {
  auto r = request(op, a, bytes, g);
  r.protocol = Protocol::Simple;
  return r;
}

std::vector<CollectiveRequest> every_algorithm() {
  return {simple(CollectiveOp::AllReduce, Algorithm::Ring, 64 * MiB),
          simple(CollectiveOp::AllReduce, Algorithm::Tree, 64 * MiB),
          simple(CollectiveOp::AllReduce, Algorithm::Hierarchical, 64 * MiB),
          simple(CollectiveOp::AllToAll, Algorithm::Direct, 64 * MiB),
          simple(CollectiveOp::Broadcast, Algorithm::Ring, 4 * MiB),
          simple(CollectiveOp::AllGather, Algorithm::Ring, 64 * MiB),
          simple(CollectiveOp::ReduceScatter, Algorithm::Ring, 64 * MiB),
          simple(CollectiveOp::AllReduce, Algorithm::Tree, 4 * MiB, Granularity::PerStep)};
}

ClusterSpec fat_tree_interleaved(double oversubscription) {
  ClusterSpec c = switch_cluster(8, 2);
  c.fabric.topology = FabricTopology::FatTree;
  c.fabric.nodes_per_leaf = 2;
  c.fabric.oversubscription = oversubscription;
  c.placement = Placement::Interleaved;
  return c;
}

TEST(FlowRunner, FlatSwitchSameTimesBothWays) { expect_same_both_ways(switch_cluster(16), {every_algorithm()}); }

TEST(FlowRunner, TwoLevelSameTimesBothWays) { expect_same_both_ways(switch_cluster(4, 4), {every_algorithm()}); }

TEST(FlowRunner, OversubscribedInterleavedFatTreeSameTimesBothWays) {
  expect_same_both_ways(fat_tree_interleaved(4), {every_algorithm()});
}

TEST(FlowRunner, NvlsSameTimesBothWays) {
  ClusterSpec c = switch_cluster(1, 8);
  c.gpu = "h100";
  expect_same_both_ways(c, {{simple(CollectiveOp::AllReduce, Algorithm::NVLS, 64 * MiB)}});
}

// Two collectives in flight at once on overlapping ranks share links (and, by
// host, the mailboxes' hosts): each must still wait for its own flows only.
TEST(FlowRunner, ConcurrentCollectivesSameTimesBothWays) {
  auto ring = simple(CollectiveOp::AllReduce, Algorithm::Ring, 64 * MiB);
  auto tree = simple(CollectiveOp::AllReduce, Algorithm::Tree, 16 * MiB);
  auto even = ring, odd = tree;
  for (int r = 0; r < 16; r += 2) even.ranks.push_back(r);
  for (int r = 1; r < 16; r += 2) odd.ranks.push_back(r);
  expect_same_both_ways(fat_tree_interleaved(2), {{ring, even}, {tree, odd, tree}});
}

// The flows' order matters to SimGrid's solver at its precision (a 512-GPU
// tree all-reduce with its flows sorted by destination moved by 1.4e-4): the
// mailbox path must create the actions in the flows' order. 64 nodes of 8
// H100 (NVSwitch, 8 NICs), auto: tree/LL128, 2,044 flows in one phase.
TEST(FlowRunner, Dgx512TreeSameTimesBothWays) {
  const ClusterSpec c = dgx_h100_cluster(64);
  auto r = request(CollectiveOp::AllReduce, Algorithm::Auto, 100e6);
  r.protocol = Protocol::Auto;
  expect_same_both_ways(c, {{r}});
}

}  // namespace
}  // namespace gw::engine::test
