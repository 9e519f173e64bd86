// NCCL's cost model (nccl_model.hpp) against NCCL 2.20.3's tuning.cc figures
// computed by hand, and NCCL's rule (closed_form.hpp choose_collective) on
// cases whose answer is known.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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

CollectiveChoice pick(const ClusterSpec& c, double bytes, Algorithm a = Algorithm::Auto, Protocol p = Protocol::Auto) {
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
  EXPECT_DOUBLE_EQ(cost(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::LL, h100, MiB).efficiency, 87.7e9 / 450e9);
  EXPECT_DOUBLE_EQ(cost(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::LL128, h100, MiB).efficiency, 0.92);
  EXPECT_DOUBLE_EQ(cost(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::Simple, h100, MiB).efficiency, 1.0);
  EXPECT_DOUBLE_EQ(cost(CollectiveOp::AllReduce, Algorithm::NVLS, Protocol::Simple, h100, MiB).tuning_efficiency,
                   5.0 / 6);
  // A slow link stays under the cap: LL all-gather on one node is 1/3.
  const auto slow = node_cluster("h100", 1, 8, 100e9);
  EXPECT_DOUBLE_EQ(cost(CollectiveOp::AllGather, Algorithm::Ring, Protocol::LL, slow, MiB).efficiency, 1.0 / 3);
  // Tree Simple at 1 MiB: 0.92 x the correction at log2(1 MiB / 64) = 14 (0.5).
  EXPECT_DOUBLE_EQ(cost(CollectiveOp::AllReduce, Algorithm::Tree, Protocol::Simple, h100, MiB).tuning_efficiency,
                   0.92 * 0.5);
  // The wire efficiencies of the protocols' formats.
  EXPECT_DOUBLE_EQ(protocols()[0].wire_efficiency, 0.5);
  EXPECT_DOUBLE_EQ(protocols()[1].wire_efficiency, 120.0 / 128);
}

TEST(NcclChannels, CommChannelsAsNcclsRingSearchFindsThem) {
  // H100 node, 18 NVLinks at NCCL's 20 GB/s: 6 channels at 60 GB/s fill the
  // 360 GB/s, duplicated (60 >= 25) to 12, doubled to 24.
  EXPECT_EQ(nccl_comm_channels(node_cluster("h100", 1, 8, 360e9), 1), 24);
  // A100 node, 12 NVLinks at 20 GB/s: 6 at 40 GB/s, then 12, then 24.
  EXPECT_EQ(nccl_comm_channels(node_cluster("a100-80gb", 1, 8, 240e9), 1), 24);
  // H800 node, 8 NVLinks (160 GB/s): 2 at 60, 3 at 50, 4 at 40 fill it;
  // 8, then 16: the "16 coll channels" of the H800 log in NVIDIA/nccl#892.
  EXPECT_EQ(nccl_comm_channels(node_cluster("h100", 1, 8, 160e9), 1), 16);
  // Across nodes each channel takes one NIC: 8 NICs at 48 GB/s (400 Gb/s at
  // 0.96). At 48 GB/s the GPU's 360 GB/s carries 7; at 45, 8 (one per NIC):
  // 8, then 16, then 32 (at most 32).
  auto nics = node_cluster("h100", 2, 8, 360e9);
  nics.nic = {50e9 * 0.96, 5e-6};
  EXPECT_EQ(nccl_comm_channels(nics, 2), 32);
  // One 32 Gb/s socket NIC per node (3.8 GB/s): one channel at 3, no
  // duplication (3 < 25), doubled to 2.
  auto socket = node_cluster("v100", 2, 1, 100e9);
  socket.nic_count = 1;
  socket.nic = {3.8e9, 5e-6};
  EXPECT_EQ(nccl_comm_channels(socket, 2), 2);
}

