// The closed forms alone (no simulation).
#include <gtest/gtest.h>

#include <limits>
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
  EXPECT_DOUBLE_EQ(hierarchical_allreduce_time(4, 1, s, intra, inter), ring_allreduce_time(4, s, inter));
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
  EXPECT_EQ(t8[0].children[0][0], 4);  // the root has one child
  EXPECT_EQ(t8[0].children[0][1], -1);
  EXPECT_EQ(t8[0].parent[1], 2);
  EXPECT_EQ(t8[0].parent[6], 4);
  EXPECT_EQ(t8[0].height(), 3);
  EXPECT_EQ(t8[1].root, 7);  // mirrored
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
  // Pipelined (Aggregated): NCCL's latency over the one route latency, every
  // link's 4 half-buffers (NCCL's latency stands for the pipeline's depth).
  const double pipelined = 30e-6 + 4 * (s / 2) / (0.5 * 1e10);
  EXPECT_NEAR(tree_allreduce_time(64, s, ab, cost), pipelined, 1e-12 * pipelined);
  // Lock-step rounds (PerStep): one route latency per round, above L here.
  const double lock_step = sched.rounds * 1e-6 + load * (s / 2 / 64) / (0.5 * 1e10);
  EXPECT_NEAR(tree_allreduce_time(64, s, ab, cost, true), lock_step, 1e-12 * lock_step);
  // Two ranks: each sends S/2 up one tree and down the other.
  const auto two = tree_allreduce_schedule(2, 1000);
  EXPECT_EQ(two.rounds, 2);
  EXPECT_EQ(two.max_load, 2);
}

TEST(NcclTrees, ChainsInsideNodesDoubleBinaryTreeBetween) {
  // 4 nodes x 4 ranks. Nodes: tree 0 is 0 -> 2 -> {1, 3}, tree 1 its mirror
  // 3 -> 1 -> {2, 0}. Inside a node tree 0 chains the ranks from the first,
  // tree 1 from the last; a node's first child node hangs on the chain's head,
  // its second on the chain's tail (NCCL's BALANCED_TREE).
  const std::vector<int> sizes{4, 4, 4, 4};
  const auto t = nccl_trees(sizes);
  expect_valid_tree(t[0], 16);
  expect_valid_tree(t[1], 16);
  EXPECT_EQ(t[0].root, 0);
  for (int j = 1; j < 4; ++j) EXPECT_EQ(t[0].parent[8 + j], 8 + j - 1);  // node 2's chain
  EXPECT_EQ(t[0].parent[8], 0);                                          // node 2 under node 0's head (its only child)
  EXPECT_EQ(t[0].parent[4], 8);                                          // node 1: node 2's first child, on its head
  EXPECT_EQ(t[0].parent[12], 11);                                        // node 3: node 2's second child, on its tail
  EXPECT_EQ(t[1].root, 15);                                              // tree 1: node 3's last rank heads its chain
  for (int j = 0; j < 3; ++j) EXPECT_EQ(t[1].parent[4 + j], 4 + j + 1);
  EXPECT_EQ(t[1].parent[7], 15);  // node 1 under node 3's head
  EXPECT_EQ(t[1].parent[11], 7);  // node 2: node 1's first child, on its head
  EXPECT_EQ(t[1].parent[3], 4);   // node 0: node 1's second child, on its tail
  // Height: node 3's tail is 1 (to node 2) + 3 (node 2's chain) + 1 + 3 hops deep.
  EXPECT_EQ(t[0].height(), 8);
  // One rank per node: the double binary tree over the nodes.
  const auto flat = nccl_trees(std::vector<int>(8, 1));
  const auto dbt = double_binary_tree(8);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(flat[i].parent, dbt[i].parent);
    EXPECT_EQ(flat[i].depth, dbt[i].depth);
  }
}

TEST(NcclTrees, EveryRankAndNodeCarriesFourHalfBuffers) {
  // Steady state, 8 nodes x 8 ranks: every rank link 4 flows of S/2 each way
  // (chain up and down in both trees, or the node's tree edges in place of a
  // chain edge); every node link 4 (interior in one tree: parent + 2 children,
  // leaf in the other: parent), so peak = max(4 / B_gpu, 4 / B_node).
  const std::vector<int> sizes(8, 8);
  const double s = 1024 * 2 * kPipelineChunkBytes;
  const TreeLinks links{
      {1e-6, 3e11}, {5e-6, 1e11}, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  const auto sched = tree_allreduce_schedule(sizes, s, links);
  EXPECT_EQ(sched.max_load, 4);
  EXPECT_DOUBLE_EQ(sched.peak, 4 / 1e11);
  EXPECT_EQ(sched.rounds, sched.chunks + 2 * sched.height - 1);
  EXPECT_GE(sched.cost_sum, sched.chunks * sched.peak);
  EXPECT_LE(sched.cost_sum, sched.rounds * sched.peak);
  // Every round with a chunk crossing nodes pays the inter-node route latency
  // (PerStep); Aggregated pays it once.
  EXPECT_GT(sched.inter_rounds, sched.chunks);
  EXPECT_LE(sched.inter_rounds, sched.rounds);
  const NcclCost cost{0, 1};
  EXPECT_DOUBLE_EQ(tree_allreduce_time(sizes, s, links, cost), 5e-6 + 4 / 1e11 * (s / 2));
  const double lock_step =
      sched.inter_rounds * 5e-6 + (sched.rounds - sched.inter_rounds) * 1e-6 + sched.cost_sum * (s / 2 / sched.chunks);
  EXPECT_NEAR(tree_allreduce_time(sizes, s, links, cost, true), lock_step, 1e-12 * lock_step);
  // A slow per-GPU connection cap binds: at most 2 inter-node flows per GPU.
  TreeLinks capped = links;
  capped.connection = 1e10;
  EXPECT_DOUBLE_EQ(tree_allreduce_schedule(sizes, s, capped).peak, 2 / 1e10);
  // Host-staged: every copy of a node on one path, both ways: 2 trees x 2
  // directions x 7 chain edges.
  TreeLinks staged = links;
  staged.staging = 1e11;
  EXPECT_DOUBLE_EQ(tree_allreduce_schedule(sizes, s, staged).peak, 28 / 1e11);
}

}  // namespace
}  // namespace gw::collective
