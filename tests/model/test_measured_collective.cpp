// Collectives measured on the cluster (gradwire/model/measured_collective.hpp):
// which profile entries are measurements, the curve through the measured
// points and its joins to the model beyond them, the shape a curve applies
// to, and the pins NCCL accepts.
#include <gtest/gtest.h>

#include <cmath>

#include "gradwire/model/measured_collective.hpp"
#include "gradwire/model/scenario.hpp"
#include "gradwire/model/transports.hpp"

namespace gw {
namespace {

ClusterSpec node_cluster(const std::string& gpu, int nodes, int gpus, double intra_bw, Transport intra) {
  ClusterSpec c;
  c.nodes = nodes;
  c.gpus_per_node = gpus;
  c.gpu = gpu;
  c.intra_node = {intra_bw, 1e-6};
  c.intra_node.transport = intra;
  c.nic_count = gpus;
  c.nic = {50e9, 5e-6};
  c.fabric.latency = 1e-6;
  return c;
}

CollectiveCost entry(CollectiveOp op, int gpus, int nodes, std::vector<CurvePoint> points) {
  CollectiveCost cc;
  cc.op = op;
  cc.gpus = gpus;
  cc.nodes = nodes;
  cc.points = std::move(points);
  cc.fit = {10e-6, 1e10, 0};
  return cc;
}

// A wobbling measured curve, as nccl-tests logs have at launch-bound sizes.
const std::vector<CurvePoint> kPoints = {{8, 130e-6, 0.1, 20},
                                         {64, 123e-6, 0, 20},
                                         {1024, 135e-6, 0.2, 20},
                                         {1 << 20, 205e-6, 0, 20},
                                         {1 << 30, 6.7e-3, 0, 20}};

TEST(MeasuredCollective, MeasuredEntriesOfAProfile) {
  Profile p;
  p.collectives = {entry(CollectiveOp::AllReduce, 8, 1, {}),  // a datasheet fit: not a measurement
                   entry(CollectiveOp::AllGather, 8, 1, kPoints),
                   entry(CollectiveOp::AllReduce, 16, 2, {}),  // written by hand across nodes: its line
                   entry(CollectiveOp::AllReduce, 16, 4, kPoints)};
  const auto m = measured_collectives(p);
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].label(), "allgather on 8 GPUs, 1 node");
  EXPECT_EQ(m[0].curve.knots, kPoints);
  EXPECT_EQ(m[1].label(), "allreduce on 16 GPUs, 2 nodes");
  EXPECT_TRUE(m[1].curve.knots.empty());
  EXPECT_EQ(m[1].range(), "");
  EXPECT_TRUE(m[1].in_range(1e15));
  EXPECT_DOUBLE_EQ(m[1].seconds(1e6, [](double) -> double { throw std::logic_error("no model for a line"); }),
                   10e-6 + 1e6 / 1e10);
  EXPECT_EQ(m[2].label(), "allreduce on 16 GPUs, 4 nodes");
}

// Every measured point comes back as measured (no pooling of a wobble);
// between two, the time is log-log linear (between the two times); beyond
// the ends the model, scaled to meet the curve there.
TEST(MeasuredCollective, TheCurvePassesThroughEveryPointAndJoinsTheModel) {
  MeasuredCollective m;
  m.curve.knots = kPoints;
  const auto no_model = [](double) -> double { throw std::logic_error("inside the range, no model"); };
  for (const auto& pt : kPoints) {
    EXPECT_TRUE(m.in_range(pt.x));
    EXPECT_DOUBLE_EQ(m.seconds(pt.x, no_model), pt.seconds) << pt.x;
  }
  for (std::size_t i = 0; i + 1 < kPoints.size(); ++i) {
    const double x = std::sqrt(kPoints[i].x * kPoints[i + 1].x);
    const double t = m.seconds(x, no_model);
    EXPECT_NEAR(t, std::sqrt(kPoints[i].seconds * kPoints[i + 1].seconds), 1e-12 * t) << x;
    EXPECT_GE(t, std::min(kPoints[i].seconds, kPoints[i + 1].seconds));
    EXPECT_LE(t, std::max(kPoints[i].seconds, kPoints[i + 1].seconds));
  }
  // A model of 5 us + bytes / 100 GB/s: beyond 1 GiB its time x 6.7 ms /
  // its time at 1 GiB; below 8 B x 130 us / its time at 8 B.
  const auto model = [](double bytes) { return 5e-6 + bytes / 100e9; };
  const double big = 4.0 * (1 << 30);
  EXPECT_FALSE(m.in_range(big));
  EXPECT_DOUBLE_EQ(m.seconds(big, model), model(big) * 6.7e-3 / model(1 << 30));
  EXPECT_NEAR(m.seconds((1 << 30) * (1 + 1e-9), model), 6.7e-3, 1e-9 * 6.7e-3);  // continuous at the end
  EXPECT_FALSE(m.in_range(4));
  EXPECT_DOUBLE_EQ(m.seconds(4, model), model(4) * 130e-6 / model(8));
  EXPECT_EQ(m.range(), "8 B..1.00 GiB");
}