TEST(NcclChannels, SmallMessagesRunOnFewerChannelsAndThreads) {
  const auto h100 = node_cluster("h100", 1, 8, 360e9);
  const NcclShape one_node{8, 1};
  // Ring LL: threshold 8 B x 8 ranks per thread, 512 threads: 32 KiB per channel.
  auto ll = nccl_channels(Algorithm::Ring, Protocol::LL, h100, one_node, 64 * KiB);
  EXPECT_EQ(ll.max_channels, 24);
  EXPECT_EQ(ll.channels, 2);
  EXPECT_EQ(ll.threads, 512);
  EXPECT_DOUBLE_EQ(ll.fraction(), 2.0 / 24);
  // At one channel the threads halve while a multiple of 128: 512 -> 64 at 8 B.
  ll = nccl_channels(Algorithm::Ring, Protocol::LL, h100, one_node, 8);
  EXPECT_EQ(ll.channels, 1);
  EXPECT_EQ(ll.threads, 64);
  // Simple: 64 B per thread, 512 threads: 8 channels at 256 KiB, all 24 from 768 KiB.
  EXPECT_EQ(nccl_channels(Algorithm::Ring, Protocol::Simple, h100, one_node, 256 * KiB).channels, 8);
  EXPECT_DOUBLE_EQ(nccl_channels(Algorithm::Ring, Protocol::Simple, h100, one_node, 768 * KiB).fraction(), 1.0);
  // LL128: 8 B per thread, 640 threads: 5,120 B per channel.
  EXPECT_EQ(nccl_channels(Algorithm::Ring, Protocol::LL128, h100, one_node, 64 * KiB).channels, 12);
  // The tree's LL threshold is not scaled by the ranks: 4 KiB per channel.
  EXPECT_EQ(nccl_channels(Algorithm::Tree, Protocol::LL, h100, one_node, 64 * KiB).channels, 16);
  // NVLS keeps its channels.
  EXPECT_DOUBLE_EQ(nccl_channels(Algorithm::NVLS, Protocol::Simple, h100, one_node, 8).fraction(), 1.0);
  // The cost runs at LL's 1/4 on 2 of 24 channels; NCCL's tuning model keeps
  // every channel, where Hopper's LL cap (87.7 GB/s) binds.
  const auto k = cost(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::LL, h100, 64 * KiB);
  EXPECT_DOUBLE_EQ(k.efficiency, 0.25 * 2.0 / 24);
  EXPECT_DOUBLE_EQ(k.tuning_efficiency, 87.7e9 / 360e9);
  // 16 of 24 channels at 512 KiB stay under the cap; all 24 (768 KiB) reach it.
  EXPECT_DOUBLE_EQ(cost(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::LL, h100, 512 * KiB).efficiency,
                   0.25 * 16 / 24);
  EXPECT_DOUBLE_EQ(cost(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::LL, h100, 768 * KiB).efficiency,
                   87.7e9 / 360e9);
}

TEST(NcclCost, PairsNcclDoesNotRun) {
  const auto a100 = node_cluster("a100-80gb", 1, 8, 300e9);
  const auto h100x2 = node_cluster("h100", 2, 8, 450e9);
  const auto bridge = node_cluster("h100", 1, 2, 150e9);
  const auto unknown = node_cluster("mi300x", 1, 8, 450e9);
  const auto none = [](CollectiveOp op, Algorithm a, Protocol p, const ClusterSpec& c) {
    return !collective_cost(op, a, p, c, collective_shape(c, c.world_size()), MiB).has_value();
  };
  EXPECT_TRUE(none(CollectiveOp::AllReduce, Algorithm::NVLS, Protocol::Simple, a100));    // no multicast
  EXPECT_TRUE(none(CollectiveOp::AllReduce, Algorithm::NVLS, Protocol::Simple, h100x2));  // one node only
  EXPECT_TRUE(none(CollectiveOp::AllReduce, Algorithm::NVLS, Protocol::Simple, bridge));  // no NVSwitch
  EXPECT_TRUE(none(CollectiveOp::AllReduce, Algorithm::NVLS, Protocol::LL, node_cluster("h100", 1, 8, 450e9)));
  EXPECT_TRUE(none(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::LL128, unknown));  // LL128 left off
  EXPECT_TRUE(none(CollectiveOp::AllGather, Algorithm::Tree, Protocol::Simple, a100));    // tree: all-reduce
  EXPECT_TRUE(none(CollectiveOp::AllToAll, Algorithm::Direct, Protocol::LL, a100));       // gradwire's: Simple
  EXPECT_FALSE(none(CollectiveOp::AllReduce, Algorithm::Hierarchical, Protocol::Simple, h100x2));
}

