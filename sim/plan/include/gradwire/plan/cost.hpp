// Time-to-train and cost of a training run (docs/planning.md, "Cost").
//
//   samples      = training.samples | training.tokens / sequence_length |
//                  training.epochs x training.dataset_size
//   global batch = world x micro_batch x accumulation
//   iterations   = ceil(convergence_factor x samples / global batch)
//   seconds      = iterations x iteration time
//   billed       = max(minimum, ceil(seconds / granularity) x granularity)
//   USD          = nodes x billed / 3600 x price per instance hour
// training.critical_batch B_noise (McCandlish et al., "An Empirical Model of
// Large-Batch Training", 2018, arXiv:1812.06162, eq. 2.11: E = E_min (1 + B /
// B_noise)), the target's samples given at the reference batch R
// (training.reference_batch, else training.global_batch): at a batch B they
// become samples x (1 + B / B_noise) / (1 + R / B_noise).
// A spelled-out cluster with its own price (cluster.cloud, price_per_*_hour)
// is billed per second without a minimum unless the sweep says otherwise.
// Plain C++.
#pragma once

#include <optional>
#include <string>

#include "gradwire/model/catalog.hpp"
#include "gradwire/model/model_desc.hpp"
#include "gradwire/model/scenario.hpp"

namespace gw::plan {

/// Samples the training target asks for. Throws std::invalid_argument when a
/// token target meets a model without sequence_length.
double target_samples(const TrainingSpec& training, const ModelDesc& model);

struct TimeToTrain {
  double samples = 0;
  double global_batch = 0;
  double convergence_factor = 1;
  double iterations = 0;
  double seconds = 0;
  double hours() const { return seconds / 3600.0; }
};

/// Throws std::invalid_argument for a non-positive batch, iteration time or factor.
TimeToTrain time_to_train(double samples, double global_batch, double iteration_seconds,
                          double convergence_factor = 1.0);

/// Seconds a provider bills for one instance that ran `seconds`.
double billed_seconds(double seconds, const BillingSpec& billing);

struct Cost {
  double billed_seconds = 0;   ///< per instance
  double on_demand = 0;        ///< USD, all nodes
  std::optional<double> spot;  ///< USD, all nodes, when the instance has a spot price
};

/// Cost of running `nodes` instances of `type` for `seconds`, billed with
/// `billing` (usually type.billing).
Cost run_cost(double seconds, int nodes, const InstanceType& type, const BillingSpec& billing);

/// The samples a target given at `reference_batch` needs at `batch` under the
/// critical-batch law above (B_noise = critical_batch).
double samples_at_batch(double samples, double batch, double reference_batch, double critical_batch);

/// What the cluster costs per node hour and how it is billed: its catalog
/// instance, else its own price (cloud, price per node hour, per-second
/// billing without a minimum); nullopt when neither is known.
std::optional<InstanceType> priced_type(const ClusterSpec& cluster);

/// Time-to-train and cost of a scenario with a training target, at one
/// iteration time and global batch. `convergence_factor` replaces the
/// training section's when given; `billing` the instance's.
struct TrainingEstimate {
  TimeToTrain time;
  std::optional<double> critical_batch;
  std::optional<InstanceType> priced;  ///< the price used (name: instance or cloud)
  std::optional<Cost> cost;
  double usd_per_hour = 0;  ///< all nodes
};
TrainingEstimate estimate_training(const Scenario& scenario, const ModelDesc& model, double iteration_seconds,
                                   double global_batch, std::optional<double> convergence_factor = std::nullopt,
                                   const std::optional<BillingSpec>& billing = std::nullopt);

}  // namespace gw::plan
