// What a scenario costs, computed once (docs/architecture.md, "One place per
// concept"): from a scenario and the inputs its references resolve to
// (scenario_refs.hpp), the batch split (a fixed global batch: micro-batch x k
// x GPUs), the per-GPU memory verdict, the predicted iteration (closed form or
// the SimGrid replay, passed in as a function), the time-to-train and cost of
// its training target and the band around them. `gradwire simulate` prints
// one outcome; the sweep makes each point's ResultRecord from one
// (evaluate.hpp). Plain C++.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gradwire/model/catalog.hpp"
#include "gradwire/model/iteration_model.hpp"
#include "gradwire/model/memory.hpp"
#include "gradwire/model/model_desc.hpp"
#include "gradwire/model/profile.hpp"
#include "gradwire/model/scenario.hpp"
#include "gradwire/plan/cost.hpp"

namespace gw::plan {

/// Predicts one iteration: gw::closed_form_iteration or gw::simulate_iteration
/// (the replay), or a caller's function around one of them.
using Evaluator = std::function<IterationResult(const Scenario&, const ModelDesc&, const Profile&)>;

/// How a scenario is evaluated beyond what it says itself (a sweep's
/// options; `simulate` uses the defaults but run_oversubscribed).
struct PointOptions {
  std::optional<long long> global_batch;              ///< micro_batch := global_batch / (world x k)
  bool fit_accumulation = false;                      ///< choose the smallest k that fits (needs global_batch)
  std::map<std::string, double> convergence_factors;  ///< by compression kind, explicit only
  MemoryOptions memory;
  std::optional<BillingSpec> billing;  ///< overrides the catalog's billing
  /// Predict the iteration even when the batch does not fit in GPU memory
  /// (simulate --allow-oversubscribed-memory); the status still says NoFit.
  bool run_oversubscribed = false;
};

/// What a scenario's references resolved to: its model and profile (as
/// resolve_scenario_references or a cache of them loaded them).
struct ScenarioInputs {
  const ModelDesc& model;
  const Profile& profile;
};

enum class OutcomeStatus {
  Ok,       ///< evaluated
  Invalid,  ///< the batch cannot be split as asked (reason)
  NoFit,    ///< the batch does not fit in GPU memory (reason)
};

/// A scenario's outcome. The batch, its memory, the iteration and the
/// training are set as far as the evaluation went: an Invalid or NoFit
/// outcome keeps what was known when it ended.
struct ScenarioOutcome {
  Scenario scenario;  ///< the scenario evaluated, its workload's micro-batch and k those of the split
  OutcomeStatus status = OutcomeStatus::Ok;
  std::string reason;  ///< why Invalid or NoFit
  BatchSplit split;    ///< training.global_batch's split (split.fixed false without one)
  std::optional<int> micro_batch, accumulation;
  std::optional<double> global_batch;
  std::optional<MemoryBreakdown> memory;     ///< per GPU, of that batch
  std::optional<IterationResult> iteration;  ///< when it was predicted
  /// With a training target: time-to-train and cost at the iteration time,
  /// and at the band's low and high.
  std::optional<TrainingEstimate> training, training_low, training_high;
};

/// Called once the split and the memory verdict are known, just before the
/// iteration is predicted (simulate: its warning, progress line, trace path check).
using BeforeRun = std::function<void(const ScenarioOutcome&)>;

/// Evaluates `scenario` (which must have a workload) into `out`: the split
/// (options.global_batch, else training.global_batch: resolve_global_batch),
/// the memory verdict (memory_per_gpu), the iteration (`evaluator`), and with
/// a training target estimate_training at the iteration time and the band's
/// ends. Stops at an Invalid or NoFit split or memory verdict (a NoFit one
/// goes on with options.run_oversubscribed). What `evaluator` or the
/// estimate throws propagates, `out` keeping what was computed before.
void evaluate_scenario(const Scenario& scenario, const ScenarioInputs& inputs, const Evaluator& evaluator,
                       const PointOptions& options, ScenarioOutcome& out, const BeforeRun& before_run = {});

/// The same, returning the outcome.
ScenarioOutcome evaluate_scenario(const Scenario& scenario, const ScenarioInputs& inputs, const Evaluator& evaluator,
                                  const PointOptions& options = {}, const BeforeRun& before_run = {});

/// A sharding scheme that fits where the scenario's does not ("which schemes
/// fit"): the scheme with its framework's defaults and a checkpointing choice
/// (sharding.hpp, scheme_candidates), its memory per GPU at the scenario's
/// micro-batch and k, and its closed-form iteration time where gradwire
/// simulates it (zero1-3; not hsdp, zeropp or checkpointing under ddp).
struct SchemeAlternative {
  std::string label;  ///< "zero3", "zero3 + full activation checkpointing"
  double memory = 0;  ///< bytes per GPU
  std::optional<double> seconds;
};
/// The candidates that fit, in scheme_candidates' order. `scenario` must
/// have a workload (at the split evaluate_scenario chose).
std::vector<SchemeAlternative> fitting_schemes(const Scenario& scenario, const ScenarioInputs& inputs,
                                               const PointOptions& options = {});

}  // namespace gw::plan