// Every refusal names its rule and what the cluster has; a pair NCCL runs has
// none, and the cost exists exactly when there is none.
TEST(NcclCost, EachRefusalNamesItsRule) {
  const auto a100 = node_cluster("a100-80gb", 1, 8, 300e9);
  const auto h100 = node_cluster("h100", 1, 8, 450e9);
  const auto h100x2 = node_cluster("h100", 2, 8, 450e9);
  const auto why = [](CollectiveOp op, Algorithm a, Protocol p, const ClusterSpec& c, NcclShape s) {
    const std::string r = nccl_pair_refusal(op, a, p, c, s);
    EXPECT_EQ(r.empty(), nccl_cost(op, a, p, c, s, MiB, 1e11).has_value()) << r;
    return r;
  };
  const NcclShape one{8, 1}, two{16, 2};
  const auto has = [](const std::string& text, const std::string& part) {
    EXPECT_NE(text.find(part), std::string::npos) << text;
  };
  has(why(CollectiveOp::AllReduce, Algorithm::NVLS, Protocol::Simple, a100, one),
      "compute capability 9.0 or later (a100-80gb: 8.0)");
  has(why(CollectiveOp::AllReduce, Algorithm::NVLS, Protocol::Simple, node_cluster("mi300x", 1, 8, 450e9), one),
      "mi300x: not known to gradwire");
  has(why(CollectiveOp::AllReduce, Algorithm::NVLS, Protocol::Simple, h100x2, two), "not across 2");
  has(why(CollectiveOp::AllReduce, Algorithm::NVLS, Protocol::Simple, node_cluster("h100", 1, 2, 150e9), {2, 1}),
      "4 GPUs or more (2 here)");
  auto p2p = h100;
  p2p.intra_node.transport = Transport::NVLink;
  has(why(CollectiveOp::AllReduce, Algorithm::NVLS, Protocol::Simple, p2p, one), "point to point");
  has(why(CollectiveOp::AllReduce, Algorithm::NVLS, Protocol::LL, h100, one), "nvls runs Simple only");
  has(why(CollectiveOp::AllReduce, Algorithm::NvlsTree, Protocol::Simple, h100, one), "two nodes or more");
  has(why(CollectiveOp::AllReduce, Algorithm::NvlsTree, Protocol::Simple, h100x2, {8, 2}),
      "whole nodes, every GPU of each (8 ranks on 2 nodes of 8 GPUs here)");
  has(why(CollectiveOp::AllGather, Algorithm::Tree, Protocol::Simple, a100, one), "tree is for allreduce");
  has(why(CollectiveOp::AllGather, Algorithm::Pat, Protocol::Simple, a100, one), "one GPU per node");
  has(why(CollectiveOp::AllReduce, Algorithm::Pat, Protocol::Simple, a100, one), "pat is for allgather");
  auto tcpx = node_cluster("h100", 4, 1, 450e9);
  tcpx.nic.transport = Transport::TCPX;
  has(why(CollectiveOp::AllGather, Algorithm::Pat, Protocol::Simple, tcpx, {4, 4}), "tcpx");
  tcpx.nic.transport = Transport::Network;
  EXPECT_EQ(why(CollectiveOp::AllGather, Algorithm::Pat, Protocol::Simple, tcpx, {4, 4}), "");
  auto pcie = a100;
  pcie.intra_node.transport = Transport::PcieP2P;
  has(why(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::LL128, pcie, one), "LL128 only with NVLink");
  has(why(CollectiveOp::AllToAll, Algorithm::Direct, Protocol::LL, a100, one), "direct is gradwire's own schedule");
  has(why(CollectiveOp::AllToAll, Algorithm::Ring, Protocol::Simple, a100, one), "ring is for allreduce, allgather");
  has(why(CollectiveOp::AllGather, Algorithm::Hierarchical, Protocol::Simple, a100, one),
      "hierarchical is for allreduce");
  EXPECT_EQ(why(CollectiveOp::AllReduce, Algorithm::NVLS, Protocol::Simple, h100, one), "");
  EXPECT_EQ(why(CollectiveOp::AllReduce, Algorithm::NvlsTree, Protocol::Simple, h100x2, two), "");
  EXPECT_EQ(why(CollectiveOp::Broadcast, Algorithm::Ring, Protocol::Simple, a100, one), "");
}

