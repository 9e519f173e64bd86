// Scenario -> (cluster, iteration plan): the one path of both evaluators.
#include <map>
#include <stdexcept>

#include "gradwire/core/error.hpp"
#include "gradwire/model/iteration_model.hpp"
#include "gradwire/model/measured_compute.hpp"
#include "gradwire/model/profile.hpp"
#include "gradwire/model/scenario_refs.hpp"
#include "gradwire/model/stragglers.hpp"

namespace gw {
namespace {

/// The model with its tensors in the measured gradient-ready order: DDP
/// rebuilds its buckets in the order gradients became ready
/// (Reducer::rebuild_buckets), so the measurement's order decides them.
ModelDesc in_measured_order(const ModelDesc& model, const MeasuredCompute& m) {
  std::map<std::string, const TensorDesc*> by_name;
  for (const auto& t : model.tensors) by_name.emplace(t.name, &t);
  ModelDesc ordered = model;
  ordered.tensors.clear();
  for (const auto& t : m.tensors) ordered.tensors.push_back(*by_name.at(t.name));
  return ordered;
}

}  // namespace

DeviceCosts scenario_device_costs(const Scenario& scenario, const Profile& profile) {
  const WorkloadSpec& w = *scenario.workload;
  DeviceCosts costs;
  try {
    costs = device_costs(profile, w.precision, w.compute_precision);
  } catch (const std::invalid_argument& e) {
    if (w.compute_precision.empty()) throw InputError(profile.path, 0, 0, "gemm_flops", e.what());
    throw InputError(scenario.file, w.compute_precision_line, w.compute_precision_column, "workload.compute_precision",
                     e.what());
  }
  // A missing codec surfaces as std::out_of_range from Profile::codec_time.
  const CodecTimeFn codec = costs.codec_time;
  costs.codec_time = [codec, &profile](const std::string& name, bool encode, double elements) {
    try {
      return codec(name, encode, elements);
    } catch (const std::out_of_range& e) {
      throw InputError(profile.path, 0, 0, "codecs." + name,
                       "profile '" + profile.name + "' has no cost for codec '" + name + "': " + e.what());
    }
  };
  return costs;
}

PreparedIteration prepare_iteration(const Scenario& scenario, const ModelDesc& model, const Profile& profile) {
  if (!scenario.workload)
    throw InputError(scenario.file, 0, 0, "workload", "a workload section is required to simulate");
  const WorkloadSpec& w = *scenario.workload;
  const DeviceCosts costs = scenario_device_costs(scenario, profile);
  PreparedIteration prepared{resolve_cluster(scenario, profile), {}};
  const std::optional<MeasuredCompute> measured = resolve_measured_compute(scenario, model);
  try {
    prepared.plan = measured
                        ? plan_iteration(w, prepared.cluster, in_measured_order(model, *measured), costs, &*measured)
                        : plan_iteration(w, prepared.cluster, model, costs);
  } catch (const std::invalid_argument& e) {
    throw InputError(scenario.file, 0, 0, "workload", e.what());
  }
  prepared.plan.residuals = bundled_model_residuals();
  return prepared;
}

std::string profile_detail(const Profile& profile) {
  if (profile.source != "measured") return "datasheet-derived";
  std::string s = "measured on " + (profile.device.empty() ? std::string("an unnamed GPU") : profile.device);
  if (!profile.date.empty()) s += ", " + profile.date;
  if (!profile.host.empty()) s += " (" + profile.host + ")";
  return s;
}

void label_result(IterationResult& r, const Scenario& scenario, const Profile& profile) {
  r.scenario = scenario.name;
  r.profile_name = profile.name;
  r.profile_source = profile.source;
  r.profile_detail = profile_detail(profile);
}

}  // namespace gw
