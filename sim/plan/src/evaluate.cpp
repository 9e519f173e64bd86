#include "gradwire/plan/evaluate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "gradwire/core/error.hpp"
#include "gradwire/model/compressors.hpp"
#include "gradwire/model/scenario_refs.hpp"
#include "gradwire/plan/cost.hpp"

namespace gw::plan {
namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string profile_name(const Scenario& s) { return s.profile.empty() ? default_profile_name(s) : s.profile; }

}  // namespace

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
  profile(profile_name(s));
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
    key += std::string("|") + transport_info(c.intra_node.transport).name + "/" +
                     transport_info(c.nic.transport).name + "x" + std::to_string(c.nic.connections);
    if (c.nic.per_connection != transport_info(c.nic.transport).per_connection) {  // the cluster's own per-flow rate
      std::snprintf(buf, sizeof buf, "@%.6g", c.nic.per_connection);
      key += buf;
    }
  }
  r.cluster_key = key;
}

/// What the point needs besides the scenario: its model and profile, the
/// GPU memory, the instance type and the compressor's memory.
struct PointContext {
  const ModelDesc& model;
  const Profile& profile;
  double capacity;
  CompressorMemory compressor;
  int world;
};

/// The global batch split into micro_batch x accumulation x world (`w`
/// updated). False when the point ends here (record finished as invalid or no_fit).
bool split_global_batch(const PointOptions& o, const PointContext& p, WorkloadSpec& w, ResultRecord& r) {
  const long long gb = *o.global_batch;
  if (o.fit_accumulation) {
    auto f = smallest_fitting_accumulation(p.model, w, p.compressor, p.capacity, gb, p.world, o.memory);
    if (!f.found) {
      r.micro_batch = f.micro_batch;
      r.accumulation = f.accumulation;
      r.memory = f.memory;
      finish(r, f.micro_batch > 0 ? "no_fit" : "invalid", f.reason);
      return false;
    }
    w.micro_batch = f.micro_batch;
    w.accumulation = f.accumulation;
    return true;
  }
  const long long split = static_cast<long long>(p.world) * w.accumulation;
  std::string why;
  if (gb % split != 0) {
    why = "global batch " + std::to_string(gb) + " is not a multiple of " + std::to_string(p.world) +
          " GPUs x accumulation " + std::to_string(w.accumulation);
  } else if (gb / split > kMaxMicroBatch) {
    why = "global batch " + std::to_string(gb) + " gives a micro-batch of " + std::to_string(gb / split) +
          " per GPU, above the " + std::to_string(kMaxMicroBatch) + " a scenario allows";
  } else {
    w.micro_batch = static_cast<int>(gb / split);
    return true;
  }
  r.accumulation = w.accumulation;
  finish(r, "invalid", why);
  return false;
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

/// Time-to-train (a training target) and cost (an instance or a price of the cluster's own).
void put_training(const PointOptions& o, const Scenario& s, const PointContext& p, const IterationResult& it,
                  ResultRecord& r) {
  std::optional<double> cf;
  if (auto f = o.convergence_factors.find(s.workload->compression.kind); f != o.convergence_factors.end())
    cf = f->second;
  const TrainingEstimate e = estimate_training(s, p.model, it.total, it.global_batch, cf, o.billing);
  r.training = TrainingFigures{e.time.samples, e.time.convergence_factor, e.time.iterations, e.time.hours(),
                               e.critical_batch};
  // The band carries through: time-to-train and cost at its low and high.
  const TrainingEstimate low = estimate_training(s, p.model, it.band_low, it.global_batch, cf, o.billing);
  const TrainingEstimate high = estimate_training(s, p.model, it.band_high, it.global_batch, cf, o.billing);
  r.band->hours_low = low.time.hours();
  r.band->hours_high = high.time.hours();
  if (!e.cost) return;
  r.cost = CostFigures{e.cost->on_demand, e.cost->spot, e.cost->billed_seconds, e.usd_per_hour};
  r.band->on_demand_low = low.cost->on_demand;
  r.band->on_demand_high = high.cost->on_demand;
}

/// A fixed training.global_batch: micro-batch and k follow (resolve_global_batch).
bool split_training_batch(const PointOptions& o, const Scenario& s, const PointContext& p, WorkloadSpec& w,
                          ResultRecord& r) {
  const BatchSplit b = resolve_global_batch(s, p.model, p.compressor, p.capacity, o.memory);
  if (!b.found) {
    if (b.micro_batch > 0) {
      r.micro_batch = b.micro_batch;
      r.accumulation = b.accumulation;
      r.global_batch = static_cast<double>(b.global_batch);
      r.memory = b.memory;
    }
    finish(r, b.no_fit ? "no_fit" : "invalid", b.reason);
    return false;
  }
  w.micro_batch = b.micro_batch;
  w.accumulation = b.accumulation;
  r.batch_split = b.how;
  return true;
}

}  // namespace

void PointEvaluator::evaluate_workload(Scenario& s, ResultRecord& r) {
  const ClusterSpec& c = s.cluster;
  WorkloadSpec& w = *s.workload;
  const ModelDesc& m = model(w.model);
  const Profile& p = profile(profile_name(s));
  // Compressor memory does not depend on the batch split.
  const PointContext ctx{m, p, gpu_capacity(c, p), compressor_memory(s, m, p), c.world_size()};
  if (options_.global_batch) {
    if (!split_global_batch(options_, ctx, w, r)) return;
  } else if (s.training && s.training->global_batch && !split_training_batch(options_, s, ctx, w, r)) {
    return;
  }
  r.micro_batch = w.micro_batch;
  r.accumulation = w.accumulation;
  r.global_batch = static_cast<double>(w.micro_batch) * w.accumulation * ctx.world;
  const auto mem = memory_per_gpu(m, w, ctx.compressor, ctx.capacity, options_.memory);
  r.memory = mem;
  if (!mem.fits()) {
    return finish(r, "no_fit", "needs " + num(mem.total / (1024.0 * 1024 * 1024)) + " GiB per GPU, " +
                                   num(ctx.capacity / (1024.0 * 1024 * 1024)) + " GiB available");
  }
  const IterationResult it = evaluator_(s, m, p);
  put_iteration(it, r);
  if (s.training) put_training(options_, s, ctx, it, r);
  finish(r, "ok", "");
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
  Scenario s = scenario_in;
  describe_cluster(s.cluster, r);
  if (!s.workload) {
    finish(r, "invalid", "the scenario has no workload");
    return r;
  }
  r.model = s.workload->model;
  r.compression = compressor_label(s.workload->compression);
  r.compression_kind = s.workload->compression.kind;
  r.evaluator = evaluator_name_;
  try {
    evaluate_workload(s, r);
  } catch (const std::exception& e) {
    finish(r, "error", e.what());
  }
  return r;
}

}  // namespace gw::plan
