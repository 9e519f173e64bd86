#include "gradwire/plan/sweep_spec.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <stdexcept>

#include "gradwire/core/atomic_file.hpp"
#include "gradwire/model/catalog.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/model/key_path.hpp"
#include "gradwire/model/model_desc.hpp"
#include "gradwire/model/profile.hpp"
#include "gradwire/model/scenario_refs.hpp"
#include "gradwire/model/scenario_yaml.hpp"
#include "gradwire/core/suggest.hpp"
#include "gradwire/core/units.hpp"
#include "gradwire/core/yaml_reader.hpp"

namespace gw::plan {
namespace {

// --- YAML and hashing helpers ------------------------------------------------------

std::string flow(const YAML::Node& n) {
  if (n.IsScalar()) return n.Scalar();
  YAML::Emitter e;
  e.SetMapFormat(YAML::Flow);
  e.SetSeqFormat(YAML::Flow);
  e << n;
  return e.c_str();
}

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::uint64_t fnv1a(std::string_view s, std::uint64_t h = 1469598103934665603ull) {
  for (unsigned char ch : s) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  return h;
}

/// True when an axis with key `k` can change a point's model, profile or instance.
bool names_a_reference(const std::string& k) {
  for (const char* target : {"workload.model", "profile", "cluster.gpu", "cluster.instance"})
    if (keys_overlap(k, target)) return true;
  return false;
}

// --- Parsing -------------------------------------------------------------------------

void parse_base(const yaml::Node& root, SweepSpec& spec, const std::string& dir) {
  auto base = root.required("base");
  spec.base_line = base.line();
  if (base.is_scalar()) {
    std::filesystem::path p(base.as_string());
    if (p.is_relative()) p = std::filesystem::path(dir) / p;
    spec.base_file = p.lexically_normal().string();
    std::error_code ec;  // never throws: a name too long or otherwise unusable is "does not exist" here
    if (!std::filesystem::exists(spec.base_file, ec)) base.fail("base scenario " + spec.base_file + " does not exist");
    load_scenario(spec.base_file);  // errors name the base file's own lines
    spec.base = YAML::Load(read_input_file(spec.base_file, kMaxYamlBytes));
  } else if (base.is_map()) {
    spec.base_file = spec.file;
    spec.base = base.raw();
  } else {
    base.fail("expected the path of a scenario file or an inline scenario mapping");
  }
}

/// The axis keys seen so far: each a dotted path, none twice, none under another.
class AxisKeys {
 public:
  void add(const yaml::Node& at, const std::string& key) {
    static const std::regex key_re(R"([A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*)");
    if (!std::regex_match(key, key_re)) at.fail("an axis key is a dotted path of field names, e.g. cluster.nodes");
    for (const auto& [other, node] : keys_) {
      if (other == key) at.fail("axis " + key + " appears twice");
      if (keys_overlap(key, other))
        at.fail("axes " + other + " (line " + std::to_string(node.line()) + ") and " + key + " overlap");
    }
    keys_.emplace_back(key, at);
  }

