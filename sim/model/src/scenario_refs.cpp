#include "gradwire/model/scenario_refs.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "gradwire/model/catalog.hpp"
#include "gradwire/model/key_path.hpp"
#include "gradwire/model/reference.hpp"
#include "gradwire/model/sharding.hpp"
#include "gradwire/core/yaml_reader.hpp"

namespace gw {
namespace {

namespace fs = std::filesystem;

/// Device-name words and the GPU class each names (an A100 by its memory).
struct DeviceWord {
  const char* word;
  const char* gpu_class;
};
constexpr DeviceWord kDeviceWords[] = {{"H200", "h200"}, {"H100", "h100"}, {"V100", "v100"},
                                       {"A10G", "a10g"}, {"L4", "l4"},     {"A100", "a100"}};

std::vector<std::string> upper_words(const std::string& s) {
  std::vector<std::string> words(1);
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
      words.back() += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    } else if (!words.back().empty()) {
      words.emplace_back();
    }
  }
  return words;
}

}  // namespace

std::string gpu_class_of_name(const std::string& gpu) {
  std::string best;
  for (const std::string& k : gpu_classes()) {
    if ((gpu == k || gpu.rfind(k + "-", 0) == 0) && k.size() > best.size()) best = k;
  }
  return best;
}

std::string gpu_class_of_device(const std::string& device, double memory_bytes) {
  const auto words = upper_words(device);
  if (!words.empty() && words.front() == "CPU") return "cpu";
  const auto has = [&](const char* w) { return std::find(words.begin(), words.end(), w) != words.end(); };
  for (const auto& [word, gpu_class] : kDeviceWords) {
    if (!has(word)) continue;
    if (std::string(gpu_class) != "a100") return gpu_class;
    if (has("80GB") || (!has("40GB") && memory_bytes > 60e9)) return "a100-80gb";
    return has("40GB") || memory_bytes > 0 ? "a100-40gb" : "";
  }
  return "";
}

std::vector<std::string> reference_warnings(const Scenario& s, const ScenarioRefs& refs) {
  std::vector<std::string> out;
  const std::string cluster = gpu_class_of_name(s.cluster.gpu);
  if (cluster.empty()) return out;
  const Profile& p = refs.profile;
  const std::string device = gpu_class_of_device(p.device, p.memory_bytes);
  if (device == "cpu") {
    out.push_back("profile \"" + p.name + "\" was measured on a CPU (" + p.device +
                  "): its GEMM, codec and copy rates are the CPU's, not a " + cluster +
                  "'s; calibrate on the GPU, or use a profile of " + cluster + " (gradwire list profiles)");
  } else if (!device.empty() && device != cluster) {
    out.push_back("profile \"" + p.name + "\" is of another GPU (" + p.device + ", " + device + ") than cluster.gpu " +
                  cluster + ": the compute and codec times are those of " + device + "; use a profile of " + cluster +
                  ", or set cluster.gpu: " + device);
  }
  if (refs.compute && refs.compute->cuda_version.empty()) {
    out.push_back("workload.compute " + refs.compute->path + " was timed on a CPU (" + refs.compute->device +
                  "): the forward, backward and optimizer times are the CPU's, not a " + cluster +
                  "'s; measure on the GPU (gradwire model measure --device cuda)");
  }
  return out;
}

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

std::string profile_reference(const Scenario& s, std::string* why) {
  return s.profile.empty() ? default_profile_name(s, why) : s.profile;
}

Profile resolve_scenario_profile(const Scenario& s, const std::string& file,
                                 const std::optional<std::string>& profile_override, std::string* choice) {
  std::string name = profile_reference(s, choice);
  if (!s.profile.empty()) name = beside_scenario(file, name);
  if (profile_override) {
    if (profile_override->empty()) throw InputError("--profile", 0, 0, "", "an empty profile name or path");
    name = *profile_override;
  }
  if (name.empty())
    throw InputError(file, 0, 0, "cluster.gpu", "no profile: set cluster.gpu, profile, or pass --profile");
  try {
    return load_profile(name);
  } catch (const InputError& e) {
    if (profile_override) throw;
    rethrow_at_field(e, file, profile_field(s));
  }
}

namespace {

/// The sharding's groups against the resolved cluster (shard_degree): an
/// HSDP group or an int reshard_after_forward that does not divide is an
/// input error at workload.sharding, before anything runs.
void check_sharding_groups(const Scenario& s, const ClusterSpec& c, const std::string& file) {
  if (!s.workload || s.workload->sharding.scheme == ShardingScheme::Ddp) return;
  try {
    const ShardTopology t{c.world_size(), c.gpus_per_node};
    (void)shard_degree(effective_spec(s.workload->sharding, t), t);
  } catch (const std::invalid_argument& e) {
    throw InputError(file, s.workload->sharding_line, s.workload->sharding_column, "workload.sharding", e.what());
  }
}

}  // namespace

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
  // A cluster without intra_node takes it from the profile (an error when it cannot).
  refs.cluster = resolve_cluster(s, refs.profile);
  check_sharding_groups(s, refs.cluster, file);
  refs.warnings = reference_warnings(s, refs);
  return refs;
}

ClusterSpec resolve_scenario_cluster(const Scenario& s, const std::string& path,
                                     const std::optional<std::string>& profile_override,
                                     std::optional<Profile>* profile) {
  const std::string file = s.file.empty() ? path : s.file;
  // A cluster that needs nothing of a profile, names none and has no
  // bundled profile for its GPU (a validation cluster's own GPU) has no
  // measured figures to take: as written.
  if (!s.cluster.intra_node_from_profile && s.profile.empty() && !profile_override) {
    const auto names = list_profiles();
    if (std::find(names.begin(), names.end(), default_profile_name(s)) == names.end()) return s.cluster;
  }
  Profile resolved = resolve_scenario_profile(s, file, profile_override);
  ClusterSpec cluster = resolve_cluster(s, resolved);
  if (profile) *profile = std::move(resolved);
  return cluster;
}

}  // namespace gw
