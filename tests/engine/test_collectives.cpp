// Hierarchical, tree, broadcast and all-to-all against their closed forms; an
// oversubscribed fat-tree slows the ring by its oversubscription.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "engine_test_util.hpp"
#include "gradwire/model/closed_form.hpp"
#include "gradwire/model/collective_model.hpp"

namespace gw::engine {
namespace {
using namespace test;
namespace cm = gw::collective;

constexpr double kTolerance = 1e-3;  // relative

// NCCL's cost of the Simple ring all-reduce over all of c at `bytes`.
NcclCost simple_ring(const ClusterSpec& c, double bytes) {
  return *collective_cost(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::Simple, c,
                          collective_shape(c, c.world_size()), bytes);
}

CollectiveRequest simple_ring_request(double bytes) {
  auto r = request(CollectiveOp::AllReduce, Algorithm::Ring, bytes);
  r.protocol = Protocol::Simple;
  return r;
}

// A hierarchical schedule (`op`) on four nodes of eight with NVLink-class
// links inside the nodes and four 100 Gbps NICs per node, aggregated and per
// step, against its closed form `time`; the model's table gives the same.
void expect_hierarchical(CollectiveOp op, double (*time)(int, int, double, cm::AlphaBeta, cm::AlphaBeta)) {
  ClusterSpec c = switch_cluster(4, 8);
  c.intra_node = {150e9, 1e-6};
  c.nic_count = 4;
  const int g = 8, nodes = 4;
  const cm::AlphaBeta intra{2 * 1e-6, 150e9};
  // The 8 inter-node groups share each node's 4 NICs: node bandwidth / 8 per flow.
  const cm::AlphaBeta inter{2 * 1e-6 + 2 * (kNicLat + kFabricLat), 4 * kNicBw / g};
  std::vector<CollectiveRequest> reqs;
  const std::vector<double> sizes = {KiB, MiB, 256 * MiB};
  for (double s : sizes) {
    reqs.push_back(request(op, Algorithm::Hierarchical, s));
    reqs.push_back(request(op, Algorithm::Hierarchical, s, Granularity::PerStep));
  }
  const auto run = run_collectives(c, reqs);
  ASSERT_EQ(run.times.size(), reqs.size());
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const double expect = time(nodes, g, sizes[i], intra, inter);
    EXPECT_NEAR(run.times[2 * i], expect, kTolerance * expect) << "aggregated " << sizes[i];
    EXPECT_NEAR(run.times[2 * i + 1], expect, kTolerance * expect) << "per-step " << sizes[i];
  }
  const double table = *collective_time(op, Algorithm::Hierarchical, Protocol::Simple, c,
                                        collective_shape(c, c.world_size()), 256 * MiB);
  EXPECT_NEAR(table, time(nodes, g, 256 * MiB, intra, inter), 1e-12);
}

TEST(Hierarchical, EqualsClosedFormOnFourNodesOfEight) {
  expect_hierarchical(CollectiveOp::AllReduce, &cm::hierarchical_allreduce_time);
}

// ZeRO++ qgZ's two-stage all-to-all: inside the nodes, then the 8 groups of
// one rank per node side by side on the nodes' NICs.
TEST(Hierarchical, AllToAllEqualsClosedFormOnFourNodesOfEight) {
  expect_hierarchical(CollectiveOp::AllToAll, &cm::hierarchical_alltoall_time);
}

TEST(Hierarchical, BeatsTheFlatRingWhenNicsAreSlow) {
  ClusterSpec c = switch_cluster(4, 8);
  c.intra_node = {150e9, 1e-6};
  c.nic_count = 1;
  const auto run = run_collectives(
      c, {request(CollectiveOp::AllReduce, Algorithm::Hierarchical, 256 * MiB), simple_ring_request(256 * MiB)});
  // Flat ring: every inter-node ring edge is one flow on the 100 Gbps NIC.
  const cm::AlphaBeta worst{2 * 1e-6 + 2 * (kNicLat + kFabricLat), kNicBw};
  EXPECT_NEAR(run.times[1], cm::ring_allreduce_time(32, 256 * MiB, worst, simple_ring(c, 256 * MiB)),
              kTolerance * run.times[1]);
  EXPECT_LT(run.times[0], run.times[1]);
}

ClusterSpec fat_tree(double oversubscription, Placement placement) {
  return fat_tree_cluster(16, 1, 4, oversubscription, placement);
}

TEST(FatTree, OversubscriptionSlowsInterleavedRingByItsFactor) {
  const double s = 256 * MiB;
  const int n = 16;
  const auto req = simple_ring_request(s);
  const auto full = run_collectives(fat_tree(1, Placement::Interleaved), {req});
  const auto over = run_collectives(fat_tree(4, Placement::Interleaved), {req});
  // Every ring edge crosses the spine: 4 flows share an uplink of 4 B / o.
  const double alpha = 2 * kIntraLat + 2 * (kNicLat + kFabricLat) + 2 * kFabricLat;
  EXPECT_DOUBLE_EQ(full.alpha, alpha);
  const NcclCost cost = simple_ring(fat_tree(1, Placement::Interleaved), s);
  const double t1 = cm::ring_allreduce_time(n, s, {alpha, kNicBw}, cost);
  const double t4 = cm::ring_allreduce_time(n, s, {alpha, kNicBw / 4}, cost);
  EXPECT_NEAR(full.times[0], t1, kTolerance * t1);
  EXPECT_NEAR(over.times[0], t4, kTolerance * t4);
  const double latency = std::max(cost.latency, alpha);
  EXPECT_NEAR((over.times[0] - latency) / (full.times[0] - latency), 4.0, 4.0 * kTolerance);
}

TEST(FatTree, LinearPlacementKeepsTheRingOffTheSpine) {
  // Only one ring edge per leaf crosses the spine: oversubscription 4 leaves
  // the uplink (4 B / 4 = B) as fast as a NIC; the crossing edges' longer
  // latency sets the pace.
  const double s = 256 * MiB;
  const auto c = fat_tree(4, Placement::Linear);
  const auto run = run_collectives(c, {simple_ring_request(s)}, 3, 4);
  const double alpha = 2 * kIntraLat + 2 * (kNicLat + kFabricLat) + 2 * kFabricLat;
  EXPECT_DOUBLE_EQ(run.alpha, alpha);
  const double expect = cm::ring_allreduce_time(16, s, {alpha, kNicBw}, simple_ring(c, s));
  EXPECT_NEAR(run.times[0], expect, kTolerance * expect);
}

void expect_closed_form(CollectiveOp op, Algorithm a, int n, const std::vector<double>& sizes,
                        double (*form)(int, double, cm::AlphaBeta)) {
  std::vector<CollectiveRequest> reqs;
  for (double s : sizes) {
    reqs.push_back(request(op, a, s, Granularity::Aggregated));
    reqs.push_back(request(op, a, s, Granularity::PerStep));
  }
  const auto run = run_collectives(switch_cluster(n), reqs);
  ASSERT_EQ(run.times.size(), reqs.size());
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const double expect = form(n, sizes[i], {run.alpha, run.bandwidth});
    EXPECT_NEAR(run.times[2 * i], expect, kTolerance * expect)
        << to_string(op) << "/" << to_string(a) << " aggregated n=" << n << " size=" << sizes[i];
    EXPECT_NEAR(run.times[2 * i + 1], expect, kTolerance * expect)
        << to_string(op) << "/" << to_string(a) << " per-step n=" << n << " size=" << sizes[i];
  }
}

