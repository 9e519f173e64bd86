#include "gradwire/plan/evaluate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <new>
#include <stdexcept>

#include "gradwire/core/error.hpp"
#include "gradwire/model/compressors.hpp"
#include "gradwire/model/scenario_refs.hpp"
#include "gradwire/model/sharded_wire.hpp"
#include "gradwire/plan/cost.hpp"
#include "gradwire/plan/worker_pool.hpp"

namespace gw::plan {

std::string point_error_reason(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) return out_of_memory_words(e) + ": " + kWorkerMemoryHint;
  return e.what();
}

PointEvaluator::PointEvaluator(PointOptions options, Evaluator evaluator, std::string evaluator_name)
    : options_(std::move(options)), evaluator_(std::move(evaluator)), evaluator_name_(std::move(evaluator_name)) {}

const ModelDesc& PointEvaluator::model(const std::string& name) {
  auto it = models_.find(name);
  if (it == models_.end()) it = models_.emplace(name, std::make_unique<ModelDesc>(load_model(name))).first;
  return *it->second;
}

const Profile& PointEvaluator::profile(const std::string& name) {
  auto it = profiles_.find(name);
  if (it == profiles_.end()) it = profiles_.emplace(name, std::make_unique<Profile>(load_profile(name))).first;
  return *it->second;
}

void PointEvaluator::preload(const Scenario& s) {
  if (s.workload) model(s.workload->model);
  profile(profile_reference(s));
}

namespace {

void finish(ResultRecord& r, const std::string& status, const std::string& reason) {
  r.status = status;
  if (!reason.empty()) r.reason = reason;
}

void describe_cluster(const ClusterSpec& c, ResultRecord& r) {
  r.instance.emplace(c.instance);  // written even when null
  r.nodes = c.nodes;
  r.gpus_per_node = c.gpus_per_node;
  r.world = c.world_size();
  r.gpu = c.gpu;
  r.node_bandwidth = c.node_bandwidth();
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s|%d|%dx%s|%.6g|%.6g", c.instance ? c.instance->c_str() : "-", c.nodes,
                c.gpus_per_node, c.gpu.c_str(), c.node_bandwidth(), c.intra_node.bandwidth);
  std::string key = buf;
  if (!c.ideal_transports()) {  // clusters that differ only by transport stay apart
    key += std::string("|") + transport_info(c.intra_node.transport).name + "/" + transport_info(c.nic.transport).name +
           "x" + std::to_string(c.nic.connections);
    if (c.nic.per_connection != transport_info(c.nic.transport).per_connection) {  // the cluster's own per-flow rate
      std::snprintf(buf, sizeof buf, "@%.6g", c.nic.per_connection);
      key += buf;
    }
  }
  r.cluster_key = key;
}

void put_iteration(const IterationResult& it, ResultRecord& r) {
  r.iteration = it.total;
  r.forward = it.forward;
  r.backward = it.backward;
  r.exposed_communication = it.exposed_communication;
  r.encode = it.encode;
  r.decode = it.decode;
  r.optimizer = it.optimizer;
  r.samples_per_second = it.samples_per_second;
  r.wire_bytes_per_gpu = it.wire_bytes_per_gpu;
  if (!it.measured_collectives.empty()) r.measured_collectives = it.measured_collectives;
  r.band = BandFigures{};
  r.band->iteration_low = it.band_low;
  r.band->iteration_high = it.band_high;
  r.band->straggler_wait = it.straggler_wait;
}

/// Time-to-train, and with a price the cost; the band carries through to
/// both (time-to-train and cost at its low and high).
void put_training(const ScenarioOutcome& o, ResultRecord& r) {
  const TrainingEstimate& e = *o.training;
  r.training =
      TrainingFigures{e.time.samples, e.time.convergence_factor, e.time.iterations, e.time.hours(), e.critical_batch};
  if (!o.training_low || !o.training_high) return;
  r.band->hours_low = o.training_low->time.hours();
  r.band->hours_high = o.training_high->time.hours();
  if (!e.cost) return;
  r.cost = CostFigures{e.cost->on_demand, e.cost->spot, e.cost->billed_seconds, e.usd_per_hour};
  r.band->on_demand_low = o.training_low->cost->on_demand;
  r.band->on_demand_high = o.training_high->cost->on_demand;
}

/// The record's fields from a point's outcome, as far as it went.
void put_outcome(const ScenarioOutcome& o, ResultRecord& r) {
  r.micro_batch = o.micro_batch;
  r.accumulation = o.accumulation;
  r.global_batch = o.global_batch;
  if (o.split.found) r.batch_split = o.split.how;
  r.memory = o.memory;
  if (o.iteration) put_iteration(*o.iteration, r);
  if (o.training) put_training(o, r);
}

const char* status_name(OutcomeStatus s) {
  switch (s) {
    case OutcomeStatus::Invalid:
      return "invalid";
    case OutcomeStatus::NoFit:
      return "no_fit";
    case OutcomeStatus::Ok:
      break;
  }
  return "ok";
}

}  // namespace

void PointEvaluator::evaluate_workload(const Scenario& s, ResultRecord& r) {
  const ScenarioInputs in{model(s.workload->model), profile(profile_reference(s))};
  ScenarioOutcome out;
  try {
    evaluate_scenario(s, in, evaluator_, options_, out);
  } catch (const std::exception& e) {
    put_outcome(out, r);  // the fields filled before the point ended
    return finish(r, "error", point_error_reason(e));
  }
  put_outcome(out, r);
  finish(r, status_name(out.status), out.reason);
}

ResultRecord PointEvaluator::evaluate(std::size_t index, std::size_t total, const std::string& sweep_id,
                                      const std::string& key,
                                      const std::vector<std::pair<std::string, std::string>>& params,
                                      const Scenario& scenario_in) {
  ResultRecord r;
  r.index = index;
  r.of = total;
  r.sweep = sweep_id;
  r.key = key;
  r.inputs = inputs_;
  r.params = params;
  r.status = "ok";
  const Scenario& s = scenario_in;
  describe_cluster(s.cluster, r);
  if (!s.workload) {
    finish(r, "invalid", "the scenario has no workload");
    return r;
  }
  r.model = s.workload->model;
  r.compression = compressor_label(s.workload->compression);
  r.compression_kind = s.workload->compression.kind;
  if (const std::string scheme = scheme_label(s.workload->sharding, s.workload->activation_checkpointing);
      !scheme.empty())
    r.sharding = scheme;
  r.evaluator = evaluator_name_;
  try {
    evaluate_workload(s, r);
  } catch (const std::exception& e) {
    finish(r, "error", point_error_reason(e));
  }
  return r;
}

}  // namespace gw::plan
