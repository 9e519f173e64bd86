// NCCL's cost model (nccl_model.hpp) against NCCL 2.20.3's tuning.cc figures
// computed by hand, and NCCL's rule (closed_form.hpp choose_collective) on
// cases whose answer is known.
#include <gtest/gtest.h>

#include <stdexcept>

#include "gradwire/model/closed_form.hpp"
#include "gradwire/model/nccl_model.hpp"

namespace gw {
namespace {

constexpr double KiB = 1024.0, MiB = 1024.0 * KiB, GiB = 1024.0 * MiB;

ClusterSpec node_cluster(const std::string& gpu, int nodes, int gpus, double intra_bw) {
  ClusterSpec c;
  c.nodes = nodes;
  c.gpus_per_node = gpus;
  c.gpu = gpu;
  c.intra_node = {intra_bw, 1e-6};
  c.nic_count = gpus;
  c.nic = {50e9, 5e-6};
  c.fabric.latency = 1e-6;
  return c;
}

NcclCost cost(CollectiveOp op, Algorithm a, Protocol p, const ClusterSpec& c, double bytes) {
  const auto k = collective_cost(op, a, p, c, collective_shape(c, c.world_size()), bytes);
  EXPECT_TRUE(k.has_value());
  return k.value_or(NcclCost{});
}

CollectiveChoice pick(const ClusterSpec& c, double bytes, Algorithm a = Algorithm::Auto,
                      Protocol p = Protocol::Auto) {
  return choose_collective(CollectiveOp::AllReduce, a, p, c, collective_shape(c, c.world_size()), bytes);
}

TEST(NcclCost, RingLatencyIsBasePlusHopsOfTheClass) {
  const auto h100 = node_cluster("h100", 1, 8, 450e9);
  // One node: 6.6 + 14 x 0.6 us (LL), 8.4 + 14 x 3.4 us (Simple).
  EXPECT_NEAR(cost(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::LL, h100, MiB).latency, 15.0e-6, 1e-12);
  EXPECT_NEAR(cost(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::Simple, h100, MiB).latency, 56.0e-6, 1e-12);
  // All-gather: 7 steps, 6.6 + 7 x 0.6.
  EXPECT_NEAR(cost(CollectiveOp::AllGather, Algorithm::Ring, Protocol::LL, h100, MiB).latency, 10.8e-6, 1e-12);
  // 4 nodes of 8, LL: 62 steps, 8 of them inter-node (2.7), the others
  // max(0.6, net overhead 1.0): 6.6 + 54 x 1.0 + 8 x 2.7.
  const auto a100x4 = node_cluster("a100-80gb", 4, 8, 300e9);
  EXPECT_NEAR(cost(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::LL, a100x4, MiB).latency, 82.2e-6, 1e-12);
}

TEST(NcclCost, TreeLatencyIsTheChainPlusTheTreeDepth) {
  // 4 x 8: 6.8 + 2 (7 x 0.6 + log2(4) x 5.0) us.
  const auto c = node_cluster("a100-80gb", 4, 8, 300e9);
  EXPECT_NEAR(cost(CollectiveOp::AllReduce, Algorithm::Tree, Protocol::LL, c, 8).latency, 35.2e-6, 1e-12);
}

TEST(NcclCost, ProtocolBandwidthFactors) {
  const auto h100 = node_cluster("h100", 1, 8, 450e9);
  // LL: 1/4 of the link, capped at Hopper's 87.7 GB/s on one node.
  EXPECT_DOUBLE_EQ(cost(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::LL, h100, MiB).efficiency,
                   87.7e9 / 450e9);
  EXPECT_DOUBLE_EQ(cost(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::LL128, h100, MiB).efficiency, 0.92);
  EXPECT_DOUBLE_EQ(cost(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::Simple, h100, MiB).efficiency, 1.0);
  EXPECT_DOUBLE_EQ(cost(CollectiveOp::AllReduce, Algorithm::NVLS, Protocol::Simple, h100, MiB).efficiency, 5.0 / 6);
  // A slow link stays under the cap: LL all-gather on one node is 1/3.
  const auto slow = node_cluster("h100", 1, 8, 100e9);
  EXPECT_DOUBLE_EQ(cost(CollectiveOp::AllGather, Algorithm::Ring, Protocol::LL, slow, MiB).efficiency, 1.0 / 3);
  // Tree Simple at 1 MiB: 0.92 x the correction at log2(1 MiB / 64) = 14 (0.5).
  EXPECT_DOUBLE_EQ(cost(CollectiveOp::AllReduce, Algorithm::Tree, Protocol::Simple, h100, MiB).efficiency,
                   0.92 * 0.5);
  // The wire efficiencies of the protocols' formats.
  EXPECT_DOUBLE_EQ(protocols()[0].wire_efficiency, 0.5);
  EXPECT_DOUBLE_EQ(protocols()[1].wire_efficiency, 120.0 / 128);
}

TEST(NcclCost, PairsNcclDoesNotRun) {
  const auto a100 = node_cluster("a100-80gb", 1, 8, 300e9);
  const auto h100x2 = node_cluster("h100", 2, 8, 450e9);
  const auto bridge = node_cluster("h100", 1, 2, 150e9);
  const auto unknown = node_cluster("mi300x", 1, 8, 450e9);
  const auto none = [](CollectiveOp op, Algorithm a, Protocol p, const ClusterSpec& c) {
    return !collective_cost(op, a, p, c, collective_shape(c, c.world_size()), MiB).has_value();
  };
  EXPECT_TRUE(none(CollectiveOp::AllReduce, Algorithm::NVLS, Protocol::Simple, a100));     // no multicast
  EXPECT_TRUE(none(CollectiveOp::AllReduce, Algorithm::NVLS, Protocol::Simple, h100x2));   // one node only
  EXPECT_TRUE(none(CollectiveOp::AllReduce, Algorithm::NVLS, Protocol::Simple, bridge));   // no NVSwitch
  EXPECT_TRUE(none(CollectiveOp::AllReduce, Algorithm::NVLS, Protocol::LL, node_cluster("h100", 1, 8, 450e9)));
  EXPECT_TRUE(none(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::LL128, unknown));   // LL128 left off
  EXPECT_TRUE(none(CollectiveOp::AllGather, Algorithm::Tree, Protocol::Simple, a100));     // tree: all-reduce
  EXPECT_TRUE(none(CollectiveOp::AllToAll, Algorithm::Direct, Protocol::LL, a100));        // gradwire's: Simple
  EXPECT_FALSE(none(CollectiveOp::AllReduce, Algorithm::Hierarchical, Protocol::Simple, h100x2));
}

TEST(NcclChoice, OneH100NodeRingLLThenNvlsSimple) {
  // The must-show: ring/LL for small sizes, NVLS/Simple from about 1 MB.
  const auto c = node_cluster("h100", 1, 8, 450e9);
  for (double s : {8.0, KiB, 64 * KiB}) {
    const auto p = pick(c, s);
    EXPECT_EQ(p.algorithm, Algorithm::Ring) << s;
    EXPECT_EQ(p.protocol, Protocol::LL) << s;
  }
  for (double s : {4 * MiB, 64 * MiB, GiB}) {
    const auto p = pick(c, s);
    EXPECT_EQ(p.algorithm, Algorithm::NVLS) << s;
    EXPECT_EQ(p.protocol, Protocol::Simple) << s;
  }
}

TEST(NcclChoice, SmallPicksLLLargePicksSimple) {
  const auto a100 = node_cluster("a100-80gb", 1, 8, 300e9);
  EXPECT_EQ(pick(a100, 8).protocol, Protocol::LL);
  EXPECT_EQ(pick(a100, GiB).protocol, Protocol::Simple);
  EXPECT_EQ(pick(a100, GiB).algorithm, Algorithm::Ring);  // no NVLS on A100; the tree moves twice the bytes
}

TEST(NcclChoice, SmallAllReduceAcrossNodesTakesTensOfMicroseconds) {
  // 4 x 8 A100: the 8 B all-reduce is the tree with LL (35 us), not the
  // 62-step ring (the 868 us).
  const auto c = node_cluster("a100-80gb", 4, 8, 300e9);
  const auto p = pick(c, 8);
  EXPECT_EQ(p.algorithm, Algorithm::Tree);
  EXPECT_EQ(p.protocol, Protocol::LL);
  EXPECT_LT(p.time, 50e-6);
  EXPECT_GT(pick(c, 8, Algorithm::Ring, Protocol::Simple).time, 5 * p.time);
}

TEST(NcclChoice, PinsAreHonoured) {
  const auto c = node_cluster("h100", 1, 8, 450e9);
  const auto p = pick(c, GiB, Algorithm::Ring, Protocol::Auto);
  EXPECT_EQ(p.algorithm, Algorithm::Ring);
  EXPECT_EQ(p.protocol, Protocol::Simple);
  EXPECT_EQ(pick(c, 8, Algorithm::Auto, Protocol::Simple).protocol, Protocol::Simple);
  EXPECT_THROW(pick(node_cluster("a100-80gb", 1, 8, 300e9), MiB, Algorithm::NVLS), std::invalid_argument);
  EXPECT_THROW(pick(c, MiB, Algorithm::NVLS, Protocol::LL), std::invalid_argument);
}

TEST(NcclChoice, TheChoiceIsTheFastestClosedForm) {
  const auto c = node_cluster("h100", 2, 8, 450e9);
  const NcclShape shape = collective_shape(c, 16);
  for (double s : {8.0, 256 * KiB, 16 * MiB, GiB}) {
    const auto best = pick(c, s);
    for (Algorithm a : nccl_algorithms(CollectiveOp::AllReduce))
      for (const auto& pi : protocols()) {
        const auto t = collective_time(CollectiveOp::AllReduce, a, pi.protocol, c, shape, s);
        if (!t) continue;
        EXPECT_LE(best.time, *t) << s << " " << to_string(a) << "/" << pi.name;
      }
  }
}

}  // namespace
}  // namespace gw