 private:
  std::vector<std::pair<std::string, yaml::Node>> keys_;
};

std::vector<yaml::Node> axis_values(const yaml::Node& list) {
  list.expect_seq();
  if (list.size() == 0) list.fail("an axis needs at least one value");
  return list.elements();
}

void parse_axes(const yaml::Node& axes, SweepSpec& spec, AxisKeys& seen) {
  axes.expect_map();
  for (const auto& key : axes.keys()) {
    auto list = axes.required(key);
    seen.add(list, key);
    Axis a;
    a.keys = {key};
    for (const auto& v : axis_values(list)) a.values.push_back({v.raw()});
    spec.axes.push_back(std::move(a));
  }
}

Axis parse_zip_group(const yaml::Node& group, AxisKeys& seen) {
  group.expect_map();
  Axis a;
  std::size_t len = 0;
  for (const auto& key : group.keys()) {
    auto list = group.required(key);
    seen.add(list, key);
    auto vals = axis_values(list);
    if (a.keys.empty()) {
      len = vals.size();
      a.values.resize(len);
    } else if (vals.size() != len) {
      list.fail("a zip group's lists must have the same length (" + std::to_string(len) + " above, " +
                std::to_string(vals.size()) + " here)");
    }
    a.keys.push_back(key);
    for (std::size_t i = 0; i < len; ++i) a.values[i].push_back(vals[i].raw());
  }
  if (a.keys.empty()) group.fail("an empty zip group");
  return a;
}

/// Axes, then zip groups, then the number of points (absurd sweeps refused
/// before anything is expanded).
void parse_all_axes(const yaml::Node& root, SweepSpec& spec) {
  AxisKeys seen;
  std::optional<yaml::Node> axes_node;
  if (auto axes = root.optional("axes")) {
    axes_node = axes;
    parse_axes(*axes, spec, seen);
  }
  if (auto zip = root.optional("zip")) {
    if (!axes_node) axes_node = zip;
    zip->expect_seq();
    for (const auto& group : zip->elements()) spec.axes.push_back(parse_zip_group(group, seen));
  }
  long double points = 1;
  for (const auto& a : spec.axes) points *= static_cast<long double>(a.size());
  if (points > static_cast<long double>(kMaxSweepPoints)) {
    (axes_node ? *axes_node : root)
        .fail("the axes make " + std::to_string(static_cast<double>(points)) + " points, more than the " +
              std::to_string(kMaxSweepPoints) + " a sweep may have; split it or thin the axes");
  }
  spec.points = static_cast<std::size_t>(points);
}

void parse_batch_options(const yaml::Node& root, SweepSpec& spec) {
  // At most INT_MAX: the micro-batch and accumulation derived from it are ints.
  if (auto g = root.optional("global_batch")) spec.options.global_batch = g->as_int(1, INT_MAX);
  auto f = root.optional("fit_accumulation");
  if (!f) return;
  spec.options.fit_accumulation = f->as_bool();
  if (spec.options.fit_accumulation && !spec.options.global_batch) f->fail("fit_accumulation needs global_batch");
  if (!spec.options.fit_accumulation) return;
  for (const auto& a : spec.axes)
    for (const auto& k : a.keys)
      if (k == "workload.accumulation" || k == "workload.micro_batch")
        f->fail("fit_accumulation chooses " + k + "; remove that axis");
}

void parse_point_options(const yaml::Node& root, SweepSpec& spec) {
  parse_batch_options(root, spec);
  if (auto c = root.optional("convergence_factors")) {
    c->expect_map();
    for (const auto& k : c->keys()) {
      auto v = c->required(k);
      if (std::find(compressor_names().begin(), compressor_names().end(), k) == compressor_names().end())
        v.fail("unknown compression kind \"" + k + "\"" + did_you_mean(k, compressor_names()));
      spec.options.convergence_factors[k] = v.as_double(0.01, 100);
    }
  }
  if (auto m = root.optional("memory")) {
    m->allow_keys({"reserve"});
    if (auto r = m->optional("reserve")) spec.options.memory.reserve = r->as_size(0, 1e13);
  }
  if (auto b = root.optional("billing")) {
    b->allow_keys({"granularity", "minimum"});
    BillingSpec bs;
    auto g = b->required("granularity");
    bs.granularity = g.as_time(0, 86400.0 * 31);
    if (bs.granularity <= 0) g.fail("granularity must be greater than 0");
    bs.minimum = b->required("minimum").as_time(0, 86400.0 * 31);
    spec.options.billing = bs;
  }
}

/// Identity of the sweep: what determines its records.
std::string spec_id(const SweepSpec& spec) {
  std::string ident = flow(spec.base);
  for (const auto& a : spec.axes) {
    for (const auto& k : a.keys) ident += "|" + k;
    for (const auto& vals : a.values)
      for (const auto& v : vals) ident += "|" + flow(v);
  }
  ident += "|gb=" + (spec.options.global_batch ? std::to_string(*spec.options.global_batch) : std::string("-"));
  ident += "|fit=" + std::to_string(spec.options.fit_accumulation);
  for (const auto& [k, v] : spec.options.convergence_factors) ident += "|cf:" + k + "=" + std::to_string(v);
  ident += "|reserve=" + std::to_string(spec.options.memory.reserve);
  if (spec.options.billing)
    ident += "|bill=" + std::to_string(spec.options.billing->granularity) + "/" +
             std::to_string(spec.options.billing->minimum);
  ident += "|eval=" + spec.evaluator;
  return hex64(fnv1a(ident));
}

// --- Expanding a point -----------------------------------------------------------------

struct AxisSet {
  std::string key;
  YAML::Node value;
};

/// Sets `key` (a dotted path) to `value` in `tree`, creating the mappings on
/// the way; a base field on the way that is not a mapping is an InputError at
/// the value.
void set_at(YAML::Node tree, const SweepSpec& spec, const std::string& key, const YAML::Node& value) {
  const auto segs = split_key(key);
  YAML::Node node = tree;
  for (std::size_t s = 0; s + 1 < segs.size(); ++s) {
    YAML::Node child = node[segs[s]];
    if (!child.IsDefined() || child.IsNull()) {
      node[segs[s]] = YAML::Node(YAML::NodeType::Map);
      child.reset(node[segs[s]]);
    } else if (!child.IsMap()) {
      const YAML::Mark m = value.Mark();
      throw InputError(spec.file, m.line + 1, m.column + 1, key,
                       "the base scenario's " + segs[s] + " is not a mapping, so " + key + " cannot be set");
    }
    node.reset(child);
  }
  node[segs.back()] = YAML::Clone(value);
}

/// Rethrows a scenario error of point `index` at the axis value that set the
/// field (sweep file), else at the base scenario's field; an error raised in
/// another file (the catalog) at its own position.
[[noreturn]] void rethrow_at_point(const InputError& e, const SweepSpec& spec, std::size_t index,
                                   const std::vector<AxisSet>& sets) {
  const std::string where = " (sweep point " + std::to_string(index) + ": " + point_key(spec, index) + ")";
  // An error in another file the scenario reads (the instance catalog) keeps
  // that file's own position.
  if (!e.file().empty() && e.file() != spec.base_file)
    throw InputError(e.file(), e.line(), e.column(), e.key(), e.reason() + where);
  for (const auto& set : sets) {
    if (key_under(e.key(), set.key)) {
      const std::string rest = e.key().substr(set.key.size());
      YAML::Mark m = mark_at(set.value, rest.empty() ? rest : rest.substr(rest[0] == '.' ? 1 : 0));
      throw InputError(spec.file, m.line + 1, m.column + 1, e.key(), e.reason() + where);
    }
  }
  const YAML::Mark m = mark_at(spec.base, e.key());
  throw InputError(spec.base_file, m.is_null() ? 0 : m.line + 1, m.is_null() ? 0 : m.column + 1, e.key(),
                   e.reason() + where);
}

}  // namespace

// --- Loading ---------------------------------------------------------------------------

SweepSpec parse_sweep(const std::string& text, const std::string& name, const std::string& dir,
                      const ValidationProgress& progress) {
  auto doc = yaml::load_string(text, name);
  auto root = doc.root();
  root.allow_keys({"name", "base", "axes", "zip", "global_batch", "fit_accumulation", "convergence_factors", "memory",
                   "billing", "evaluator"});
  SweepSpec spec;
  spec.file = name;
  if (auto n = root.optional("name")) spec.name = n->as_string();
  parse_base(root, spec, dir);
  parse_all_axes(root, spec);
  parse_point_options(root, spec);
  if (auto e = root.optional("evaluator")) spec.evaluator = e->as_enum({"closed-form", "simulation"});
  spec.id = spec_id(spec);
  // Every point through the scenario loader, once (the only full pass);
  // kept for the points' evaluation when there are not too many.
  auto kept = std::make_shared<std::vector<Scenario>>();
  const bool keep = spec.points <= kKeptScenarios;
  for (std::size_t i = 0; i < spec.points; ++i) {
    Scenario s = point_scenario(spec, i);
    if (keep) kept->push_back(std::move(s));
    if (progress && (i + 1) % 64 == 0) progress(i + 1, spec.points);
  }
  if (progress) progress(spec.points, spec.points);
  if (keep) spec.scenarios = std::move(kept);
  return spec;
}

SweepSpec load_sweep(const std::string& path, const ValidationProgress& progress) {
  const std::string text = read_input_file(path, kMaxYamlBytes);  // regular file, capped, FIFO-safe
  const auto parent = std::filesystem::path(path).parent_path();
  return parse_sweep(text, path, parent.empty() ? "." : parent.string(), progress);
}

std::vector<std::size_t> reference_points(const SweepSpec& spec) {
  // Only the axes that can change a model, profile or instance vary; every
  // other axis stays at its first value.
  std::vector<std::size_t> indices{0};
  for (const auto& axis : spec.axes) {
    const bool relevant = std::any_of(axis.keys.begin(), axis.keys.end(), names_a_reference);
    std::vector<std::size_t> next;
    const std::size_t n = axis.size();
    for (std::size_t base : indices)
      for (std::size_t d = 0; d < (relevant ? n : 1); ++d) next.push_back(base * n + d);
    indices.swap(next);
  }
  return indices;
}

std::vector<SweepInput> sweep_inputs(const SweepSpec& spec) {
  std::map<std::string, std::string> files;  // role -> path
  if (spec.base_file != spec.file) files["base"] = spec.base_file;
  for (std::size_t i : reference_points(spec)) {
    const Scenario s = point_scenario(spec, i);
    if (s.workload && !files.count("model " + s.workload->model))
      files["model " + s.workload->model] = load_model(s.workload->model).path;
    const std::string profile = profile_reference(s);
    if (!files.count("profile " + profile)) files["profile " + profile] = load_profile(profile).path;
    if (s.cluster.instance && !files.count("catalog")) {
      files["catalog"] = default_catalog().path;
      if (!default_catalog().added_path.empty()) files["catalog added"] = default_catalog().added_path;
    }
  }
  std::vector<SweepInput> out;
  for (const auto& [role, path] : files)
    out.push_back({role, path, hex64(fnv1a(read_input_file(path, kMaxYamlBytes)))});
  return out;
}

std::string sweep_identity(const SweepSpec& spec, const std::vector<SweepInput>& inputs) {
  std::string ident = spec.id;
  for (const auto& in : inputs) ident += "|" + in.role + "=" + in.hash;
  return hex64(fnv1a(ident));
}

std::vector<std::size_t> point_digits(const SweepSpec& spec, std::size_t index) {
  std::vector<std::size_t> radices;
  for (const auto& a : spec.axes) radices.push_back(a.size());
  return mixed_radix_digits(radices, index);
}

std::vector<std::pair<std::string, std::string>> point_params(const SweepSpec& spec, std::size_t index) {
  std::vector<std::pair<std::string, std::string>> out;
  const auto digit = point_digits(spec, index);
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    const Axis& axis = spec.axes[a];
    for (std::size_t k = 0; k < axis.keys.size(); ++k) out.emplace_back(axis.keys[k], flow(axis.values[digit[a]][k]));
  }
  return out;
}