TEST(NcclCost, NvlsTreeAsNcclsTuningModel) {
  // tuning.cc (NVLS_TREE, Simple only): baseLat 0, NVLink hwLat 23 us, Net
  // 14 us: 23 + 2 log2(m) x 14 us; algorithm bandwidth 5/6 of the bus's.
  const auto h100x2 = node_cluster("h100", 2, 8, 450e9);
  const auto h100x64 = node_cluster("h100", 64, 8, 450e9);
  EXPECT_NEAR(cost(CollectiveOp::AllReduce, Algorithm::NvlsTree, Protocol::Simple, h100x2, MiB).latency, 51e-6, 1e-12);
  EXPECT_NEAR(cost(CollectiveOp::AllReduce, Algorithm::NvlsTree, Protocol::Simple, h100x64, MiB).latency, 191e-6,
              1e-12);
  EXPECT_DOUBLE_EQ(cost(CollectiveOp::AllReduce, Algorithm::NvlsTree, Protocol::Simple, h100x2, MiB).tuning_efficiency,
                   5.0 / 6);
  const auto none = [](Algorithm a, Protocol p, const ClusterSpec& c, int ranks) {
    return !collective_cost(CollectiveOp::AllReduce, a, p, c, collective_shape(c, ranks), MiB).has_value();
  };
  EXPECT_TRUE(none(Algorithm::NvlsTree, Protocol::Simple, node_cluster("h100", 1, 8, 450e9), 8));  // two nodes or more
  EXPECT_TRUE(none(Algorithm::NvlsTree, Protocol::Simple, node_cluster("a100-80gb", 2, 8, 300e9), 16));  // no NVLS
  EXPECT_TRUE(none(Algorithm::NvlsTree, Protocol::Simple, node_cluster("h100", 2, 2, 150e9), 4));        // no NVSwitch
  EXPECT_TRUE(none(Algorithm::NvlsTree, Protocol::LL, h100x2, 16));                                      // Simple only
  EXPECT_TRUE(none(Algorithm::NvlsTree, Protocol::Simple, h100x2, 12));  // 8 + 4 ranks: not whole nodes
  EXPECT_FALSE(none(Algorithm::NvlsTree, Protocol::Simple, h100x2, 16));
  EXPECT_EQ(parse_algorithm("NVLSTree"), Algorithm::NvlsTree);  // NCCL_ALGO's spelling
  EXPECT_EQ(to_string(Algorithm::NvlsTree), "nvlstree");
}

TEST(NcclCost, PatAsNcclsTuningModel) {
  // tuning.cc (NCCL 2.23+, PAT: all-gather / reduce-scatter, Simple, one GPU
  // per node): 8 + log2i(nodes) x (28 / 3.5) + 2.8 x ranks us (28 us: the
  // tree's Net/Simple hwLat, 2.20.3's table); bus bandwidth x 0.75.
  const auto x64 = node_cluster("h100", 64, 1, 450e9);
  EXPECT_NEAR(cost(CollectiveOp::AllGather, Algorithm::Pat, Protocol::Simple, x64, MiB).latency, 235.2e-6, 1e-12);
  EXPECT_NEAR(cost(CollectiveOp::ReduceScatter, Algorithm::Pat, Protocol::Simple, x64, MiB).latency, 235.2e-6, 1e-12);
  const auto x512 = node_cluster("a100-80gb", 512, 1, 300e9);  // 8 + 9 x 8 + 2.8 x 512
  EXPECT_NEAR(cost(CollectiveOp::AllGather, Algorithm::Pat, Protocol::Simple, x512, 8).latency, 1513.6e-6, 1e-12);
  EXPECT_DOUBLE_EQ(cost(CollectiveOp::AllGather, Algorithm::Pat, Protocol::Simple, x64, 8).efficiency, 0.75);
  EXPECT_DOUBLE_EQ(cost(CollectiveOp::AllGather, Algorithm::Pat, Protocol::Simple, x64, GiB).efficiency, 0.75);
  const auto none = [](CollectiveOp op, Protocol p, const ClusterSpec& c) {
    return !collective_cost(op, Algorithm::Pat, p, c, collective_shape(c, c.world_size()), MiB).has_value();
  };
  EXPECT_FALSE(none(CollectiveOp::AllGather, Protocol::Simple, x64));
  EXPECT_TRUE(none(CollectiveOp::AllReduce, Protocol::Simple, x64));                                // AG / RS only
  EXPECT_TRUE(none(CollectiveOp::AllGather, Protocol::LL, x64));                                    // Simple only
  EXPECT_TRUE(none(CollectiveOp::AllGather, Protocol::Simple, node_cluster("h100", 8, 8, 450e9)));  // 1 GPU/node
  EXPECT_TRUE(none(CollectiveOp::AllGather, Protocol::Simple, node_cluster("h100", 1, 1, 450e9)));  // one rank
  auto tcpx = x64;
  tcpx.nic.transport = Transport::TCPX;  // network device offload: NCCL turns PAT off
  EXPECT_TRUE(none(CollectiveOp::AllGather, Protocol::Simple, tcpx));
  EXPECT_EQ(parse_algorithm("PAT"), Algorithm::Pat);  // NCCL_ALGO's spelling
  EXPECT_EQ(to_string(Algorithm::Pat), "pat");
}

