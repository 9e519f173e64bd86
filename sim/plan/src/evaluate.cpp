#include "gradwire/plan/evaluate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "gradwire/error.hpp"
#include "gradwire/plan/cost.hpp"

namespace gw::plan {
namespace {

using json = nlohmann::ordered_json;

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

json memory_json(const MemoryBreakdown& m) {
  return json{{"total", m.total},
              {"capacity", m.capacity},
              {"parameters", m.parameters},
              {"gradients", m.gradients},
              {"optimizer_states", m.optimizer_states},
              {"error_feedback", m.error_feedback},
              {"buckets", m.buckets},
              {"compressor_state", m.compressor_state},
              {"gather_buffer", m.gather_buffer},
              {"activations", m.activations},
              {"reserve", m.reserve}};
}

std::string profile_name(const Scenario& s) { return s.profile.empty() ? s.cluster.gpu : s.profile; }

}  // namespace

std::string compression_label(const CompressionSpec& c) {
  if (c.kind == "none") return "uncompressed";
  if (c.kind == "powersgd") return "PowerSGD rank " + std::to_string(c.rank);
  if (c.kind == "topk") return "Top-K " + num(c.ratio * 100) + "%";
  if (c.kind == "randomk") return "Random-K " + num(c.ratio * 100) + "%";
  if (c.kind == "sign") return "signSGD";
  if (c.kind == "majority_vote") return "majority vote";
  return c.kind;
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
  profile(profile_name(s));
}

std::string PointEvaluator::evaluate(std::size_t index, std::size_t total, const std::string& sweep_id,
                                     const std::string& key,
                                     const std::vector<std::pair<std::string, std::string>>& params,
                                     const Scenario& scenario_in) {
  json j;
  j["index"] = index;
  j["of"] = total;
  j["sweep"] = sweep_id;
  j["key"] = key;
  if (!inputs_.empty()) {
    json ij = json::object();
    for (const auto& [role, hash] : inputs_) ij[role] = hash;
    j["inputs"] = ij;
  }
  json pj = json::object();
  for (const auto& [k, v] : params) pj[k] = v;
  j["params"] = pj;
  Scenario s = scenario_in;
  const ClusterSpec& c = s.cluster;
  auto finish = [&](const std::string& status, const std::string& reason) {
    j["status"] = status;
    if (!reason.empty()) j["reason"] = reason;
    // Never throws on bad UTF-8 (a scenario's string, a file name in a reason).
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
  };
  j["status"] = "ok";
  j["instance"] = c.instance ? json(*c.instance) : json(nullptr);
  j["nodes"] = c.nodes;
  j["gpus_per_node"] = c.gpus_per_node;
  j["world"] = c.world_size();
  j["gpu"] = c.gpu;
  j["node_bandwidth"] = c.node_bandwidth();
  {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s|%d|%dx%s|%.6g|%.6g", c.instance ? c.instance->c_str() : "-", c.nodes,
                  c.gpus_per_node, c.gpu.c_str(), c.node_bandwidth(), c.intra_node.bandwidth);
    j["cluster_key"] = buf;
  }
  if (!s.workload) return finish("invalid", "the scenario has no workload");
  WorkloadSpec& w = *s.workload;
  j["model"] = w.model;
  j["compression"] = compression_label(w.compression);
  j["compression_kind"] = w.compression.kind;
  j["evaluator"] = evaluator_name_;
  try {
    const ModelDesc& m = model(w.model);
    const Profile& p = profile(profile_name(s));
    double capacity = p.memory_bytes;
    const InstanceType* type = c.instance ? default_catalog().find(*c.instance) : nullptr;
    if (type != nullptr) capacity = type->gpu_memory;
    const int world = c.world_size();
    // Compressor memory does not depend on the batch split.
    const auto costs = device_costs(p, w.precision);
    const CompressorMemory cm = compressor_memory(plan_iteration(w, c, m, costs));
    if (options_.global_batch) {
      const long long gb = *options_.global_batch;
      if (options_.fit_accumulation) {
        auto f = smallest_fitting_accumulation(m, w, cm, capacity, gb, world, options_.memory);
        if (!f.found) {
          j["micro_batch"] = f.micro_batch;
          j["accumulation"] = f.accumulation;
          j["memory"] = memory_json(f.memory);
          return finish(f.micro_batch > 0 ? "no_fit" : "invalid", f.reason);
        }
        w.micro_batch = f.micro_batch;
        w.accumulation = f.accumulation;
      } else {
        const long long split = static_cast<long long>(world) * w.accumulation;
        if (gb % split != 0) {
          j["accumulation"] = w.accumulation;
          return finish("invalid", "global batch " + std::to_string(gb) + " is not a multiple of " +
                                       std::to_string(world) + " GPUs x accumulation " +
                                       std::to_string(w.accumulation));
        }
        const long long micro = gb / split;
        if (micro > kMaxMicroBatch) {
          j["accumulation"] = w.accumulation;
          return finish("invalid", "global batch " + std::to_string(gb) + " gives a micro-batch of " +
                                       std::to_string(micro) + " per GPU, above the " +
                                       std::to_string(kMaxMicroBatch) + " a scenario allows");
        }
        w.micro_batch = static_cast<int>(micro);
      }
    }
    j["micro_batch"] = w.micro_batch;
    j["accumulation"] = w.accumulation;
    j["global_batch"] = static_cast<double>(w.micro_batch) * w.accumulation * world;
    const auto mem = memory_per_gpu(m, w, cm, capacity, options_.memory);
    j["memory"] = memory_json(mem);
    if (!mem.fits()) {
      return finish("no_fit", "needs " + num(mem.total / (1024.0 * 1024 * 1024)) + " GiB per GPU, " +
                                  num(capacity / (1024.0 * 1024 * 1024)) + " GiB available");
    }
    const IterationResult r = evaluator_(s, m, p);
    j["iteration"] = r.total;
    j["forward"] = r.forward;
    j["backward"] = r.backward;
    j["exposed_communication"] = r.exposed_communication;
    j["encode"] = r.encode;
    j["decode"] = r.decode;
    j["optimizer"] = r.optimizer;
    j["samples_per_second"] = r.samples_per_second;
    j["wire_bytes_per_gpu"] = r.wire_bytes_per_gpu;
    if (s.training) {
      double cf = s.training->convergence_factor;
      if (auto it = options_.convergence_factors.find(w.compression.kind); it != options_.convergence_factors.end())
        cf = it->second;
      const double samples = target_samples(*s.training, m);
      const auto t = time_to_train(samples, r.global_batch, r.total, cf);
      j["training"] = json{{"samples", t.samples},
                           {"convergence_factor", t.convergence_factor},
                           {"iterations", t.iterations},
                           {"hours", t.hours()}};
      if (type != nullptr) {
        const auto cost = run_cost(t.seconds, c.nodes, *type, options_.billing.value_or(type->billing));
        j["cost"] = json{{"on_demand", cost.on_demand},
                         {"spot", cost.spot ? json(*cost.spot) : json(nullptr)},
                         {"billed_seconds", cost.billed_seconds},
                         {"usd_per_hour", c.nodes * type->on_demand}};
      }
    }
    return finish("ok", "");
  } catch (const InputError& e) {
    return finish("error", e.what());
  } catch (const std::exception& e) {
    return finish("error", e.what());
  }
}

}  // namespace gw::plan
