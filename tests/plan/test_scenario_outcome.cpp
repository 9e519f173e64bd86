// evaluate_scenario (gradwire/plan/scenario_outcome.hpp), the one place that
// says what a scenario costs: its outcome is the closed form's iteration and
// estimate_training's time and cost for that iteration; a split that cannot
// be made or does not fit stops before the run; the sweep's record is the
// outcome written down (PointEvaluator).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "gradwire/model/closed_form.hpp"
#include "gradwire/model/scenario_refs.hpp"
#include "gradwire/plan/evaluate.hpp"
#include "gradwire/plan/scenario_outcome.hpp"
#include "sweep_test_util.hpp"

namespace gw::plan {
namespace {

/// A scenario with a training target on catalog instances (a price).
const char* kPriced =
    "name: priced\n"
    "cluster: {instance: p4d.24xlarge, nodes: 2}\n"
    "workload: {model: resnet50, micro_batch: 64, optimizer: {kind: momentum}, compression: {kind: powersgd, rank: "
    "4}}\n"
    "training:\n"
    "  samples: 90000000\n";

struct Loaded {
  Scenario scenario;
  ModelDesc model;
  Profile profile;
  ScenarioInputs inputs() const { return {model, profile}; }
};

Loaded load(const TempDir& d, const std::string& text) {
  Scenario s = load_scenario(d.file("s.yaml", text));
  ModelDesc m = load_model(s.workload->model);
  Profile p = load_profile(profile_reference(s));
  return {std::move(s), std::move(m), std::move(p)};
}

/// The closed form, counting its calls.
struct Counted {
  int calls = 0;
  Evaluator evaluator() {
    return [this](const Scenario& s, const ModelDesc& m, const Profile& p) {
      ++calls;
      return closed_form_iteration(s, m, p);
    };
  }
};

TEST(EvaluateScenario, IsTheClosedFormAndEstimateTrainingOfTheScenario) {
  TempDir d;
  const Loaded l = load(d, kPriced);
  const ScenarioOutcome o = evaluate_scenario(l.scenario, l.inputs(), closed_form_iteration);
  ASSERT_EQ(o.status, OutcomeStatus::Ok) << o.reason;
  ASSERT_TRUE(o.iteration && o.memory && o.training && o.training_low && o.training_high);
  EXPECT_FALSE(o.split.fixed);

  const IterationResult it = closed_form_iteration(l.scenario, l.model, l.profile);
  EXPECT_EQ(o.iteration->total, it.total);
  EXPECT_EQ(o.iteration->band_low, it.band_low);
  EXPECT_EQ(*o.micro_batch, 64);
  EXPECT_EQ(*o.accumulation, 1);
  EXPECT_EQ(*o.global_batch, 64.0 * 16);
  EXPECT_EQ(o.memory->total, scenario_memory(l.scenario, l.model, l.profile).total);
  EXPECT_TRUE(o.memory->fits());

  const TrainingEstimate e = estimate_training(l.scenario, l.model, it.total, 64.0 * 16);
  EXPECT_EQ(o.training->time.iterations, std::ceil(90000000.0 / (64 * 16)));
  EXPECT_EQ(o.training->time.seconds, e.time.seconds);
  EXPECT_DOUBLE_EQ(o.training->time.seconds, o.training->time.iterations * it.total);
  ASSERT_TRUE(e.cost && o.training->cost);
  EXPECT_EQ(o.training->cost->on_demand, e.cost->on_demand);
  EXPECT_EQ(o.training->priced->name, "p4d.24xlarge");
  EXPECT_EQ(o.training_low->time.seconds, estimate_training(l.scenario, l.model, it.band_low, 1024).time.seconds);
  EXPECT_EQ(o.training_high->time.seconds, estimate_training(l.scenario, l.model, it.band_high, 1024).time.seconds);
  EXPECT_LT(o.training_low->time.seconds, o.training_high->time.seconds);
}

TEST(EvaluateScenario, AFixedGlobalBatchIsSplitBeforeTheRun) {
  TempDir d;
  // 2 x 8 GPUs, micro-batch 64, global batch 4096: k = 4.
  const Loaded l = load(d, std::string(kPriced) + "  global_batch: 4096\n");
  ScenarioOutcome o = evaluate_scenario(l.scenario, l.inputs(), closed_form_iteration);
  ASSERT_EQ(o.status, OutcomeStatus::Ok) << o.reason;
  ASSERT_TRUE(o.split.fixed && o.split.found);
  EXPECT_EQ(o.split.micro_batch, 64);
  EXPECT_EQ(o.split.accumulation, 4);
  EXPECT_EQ(o.scenario.workload->micro_batch, o.split.micro_batch);
  EXPECT_EQ(o.iteration->micro_batch, o.split.micro_batch);
  EXPECT_EQ(o.iteration->accumulation, o.split.accumulation);
  EXPECT_EQ(*o.global_batch, 4096.0);
  EXPECT_EQ(o.training->time.global_batch, 4096.0);

  // 4097 does not divide among 16 GPUs: Invalid, nothing run.
  const Loaded bad = load(d, std::string(kPriced) + "  global_batch: 4097\n");
  Counted c;
  o = evaluate_scenario(bad.scenario, bad.inputs(), c.evaluator());
  EXPECT_EQ(o.status, OutcomeStatus::Invalid);
  EXPECT_NE(o.reason.find("4097"), std::string::npos) << o.reason;
  EXPECT_EQ(c.calls, 0);
  EXPECT_FALSE(o.iteration);
}

TEST(EvaluateScenario, ABatchThatDoesNotFitRunsOnlyWhenAsked) {
  TempDir d;
  const Loaded l = load(d,
                        "name: big\n"
                        "cluster: {instance: p4d.24xlarge, nodes: 1}\n"
                        "workload: {model: resnet50, micro_batch: 8192}\n"
                        "training: {samples: 1000000}\n");
  Counted c;
  int before = 0;
  ScenarioOutcome o =
      evaluate_scenario(l.scenario, l.inputs(), c.evaluator(), {}, [&](const ScenarioOutcome&) { ++before; });
  EXPECT_EQ(o.status, OutcomeStatus::NoFit);
  EXPECT_EQ(o.reason.rfind("needs ", 0), 0u) << o.reason;
  ASSERT_TRUE(o.memory);
  EXPECT_FALSE(o.memory->fits());
  EXPECT_FALSE(o.iteration || o.training);
  EXPECT_EQ(c.calls + before, 0);

  PointOptions run_anyway;
  run_anyway.run_oversubscribed = true;
  o = evaluate_scenario(l.scenario, l.inputs(), c.evaluator(), run_anyway, [&](const ScenarioOutcome& seen) {
    ++before;
    EXPECT_FALSE(seen.memory->fits());  // known before the run
    EXPECT_FALSE(seen.iteration);
  });
  EXPECT_EQ(o.status, OutcomeStatus::NoFit);
  EXPECT_EQ(c.calls, 1);
  EXPECT_EQ(before, 1);
  ASSERT_TRUE(o.iteration && o.training);
  EXPECT_EQ(o.iteration->total, closed_form_iteration(l.scenario, l.model, l.profile).total);
}

TEST(EvaluateScenario, TheSweepRecordIsTheOutcomeWrittenDown) {
  TempDir d;
  const Loaded l = load(d, std::string(kPriced) + "  global_batch: 4096\n");
  const ScenarioOutcome o = evaluate_scenario(l.scenario, l.inputs(), closed_form_iteration);
  PointEvaluator pe({}, closed_form_iteration, "closed form");
  const ResultRecord r = pe.evaluate(0, 1, "id", "k=v", {}, l.scenario);
  ASSERT_EQ(r.status, "ok") << r.reason.value_or("");
  EXPECT_EQ(*r.iteration, o.iteration->total);
  EXPECT_EQ(*r.micro_batch, *o.micro_batch);
  EXPECT_EQ(*r.accumulation, *o.accumulation);
  EXPECT_EQ(*r.batch_split, o.split.how);
  EXPECT_EQ(r.memory->total, o.memory->total);
  EXPECT_EQ(r.training->hours, o.training->time.hours());
  EXPECT_EQ(r.cost->on_demand, o.training->cost->on_demand);
  EXPECT_EQ(*r.band->hours_low, o.training_low->time.hours());
  EXPECT_EQ(*r.band->on_demand_high, o.training_high->cost->on_demand);
}

}  // namespace
}  // namespace gw::plan