std::string point_key(const SweepSpec& spec, std::size_t index) {
  std::string key;
  for (const auto& [k, v] : point_params(spec, index)) key += (key.empty() ? "" : ";") + k + "=" + v;
  return key;
}

Scenario point_scenario(const SweepSpec& spec, std::size_t index) {
  if (index >= spec.points) throw std::out_of_range("sweep point " + std::to_string(index) + " out of range");
  if (spec.scenarios && index < spec.scenarios->size()) return (*spec.scenarios)[index];
  // A fresh tree per point (Clone: no memory shared with the sweep document),
  // validated by the scenario loader itself; errors are mapped back to the
  // sweep file (axis values) or the base file (everything else).
  YAML::Node tree = YAML::Clone(spec.base);
  std::vector<AxisSet> sets;
  const auto digit = point_digits(spec, index);
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    const Axis& axis = spec.axes[a];
    for (std::size_t k = 0; k < axis.keys.size(); ++k) {
      const YAML::Node& value = axis.values[digit[a]][k];
      set_at(tree, spec, axis.keys[k], value);
      sets.push_back({axis.keys[k], value});
    }
  }
  YAML::Emitter out;
  out << tree;
  try {
    return parse_scenario(yaml::load_string(out.c_str(), spec.base_file));
  } catch (const InputError& e) {
    rethrow_at_point(e, spec, index, sets);
  }
}