TEST(NcclChoice, ManyOneGpuNodesPickPatForMidSizeAllGathers) {
  // 64 nodes x 1 H100, one 400 Gb/s NIC each. Ring LL's 64 steps cost 177 us
  // and a quarter of the bandwidth; ring Simple's 890 us; PAT's 235 us at
  // 3/4 of the bandwidth on S (NCCL prices PAT on S, the ring on 63/64 S):
  // PAT from about 1 MiB until the ring's full bandwidth pays its latency.
  const auto c = node_cluster("h100", 64, 1, 450e9);
  const NcclShape shape = collective_shape(c, 64);
  const auto choose = [&](CollectiveOp op, double s) {
    return choose_collective(op, Algorithm::Auto, Protocol::Auto, c, shape, s);
  };
  for (auto op : {CollectiveOp::AllGather, CollectiveOp::ReduceScatter}) {
    EXPECT_EQ(choose(op, 8).algorithm, Algorithm::Ring);
    EXPECT_EQ(choose(op, 8).protocol, Protocol::LL);
    for (double s : {4 * MiB, 16 * MiB}) {
      const auto p = choose(op, s);
      EXPECT_EQ(p.algorithm, Algorithm::Pat) << s;
      EXPECT_EQ(p.protocol, Protocol::Simple) << s;
      EXPECT_DOUBLE_EQ(p.time, *collective_time(op, Algorithm::Pat, Protocol::Simple, c, shape, s));
      for (const auto& pi : protocols()) {
        if (!collective_cost(op, Algorithm::Ring, pi.protocol, c, shape, s)) continue;
        EXPECT_LT(p.tuning_time, choose_collective(op, Algorithm::Ring, pi.protocol, c, shape, s).tuning_time);
      }
    }
    EXPECT_EQ(choose(op, 4 * GiB).algorithm, Algorithm::Ring);
  }
  // Eight GPUs per node: no PAT, whatever the size.
  const auto x8 = node_cluster("h100", 8, 8, 450e9);
  EXPECT_NE(choose_collective(CollectiveOp::AllGather, Algorithm::Auto, Protocol::Auto, x8, collective_shape(x8, 64),
                              16 * MiB)
                .algorithm,
            Algorithm::Pat);
}

TEST(NcclChoice, TwoH100NodesPickNvlsTreeForLargeAllReduces) {
  // 2 x 8 H100, 8 x 400 Gb/s NICs per node: NVLS+tree's 5/6 x min(NVLink,
  // node NICs) beats the ring's NIC-bound bandwidth at large sizes; small
  // sizes keep a lower-latency pair (51 us is NVLS+tree's floor).
  auto c = node_cluster("h100", 2, 8, 450e9);
  c.nic = {50e9, 5e-6};
  const auto big = pick(c, GiB);
  EXPECT_EQ(big.algorithm, Algorithm::NvlsTree);
  EXPECT_EQ(big.protocol, Protocol::Simple);
  EXPECT_NE(pick(c, 8).algorithm, Algorithm::NvlsTree);
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
  // The refusal says why, each reason once.
  try {
    pick(node_cluster("a100-80gb", 1, 8, 300e9), MiB, Algorithm::NVLS);
    ADD_FAILURE() << "nvls on A100 was not refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "no nvls for allreduce on this cluster: nvls: NVLS needs a GPU of compute capability 9.0 or later "
                 "(a100-80gb: 8.0)");
  }
  try {
    choose_collective(CollectiveOp::AllToAll, Algorithm::Auto, Protocol::LL, c, collective_shape(c, 8), MiB);
    ADD_FAILURE() << "alltoall with LL was not refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "no algorithm with protocol LL for alltoall on this cluster: direct is gradwire's own schedule and "
                 "runs Simple only");
  }
}

