#include "gradwire/plan/scenario_outcome.hpp"

#include <cstdio>
#include <stdexcept>

#include "gradwire/model/closed_form.hpp"
#include "gradwire/model/sharded_iteration.hpp"
#include "gradwire/model/sharding.hpp"

namespace gw::plan {
namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

/// Ends the evaluation as `status` for `reason`; false, so that a step can return it.
bool stop(ScenarioOutcome& out, OutcomeStatus status, const std::string& reason) {
  out.status = status;
  out.reason = reason;
  return false;
}

/// What the split and the memory verdict need besides the scenario (the
/// compressor's memory does not depend on the split).
struct Sizing {
  const ScenarioInputs& in;
  const PointOptions& options;
  double capacity;
  CompressorMemory compressor;
};

/// options.global_batch split into micro_batch x k x world, k the workload's
/// or (fit_accumulation) the smallest that fits. False when the evaluation
/// ends here (Invalid or NoFit).
bool split_options_batch(const Sizing& z, ScenarioOutcome& out) {
  WorkloadSpec& w = *out.scenario.workload;
  const long long gb = *z.options.global_batch;
  const int world = out.scenario.cluster.world_size();
  if (z.options.fit_accumulation) {
    const FitChoice f = smallest_fitting_accumulation(z.in.model, w, z.compressor, z.capacity, gb, world,
                                                      z.options.memory, out.scenario.cluster.gpus_per_node);
    if (!f.found) {
      out.micro_batch = f.micro_batch;
      out.accumulation = f.accumulation;
      out.memory = f.memory;
      return stop(out, f.micro_batch > 0 ? OutcomeStatus::NoFit : OutcomeStatus::Invalid, f.reason);
    }
    w.micro_batch = f.micro_batch;
    w.accumulation = f.accumulation;
    return true;
  }
  const long long split = static_cast<long long>(world) * w.accumulation;
  std::string why;
  if (gb % split != 0) {
    why = "global batch " + std::to_string(gb) + " is not a multiple of " + std::to_string(world) +
          " GPUs x accumulation " + std::to_string(w.accumulation);
  } else if (gb / split > kMaxMicroBatch) {
    why = "global batch " + std::to_string(gb) + " gives a micro-batch of " + std::to_string(gb / split) +
          " per GPU, above the " + std::to_string(kMaxMicroBatch) + " a scenario allows";
  } else {
    w.micro_batch = static_cast<int>(gb / split);
    return true;
  }
  out.accumulation = w.accumulation;
  return stop(out, OutcomeStatus::Invalid, why);
}

/// A fixed training.global_batch: micro-batch and k follow (resolve_global_batch).
/// False when the evaluation ends here; a split that does not fit goes on
/// with options.run_oversubscribed.
bool split_training_batch(const Sizing& z, ScenarioOutcome& out) {
  WorkloadSpec& w = *out.scenario.workload;
  const BatchSplit& b = out.split =
      resolve_global_batch(out.scenario, z.in.model, z.compressor, z.capacity, z.options.memory);
  if (!b.found) {
    if (b.micro_batch > 0) {
      out.micro_batch = b.micro_batch;
      out.accumulation = b.accumulation;
      out.global_batch = static_cast<double>(b.global_batch);
      out.memory = b.memory;
    }
    stop(out, b.no_fit ? OutcomeStatus::NoFit : OutcomeStatus::Invalid, b.reason);
    if (!b.no_fit || !z.options.run_oversubscribed) return false;
  }
  w.micro_batch = b.micro_batch;
  w.accumulation = b.accumulation;
  return true;
}

/// The batch and its memory: false when the evaluation ends here.
bool size_batch(const Sizing& z, ScenarioOutcome& out) {
  const Scenario& s = out.scenario;
  if (z.options.global_batch) {
    if (!split_options_batch(z, out)) return false;
  } else if (s.training && s.training->global_batch && !split_training_batch(z, out)) {
    return false;
  }
  const WorkloadSpec& w = *s.workload;
  out.micro_batch = w.micro_batch;
  out.accumulation = w.accumulation;
  out.global_batch = static_cast<double>(w.micro_batch) * w.accumulation * s.cluster.world_size();
  out.memory = workload_memory(z.in.model, w, {s.cluster.world_size(), s.cluster.gpus_per_node}, z.compressor,
                               z.capacity, z.options.memory);
  if (out.memory->fits()) return true;
  const double gib = 1024.0 * 1024 * 1024;
  stop(out, OutcomeStatus::NoFit,
       "needs " + num(out.memory->total / gib) + " GiB per GPU, " + num(z.capacity / gib) + " GiB available");
  return z.options.run_oversubscribed;
}

/// Time-to-train and cost (a training target; the cost when the cluster has
/// a price) at the iteration time and the band's ends.
void estimate(const Sizing& z, ScenarioOutcome& out) {
  const Scenario& s = out.scenario;
  const IterationResult& it = *out.iteration;
  std::optional<double> cf;
  if (auto f = z.options.convergence_factors.find(s.workload->compression.kind);
      f != z.options.convergence_factors.end())
    cf = f->second;
  const auto at = [&](double seconds) {
    return estimate_training(s, z.in.model, seconds, it.global_batch, cf, z.options.billing);
  };
  out.training = at(it.total);
  out.training_low = at(it.band_low);
  out.training_high = at(it.band_high);
}

}  // namespace

