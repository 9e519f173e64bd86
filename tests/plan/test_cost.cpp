// Time-to-train and cost arithmetic against hand-computed figures.
#include <gtest/gtest.h>

#include "gradwire/plan/cost.hpp"

namespace gw::plan {
namespace {

InstanceType p4d() {
  InstanceType t;
  t.name = "p4d.24xlarge";
  t.on_demand = 32.7726;
  t.spot = 11.57;
  return t;
}

TEST(Cost, TargetSamplesFromEachKindOfTarget) {
  ModelDesc seq;
  seq.name = "gpt";
  seq.sequence_length = 1024;
  TrainingSpec t;
  t.samples = 5e6;
  EXPECT_DOUBLE_EQ(target_samples(t, seq), 5e6);
  TrainingSpec tok;
  tok.tokens = 1.024e9;
  EXPECT_DOUBLE_EQ(target_samples(tok, seq), 1e6);
  TrainingSpec ep;
  ep.epochs = 90;
  ep.dataset_size = 1281167;
  EXPECT_DOUBLE_EQ(target_samples(ep, seq), 90.0 * 1281167);
  ModelDesc cnn;
  cnn.name = "resnet50";
  EXPECT_THROW(target_samples(tok, cnn), std::invalid_argument);
}

TEST(Cost, IterationsRoundUpAndConvergenceFactorAddsSteps) {
  auto t = time_to_train(1e6, 1000, 0.5);
  EXPECT_DOUBLE_EQ(t.iterations, 1000);
  EXPECT_DOUBLE_EQ(t.seconds, 500);
  EXPECT_DOUBLE_EQ(t.hours(), 500.0 / 3600);
  EXPECT_DOUBLE_EQ(time_to_train(1e6 + 1, 1000, 0.5).iterations, 1001);
  // A compressor needing 25% more steps is charged for them.
  auto c = time_to_train(1e6, 1000, 0.4, 1.25);
  EXPECT_DOUBLE_EQ(c.iterations, 1250);
  EXPECT_DOUBLE_EQ(c.seconds, 500);
  EXPECT_THROW(time_to_train(1e6, 0, 0.5), std::invalid_argument);
  EXPECT_THROW(time_to_train(1e6, 10, 0), std::invalid_argument);
}

TEST(Cost, BillingGranularityAndMinimum) {
  BillingSpec per_second;  // 1 s, 60 s minimum
  EXPECT_DOUBLE_EQ(billed_seconds(30, per_second), 60);
  EXPECT_DOUBLE_EQ(billed_seconds(60, per_second), 60);
  EXPECT_DOUBLE_EQ(billed_seconds(61.2, per_second), 62);
  BillingSpec hourly{3600, 3600};
  EXPECT_DOUBLE_EQ(billed_seconds(3601, hourly), 7200);
  EXPECT_DOUBLE_EQ(billed_seconds(10, hourly), 3600);
  BillingSpec exact{1e-9, 0};
  EXPECT_NEAR(billed_seconds(12.5, exact), 12.5, 1e-6);
}

TEST(Cost, OnDemandAndSpotForAllNodes) {
  // 16 x p4d for 3 hours: 48 instance hours.
  auto c = run_cost(3 * 3600, 16, p4d(), BillingSpec{});
  EXPECT_DOUBLE_EQ(c.billed_seconds, 10800);
  EXPECT_NEAR(c.on_demand, 48 * 32.7726, 1e-9);
  ASSERT_TRUE(c.spot.has_value());
  EXPECT_NEAR(*c.spot, 48 * 11.57, 1e-9);
  // 30 s is billed as the 60 s minimum on each of the 16 instances.
  auto s = run_cost(30, 16, p4d(), BillingSpec{});
  EXPECT_NEAR(s.on_demand, 16 * 60 / 3600.0 * 32.7726, 1e-12);
  InstanceType no_spot = p4d();
  no_spot.spot.reset();
  EXPECT_FALSE(run_cost(100, 2, no_spot, BillingSpec{}).spot.has_value());
}

TEST(Cost, CriticalBatchLawScalesTheSamplesWithTheBatch) {
  // E = E_min (1 + B / B_noise): at B = G the target as given; at 4G with
  // B_noise = G, (1 + 4) / (1 + 1) = 2.5 times the samples.
  EXPECT_DOUBLE_EQ(samples_at_batch(1e6, 1024, 1024, 1024), 1e6);
  EXPECT_DOUBLE_EQ(samples_at_batch(1e6, 4096, 1024, 1024), 2.5e6);
  EXPECT_DOUBLE_EQ(samples_at_batch(1e6, 256, 1024, 1e12), 1e6 * (1 + 256 / 1e12) / (1 + 1024 / 1e12));
}

TEST(Cost, AClusterOfYourOwnIsPricedPerSecondWithoutAMinimum) {
  Scenario s;
  s.cluster.nodes = 3;
  s.cluster.gpus_per_node = 8;
  s.cluster.cloud = "onprem";
  s.cluster.price_per_node_hour = 8 * 1.5;  // price_per_gpu_hour: 1.5
  s.training = TrainingSpec{};
  s.training->samples = 1e5;
  ModelDesc m;
  m.name = "m";
  const auto type = priced_type(s.cluster);
  ASSERT_TRUE(type.has_value());
  EXPECT_EQ(type->name, "onprem");
  EXPECT_DOUBLE_EQ(type->billing.minimum, 0);
  // 1e5 / 100 = 1000 iterations x 0.0305 s = 30.5 s, billed 31 s per node.
  const TrainingEstimate e = estimate_training(s, m, 0.0305, 100);
  EXPECT_DOUBLE_EQ(e.time.iterations, 1000);
  ASSERT_TRUE(e.cost.has_value());
  EXPECT_DOUBLE_EQ(e.cost->billed_seconds, 31);
  EXPECT_NEAR(e.cost->on_demand, 3 * 31 / 3600.0 * 12, 1e-12);
  EXPECT_DOUBLE_EQ(e.usd_per_hour, 36);
  s.cluster.price_per_node_hour.reset();
  EXPECT_FALSE(estimate_training(s, m, 0.0305, 100).cost.has_value());
}

}  // namespace
}  // namespace gw::plan