TEST(NcclChoice, TheChoiceIsTheFastestUnderNcclsTuningModel) {
  const auto c = node_cluster("h100", 2, 8, 450e9);
  const NcclShape shape = collective_shape(c, 16);
  for (double s : {8.0, 256 * KiB, 16 * MiB, GiB}) {
    const auto best = pick(c, s);
    EXPECT_DOUBLE_EQ(best.time, *collective_time(CollectiveOp::AllReduce, best.algorithm, best.protocol, c, shape, s));
    for (Algorithm a : nccl_algorithms(CollectiveOp::AllReduce))
      for (const auto& pi : protocols()) {
        if (!collective_cost(CollectiveOp::AllReduce, a, pi.protocol, c, shape, s)) continue;
        EXPECT_LE(best.tuning_time, pick(c, s, a, pi.protocol).tuning_time)
            << s << " " << to_string(a) << "/" << pi.name;
      }
  }
  // At 64 KiB the ring runs on 2 of its channels: slower than NCCL's model of it.
  const auto ring = pick(c, 64 * KiB, Algorithm::Ring, Protocol::LL);
  EXPECT_GT(ring.time, ring.tuning_time);
}

// --- The per-size ramp (issue 31; docs/engine.md "The per-size ramp") -------

// NVLS on one node of 8: 16 channels x 8 heads, chunks of 128 KiB shrunk for
// small sizes (enqueue.cc): K = 1 at 1 MiB (16 KiB chunks), 8 at 32 MiB (32
// KiB) and 64 MiB (64 KiB), 64 at 1 GiB (128 KiB); d = 3 stages alike, so
// the fill is 2 chunk times. The efficiency is 5/6 x 15/16 (NVLS's channels)
// x K / (K + 2), the two hand-offs 2 t_stage; NCCL's choice keeps 5/6.
TEST(NcclRamp, NvlsFillFollowsNcclsChunks) {
  const auto h100 = node_cluster("h100", 1, 8, 450e9);
  for (auto [bytes, k] : {std::pair{double(MiB), 1.0}, {32.0 * MiB, 8.0}, {64.0 * MiB, 8.0}, {double(GiB), 64.0}}) {
    const NcclCost k_cost = cost(CollectiveOp::AllReduce, Algorithm::NVLS, Protocol::Simple, h100, bytes);
    EXPECT_DOUBLE_EQ(k_cost.efficiency, 5.0 / 6 * 15.0 / 16 * k / (k + 2)) << bytes;
    EXPECT_DOUBLE_EQ(k_cost.tuning_efficiency, 5.0 / 6) << bytes;
    EXPECT_DOUBLE_EQ(k_cost.ramp_latency, nccl_ramp().launch + 2 * nccl_ramp().stage) << bytes;  // no proxy
    EXPECT_DOUBLE_EQ(k_cost.inter_node_ratio, 1.0);
  }
}

// NVLSTree on 2 x 8 with 8 NICs: 16 channels x 8 heads (one per NIC), 512 KiB
// chunks shrunk to 32 KiB at 1 MiB (K = 1), none at 8 GiB (K = 128); d = 4 +
// 2 log2(2) = 6 stages: 4 NVLS stages on NVLink (450 GB/s at 5/6 x 15/16:
// 351.6 GB/s, the slowest), 2 on the node's NICs (8 x 50 GB/s), so the fill
// is 3 + 2 x 351.6 / 400 chunk times. The trees between nodes run without
// NVLS's ratio.
TEST(NcclRamp, NvlsTreeFillAndPlainNetwork) {
  const auto h100x2 = node_cluster("h100", 2, 8, 450e9);
  const double nvls = 450.0 * 5 / 6 * 15 / 16;
  const double fill = 3 + 2 * nvls / 400.0;
  for (auto [bytes, k] : {std::pair{double(MiB), 1.0}, {8.0 * GiB, 128.0}}) {
    const NcclCost c = cost(CollectiveOp::AllReduce, Algorithm::NvlsTree, Protocol::Simple, h100x2, bytes);
    EXPECT_NEAR(c.efficiency, 5.0 / 6 * 15.0 / 16 * k / (k + fill), 1e-12) << bytes;
    EXPECT_NEAR(c.efficiency * c.inter_node_ratio, k / (k + fill), 1e-12) << bytes;
    EXPECT_NEAR(c.ramp_latency, nccl_ramp().launch + 5 * nccl_ramp().stage, 1e-18);  // RDMA-class NIC: no proxy
  }
}

