// NCCL's algorithms x protocols (ring all-reduce, all-gather, reduce-scatter;
// tree and nvls all-reduce; pat all-gather and reduce-scatter; LL, LL128, Simple) simulated on one non-blocking
// switch equal their closed forms (collective_model.hpp with NCCL's cost,
// nccl_model.hpp) within 0.1%, Aggregated and PerStep, N in {2, 8, 64, 512}.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <tuple>

#include "collective.hpp"
#include "engine_test_util.hpp"
#include "gradwire/model/closed_form.hpp"
#include "gradwire/model/collective_model.hpp"
#include "gradwire/model/topology.hpp"

namespace gw::engine {
namespace {
using namespace test;
namespace cm = gw::collective;

constexpr double kTolerance = 1e-3;  // relative

struct Pair {
  CollectiveOp op;
  Algorithm a;
  Protocol p;
};

std::string label(const Pair& x) { return to_string(x.op) + "/" + to_string(x.a) + "/" + to_string(x.p); }

// Every pair NCCL runs for the ring ops and the tree, and nvls (one node).
std::vector<Pair> ring_and_tree_pairs() {
  std::vector<Pair> out;
  for (const auto& pi : protocols()) {
    for (auto op : {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter})
      out.push_back({op, Algorithm::Ring, pi.protocol});
    out.push_back({CollectiveOp::AllReduce, Algorithm::Tree, pi.protocol});
  }
  return out;
}

// H100s (LL128 on: compute capability 90), one GPU per node on one switch.
ClusterSpec h100_switch(int nodes, int gpus = 1) {
  ClusterSpec c = switch_cluster(nodes, gpus);
  c.gpu = "h100";
  return c;
}

double closed_form(const ClusterSpec& c, const Pair& x, double s, cm::AlphaBeta ab, bool per_step) {
  const int n = c.world_size();
  const auto cost = collective_cost(x.op, x.a, x.p, c, collective_shape(c, n), s);
  if (!cost) ADD_FAILURE() << label(x) << " not available";
  if (x.a == Algorithm::Tree) return cm::tree_allreduce_time(n, s, ab, *cost, per_step);
  if (x.a == Algorithm::NVLS) return cm::nvls_allreduce_time(n, s, ab, *cost);
  if (x.op == CollectiveOp::AllReduce) return cm::ring_allreduce_time(n, s, ab, *cost, per_step);
  if (x.op == CollectiveOp::AllGather) return cm::ring_allgather_time(n, s, ab, *cost, per_step);
  return cm::ring_reducescatter_time(n, s, ab, *cost, per_step);
}

void expect_closed_forms(const ClusterSpec& c, const std::vector<Pair>& pairs, const std::vector<double>& sizes,
                         const std::vector<Granularity>& grans) {
  std::vector<CollectiveRequest> reqs;
  for (const auto& x : pairs)
    for (double s : sizes)
      for (auto g : grans) {
        reqs.push_back(request(x.op, x.a, s, g));
        reqs.back().protocol = x.p;
      }
  const auto run = run_collectives(c, reqs);
  ASSERT_EQ(run.times.size(), reqs.size());
  std::size_t i = 0;
  for (const auto& x : pairs)
    for (double s : sizes)
      for (auto g : grans) {
        const bool per_step = g == Granularity::PerStep;
        const double expect = closed_form(c, x, s, {run.alpha, run.bandwidth}, per_step);
        EXPECT_NEAR(run.times[i], expect, kTolerance * expect)
            << label(x) << (per_step ? " per-step" : " aggregated") << " n=" << c.world_size() << " size=" << s;
        ++i;
      }
}

const std::vector<double> kSizes = {KiB, MiB, 64 * MiB};

TEST(NcclPairs, RingAndTreeEqualClosedFormsUpTo64) {
  for (int n : {2, 8, 64})
    expect_closed_forms(h100_switch(n), ring_and_tree_pairs(), kSizes, {Granularity::Aggregated, Granularity::PerStep});
}

TEST(NcclPairs, RingAndTreeEqualClosedFormsAt512) {
  const auto c = h100_switch(512);
  expect_closed_forms(c, ring_and_tree_pairs(), kSizes, {Granularity::Aggregated});
  expect_closed_forms(c, {{CollectiveOp::AllReduce, Algorithm::Ring, Protocol::Simple}}, {64 * MiB},
                      {Granularity::PerStep});
}

// NCCL's tree as NCCL builds it: chains inside the nodes, a double binary
// tree between them. 8 GPUs per node (N = 16, 64, 512) on the NIC-bound test
// switch (12.5 GB/s NICs, 300 GB/s GPU links): the closed form
// (collective_time: tree_links, collective_node_sizes) within 0.1%, every
// protocol, Aggregated, PerStep up to 64 ranks; one node (a chain) likewise.
TEST(NcclPairs, TreeWithNodeChainsEqualsClosedForm) {
  for (auto [nodes, gpus] : {std::pair{2, 8}, {8, 8}, {64, 8}, {1, 8}}) {
    const auto c = h100_switch(nodes, gpus);
    const int n = c.world_size();
    std::vector<CollectiveRequest> reqs;
    std::vector<std::tuple<Protocol, double, bool>> keys;
    for (const auto& pi : protocols())
      for (double s : kSizes)
        for (bool per_step : {false, true}) {
          if (per_step && n > 64) continue;
          reqs.push_back(request(CollectiveOp::AllReduce, Algorithm::Tree, s,
                                 per_step ? Granularity::PerStep : Granularity::Aggregated));
          reqs.back().protocol = pi.protocol;
          keys.emplace_back(pi.protocol, s, per_step);
        }
    const auto run = run_collectives(c, reqs);
    ASSERT_EQ(run.times.size(), reqs.size());
    for (std::size_t i = 0; i < reqs.size(); ++i) {
      const auto [p, s, per_step] = keys[i];
      const auto cost = *collective_cost(CollectiveOp::AllReduce, Algorithm::Tree, p, c, collective_shape(c, n), s);
      const double expect = cm::tree_allreduce_time(collective_node_sizes(c, n), s, tree_links(c), cost, per_step);
      EXPECT_NEAR(run.times[i], expect, kTolerance * expect)
          << to_string(p) << (per_step ? " per-step" : " aggregated") << " " << nodes << "x" << gpus << " size=" << s;
      if (!per_step) {
        EXPECT_NEAR(*collective_time(CollectiveOp::AllReduce, Algorithm::Tree, p, c, collective_shape(c, n), s), expect,
                    1e-12 * expect);
      }
    }
  }
}

TEST(NcclPairs, TreeOnTheNodeLinkAtLargeSizes) {
  // 4 nodes x 8 GPUs, 1 GiB: every node link carries 4 flows of S/2 each
  // way -> 2 S / (B_node e), e = NCCL's tree factor 0.92 (Simple).
  const auto c = h100_switch(4, 8);
  auto req = request(CollectiveOp::AllReduce, Algorithm::Tree, GiB);
  req.protocol = Protocol::Simple;
  const auto run = run_collectives(c, {req});
  const NcclShape shape = collective_shape(c, 32);
  const auto cost = *collective_cost(CollectiveOp::AllReduce, Algorithm::Tree, Protocol::Simple, c, shape, GiB);
  const double bw_term = run.times[0] - std::max(cost.latency, route_latency(c, true)) - cost.ramp_latency;
  EXPECT_NEAR(bw_term, 2 * GiB / (0.92 * kNicBw), 0.03 * bw_term);
}

TEST(NcclPairs, NvlsEqualsClosedFormOnOneNode) {
  // NVLS needs an NVSwitch node (4 or more GPUs): 8, 64 and 512 GPUs on one node.
  for (int g : {8, 64, 512})
    expect_closed_forms(h100_switch(1, g), {{CollectiveOp::AllReduce, Algorithm::NVLS, Protocol::Simple}},
                        {KiB, MiB, GiB}, {Granularity::Aggregated, Granularity::PerStep});
}

// NVLS+tree across nodes of 8 H100 (2, 8 and 64 nodes) on the NIC-bound
// test switch: the engine's flows (NVLS inside the node, the node-level
// double binary tree per rail) equal collective::nvlstree_allreduce_time
// within 0.1%, Aggregated and PerStep (one phase both), and collective_time.
TEST(NcclPairs, NvlsTreeEqualsClosedForm) {
  for (int nodes : {2, 8, 64}) {
    const auto c = h100_switch(nodes, 8);
    const int n = c.world_size();
    std::vector<CollectiveRequest> reqs;
    std::vector<std::pair<double, bool>> keys;
    for (double s : {KiB, MiB, 64 * MiB, GiB})
      for (bool per_step : {false, true}) {
        reqs.push_back(request(CollectiveOp::AllReduce, Algorithm::NvlsTree, s,
                               per_step ? Granularity::PerStep : Granularity::Aggregated));
        reqs.back().protocol = Protocol::Simple;
        keys.emplace_back(s, per_step);
      }
    const auto run = run_collectives(c, reqs);
    ASSERT_EQ(run.times.size(), reqs.size());
    const NcclShape shape = collective_shape(c, n);
    for (std::size_t i = 0; i < reqs.size(); ++i) {
      const auto [s, per_step] = keys[i];
      const auto cost = *collective_cost(CollectiveOp::AllReduce, Algorithm::NvlsTree, Protocol::Simple, c, shape, s);
      const double expect = cm::nvlstree_allreduce_time(nodes, 8, s, tree_links(c), cost);
      EXPECT_NEAR(run.times[i], expect, kTolerance * expect)
          << nodes << "x8 size=" << s << (per_step ? " per-step" : " aggregated");
      EXPECT_NEAR(*collective_time(CollectiveOp::AllReduce, Algorithm::NvlsTree, Protocol::Simple, c, shape, s), expect,
                  1e-12 * expect);
    }
  }
}

// NVLS+tree where each part binds by itself: 8-GPU NVSwitch nodes whose NICs
// (8 x 200 and 8 x 400 Gb/s, A6's and A5's shapes; 5 us per NIC) are slower
// than NVLink, 2 and 4 nodes. NCCL pipelines the NVLS part and the node-level
// tree on different links, so the time is the most loaded resource's (the
// closed form's max), not the NVLS part plus the tree part: the engine equals
// collective::nvlstree_allreduce_time within 0.1% here too (issue 31: it gave
// 75.2 ms against 53.7 ms at 8 GiB on 2 x 8 x 200 Gb/s).
TEST(NcclPairs, NvlsTreeEqualsClosedFormWhenNicsAreSlowerThanNvlink) {
  for (double nic : {25e9, 50e9})
    for (int nodes : {2, 4}) {
      ClusterSpec c = dgx_h100_cluster(nodes);
      c.nic = {nic, 5e-6};
      std::vector<CollectiveRequest> reqs;
      const std::vector<double> sizes{64 * MiB, 8 * GiB};
      for (double s : sizes) {
        reqs.push_back(request(CollectiveOp::AllReduce, Algorithm::NvlsTree, s, Granularity::Aggregated));
        reqs.back().protocol = Protocol::Simple;
      }
      const auto run = run_collectives(c, reqs);
      ASSERT_EQ(run.times.size(), reqs.size());
      const NcclShape shape = collective_shape(c, c.world_size());
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        const auto cost =
            *collective_cost(CollectiveOp::AllReduce, Algorithm::NvlsTree, Protocol::Simple, c, shape, sizes[i]);
        const double expect = cm::nvlstree_allreduce_time(nodes, 8, sizes[i], tree_links(c), cost);
        EXPECT_NEAR(run.times[i], expect, kTolerance * expect)
            << nodes << "x8, NIC " << nic * 8 / 1e9 << " Gb/s, size=" << sizes[i] << ": engine " << run.times[i];
      }
    }
}

// The per-size ramp's proxy term (issue 31): over a host-proxied network
// (sockets) every pair's cost carries the launch floor and what the proxy's
// messages take beyond the transfer (at some sizes of every ring); the
// engine sleeps them after the phases and the closed form adds them: equal within 0.1% for ring and tree, every
// protocol, at N = 2, 8, 64 (one GPU per node) and 512 (ring Simple), and on 2 x 8 (tree's chains).
TEST(NcclPairs, RampOverSocketsEqualsClosedForm) {
  for (auto [nodes, gpus] : {std::pair{2, 1}, {8, 1}, {64, 1}, {2, 8}, {512, 1}}) {
    ClusterSpec c = h100_switch(nodes, gpus);
    c.nic.transport = Transport::Socket;
    const int n = c.world_size();
    const NcclShape shape = collective_shape(c, n);
    std::vector<Pair> pairs = ring_and_tree_pairs();
    if (n == 512) pairs = {{CollectiveOp::AllReduce, Algorithm::Ring, Protocol::Simple}};
    if (gpus > 1) pairs = {{CollectiveOp::AllReduce, Algorithm::Tree, Protocol::Simple}};
    std::vector<CollectiveRequest> reqs;
    for (const auto& x : pairs)
      for (double s : kSizes) {
        reqs.push_back(request(x.op, x.a, s, Granularity::Aggregated));
        reqs.back().protocol = x.p;
      }
    const auto run = run_collectives(c, reqs);
    ASSERT_EQ(run.times.size(), reqs.size());
    std::size_t i = 0, exposed = 0;
    for (const auto& x : pairs)
      for (double s : kSizes) {
        const auto cost = *collective_cost(x.op, x.a, x.p, c, shape, s);
        EXPECT_GE(cost.ramp_latency, nccl_ramp().launch) << label(x) << " n=" << n;
        if (x.a == Algorithm::Ring && cost.ramp_latency > nccl_ramp().launch) ++exposed;  // the proxy beyond the wire
        const double expect = *collective_time(x.op, x.a, x.p, c, shape, s);
        EXPECT_NEAR(run.times[i], expect, kTolerance * expect)
            << label(x) << " " << nodes << "x" << gpus << " size=" << s;
        ++i;
      }
    if (gpus == 1) EXPECT_GT(exposed, 0u) << nodes << " nodes: no size shows the proxy";
  }
}

// Two nodes: NCCL's trees cross the network with S per node and direction
// (one edge per tree, S/2 each), a ring with 2(n-1)/n S, so tree and NVLSTree
// reach a bus bandwidth beyond the NICs' (NVIDIA/nccl-tests#196); from four
// nodes a node carries 2S in the trees and the gain is gone. A6's shape (2 x 8
// H100, 8 x 200 Gb/s), 8 GiB, the engine: NVLSTree's busbw is 2(n-1)/n x the
// node's NIC rate x the pipeline fill K / (K + 5 f), K = 128 (its tree pays no
// NVLS ratio); NCCL's rule picks it there.
TEST(NcclPairs, TwoNodeTreesGoBeyondTheNic) {
  const double s = 8 * GiB;
  for (int nodes : {2, 4}) {
    ClusterSpec c = dgx_h100_cluster(nodes);
    c.nic = {25e9, 5e-6};
    const int n = c.world_size();
    std::vector<CollectiveRequest> reqs;
    for (Algorithm a : {Algorithm::Ring, Algorithm::Tree, Algorithm::NvlsTree}) {
      reqs.push_back(request(CollectiveOp::AllReduce, a, s));
      reqs.back().protocol = Protocol::Simple;
    }
    const auto run = run_collectives(c, reqs);
    ASSERT_EQ(run.times.size(), 3u);
    const double nic = node_fabric_bandwidth(c);
    const auto busbw = [&](double t) { return 2.0 * (n - 1) / n * s / t; };
    EXPECT_LT(busbw(run.times[0]), nic) << nodes << " nodes, ring";
    if (nodes == 2) {
      // 4 NVLS stages on the GPUs' links (at NVLS's 5/6 x 15/16), 2 on the
      // NICs: fill = sum of the chunk times / the slowest's - 1.
      const double t_gpu = 1 / (intra_flow_bandwidth(c, 1) * 5 / 6 * 15 / 16), t_nic = 1 / nic;
      const double fill = 128 / (128 + (4 * t_gpu + 2 * t_nic) / std::max(t_gpu, t_nic) - 1);
      EXPECT_GT(busbw(run.times[1]), 1.5 * nic) << "tree";
      EXPECT_NEAR(busbw(run.times[2]), 2.0 * (n - 1) / n * nic * fill, 0.01 * nic) << "nvlstree";
      EXPECT_EQ(
          choose_collective(CollectiveOp::AllReduce, Algorithm::Auto, Protocol::Auto, c, collective_shape(c, n), s)
              .algorithm,
          Algorithm::NvlsTree);
    } else {
      EXPECT_LT(busbw(run.times[1]), nic) << "4 nodes, tree";
      EXPECT_LT(busbw(run.times[2]), nic) << "4 nodes, nvlstree";
    }
  }
}

// PAT (all-gather and reduce-scatter at one GPU per node, Simple only: its
// one eligible protocol) on one switch, 2, 8, 64 and 512 nodes (2, 8, 64
// power-of-two, 512 too; 8 exercises full dimensions, the sizes every block
// count): the engine's Bruck-style exchange equals collective::pat_time within
// 0.1%, Aggregated and PerStep (ceil(log2 n) phases), and collective_time.
TEST(NcclPairs, PatEqualsClosedForm) {
  for (int n : {2, 8, 64, 512}) {
    const auto c = h100_switch(n);
    std::vector<CollectiveRequest> reqs;
    std::vector<std::tuple<CollectiveOp, double, bool>> keys;
    for (auto op : {CollectiveOp::AllGather, CollectiveOp::ReduceScatter})
      for (double s : kSizes)
        for (bool per_step : {false, true}) {
          reqs.push_back(request(op, Algorithm::Pat, s, per_step ? Granularity::PerStep : Granularity::Aggregated));
          reqs.back().protocol = Protocol::Simple;
          keys.emplace_back(op, s, per_step);
        }
    const auto run = run_collectives(c, reqs);
    ASSERT_EQ(run.times.size(), reqs.size());
    const NcclShape shape = collective_shape(c, n);
    for (std::size_t i = 0; i < reqs.size(); ++i) {
      const auto [op, s, per_step] = keys[i];
      const auto cost = *collective_cost(op, Algorithm::Pat, Protocol::Simple, c, shape, s);
      const double expect = cm::pat_time(n, s, {run.alpha, run.bandwidth}, cost, per_step);
      EXPECT_NEAR(run.times[i], expect, kTolerance * expect)
          << to_string(op) << " n=" << n << " size=" << s << (per_step ? " per-step" : " aggregated");
      if (!per_step) {
        EXPECT_NEAR(*collective_time(op, Algorithm::Pat, Protocol::Simple, c, shape, s), expect, 1e-12 * expect);
      }
    }
  }
}

// A rank sends n - 1 blocks over ceil(log2 n) steps, at 7 ranks too (the last
// step sends n - 2^(D-1) = 3 blocks).
TEST(NcclPairs, PatStepsCarryEveryBlockOnce) {
  for (int n : {2, 3, 7, 8, 64, 100, 512}) {
    int blocks = 0;
    for (int d = 0; d < cm::pat_steps(n); ++d) blocks += cm::pat_step_blocks(n, d);
    EXPECT_EQ(blocks, n - 1) << n;
  }
  EXPECT_EQ(cm::pat_steps(7), 3);
  EXPECT_EQ(cm::pat_step_blocks(7, 2), 3);
  EXPECT_EQ(cm::pat_steps(512), 9);
  EXPECT_THROW(cm::pat_step_blocks(8, 3), std::invalid_argument);
}

TEST(NcclPairs, NvlsTreeNodeDegree) {
  // Two nodes: one edge per tree (D = 2); from four nodes on a node is
  // interior in one tree (3 edges) and a leaf in the other (1): D = 4.
  EXPECT_EQ(cm::nvlstree_node_degree(2), 2);
  EXPECT_EQ(cm::nvlstree_node_degree(8), 4);
  EXPECT_EQ(cm::nvlstree_node_degree(64), 4);
}

TEST(NcclPairs, ProtocolsOrderAsNcclModelsThem) {
  // 8 GPUs on one H100 node: LL wins small sizes (lowest latency), Simple the
  // largest (full bandwidth); the simulated times say so too.
  const auto c = h100_switch(1, 8);
  std::vector<CollectiveRequest> reqs;
  for (double s : {8.0, GiB})
    for (const auto& pi : protocols()) {
      reqs.push_back(request(CollectiveOp::AllReduce, Algorithm::Ring, s));
      reqs.back().protocol = pi.protocol;
    }
  const auto run = run_collectives(c, reqs);
  ASSERT_EQ(run.times.size(), 6u);
  EXPECT_LT(run.times[0], run.times[1]);  // 8 B: LL < LL128
  EXPECT_LT(run.times[0], run.times[2]);  // 8 B: LL < Simple
  EXPECT_LT(run.times[5], run.times[4]);  // 1 GiB: Simple < LL128
  EXPECT_LT(run.times[4], run.times[3]);  // 1 GiB: LL128 < LL
}

TEST(NcclAuto, EngineRunsTheChosenPair) {
  const auto c = h100_switch(1, 8);
  const std::vector<double> sizes = {8.0, 64 * KiB, 16 * MiB, GiB};
  std::vector<CollectiveRequest> reqs;
  for (double s : sizes) {
    reqs.push_back(request(CollectiveOp::AllReduce, Algorithm::Auto, s));
    reqs.back().protocol = Protocol::Auto;
  }
  const auto run = run_collectives(c, reqs);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const auto pick = choose_collective(CollectiveOp::AllReduce, Algorithm::Auto, Protocol::Auto, c,
                                        collective_shape(c, 8), sizes[i]);
    EXPECT_NEAR(run.times[i], pick.time, kTolerance * pick.time) << sizes[i];
  }
}