void evaluate_scenario(const Scenario& scenario, const ScenarioInputs& in, const Evaluator& evaluator,
                       const PointOptions& options, ScenarioOutcome& out, const BeforeRun& before_run) {
  out = ScenarioOutcome{};
  out.scenario = scenario;
  if (!scenario.workload) throw std::invalid_argument("the scenario has no workload");
  const double capacity = gpu_capacity(scenario.cluster, in.profile);
  const Sizing z{in, options, capacity, compressor_memory(scenario, in.model, in.profile)};
  if (!size_batch(z, out)) return;
  if (before_run) before_run(out);
  out.iteration = evaluator(out.scenario, in.model, in.profile);
  if (out.scenario.training) estimate(z, out);
}

ScenarioOutcome evaluate_scenario(const Scenario& scenario, const ScenarioInputs& in, const Evaluator& evaluator,
                                  const PointOptions& options, const BeforeRun& before_run) {
  ScenarioOutcome out;
  evaluate_scenario(scenario, in, evaluator, options, out, before_run);
  return out;
}

std::vector<SchemeAlternative> fitting_schemes(const Scenario& scenario, const ScenarioInputs& in,
                                               const PointOptions& options) {
  const WorkloadSpec& w = *scenario.workload;
  const ClusterSpec& c = scenario.cluster;
  const double capacity = gpu_capacity(c, in.profile);
  std::vector<SchemeAlternative> out;
  for (const auto& f : scheme_candidates(in.model, w, {c.world_size(), c.gpus_per_node},
                                         compressor_memory(scenario, in.model, in.profile), capacity, options.memory)) {
    if (!f.memory.fits()) continue;
    SchemeAlternative a;
    const bool checkpointed = f.checkpointing != ActivationCheckpointing::None;
    a.label = to_string(f.spec.scheme);
    if (checkpointed) a.label += " + " + to_string(f.checkpointing) + " activation checkpointing";
    a.memory = f.memory.total;
    const ShardingScheme k = f.spec.scheme;
    const bool simulated = k == ShardingScheme::Ddp ? !checkpointed : sharding_not_simulated(w, f.spec).empty();
    if (simulated && w.compression.kind == "none") {
      Scenario s = scenario;
      s.workload->sharding = f.spec;
      s.workload->activation_checkpointing = f.checkpointing;
      a.seconds = closed_form_iteration(s, in.model, in.profile).total;
    }
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace gw::plan
