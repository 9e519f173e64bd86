#include "gradwire/plan/cost.hpp"

#include <cmath>
#include <stdexcept>

namespace gw::plan {

double target_samples(const TrainingSpec& t, const ModelDesc& model) {
  if (t.samples) return *t.samples;
  if (t.tokens) {
    if (model.sequence_length <= 0) {
      throw std::invalid_argument("training.tokens needs a sequence model; " + model.name +
                                  " has no sequence_length (give training.samples)");
    }
    return *t.tokens / static_cast<double>(model.sequence_length);
  }
  if (t.epochs && t.dataset_size) return *t.epochs * *t.dataset_size;
  throw std::invalid_argument("the training section gives no target");
}

TimeToTrain time_to_train(double samples, double global_batch, double iteration_seconds, double convergence_factor) {
  if (!(global_batch > 0)) throw std::invalid_argument("global batch must be positive");
  if (!(iteration_seconds > 0) || !std::isfinite(iteration_seconds))
    throw std::invalid_argument("iteration time must be positive and finite");
  if (!(convergence_factor > 0)) throw std::invalid_argument("convergence factor must be positive");
  if (!(samples > 0)) throw std::invalid_argument("samples must be positive");
  TimeToTrain t;
  t.samples = samples;
  t.global_batch = global_batch;
  t.convergence_factor = convergence_factor;
  // A relative tolerance keeps an exact quotient (e.g. 1e6 / 1000) from being
  // pushed to the next integer by rounding in the product.
  const double exact = convergence_factor * samples / global_batch;
  t.iterations = std::ceil(exact * (1 - 1e-12));
  t.seconds = t.iterations * iteration_seconds;
  return t;
}

double billed_seconds(double seconds, const BillingSpec& b) {
  if (!(seconds >= 0)) throw std::invalid_argument("negative run time");
  if (!(b.granularity > 0)) throw std::invalid_argument("billing granularity must be positive");
  const double rounded = std::ceil(seconds / b.granularity * (1 - 1e-12)) * b.granularity;
  return std::max(b.minimum, rounded);
}

Cost run_cost(double seconds, int nodes, const InstanceType& type, const BillingSpec& billing) {
  if (nodes < 1) throw std::invalid_argument("nodes must be at least 1");
  Cost c;
  c.billed_seconds = billed_seconds(seconds, billing);
  const double instance_hours = nodes * c.billed_seconds / 3600.0;
  c.on_demand = instance_hours * type.on_demand;
  if (type.spot) c.spot = instance_hours * *type.spot;
  return c;
}

double samples_at_batch(double samples, double batch, double reference_batch, double critical_batch) {
  if (!(critical_batch > 0) || !(batch > 0) || !(reference_batch > 0))
    throw std::invalid_argument("batches must be positive");
  return samples * (1 + batch / critical_batch) / (1 + reference_batch / critical_batch);
}

std::optional<InstanceType> priced_type(const ClusterSpec& c) {
  if (c.instance) {
    if (const InstanceType* type = default_catalog().find(*c.instance)) return *type;
    return std::nullopt;
  }
  if (!c.price_per_node_hour) return std::nullopt;
  InstanceType own;
  own.name = c.cloud;
  own.cloud = c.cloud;
  own.gpu = c.gpu;
  own.gpus = c.gpus_per_node;
  own.on_demand = *c.price_per_node_hour;
  own.billing = BillingSpec{1.0, 0.0};
  return own;
}

TrainingEstimate estimate_training(const Scenario& s, const ModelDesc& model, double iteration_seconds,
                                   double global_batch, std::optional<double> convergence_factor,
                                   const std::optional<BillingSpec>& billing) {
  if (!s.training) throw std::invalid_argument("the scenario has no training target");
  const TrainingSpec& t = *s.training;
  TrainingEstimate e;
  double samples = target_samples(t, model);
  if (t.critical_batch) {
    e.critical_batch = t.critical_batch;
    samples = samples_at_batch(samples, global_batch, *t.samples_batch(), *t.critical_batch);
  }
  e.time = time_to_train(samples, global_batch, iteration_seconds, convergence_factor.value_or(t.convergence_factor));
  e.priced = priced_type(s.cluster);
  if (!e.priced) return e;
  e.cost = run_cost(e.time.seconds, s.cluster.nodes, *e.priced, billing.value_or(e.priced->billing));
  e.usd_per_hour = s.cluster.nodes * e.priced->on_demand;
  return e;
}

}  // namespace gw::plan