TEST(RingSubset, FirstRanksOnly) {
  // Eight of 32 GPUs take part: the closed form for n = 8.
  auto req = request(CollectiveOp::AllReduce, Algorithm::Ring, 64 * MiB);
  req.protocol = Protocol::Simple;
  for (int r = 0; r < 8; ++r) req.ranks.push_back(r);
  const auto c = switch_cluster(32);
  const auto run = run_collectives(c, {req});
  const auto cost = *collective_cost(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::Simple, c, {8, 8}, 64 * MiB);
  const double expect = cm::ring_allreduce_time(8, 64 * MiB, {run.alpha, run.bandwidth}, cost);
  EXPECT_NEAR(run.times[0], expect, kTolerance * expect);
}

TEST(RingErrors, BadRequestsThrow) {
  auto c = switch_cluster(4);
  auto bad_rank = request(CollectiveOp::AllReduce, Algorithm::Ring, MiB);
  bad_rank.ranks = {0, 9};
  auto twice = request(CollectiveOp::AllReduce, Algorithm::Ring, MiB);
  twice.ranks = {0, 1, 1};
  auto nvls_across_nodes = request(CollectiveOp::AllReduce, Algorithm::NVLS, MiB);
  auto ll128_unknown_gpu = request(CollectiveOp::AllReduce, Algorithm::Ring, MiB);
  ll128_unknown_gpu.protocol = Protocol::LL128;
  for (const auto& req :
       {bad_rank, twice, request(CollectiveOp::AllGather, Algorithm::Tree, MiB),
        request(CollectiveOp::AllReduce, Algorithm::Ring, -1), nvls_across_nodes, ll128_unknown_gpu}) {
    EXPECT_THROW(run_collectives(c, {req}), std::runtime_error);
  }
}