// --- References --------------------------------------------------------------------------

namespace {

/// Where a field's value of point `index` was written: the axis value in the
/// sweep file when an axis sets it, else the base scenario.
std::pair<std::string, YAML::Mark> field_position(const SweepSpec& spec, std::size_t index, const std::string& key) {
  const auto digit = point_digits(spec, index);
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    for (std::size_t k = 0; k < spec.axes[a].keys.size(); ++k) {
      const std::string& ak = spec.axes[a].keys[k];
      if (key_under(key, ak)) {
        const std::string rest = key == ak ? std::string() : key.substr(ak.size() + 1);
        return {spec.file, mark_at(spec.axes[a].values[digit[a]][k], rest)};
      }
    }
  }
  return {spec.base_file, mark_at(spec.base, key)};
}

[[noreturn]] void rethrow_at_reference(const InputError& e, const SweepSpec& spec, std::size_t index,
                                       const std::string& key) {
  if (e.line() > 0) throw e;
  const auto [file, m] = field_position(spec, index, key);
  throw InputError(
      file, m.is_null() ? 0 : m.line + 1, m.is_null() ? 0 : m.column + 1, key,
      reference_context(e) + " (sweep point " + std::to_string(index) + ": " + point_key(spec, index) + ")");
}

}  // namespace

void resolve_sweep_references(const SweepSpec& spec) {
  // Only the points that can change a reference (load_sweep has validated
  // every point already).
  std::set<std::string> models, profiles;
  for (std::size_t i : reference_points(spec)) {
    const Scenario s = point_scenario(spec, i);
    if (s.workload && models.insert(s.workload->model).second) {
      try {
        load_model(s.workload->model);
      } catch (const InputError& e) {
        rethrow_at_reference(e, spec, i, "workload.model");
      }
    }
    const std::string profile = profile_reference(s);
    if (profiles.insert(profile).second) {
      try {
        load_profile(profile);
      } catch (const InputError& e) {
        rethrow_at_reference(e, spec, i, profile_field(s));
      }
    }
  }
}

}  // namespace gw::plan
