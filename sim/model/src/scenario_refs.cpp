#include "gradwire/model/scenario_refs.hpp"

#include <algorithm>
#include <filesystem>

#include "gradwire/model/key_path.hpp"
#include "gradwire/model/reference.hpp"
#include "gradwire/core/yaml_reader.hpp"

namespace gw {
namespace {

namespace fs = std::filesystem;

}  // namespace

std::string beside_scenario(const std::string& scenario_file, const std::string& value) {
  if (!looks_like_path(value) || fs::path(value).is_absolute()) return value;
  const fs::path candidate = fs::path(scenario_file).parent_path() / value;
  std::error_code ec;
  return fs::exists(candidate, ec) ? candidate.string() : value;
}

std::string profile_field(const Scenario& s) {
  if (!s.profile.empty()) return "profile";
  return s.cluster.instance ? "cluster.instance" : "cluster.gpu";
}

std::string reference_context(const InputError& e) { return e.file().empty() ? e.reason() : e.what(); }

void rethrow_at_field(const InputError& e, const std::string& file, const std::string& key) {
  if (e.line() > 0) throw e;
  YAML::Mark m;
  try {
    m = mark_at(yaml::load_file(file).root().raw(), key);
  } catch (const InputError&) {
  }
  throw InputError(file, m.is_null() ? 0 : m.line + 1, m.is_null() ? 0 : m.column + 1, key, reference_context(e));
}

std::optional<MeasuredCompute> resolve_measured_compute(const Scenario& s, const ModelDesc& model) {
  if (!s.workload || s.workload->compute.empty()) return std::nullopt;
  const std::string key = "workload.compute";
  try {
    MeasuredCompute m = load_measured_compute(beside_scenario(s.file, s.workload->compute));
    check_measured_matches(m, model, *s.workload);
    return m;
  } catch (const InputError& e) {
    rethrow_at_field(e, s.file, key);
  } catch (const std::invalid_argument& e) {
    rethrow_at_field(InputError("", 0, 0, key, e.what()), s.file, key);
  }
}

std::string default_profile_name(const Scenario& s, std::string* why) {
  const std::string& gpu = s.cluster.gpu;
  if (s.cluster.instance && !gpu.empty()) {
    const std::string measured = gpu + "-measured";
    const auto names = list_profiles();
    if (std::find(names.begin(), names.end(), measured) != names.end()) {
      if (why != nullptr)
        *why = measured + ", the measured profile of the instance's GPU, preferred over the datasheet " + gpu +
               " (set `profile:` to choose)";
      return measured;
    }
  }
  if (why != nullptr && !gpu.empty())
    *why = gpu + ", the profile of the cluster's GPU" +
           (s.cluster.instance ? std::string(" (no measured ") + gpu + "-measured profile is bundled)" : "");
  return gpu;
}

Profile resolve_scenario_profile(const Scenario& s, const std::string& file,
                                 const std::optional<std::string>& profile_override, std::string* choice) {
  std::string name = s.profile.empty() ? default_profile_name(s, choice) : beside_scenario(file, s.profile);
  if (profile_override) {
    if (profile_override->empty()) throw InputError("--profile", 0, 0, "", "an empty profile name or path");
    name = *profile_override;
  }
  if (name.empty()) throw InputError(file, 0, 0, "cluster.gpu", "no profile: set cluster.gpu, profile, or pass --profile");
  try {
    return load_profile(name);
  } catch (const InputError& e) {
    if (profile_override) throw;
    rethrow_at_field(e, file, profile_field(s));
  }
}

ScenarioRefs resolve_scenario_references(const Scenario& s, const std::string& path,
                                         const std::optional<std::string>& profile_override) {
  const std::string file = s.file.empty() ? path : s.file;
  ScenarioRefs refs;
  if (s.workload) {
    try {
      refs.model = load_model(beside_scenario(file, s.workload->model), {fs::path(file).parent_path().string()});
    } catch (const InputError& e) {
      rethrow_at_field(e, file, "workload.model");
    }
  }
  refs.profile = resolve_scenario_profile(s, file, profile_override, &refs.profile_choice);
  if (refs.model) {
    Scenario located = s;
    located.file = file;
    refs.compute = resolve_measured_compute(located, *refs.model);
  }
  // A cluster without intra_node takes it from the profile: check it can.
  if (s.cluster.intra_node_from_profile) (void)resolve_cluster(s, refs.profile);
  return refs;
}

}  // namespace gw