TEST(RingNames, ParseAndPrint) {
  for (auto op : {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter,
                  CollectiveOp::Broadcast, CollectiveOp::AllToAll})
    EXPECT_EQ(parse_op(to_string(op)), op);
  for (const AlgorithmRow& row : algorithm_rows()) EXPECT_EQ(parse_algorithm(to_string(row.algorithm)), row.algorithm);
  EXPECT_EQ(parse_algorithm(to_string(Algorithm::Auto)), Algorithm::Auto);
  for (auto p : {Protocol::LL, Protocol::LL128, Protocol::Simple, Protocol::Auto})
    EXPECT_EQ(parse_protocol(to_string(p)), p);
  EXPECT_EQ(parse_algorithm("NVLS"), Algorithm::NVLS);    // NCCL_ALGO spelling
  EXPECT_EQ(parse_protocol("simple"), Protocol::Simple);  // case-insensitive, as NCCL_PROTO
  EXPECT_THROW(parse_op("allreduced"), std::invalid_argument);
  EXPECT_THROW(parse_algorithm("collnet"), std::invalid_argument);
  EXPECT_THROW(parse_protocol("LL64"), std::invalid_argument);
}

// The engine binds one schedule (an algo_*.cpp descriptor) to every row of
// the algorithm table, and has none without a row.
TEST(AlgorithmTable, EngineSchedulesEveryRowOnce) {
  const auto& schedules = detail::engine_algorithms();
  for (const AlgorithmRow& row : algorithm_rows()) {
    int bound = 0;
    for (const auto* d : schedules) bound += d->op == row.op && d->algorithm == row.algorithm;
    EXPECT_EQ(bound, 1) << row.name << " " << to_string(row.op);
  }
  for (const auto* d : schedules)
    EXPECT_NE(find_algorithm_row(d->op, d->algorithm), nullptr) << to_string(d->algorithm) << " " << to_string(d->op);
  EXPECT_EQ(schedules.size(), algorithm_rows().size());
}

}  // namespace
}  // namespace gw::engine