// 32 nodes of 8 GPUs on 1 Gb/s NICs. NVLS+tree: 4 NVLS stages on NVLink and
// 10 between nodes (5 levels up, 5 down); the NVLink stages add almost
// nothing to the fill (9 of the NIC's chunk times and 4 x 1 / 187.5 of one:
// NVLS runs at 5/6 x 15/16 of 240 GB/s), not 13 (the fault a per-depth fill had: every stage charged at the
// NIC's pace). The tree: no fill and no hand-offs on top of NCCL's own
// latency model and per-size tree correction (the ramp adds the launch floor
// alone), so a 64 KiB all-reduce stays near NCCL's model (it took 41 ms with
// the per-depth fill).
TEST(NcclRamp, FillChargesEachStageAtItsOwnLinkAndTheTreeOnlyNcclsCorrection) {
  auto c = node_cluster("h100", 32, 8, 240e9);
  c.nic = {0.125e9, 5e-6};
  const NcclShape shape = collective_shape(c, 256);
  const AlgorithmRow& nvlstree = *find_algorithm_row(CollectiveOp::AllReduce, Algorithm::NvlsTree);
  const NcclPipeline pipe = nvlstree.pipeline(nvlstree, Protocol::Simple, c, shape, 64.0 * KiB);
  EXPECT_EQ(pipe.depth, 14);
  EXPECT_NEAR(pipe.fill, 9 + 4 * (8 * 0.125) / (240 * 5.0 / 6 * 15 / 16), 1e-12);
  const AlgorithmRow& tree = *find_algorithm_row(CollectiveOp::AllReduce, Algorithm::Tree);
  for (Protocol p : {Protocol::LL, Protocol::Simple}) {
    const NcclPipeline t = tree.pipeline(tree, p, c, shape, 64.0 * KiB);
    EXPECT_EQ(t.depth, 1);  // its 14 chain stages and 10 levels are in NCCL's latency model
    EXPECT_EQ(t.fill, 0);
    const NcclCost k = cost(CollectiveOp::AllReduce, Algorithm::Tree, p, c, 64.0 * KiB);
    EXPECT_DOUBLE_EQ(k.efficiency,
                     k.tuning_efficiency * nccl_channels(Algorithm::Tree, p, c, shape, 64.0 * KiB).fraction());
    EXPECT_DOUBLE_EQ(k.ramp_latency, nccl_ramp().launch);
  }
}

