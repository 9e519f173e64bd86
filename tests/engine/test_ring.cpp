// Ring all-reduce, all-gather and reduce-scatter on one non-blocking switch
// equal their alpha-beta closed forms; per-step equals aggregated.
#include <gtest/gtest.h>

#include "engine_test_util.hpp"
#include "gradwire/model/collective_model.hpp"

namespace gw::engine {
namespace {
using namespace test;
namespace cm = gw::collective;

constexpr double kTolerance = 1e-3;  // relative

double closed_form(CollectiveOp op, int n, double bytes, cm::AlphaBeta ab) {
  switch (op) {
    case CollectiveOp::AllReduce: return cm::ring_allreduce_time(n, bytes, ab);
    case CollectiveOp::AllGather: return cm::ring_allgather_time(n, bytes, ab);
    default: return cm::ring_reducescatter_time(n, bytes, ab);
  }
}

const std::vector<double> kSizes = {KiB, 32 * KiB, MiB, 32 * MiB, GiB};

struct RingCase {
  CollectiveOp op;
  int n;
};

class RingOnSwitch : public ::testing::TestWithParam<RingCase> {};

TEST_P(RingOnSwitch, AggregatedEqualsClosedForm) {
  const auto [op, n] = GetParam();
  std::vector<CollectiveRequest> reqs;
  for (double s : kSizes) reqs.push_back(request(op, Algorithm::Ring, s));
  const auto run = run_collectives(switch_cluster(n), reqs);
  // One GPU per node: the route is intra + NIC each side, the NIC the bottleneck.
  EXPECT_DOUBLE_EQ(run.alpha, 2 * kIntraLat + 2 * (kNicLat + kFabricLat));
  EXPECT_DOUBLE_EQ(run.bandwidth, kNicBw);
  ASSERT_EQ(run.times.size(), kSizes.size());
  for (std::size_t i = 0; i < kSizes.size(); ++i) {
    const double expect = closed_form(op, n, kSizes[i], {run.alpha, run.bandwidth});
    EXPECT_NEAR(run.times[i], expect, kTolerance * expect)
        << to_string(op) << " n=" << n << " size=" << kSizes[i];
  }
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, RingOnSwitch,
    ::testing::Values(RingCase{CollectiveOp::AllReduce, 2}, RingCase{CollectiveOp::AllReduce, 8},
                      RingCase{CollectiveOp::AllReduce, 64}, RingCase{CollectiveOp::AllReduce, 512},
                      RingCase{CollectiveOp::AllGather, 2}, RingCase{CollectiveOp::AllGather, 8},
                      RingCase{CollectiveOp::AllGather, 64}, RingCase{CollectiveOp::AllGather, 512},
                      RingCase{CollectiveOp::ReduceScatter, 2},
                      RingCase{CollectiveOp::ReduceScatter, 8},
                      RingCase{CollectiveOp::ReduceScatter, 64},
                      RingCase{CollectiveOp::ReduceScatter, 512}),
    [](const ::testing::TestParamInfo<RingCase>& param_info) {
      return to_string(param_info.param.op) + "_n" + std::to_string(param_info.param.n);
    });

// Per-step (every chunk its own message) against aggregated, back to back in
// one simulation: request i per-step, i+1 aggregated.
void expect_per_step_equals_aggregated(const ClusterSpec& c, CollectiveOp op,
                                       const std::vector<double>& sizes) {
  std::vector<CollectiveRequest> reqs;
  for (double s : sizes) {
    reqs.push_back(request(op, Algorithm::Ring, s, Granularity::PerStep));
    reqs.push_back(request(op, Algorithm::Ring, s, Granularity::Aggregated));
  }
  const auto run = run_collectives(c, reqs);
  ASSERT_EQ(run.times.size(), reqs.size());
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const double per_step = run.times[2 * i];
    const double aggregated = run.times[2 * i + 1];
    EXPECT_NEAR(per_step, aggregated, kTolerance * aggregated)
        << to_string(op) << " n=" << c.world_size() << " size=" << sizes[i];
    const double expect = closed_form(op, c.world_size(), sizes[i], {run.alpha, run.bandwidth});
    EXPECT_NEAR(per_step, expect, kTolerance * expect);
  }
}

TEST(RingPerStep, EqualsAggregatedSmallRings) {
  for (int n : {2, 8, 64})
    for (auto op : {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter})
      expect_per_step_equals_aggregated(switch_cluster(n), op, {KiB, MiB, GiB});
}

TEST(RingPerStep, EqualsAggregatedAt512) {
  expect_per_step_equals_aggregated(switch_cluster(512), CollectiveOp::AllReduce, {64 * MiB});
}

TEST(RingSubset, FirstRanksOnly) {
  // Eight of 32 GPUs take part: the closed form for n = 8.
  auto req = request(CollectiveOp::AllReduce, Algorithm::Ring, 64 * MiB);
  for (int r = 0; r < 8; ++r) req.ranks.push_back(r);
  const auto run = run_collectives(switch_cluster(32), {req});
  const double expect = cm::ring_allreduce_time(8, 64 * MiB, {run.alpha, run.bandwidth});
  EXPECT_NEAR(run.times[0], expect, kTolerance * expect);
}

TEST(RingErrors, BadRequestsThrow) {
  auto c = switch_cluster(4);
  auto bad_rank = request(CollectiveOp::AllReduce, Algorithm::Ring, MiB);
  bad_rank.ranks = {0, 9};
  auto twice = request(CollectiveOp::AllReduce, Algorithm::Ring, MiB);
  twice.ranks = {0, 1, 1};
  for (const auto& req :
       {bad_rank, twice, request(CollectiveOp::AllGather, Algorithm::Tree, MiB),
        request(CollectiveOp::AllReduce, Algorithm::Ring, -1)}) {
    EXPECT_THROW(run_collectives(c, {req}), std::runtime_error);
  }
}

TEST(RingNames, ParseAndPrint) {
  for (auto op : {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter,
                  CollectiveOp::Broadcast, CollectiveOp::AllToAll})
    EXPECT_EQ(parse_op(to_string(op)), op);
  for (auto a : {Algorithm::Ring, Algorithm::Tree, Algorithm::Hierarchical, Algorithm::Direct})
    EXPECT_EQ(parse_algorithm(to_string(a)), a);
  EXPECT_THROW(parse_op("allreduced"), std::invalid_argument);
  EXPECT_THROW(parse_algorithm("nvls"), std::invalid_argument);
}

}  // namespace
}  // namespace gw::engine
