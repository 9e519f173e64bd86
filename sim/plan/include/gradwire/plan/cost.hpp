// Time-to-train and cost of a training run (docs/planning.md, "Cost").
//
//   samples      = training.samples | training.tokens / sequence_length |
//                  training.epochs x training.dataset_size
//   global batch = world x micro_batch x accumulation
//   iterations   = ceil(convergence_factor x samples / global batch)
//   seconds      = iterations x iteration time
//   billed       = max(minimum, ceil(seconds / granularity) x granularity)
//   USD          = nodes x billed / 3600 x price per instance hour
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

}  // namespace gw::plan