// Ring: lock-step (d = 1), no fill: NCCL's factors alone. Across nodes over
// sockets the proxy handles 2(n-1) x loops steps x 2 slices (Simple) x the
// active channels one after another: 2 nodes of 1 GPU, 4 channels,
// 64 MiB: loops = ceil(64 MiB / 4 / (2 x 2 MiB)) = 4, so M = 2 x 4 x 2 x 4 = 64.
// The proxy posts while the GPUs move data, so only what M x o_proxy takes
// beyond the transfer shows: nothing at a small o_proxy, M x its change once
// the proxy is the slower side.
TEST(NcclRamp, RingProxyMessagesOverSocketsOverlapTheTransfer) {
  auto c = node_cluster("h100", 2, 1, 450e9);
  c.nic.transport = Transport::Socket;
  const NcclShape shape = collective_shape(c, 2);
  const double bytes = 64.0 * MiB;
  ASSERT_EQ(nccl_comm_channels(c, 2), 4);
  ASSERT_EQ(nccl_channels(Algorithm::Ring, Protocol::Simple, c, shape, bytes).channels, 4);
  const double link = collective_link(c, shape).bandwidth;
  const auto raw = *nccl_cost(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::Simple, c, shape, bytes, link);
  EXPECT_DOUBLE_EQ(raw.efficiency, 1.0);
  EXPECT_NEAR(raw.proxy_time, 64 * nccl_ramp().proxy, 1e-15);
  EXPECT_DOUBLE_EQ(raw.ramp_latency, nccl_ramp().launch);
  const auto time = [&](double proxy) {
    return *collective_time(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::Simple, c, shape, bytes,
                            NcclRamp{0, 0, proxy});
  };
  EXPECT_DOUBLE_EQ(time(1e-9), time(0));                   // 64 ns of posts under ~1 ms of transfer
  EXPECT_NEAR(time(2e-3) - time(1e-3), 64 * 1e-3, 1e-12);  // the proxy is the slower side
  EXPECT_GT(time(1e-3), 64 * 1e-3);
  EXPECT_EQ(cost(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::Simple, c, bytes).proxy_time, 0);  // folded
  // LL: one message per step, loops of 32 KiB chunks: ceil(64 KiB / 4 / (2 x 32 KiB)) = 1 at 64 KiB.
  const auto ll = *nccl_cost(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::LL, c, shape, 64.0 * KiB, link);
  const int active = nccl_channels(Algorithm::Ring, Protocol::LL, c, shape, 64.0 * KiB).channels;
  EXPECT_NEAR(ll.proxy_time, 2.0 * active * nccl_ramp().proxy, 1e-15);
  // The same cluster over an RDMA NIC: no proxy term.
  c.nic.transport = Transport::IB;
  EXPECT_DOUBLE_EQ(
      nccl_cost(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::Simple, c, shape, bytes, link)->proxy_time, 0.0);
}

// The closed form adds the ramp after NCCL's latency; NCCL's choice prices
// the pair without it (its tuning time is the ring's without ramp_latency).
TEST(NcclRamp, InTheClosedFormNotInTheChoice) {
  auto c = node_cluster("h100", 2, 1, 450e9);
  c.nic.transport = Transport::Socket;
  const NcclShape shape = collective_shape(c, 2);
  const double bytes = 64.0 * MiB;
  const NcclCost k = cost(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::Simple, c, bytes);
  const auto link = collective_link(c, shape);
  const double expect = std::max(k.latency, link.alpha) + k.ramp_latency + bytes / link.bandwidth;
  EXPECT_NEAR(*collective_time(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::Simple, c, shape, bytes), expect,
              1e-12 * expect);
  const auto chosen = choose_collective(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::Simple, c, shape, bytes);
  EXPECT_NEAR(chosen.tuning_time, expect - k.ramp_latency, 1e-12 * expect);
  // Other constants (a fit's): the time moves by exactly their terms.
  const NcclRamp none{};
  const NcclRamp probe{1e-6, 0, 2e-6};
  const double t0 = *collective_time(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::Simple, c, shape, bytes, none);
  const double t1 =
      *collective_time(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::Simple, c, shape, bytes, probe);
  EXPECT_NEAR(t1 - t0, 1e-6, 1e-12);  // the proxy's 128 us hide under the transfer
  // A proxy slower than the transfer: its change shows in full (64 messages).
  const NcclRamp slow{1e-6, 0, 1e-3}, slower{2e-6, 0, 2e-3};
  const double t2 = *collective_time(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::Simple, c, shape, bytes, slow);
  const double t3 =
      *collective_time(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::Simple, c, shape, bytes, slower);
  EXPECT_NEAR(t3 - t2, 1e-6 + 64 * 1e-3, 1e-12);
}

// NCCL's chunks per protocol (init.cc buffers / NCCL_STEPS, enqueue.cc).
TEST(NcclRamp, ChunkPerProtocol) {
  EXPECT_DOUBLE_EQ(nccl_chunk_bytes(Protocol::LL, true), 32.0 * KiB);
  EXPECT_DOUBLE_EQ(nccl_chunk_bytes(Protocol::LL128, true), 120.0 * 640 * 8 / 16 * 15);
  EXPECT_DOUBLE_EQ(nccl_chunk_bytes(Protocol::Simple, true), 2.0 * MiB);
  EXPECT_DOUBLE_EQ(nccl_chunk_bytes(Protocol::Simple, false), 512.0 * KiB);
}

}  // namespace
}  // namespace gw