TEST(Tree, BandwidthTermApproachesFourHalfBuffersPerLink) {
  // Large buffers: every rank link carries 4 flows of S/2 -> 2 S / (B e),
  // e = NCCL's tree factor 0.92 (Simple); the chunks' latencies overlap
  // (pipelined), so the latency is NCCL's, not one per chunk round.
  const int n = 64;
  const double s = GiB;
  auto req = request(CollectiveOp::AllReduce, Algorithm::Tree, s);
  req.protocol = Protocol::Simple;
  const auto c = switch_cluster(n);
  const auto run = run_collectives(c, {req});
  const auto sched = cm::tree_allreduce_schedule(n, s);
  EXPECT_EQ(sched.max_load, 4);
  const NcclShape shape = collective_shape(c, n);
  const auto cost = *collective_cost(CollectiveOp::AllReduce, Algorithm::Tree, Protocol::Simple, c, shape, s);
  // The per-size ramp adds the launch floor alone to the tree (its pipeline
  // is NCCL's latency model and tree correction, 1 at 1 GiB).
  EXPECT_DOUBLE_EQ(cost.efficiency, 0.92);
  EXPECT_DOUBLE_EQ(cost.ramp_latency, nccl_ramp().launch);
  const double bw_term = run.times[0] - std::max(cost.latency, run.alpha) - cost.ramp_latency;
  EXPECT_NEAR(bw_term, 2 * s / (0.92 * run.bandwidth), 0.01 * bw_term);
  // busbw stays near the link's (no collapse at large sizes): 2(n-1)/n S / t.
  EXPECT_GT(2.0 * (n - 1) / n * s / run.times[0], 0.4 * run.bandwidth);
}

TEST(Broadcast, EqualsClosedForm) {
  for (int n : {2, 8, 64})
    expect_closed_form(CollectiveOp::Broadcast, Algorithm::Ring, n, {KiB, MiB, 64 * MiB}, &cm::pipeline_broadcast_time);
}

TEST(AllToAll, EqualsClosedForm) {
  for (int n : {2, 8, 64})
    expect_closed_form(CollectiveOp::AllToAll, Algorithm::Direct, n, {KiB, MiB, 256 * MiB}, &cm::direct_alltoall_time);
}

TEST(AllToAll, SubByteBlocksTakeTheClosedForm) {
  // 8 B over 32 ranks: blocks of 0.25 B. Each flow carries at least one byte
  // (a 0-byte communication ends only at SimGrid's next event: 4,004 us here
  // before, against the closed form's 434 us).
  expect_closed_form(CollectiveOp::AllToAll, Algorithm::Direct, 32, {8.0}, &cm::direct_alltoall_time);
}

}  // namespace
}  // namespace gw::engine
