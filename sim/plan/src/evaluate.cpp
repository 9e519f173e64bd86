#include "gradwire/plan/evaluate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "gradwire/core/error.hpp"
#include "gradwire/model/compressors.hpp"
#include "gradwire/plan/cost.hpp"

namespace gw::plan {
namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string profile_name(const Scenario& s) { return s.profile.empty() ? s.cluster.gpu : s.profile; }

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

MemoryFigures memory_figures(const MemoryBreakdown& m) {
  return {m.total,   m.capacity,         m.parameters,    m.gradients,   m.optimizer_states, m.error_feedback,
          m.buckets, m.compressor_state, m.gather_buffer, m.activations, m.reserve};
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
  }
  r.cluster_key = key;
}

/// What the point needs besides the scenario: its model and profile, the
/// GPU memory, the instance type and the compressor's memory.
struct PointContext {
  const ModelDesc& model;
  const Profile& profile;
  const InstanceType* type;
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
      r.memory = memory_figures(f.memory);
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
  r.band = BandFigures{};
  r.band->iteration_low = it.band_low;
  r.band->iteration_high = it.band_high;
  r.band->straggler_wait = it.straggler_wait;
}

/// Time-to-train (a training target) and cost (an instance).
void put_training(const PointOptions& o, const Scenario& s, const PointContext& p, const IterationResult& it,
                  ResultRecord& r) {
  double cf = s.training->convergence_factor;
  if (auto f = o.convergence_factors.find(s.workload->compression.kind); f != o.convergence_factors.end())
    cf = f->second;
  const double samples = target_samples(*s.training, p.model);
  const auto t = time_to_train(samples, it.global_batch, it.total, cf);
  r.training = TrainingFigures{t.samples, t.convergence_factor, t.iterations, t.hours()};
  // The band carries through: time-to-train and cost at its low and high.
  const auto low = time_to_train(samples, it.global_batch, it.band_low, cf);
  const auto high = time_to_train(samples, it.global_batch, it.band_high, cf);
  r.band->hours_low = low.hours();
  r.band->hours_high = high.hours();
  if (p.type == nullptr) return;
  const int nodes = s.cluster.nodes;
  const BillingSpec billing = o.billing.value_or(p.type->billing);
  const auto cost = run_cost(t.seconds, nodes, *p.type, billing);
  r.cost = CostFigures{cost.on_demand, cost.spot, cost.billed_seconds, nodes * p.type->on_demand};
  r.band->on_demand_low = run_cost(low.seconds, nodes, *p.type, billing).on_demand;
  r.band->on_demand_high = run_cost(high.seconds, nodes, *p.type, billing).on_demand;
}

}  // namespace

void PointEvaluator::evaluate_workload(Scenario& s, ResultRecord& r) {
  const ClusterSpec& c = s.cluster;
  WorkloadSpec& w = *s.workload;
  const ModelDesc& m = model(w.model);
  const Profile& p = profile(profile_name(s));
  const InstanceType* type = c.instance ? default_catalog().find(*c.instance) : nullptr;
  // Compressor memory does not depend on the batch split.
  const PointContext ctx{m, p, type, gpu_capacity(c, p), compressor_memory(s, m, p), c.world_size()};
  if (options_.global_batch && !split_global_batch(options_, ctx, w, r)) return;
  r.micro_batch = w.micro_batch;
  r.accumulation = w.accumulation;
  r.global_batch = static_cast<double>(w.micro_batch) * w.accumulation * ctx.world;
  const auto mem = memory_per_gpu(m, w, ctx.compressor, ctx.capacity, options_.memory);
  r.memory = memory_figures(mem);
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
