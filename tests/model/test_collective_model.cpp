// The closed forms alone (no simulation).
#include <gtest/gtest.h>

#include <set>

#include "gradwire/model/collective_model.hpp"

namespace gw::collective {
namespace {

TEST(BusBandwidth, NcclTestsFactors) {
  EXPECT_DOUBLE_EQ(allreduce_busbw_factor(8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(allgather_busbw_factor(8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(reducescatter_busbw_factor(4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(alltoall_busbw_factor(2), 0.5);
  EXPECT_DOUBLE_EQ(broadcast_busbw_factor(16), 1.0);
  EXPECT_DOUBLE_EQ(allreduce_busbw_factor(1), 0.0);
  EXPECT_THROW(allreduce_busbw_factor(0), std::invalid_argument);
}

TEST(AlphaBeta, RingForms) {
  const AlphaBeta ab{1e-5, 1e10};
  // 2(n-1) a + 2(n-1)/n S/B with n = 4, S = 1e9: 6e-5 + 1.5e9/1e10.
  EXPECT_DOUBLE_EQ(ring_allreduce_time(4, 1e9, ab), 6e-5 + 0.15);
  EXPECT_DOUBLE_EQ(ring_allgather_time(4, 1e9, ab), 3e-5 + 0.075);
  EXPECT_DOUBLE_EQ(ring_reducescatter_time(4, 1e9, ab), 3e-5 + 0.075);
  EXPECT_DOUBLE_EQ(direct_alltoall_time(4, 1e9, ab), 3e-5 + 0.075);
  EXPECT_DOUBLE_EQ(ring_allreduce_time(1, 1e9, ab), 0.0);
}

TEST(AlphaBeta, HierarchicalIsThreeRingPhases) {
  const AlphaBeta intra{1e-6, 1e11}, inter{1e-5, 1e10};
  const double s = 1e9;
  EXPECT_DOUBLE_EQ(hierarchical_allreduce_time(4, 8, s, intra, inter),
                   2 * (7e-6 + 7.0 / 8 * s / 1e11) + 6e-5 + 1.5 * (s / 8) / 1e10);
  // One GPU per node: the plain ring among nodes.
  EXPECT_DOUBLE_EQ(hierarchical_allreduce_time(4, 1, s, intra, inter),
                   ring_allreduce_time(4, s, inter));
}

TEST(Pipeline, ChunksAndBroadcast) {
  EXPECT_EQ(pipeline_chunks(0), 1);
  EXPECT_EQ(pipeline_chunks(kPipelineChunkBytes), 1);
  EXPECT_EQ(pipeline_chunks(kPipelineChunkBytes + 1), 2);
  EXPECT_EQ(pipeline_chunks(1024 * kPipelineChunkBytes), 1024);
  const AlphaBeta ab{1e-6, 1e10};
  // K = 1: store and forward over n-1 hops.
  EXPECT_DOUBLE_EQ(pipeline_broadcast_time(5, 1000, ab), 4 * (1e-6 + 1e-7));
  const double s = 64 * kPipelineChunkBytes;
  EXPECT_DOUBLE_EQ(pipeline_broadcast_time(5, s, ab), 67 * (1e-6 + s / 64 / 1e10));
}

void expect_valid_tree(const BinaryTree& t, int n) {
  ASSERT_EQ(static_cast<int>(t.parent.size()), n);
  EXPECT_EQ(t.parent[t.root], -1);
  int edges = 0;
  for (int v = 0; v < n; ++v) {
    EXPECT_GE(t.depth[v], 0) << "position " << v << " unreachable from the root";
    if (v == t.root) continue;
    ++edges;
    const int p = t.parent[v];
    ASSERT_GE(p, 0);
    EXPECT_TRUE(t.children[p][0] == v || t.children[p][1] == v);
    EXPECT_EQ(t.depth[v], t.depth[p] + 1);
  }
  EXPECT_EQ(edges, n - 1);
}

TEST(DoubleBinaryTree, TwoValidComplementaryTrees) {
  for (int n : {2, 3, 5, 7, 8, 12, 64, 100, 512}) {
    const auto trees = double_binary_tree(n);
    expect_valid_tree(trees[0], n);
    expect_valid_tree(trees[1], n);
    // Interior in the first tree -> leaf in the second.
    for (int v = 0; v < n; ++v) {
      const bool interior0 = trees[0].children[v][0] >= 0;
      const bool interior1 = trees[1].children[v][0] >= 0;
      if (n % 2 == 0) {
        EXPECT_FALSE(interior0 && interior1) << "n=" << n << " v=" << v;
      }
    }
  }
  const auto t8 = double_binary_tree(8);
  EXPECT_EQ(t8[0].root, 0);
  EXPECT_EQ(t8[0].children[0][0], 4);   // the root has one child
  EXPECT_EQ(t8[0].children[0][1], -1);
  EXPECT_EQ(t8[0].parent[1], 2);
  EXPECT_EQ(t8[0].parent[6], 4);
  EXPECT_EQ(t8[0].height(), 3);
  EXPECT_EQ(t8[1].root, 7);             // mirrored
  EXPECT_EQ(t8[1].parent[6], 5);
}

TEST(TreeSchedule, RoundsAndLoads) {
  const double s = 64 * 2 * kPipelineChunkBytes;  // 64 chunks per tree
  const auto sched = tree_allreduce_schedule(64, s);
  EXPECT_EQ(sched.chunks, 64);
  EXPECT_EQ(sched.height, 6);
  EXPECT_EQ(sched.rounds, 64 + 2 * 6 - 1);
  EXPECT_EQ(sched.max_load, 4);
  // Steady state: every link of the busiest rank busy in rounds 2H-1 .. K-1.
  for (int r = 2 * 6 - 1; r < 64; ++r) EXPECT_EQ(sched.loads[r], 4) << r;
  const AlphaBeta ab{1e-6, 1e10};
  double load = 0;
  for (int l : sched.loads) load += l;
  // The sum from 2H+1 chunks plus steady rounds (O(H) work) is the listed one.
  EXPECT_DOUBLE_EQ(sched.load_sum, load);
  const NcclCost cost{30e-6, 0.5};
  // Pipelined (Aggregated): NCCL's latency over the one route latency.
  EXPECT_DOUBLE_EQ(tree_allreduce_time(64, s, ab, cost), 30e-6 + load * (s / 2 / 64) / (0.5 * 1e10));
  // Lock-step rounds (PerStep): one route latency per round, above L here.
  EXPECT_DOUBLE_EQ(tree_allreduce_time(64, s, ab, cost, true),
                   sched.rounds * 1e-6 + load * (s / 2 / 64) / (0.5 * 1e10));
  // Two ranks: each sends S/2 up one tree and down the other.
  const auto two = tree_allreduce_schedule(2, 1000);
  EXPECT_EQ(two.rounds, 2);
  EXPECT_EQ(two.max_load, 2);
}

}  // namespace
}  // namespace gw::collective
