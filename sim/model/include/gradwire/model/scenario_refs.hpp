// Resolution of the references a scenario makes (workload.model, profile /
// cluster.gpu / cluster.instance), shared by `gradwire check`, `simulate`
// and `sweep` (the sweep's points: gw::plan::resolve_sweep_references). A
// reference that cannot be resolved is reported as gw::InputError at the
// line and column of the field that names it, in the file that holds that
// field; an error inside the referenced file keeps that file's own position.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gradwire/core/error.hpp"
#include "gradwire/model/measured_compute.hpp"
#include "gradwire/model/model_desc.hpp"
#include "gradwire/model/profile.hpp"
#include "gradwire/model/scenario.hpp"

namespace gw {

/// A relative model/profile path written in a scenario is taken relative to
/// the scenario's directory when it exists there (what `simulate` does).
std::string beside_scenario(const std::string& scenario_file, const std::string& value);

/// The key naming a scenario's profile: the explicit `profile`, else the GPU
/// (given by the instance for catalog clusters).
std::string profile_field(const Scenario& s);

/// The reason of a failed resolution, plus the referenced file when the
/// error came from loading it.
std::string reference_context(const InputError& e);

/// Rethrows `e` (raised while resolving the reference held by `key` in the
/// scenario file `file`) at the position of that field when `e` carries no
/// position of its own; otherwise rethrows it unchanged.
[[noreturn]] void rethrow_at_field(const InputError& e, const std::string& file, const std::string& key);

/// The measured-compute document a scenario names (workload.compute), loaded
/// and checked against the model and workload; nullopt when it names none.
/// A missing file or a mismatch is reported at the line of workload.compute;
/// an error inside the document keeps that document's own position.
std::optional<MeasuredCompute> resolve_measured_compute(const Scenario& s, const ModelDesc& model);

struct ScenarioRefs {
  std::optional<ModelDesc> model;
  Profile profile;
  /// The scenario's cluster with what it takes from the profile
  /// (resolve_cluster: intra_node when left out, measured transport figures).
  ClusterSpec cluster;
  std::optional<MeasuredCompute> compute;  ///< workload.compute, checked against the model
  /// Why this profile, when the scenario named none (default_profile_name).
  std::string profile_choice;
  /// What makes the prediction doubtful without making it wrong input
  /// (reference_warnings): one line each, for stderr.
  std::vector<std::string> warnings;
};

/// The GPU class (gpu_classes()) of a cluster.gpu value: itself, or the
/// longest class it starts with followed by '-' ("h200-measured": h200); ""
/// for a name of the user's.
std::string gpu_class_of_name(const std::string& gpu);

/// The GPU class ("h100", "a100-80gb", ..., the names of cluster.gpu) that a
/// device name such as "NVIDIA A100-SXM4-80GB" names, "cpu" for a CPU
/// (calibrate --device cpu names it "CPU ..."), "" when it names no class
/// gradwire knows. `memory_bytes` tells an A100's 40 GB from its 80 GB when
/// the name does not.
std::string gpu_class_of_device(const std::string& device, double memory_bytes);

/// Warnings on the references of a scenario whose cluster has GPUs of a
/// known class (cluster.gpu): a profile of another GPU class (an H100 profile
/// for cluster.gpu a100-80gb), a profile measured on a CPU, measured compute
/// (workload.compute) timed on a CPU. Each drives the GPU prediction with
/// another device's figures; none is an error.
std::vector<std::string> reference_warnings(const Scenario& s, const ScenarioRefs& refs);

/// The profile a scenario without `profile:` uses: its GPU's (cluster.gpu).
/// For an instance cluster, the measured profile of that GPU
/// (`<gpu>-measured`, found by list_profiles) is preferred over the datasheet
/// one. `why` (when given) says which was taken and why.
std::string default_profile_name(const Scenario& s, std::string* why = nullptr);

/// The profile a scenario names: its `profile:` as written, else
/// default_profile_name (whose reason goes to `why` when given).
std::string profile_reference(const Scenario& s, std::string* why = nullptr);

/// The profile a scenario uses, by the rule `simulate`, `check`, `sweep` and
/// `collective` share: `profile_override` (--profile) when given, else the
/// scenario's `profile:` (a path taken beside the scenario file `file`), else
/// default_profile_name (whose reason goes to `choice` when given). A failure
/// is reported at the field that names the profile.
Profile resolve_scenario_profile(const Scenario& s, const std::string& file,
                                 const std::optional<std::string>& profile_override = std::nullopt,
                                 std::string* choice = nullptr);

/// The scenario's cluster as ScenarioRefs::cluster holds it, for a command
/// that needs no model (`gradwire collective`): the profile resolved by
/// resolve_scenario_profile, the cluster by resolve_cluster. A cluster that
/// gives intra_node, names no profile and whose GPU has none bundled is
/// taken as written (it has no measured figures to take). `profile`, when
/// given, receives the profile resolved (left empty for such a cluster).
ClusterSpec resolve_scenario_cluster(const Scenario& s, const std::string& path,
                                     const std::optional<std::string>& profile_override = std::nullopt,
                                     std::optional<Profile>* profile = nullptr);

/// Loads the model (when the scenario has a workload) and the profile a
/// scenario names, as `gradwire simulate` does, and resolves its cluster. `profile_override` replaces
/// the scenario's profile (simulate --profile).
ScenarioRefs resolve_scenario_references(const Scenario& s, const std::string& path,
                                         const std::optional<std::string>& profile_override = std::nullopt);

}  // namespace gw