TEST(MeasuredCollective, AppliesToItsOwnShapeOnly) {
  Profile p;
  p.collectives = {entry(CollectiveOp::AllReduce, 16, 2, kPoints), entry(CollectiveOp::AllReduce, 2, 1, kPoints)};
  const auto m = measured_collectives(p);
  const auto h100 = node_cluster("h100", 2, 8, 450e9, Transport::NVSwitch);
  ASSERT_NE(measured_collective_for(m, CollectiveOp::AllReduce, h100, 16), nullptr);
  EXPECT_EQ(measured_collective_for(m, CollectiveOp::AllReduce, h100, 16)->gpus, 16);
  EXPECT_EQ(measured_collective_for(m, CollectiveOp::AllGather, h100, 16), nullptr);  // another op
  EXPECT_EQ(measured_collective_for(m, CollectiveOp::AllReduce, h100, 8), nullptr);   // 8 GPUs on one node
  // The first 2 ranks of a node: the 2-GPU, one-node measurement.
  EXPECT_EQ(measured_collective_for(m, CollectiveOp::AllReduce, h100, 2)->gpus, 2);
  // 16 GPUs on 2 nodes of 12 (12 + 4): not the measured 8 + 8.
  const auto twelve = node_cluster("h100", 2, 12, 450e9, Transport::NVSwitch);
  EXPECT_EQ(measured_collective_for(m, CollectiveOp::AllReduce, twelve, 16), nullptr);
  // 16 GPUs on 4 nodes of 4: another node count.
  EXPECT_EQ(
      measured_collective_for(m, CollectiveOp::AllReduce, node_cluster("h100", 4, 4, 450e9, Transport::NVSwitch), 16),
      nullptr);
}

TEST(MeasuredCollective, ThePinsNcclAccepts) {
  const auto h100x2 = node_cluster("h100", 2, 8, 450e9, Transport::NVSwitch);
  const NcclShape two{16, 2};
  const auto ar = CollectiveOp::AllReduce;
  EXPECT_TRUE(nccl_accepts(ar, Algorithm::Auto, Protocol::Auto, h100x2, two));
  EXPECT_TRUE(nccl_accepts(ar, Algorithm::Ring, Protocol::Auto, h100x2, two));
  EXPECT_TRUE(nccl_accepts(ar, Algorithm::Tree, Protocol::LL128, h100x2, two));
  EXPECT_TRUE(nccl_accepts(ar, Algorithm::NvlsTree, Protocol::Auto, h100x2, two));
  EXPECT_FALSE(nccl_accepts(ar, Algorithm::NVLS, Protocol::Auto, h100x2, two));          // one node only
  EXPECT_FALSE(nccl_accepts(ar, Algorithm::NvlsTree, Protocol::LL, h100x2, two));        // Simple only
  EXPECT_FALSE(nccl_accepts(ar, Algorithm::Hierarchical, Protocol::Auto, h100x2, two));  // gradwire's own
  EXPECT_FALSE(nccl_accepts(ar, Algorithm::Pat, Protocol::Auto, h100x2, two));           // not an all-reduce
  const auto pcie = node_cluster("rtx-2080ti", 1, 2, 15.75e9, Transport::PcieHost);
  EXPECT_TRUE(nccl_accepts(ar, Algorithm::Ring, Protocol::LL, pcie, {2, 1}));
  EXPECT_FALSE(nccl_accepts(ar, Algorithm::Ring, Protocol::LL128, pcie, {2, 1}));  // LL128 needs NVLink
  EXPECT_FALSE(nccl_accepts(ar, Algorithm::NVLS, Protocol::Auto, pcie, {2, 1}));
  EXPECT_TRUE(nccl_accepts(CollectiveOp::AllGather, Algorithm::Auto, Protocol::Auto, pcie, {2, 1}));
}

}  // namespace
}  // namespace gw
