// Scenario -> (cluster, iteration plan): the one path of both evaluators.
#include <stdexcept>

#include "gradwire/core/error.hpp"
#include "gradwire/model/iteration_model.hpp"
#include "gradwire/model/profile.hpp"

namespace gw {

PreparedIteration prepare_iteration(const Scenario& scenario, const ModelDesc& model, const Profile& profile) {
  if (!scenario.workload)
    throw InputError(scenario.file, 0, 0, "workload", "a workload section is required to simulate");
  const WorkloadSpec& w = *scenario.workload;
  DeviceCosts costs;
  try {
    costs = device_costs(profile, w.precision);
  } catch (const std::invalid_argument& e) {
    throw InputError(profile.path, 0, 0, "gemm_flops", e.what());
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
  PreparedIteration prepared{resolve_cluster(scenario, profile), {}};
  try {
    prepared.plan = plan_iteration(w, prepared.cluster, model, costs);
  } catch (const std::invalid_argument& e) {
    throw InputError(scenario.file, 0, 0, "workload", e.what());
  }
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
