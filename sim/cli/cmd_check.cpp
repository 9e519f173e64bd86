// gradwire check [--kind KIND] FILE...: validate gradwire input files without
// running anything. Every kind of input has its strict loader; a scenario's
// and a sweep's references (model, profile, base scenario, instance) are
// resolved as `simulate` and `sweep` resolve them, so a missing one is
// reported at the line of the field that names it. Exit 2 on the first bad
// file's error (every file is checked), 0 when all are valid.
#include <boost/program_options.hpp>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "check_refs.hpp"
#include "commands.hpp"
#include "gradwire/catalog.hpp"
#include "gradwire/error.hpp"
#include "gradwire/model_desc.hpp"
#include "gradwire/plan/sweep.hpp"
#include "gradwire/profile.hpp"
#include "gradwire/scenario.hpp"
#include "gradwire/yaml_reader.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace gw::cli {
namespace {

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos || s.ends_with(".yaml") || s.ends_with(".yml");
}

std::vector<std::string> split_path(const std::string& key) {
  std::vector<std::string> out(1);
  for (char c : key) {
    if (c == '.') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

/// The mark of the node at dotted `key` below `root` (or of its deepest
/// existing ancestor). Works on a const node so nothing is inserted.
YAML::Mark mark_at(const YAML::Node& root, const std::string& key) {
  YAML::Node node = root;
  YAML::Mark best = root.Mark();
  if (key.empty()) return best;
  for (const auto& seg : split_path(key)) {
    if (!node.IsMap()) break;
    const YAML::Node& cnode = node;
    YAML::Node child = cnode[seg];
    if (!child.IsDefined()) break;
    node.reset(child);
    if (!node.Mark().is_null()) best = node.Mark();
  }
  return best;
}

std::string context_of(const InputError& e) {
  // The reason, plus the referenced file when the error came from loading it.
  return e.file().empty() ? e.reason() : e.what();
}

/// The key naming a scenario's profile: the explicit `profile`, else the GPU
/// (given by the instance for catalog clusters).
std::string profile_key(const Scenario& s) {
  if (!s.profile.empty()) return "profile";
  return s.cluster.instance ? "cluster.instance" : "cluster.gpu";
}

std::string kind_of(const std::string& path) {
  // Anything unreadable or malformed falls back to the scenario loader, which
  // reports the problem (the default kind, as before --kind existed).
  try {
    const auto doc = yaml::load_file(path);
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

std::string check_one(const std::string& path, const std::string& kind) {
  if (kind == "scenario") {
    const Scenario s = load_scenario(path);
    const ScenarioRefs refs = resolve_scenario_references(s, path);
    std::string what = "scenario, " + std::to_string(s.cluster.world_size()) + " GPUs";
    if (refs.model) what += ", model " + refs.model->name;
    return what + ", profile " + refs.profile.name;
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
    return "catalog of " + std::to_string(c.instances.size()) + " instances, prices as of " + c.as_of;
  }
  // Every point is validated once, by load_sweep; the references only at the
  // points that can change them.
  const plan::SweepSpec spec = plan::load_sweep(path, validation_progress("gradwire check", path));
  resolve_sweep_references(spec);
  return "sweep of " + std::to_string(spec.points) + " points";
}

}  // namespace

std::string beside_scenario(const std::string& scenario_file, const std::string& value) {
  if (!looks_like_path(value) || fs::path(value).is_absolute()) return value;
  const fs::path candidate = fs::path(scenario_file).parent_path() / value;
  std::error_code ec;
  return fs::exists(candidate, ec) ? candidate.string() : value;
}

void rethrow_at_field(const InputError& e, const std::string& file, const std::string& key) {
  if (e.line() > 0) throw e;
  YAML::Mark m;
  try {
    m = mark_at(yaml::load_file(file).root().raw(), key);
  } catch (const InputError&) {
  }
  throw InputError(file, m.is_null() ? 0 : m.line + 1, m.is_null() ? 0 : m.column + 1, key, context_of(e));
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
  std::string name = s.profile.empty() ? s.cluster.gpu : beside_scenario(file, s.profile);
  if (profile_override) {
    if (profile_override->empty()) throw InputError("--profile", 0, 0, "", "an empty profile name or path");
    name = *profile_override;
  }
  if (name.empty()) throw InputError(file, 0, 0, "cluster.gpu", "no profile: set cluster.gpu, profile, or pass --profile");
  try {
    refs.profile = load_profile(name);
  } catch (const InputError& e) {
    if (profile_override) throw;
    rethrow_at_field(e, file, profile_key(s));
  }
  // A cluster without intra_node takes it from the profile: check it can.
  if (s.cluster.intra_node_from_profile) (void)resolve_cluster(s, refs.profile);
  return refs;
}

void resolve_sweep_references(const plan::SweepSpec& spec) {
  // Where a field's value of point `index` was written: the axis value in the
  // sweep file when an axis sets it, else the base scenario.
  auto position = [&](std::size_t index, const std::string& key) -> std::pair<std::string, YAML::Mark> {
    std::vector<std::size_t> digit(spec.axes.size());
    for (std::size_t a = spec.axes.size(); a-- > 0;) {
      digit[a] = index % spec.axes[a].size();
      index /= spec.axes[a].size();
    }
    for (std::size_t a = 0; a < spec.axes.size(); ++a) {
      for (std::size_t k = 0; k < spec.axes[a].keys.size(); ++k) {
        const std::string& ak = spec.axes[a].keys[k];
        if (key == ak || (key.size() > ak.size() && key.compare(0, ak.size(), ak) == 0 && key[ak.size()] == '.')) {
          const std::string rest = key == ak ? std::string() : key.substr(ak.size() + 1);
          return {spec.file, mark_at(spec.axes[a].values[digit[a]][k], rest)};
        }
      }
    }
    return {spec.base_file, mark_at(spec.base, key)};
  };
  auto fail = [&](const InputError& e, std::size_t index, const std::string& key) {
    if (e.line() > 0) throw e;
    const auto [file, m] = position(index, key);
    throw InputError(file, m.is_null() ? 0 : m.line + 1, m.is_null() ? 0 : m.column + 1, key,
                     context_of(e) + " (sweep point " + std::to_string(index) + ": " + plan::point_key(spec, index) +
                         ")");
  };
  // Only the axes that can change a reference matter: enumerate their
  // combinations (every other axis at its first value; load_sweep has
  // validated every point already).
  auto overlaps = [](const std::string& a, const std::string& b) {
    auto under = [](const std::string& k, const std::string& p) {
      return k == p || (k.size() > p.size() && k.compare(0, p.size(), p) == 0 && k[p.size()] == '.');
    };
    return under(a, b) || under(b, a);
  };
  std::vector<bool> relevant(spec.axes.size(), false);
  for (std::size_t a = 0; a < spec.axes.size(); ++a)
    for (const auto& k : spec.axes[a].keys)
      for (const char* target : {"workload.model", "profile", "cluster.gpu", "cluster.instance"})
        if (overlaps(k, target)) relevant[a] = true;
  std::vector<std::size_t> indices{0};
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    std::vector<std::size_t> next;
    const std::size_t n = spec.axes[a].size();
    for (std::size_t base : indices)
      for (std::size_t d = 0; d < (relevant[a] ? n : 1); ++d) next.push_back(base * n + d);
    indices.swap(next);
  }
  std::set<std::string> models, profiles;
  for (std::size_t i : indices) {
    const Scenario s = plan::point_scenario(spec, i);
    if (s.workload && models.insert(s.workload->model).second) {
      try {
        load_model(s.workload->model);
      } catch (const InputError& e) {
        fail(e, i, "workload.model");
      }
    }
    const std::string profile = s.profile.empty() ? s.cluster.gpu : s.profile;
    if (profiles.insert(profile).second) {
      try {
        load_profile(profile);
      } catch (const InputError& e) {
        fail(e, i, profile_key(s));
      }
    }
  }
}

int cmd_check(int argc, char** argv) {
  po::options_description opts(
      "gradwire check [--kind KIND] FILE... : validate gradwire input files (exit 2 naming file, line and field)");
  opts.add_options()("help,h", "show this help")(
      "kind", po::value<std::string>()->default_value("auto"),
      "auto, scenario, model, profile, catalog or sweep (auto: from the schema key, else base -> sweep, "
      "else scenario)")("file", po::value<std::vector<std::string>>(), "files to check");
  po::positional_options_description pos;
  pos.add("file", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(opts).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "gradwire check: " << e.what() << "\n" << opts;
    return kExitInput;
  }
  if (vm.count("help")) {
    std::cout << opts;
    return kExitOk;
  }
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
      const std::string k = kind == "auto" ? kind_of(path) : kind;
      const std::string what = check_one(path, k);
      std::cout << path << ": ok (" << what << ")\n";
    } catch (const InputError& e) {
      std::cerr << e.what() << "\n";
      rc = kExitInput;
    }
  }
  return rc;
}

}  // namespace gw::cli
