// Collectives over a group with other groups beside it
// (CollectiveRequest::alongside): HSDP's replica all-reduces, one group per
// local rank, crossing the same NICs at once. Their flows share each phase,
// so each group gets its share of the node's NICs, and NCCL's choice and
// cost are taken on nic_share_cluster: the time equals the closed form of
// one group on that view of the cluster.
#include <gtest/gtest.h>

#include "collective.hpp"
#include "engine_test_util.hpp"
#include "gradwire/model/closed_form.hpp"
#include "gradwire/model/shard_groups.hpp"

namespace gw::engine {
namespace {
using namespace test;

/// Rank j's replica group on `nodes` nodes of 8: j, j + 8, ...
std::vector<int> replicas(int j, int nodes) {
  std::vector<int> r;
  for (int k = 0; k < nodes; ++k) r.push_back(j + 8 * k);
  return r;
}

TEST(Alongside, ReplicaGroupsShareTheNicsAsTheClosedFormSays) {
  const ClusterSpec c = switch_cluster(4, 8);
  const std::vector<double> sizes = {64 * KiB, 16 * MiB, 256 * MiB};
  std::vector<CollectiveRequest> reqs;
  for (const double s : sizes) {
    for (const bool beside : {false, true}) {
      auto r = request(CollectiveOp::AllReduce, Algorithm::Auto, s);
      r.ranks = replicas(0, 4);
      if (beside)
        for (int j = 1; j < 8; ++j) r.alongside.push_back(replicas(j, 4));
      reqs.push_back(r);
    }
  }
  const auto run = run_collectives(c, reqs);
  ASSERT_EQ(run.times.size(), reqs.size());
  const NcclShape shape{4, 4};
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const double alone =
        choose_collective(CollectiveOp::AllReduce, Algorithm::Auto, Protocol::Auto, c, shape, sizes[i]).time;
    const double shared = choose_collective(CollectiveOp::AllReduce, Algorithm::Auto, Protocol::Auto,
                                            nic_share_cluster(c, 8), shape, sizes[i])
                              .time;
    EXPECT_NEAR(run.times[2 * i], alone, 1e-3 * alone) << sizes[i];
    EXPECT_NEAR(run.times[2 * i + 1], shared, 1e-3 * shared) << sizes[i];
  }
  // Large: bandwidth-bound, eight groups on one NIC take about 8 x as long.
  EXPECT_GT(run.times[5], 7 * run.times[4]);
}

TEST(Alongside, GroupsMustBeDisjointAndOfOneSize) {
  const ClusterSpec c = switch_cluster(2, 8);
  auto r = request(CollectiveOp::AllReduce, Algorithm::Auto, MiB);
  r.ranks = replicas(0, 2);
  r.alongside = {replicas(0, 2)};
  EXPECT_THROW(detail::prepare_collective(c, 16, r), std::invalid_argument);
  r.alongside = {{1, 9, 2}};
  EXPECT_THROW(detail::prepare_collective(c, 16, r), std::invalid_argument);
  r.alongside = {replicas(1, 2)};
  EXPECT_EQ(detail::prepare_collective(c, 16, r).alongside.size(), 1u);
  EXPECT_EQ(nic_sharing(r.ranks, r.alongside, 8), 2);
}

}  // namespace
}  // namespace gw::engine
