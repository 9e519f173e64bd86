// The algorithm table (collective_algorithms.hpp): the names, the help, a
// scenario's choices and NCCL's candidates are what its rows say, and every
// row is complete enough to be priced, refused and chosen.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gradwire/model/closed_form.hpp"
#include "gradwire/model/collective_algorithms.hpp"
#include "gradwire/model/compression.hpp"
#include "gradwire/model/nccl_model.hpp"

namespace gw {
namespace {

using Names = std::vector<std::string>;

// What the rows said before the table (the names, help and choices every
// output printed) stays a prefix or part of what they say now, so that a new
// row adds to these lists without editing this test.
TEST(AlgorithmTable, NamesParseAndChoicesComeFromTheRows) {
  const Names before{"auto", "ring", "tree", "nvls", "nvlstree", "pat", "hierarchical", "direct"};
  const Names names = algorithm_names();
  ASSERT_GE(names.size(), before.size());
  EXPECT_EQ(Names(names.begin(), names.begin() + static_cast<long>(before.size())), before);
  for (const AlgorithmRow& r : algorithm_rows()) {
    EXPECT_EQ(to_string(r.algorithm), r.name);
    EXPECT_EQ(parse_algorithm(r.name), r.algorithm);
    EXPECT_NE(std::find(names.begin(), names.end(), r.name), names.end()) << r.name;
  }
  EXPECT_EQ(parse_algorithm("NVLSTree"), Algorithm::NvlsTree);  // NCCL_ALGO's spelling
  EXPECT_EQ(parse_algorithm("Auto"), Algorithm::Auto);
  try {
    parse_algorithm("collnet");
    ADD_FAILURE() << "collnet parsed";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("unknown algorithm 'collnet' (auto, ring, tree, nvls, nvlstree, pat, "
                                          "hierarchical, direct",
                                          0),
              0u)
        << e.what();
  }
  EXPECT_EQ(scenario_algorithm_names(), (Names{"auto", "ring", "tree", "hierarchical"}));
  EXPECT_EQ(resolve_allreduce_algorithm("tree", ClusterSpec{}), "tree");
  try {
    resolve_allreduce_algorithm("nvls", ClusterSpec{});
    ADD_FAILURE() << "a scenario pinned nvls";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown all-reduce algorithm 'nvls' (expected auto, ring, tree or hierarchical)");
  }
}

TEST(AlgorithmTable, NcclCandidatesFollowTheRows) {
  using A = Algorithm;
  EXPECT_EQ(nccl_algorithms(CollectiveOp::AllReduce), (std::vector<A>{A::Ring, A::Tree, A::NVLS, A::NvlsTree}));
  EXPECT_EQ(nccl_algorithms(CollectiveOp::AllGather), (std::vector<A>{A::Ring, A::Pat}));
  EXPECT_EQ(nccl_algorithms(CollectiveOp::ReduceScatter), (std::vector<A>{A::Ring, A::Pat}));
  EXPECT_EQ(nccl_algorithms(CollectiveOp::Broadcast), (std::vector<A>{A::Ring}));
  EXPECT_EQ(nccl_algorithms(CollectiveOp::AllToAll), (std::vector<A>{A::Direct}));
  EXPECT_EQ(algorithm_ops(A::Pat), (std::vector<CollectiveOp>{CollectiveOp::AllGather, CollectiveOp::ReduceScatter}));
  EXPECT_TRUE(algorithm_ops(A::Auto).empty());
  EXPECT_EQ(find_algorithm_row(CollectiveOp::AllToAll, A::Ring), nullptr);
}

TEST(AlgorithmTable, HelpAndGroupsAreDerived) {
  const std::string help = algorithm_help();
  EXPECT_EQ(help.rfind("ring (allreduce, allgather, reducescatter, broadcast), tree (allreduce), nvls (allreduce, one "
                       "NVSwitch node of H100/H200/B200 class), nvlstree (allreduce, NCCL's NVLSTree: two or more "
                       "such nodes), pat (allgather, reducescatter: NCCL 2.23's PAT at one GPU per node), "
                       "hierarchical (allreduce, alltoall; gradwire's, not NCCL's), direct (alltoall)",
                       0),
            0u)
      << help;
  for (const AlgorithmRow& r : algorithm_rows())
    EXPECT_NE(help.find(std::string(r.name) + " ("), std::string::npos) << r.name;
  const std::string groups = algorithms_by_ops();
  EXPECT_NE(groups.find("ring for allreduce, allgather, reducescatter and broadcast; tree, nvls and nvlstree for "
                        "allreduce; pat for allgather and reducescatter; hierarchical for allreduce and alltoall; "
                        "direct for alltoall"),
            std::string::npos)
      << groups;
  // An op an algorithm lacks is refused with the ops its rows hold.
  const ClusterSpec c;
  EXPECT_EQ(nccl_pair_refusal(CollectiveOp::AllToAll, Algorithm::Ring, Protocol::Simple, c, {2, 1}),
            "ring is for allreduce, allgather, reducescatter and broadcast");
}

TEST(AlgorithmTable, EveryRowIsComplete) {
  std::set<std::pair<Algorithm, CollectiveOp>> seen;
  std::set<Algorithm> noted;
  for (const AlgorithmRow& r : algorithm_rows()) {
    SCOPED_TRACE(std::string(r.name) + " " + to_string(r.op));
    EXPECT_TRUE(seen.insert({r.algorithm, r.op}).second) << "two rows";
    EXPECT_NE(r.algorithm, Algorithm::Auto);
    ASSERT_NE(r.closed_form, nullptr);
    ASSERT_NE(r.refusal, nullptr);
    // NCCL's pairs have its latency; gradwire's own schedules neither.
    EXPECT_EQ(r.factor == nullptr, r.latency_us == nullptr);
    EXPECT_TRUE(r.factor || r.nccl_row == -1);
    EXPECT_TRUE(!r.scenario || r.op == CollectiveOp::AllReduce);
    // The note is on the algorithm's first row only.
    const bool first = find_algorithm_row(algorithm_ops(r.algorithm).front(), r.algorithm) == &r;
    EXPECT_TRUE(first || *r.note == '\0');
    EXPECT_TRUE(!*r.note || noted.insert(r.algorithm).second);
  }
}

// The closed form's dispatch is the rows': on a cluster where every pair runs
// (one NVSwitch node, or one GPU per node for PAT), collective_time is the
// row's closed form under NCCL's cost, and a pair NCCL refuses has none.
TEST(AlgorithmTable, ClosedFormsAreTheRows) {
  ClusterSpec node;
  node.nodes = 1;
  node.gpus_per_node = 8;
  node.gpu = "h100";
  node.intra_node = {450e9, 1e-6};
  ClusterSpec spread = node;
  spread.nodes = 8;
  spread.gpus_per_node = 1;
  for (const AlgorithmRow& r : algorithm_rows()) {
    SCOPED_TRACE(std::string(r.name) + " " + to_string(r.op));
    const ClusterSpec& c = r.algorithm == Algorithm::Pat ? spread : node;
    const NcclShape shape = collective_shape(c, 8);
    if (r.algorithm == Algorithm::NvlsTree) {  // two nodes or more
      EXPECT_FALSE(collective_time(r.op, r.algorithm, Protocol::Simple, c, shape, 1e6).has_value());
      continue;
    }
    const auto cost = collective_cost(r.op, r.algorithm, Protocol::Simple, c, shape, 1e6);
    ASSERT_TRUE(cost.has_value());
    EXPECT_EQ(*collective_time(r.op, r.algorithm, Protocol::Simple, c, shape, 1e6),
              r.closed_form(c, shape, 1e6, *cost));
  }
}

}  // namespace
}  // namespace gw
