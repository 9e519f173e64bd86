// gradwire check [--kind KIND] FILE...: validate gradwire input files without
// running anything. Every kind of input has its strict loader; a scenario's
// and a sweep's references (model, profile, base scenario, instance) are
// resolved as `simulate` and `sweep` resolve them, so a missing one is
// reported at the line of the field that names it. Exit 2 on the first bad
// file's error (every file is checked), 0 when all are valid.
#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "commands.hpp"
#include "gradwire/model/catalog.hpp"
#include "gradwire/model/iteration_model.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/model/model_desc.hpp"
#include "gradwire/core/options.hpp"
#include "gradwire/plan/sweep_spec.hpp"
#include "gradwire/model/profile.hpp"
#include "gradwire/model/scenario.hpp"
#include "gradwire/model/memory.hpp"
#include "gradwire/model/scenario_refs.hpp"
#include "gradwire/model/scenario_yaml.hpp"
#include "gradwire/core/yaml_reader.hpp"

namespace po = boost::program_options;

namespace gw::cli {
namespace {

// The kind of the file; a file that parsed is kept in *parsed, so that a
// scenario is not read and parsed a second time (docs/engine.md, "Start-up").
std::string kind_of(const std::string& path, std::optional<yaml::Document>* parsed) {
  // Anything unreadable or malformed falls back to the scenario loader, which
  // reports the problem (the default kind, as before --kind existed).
  try {
    const yaml::Document& doc = parsed->emplace(yaml::load_file(path));
    const YAML::Node root = doc.root().raw();
    if (!root.IsMap()) return "scenario";
    if (root["schema"]) {
      const YAML::Node s = root["schema"];
      const std::string v = s.IsScalar() ? s.Scalar() : std::string();
      if (v.rfind("gradwire-model", 0) == 0) return "model";
      if (v.rfind("gradwire-catalog", 0) == 0) return "catalog";
      return "profile";
    }
    if (root["base"] || root["axes"] || root["zip"]) return "sweep";
    if (root["cluster"] || root["workload"]) return "scenario";
    if (root["tensors"]) return "model";
    if (root["instances"]) return "catalog";
    if (root["compute"] || root["codecs"] || root["collectives"] || root["device"]) return "profile";
  } catch (const InputError&) {
  }
  return "scenario";
}

}  // namespace

plan::ValidationProgress validation_progress(const std::string& who, const std::string& file) {
  // Quiet for short validations; then a line every 2 s on stderr.
  auto start = std::make_shared<std::chrono::steady_clock::time_point>(std::chrono::steady_clock::now());
  auto last = std::make_shared<std::chrono::steady_clock::time_point>(*start);
  return [=](std::size_t done, std::size_t total) {
    const auto now = std::chrono::steady_clock::now();
    if (done == total) {
      if (*last != *start) std::cerr << who << ": " << file << ": validated all " << total << " points\n";
      return;
    }
    if (now - *last < std::chrono::seconds(2)) return;
    *last = now;
    std::cerr << who << ": " << file << ": validated " << done << " of " << total << " points\n";
  };
}

namespace {

// `parsed`: the file's document when kind_of parsed it, else nullopt.
std::string check_one(const std::string& path, const std::string& kind, const std::optional<yaml::Document>& parsed) {
  if (kind == "scenario") {
    const Scenario s = parsed ? parse_scenario(*parsed) : load_scenario(path);
    const ScenarioRefs refs = resolve_scenario_references(s, path);
    for (const auto& w : refs.warnings) std::cerr << "gradwire check: " << path << ": warning: " << w << "\n";
    // A compute precision the profile has no GEMM rate for, at its field.
    if (s.workload && !s.workload->compute_precision.empty()) (void)scenario_device_costs(s, refs.profile);
    std::string what = "scenario, " + std::to_string(s.cluster.world_size()) + " GPUs";
    if (refs.model) what += ", model " + refs.model->name;
    what += ", profile " + refs.profile.name;
    // A fixed training.global_batch: the split simulate will make, or why none.
    if (refs.model && s.workload && s.training && s.training->global_batch) {
      const BatchSplit b = resolve_global_batch(s, *refs.model, compressor_memory(s, *refs.model, refs.profile),
                                                gpu_capacity(s.cluster, refs.profile));
      if (!b.found && !b.no_fit)
        throw InputError(s.file, s.training->global_batch_line, s.training->global_batch_column,
                         "training.global_batch", b.reason);
      what += b.found ? "; global batch " + std::to_string(b.global_batch) + ": micro-batch " +
                            std::to_string(b.micro_batch) + ", " + b.how
                      : "; global batch " + std::to_string(b.global_batch) + ": " + b.reason;
    }
    return what;
  }
  if (kind == "model") {
    const ModelDesc m = load_model_file(path);
    return "model " + m.name + ", " + std::to_string(m.parameters) + " parameters in " +
           std::to_string(m.tensors.size()) + " tensors";
  }
  if (kind == "profile") {
    const Profile p = load_profile_file(path);
    return "profile " + p.name + " (" + p.source + ")";
  }
  if (kind == "catalog") {
    const Catalog c = load_catalog_file(path);
    const auto [oldest, newest] = c.dates();
    return "catalog of " + std::to_string(c.instances.size()) + " instances, prices read " +
           (oldest == newest ? "on " + oldest : "from " + oldest + " to " + newest);
  }
  // Every point is validated once, by load_sweep; the references only at the
  // points that can change them.
  const plan::SweepSpec spec = plan::load_sweep(path, validation_progress("gradwire check", path));
  plan::resolve_sweep_references(spec);
  return "sweep of " + std::to_string(spec.points) + " points";
}

}  // namespace

int cmd_check(int argc, char** argv) {
  po::options_description opts(
      "gradwire check [--kind KIND] FILE... : validate gradwire input files (exit 2 naming file, line and field)");
  opts.add_options()("help,h", "show this help")(
      "kind", po::value<std::string>()->default_value("auto"),
      "auto, scenario, model, profile, catalog or sweep (auto: from the schema key, else base -> sweep, "
      "else scenario)")("file", po::value<std::vector<std::string>>(), "files to check");
  po::positional_options_description pos;
  pos.add("file", -1);
  const CommandLine parsed =
      parse_command(argc, argv, bad_option_usage("gradwire check", opts), opts, pos,
                    "\nExample: gradwire check scenarios/default.yaml scenarios/study-compression.yaml\n"
                    "Example: gradwire check --kind model models/gpt2.yaml\n");
  if (parsed.exit) return *parsed.exit;
  const po::variables_map& vm = parsed.vm;
  const std::string kind = vm["kind"].as<std::string>();
  static const std::set<std::string> kinds{"auto", "scenario", "model", "profile", "catalog", "sweep"};
  if (!kinds.count(kind)) {
    std::cerr << "gradwire check: --kind must be auto, scenario, model, profile, catalog or sweep (got \"" << kind
              << "\")\n";
    return kExitInput;
  }
  if (!vm.count("file")) {
    std::cerr << "gradwire check: give at least one file\n" << opts;
    return kExitInput;
  }
  int rc = kExitOk;
  for (const auto& path : vm["file"].as<std::vector<std::string>>()) {
    try {
      std::optional<yaml::Document> document;
      const std::string k = kind == "auto" ? kind_of(path, &document) : kind;
      const std::string what = check_one(path, k, document);
      std::cout << path << ": ok (" << what << ")\n";
    } catch (const InputError& e) {
      std::cerr << e.what() << "\n";
      rc = kExitInput;
    }
  }
  return rc;
}

}  // namespace gw::cli
