// The sweep spec (docs/planning.md, "Sweep files"): a base scenario and
// cartesian axes over scenario fields by key path, parsed and validated, and
// its points expanded (mixed radix, the first axis most significant). Plain
// C++ on yaml-cpp.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gradwire/plan/evaluate.hpp"
#include "gradwire/plan/results_file.hpp"
#include "gradwire/model/scenario.hpp"

namespace gw::plan {

/// One axis: a single key, or a zip group of keys advancing together.
struct Axis {
  std::vector<std::string> keys;
  std::vector<std::vector<YAML::Node>> values;  ///< values[i][k]: i-th value of keys[k]
  std::size_t size() const { return values.size(); }
};

struct SweepSpec {
  std::string file;  ///< the sweep file
  std::string name;
  YAML::Node base;         ///< the base scenario tree
  std::string base_file;   ///< where the base came from (the sweep file when inline)
  int base_line = 0;       ///< line of `base:` in the sweep file
  std::vector<Axis> axes;  ///< most significant first
  PointOptions options;
  std::string evaluator = "closed-form";  ///< closed-form or simulation
  std::string id;                         ///< hash of the base, axes and options (the spec alone)
  std::size_t points = 0;
  /// The points' scenarios as parse_sweep validated them (kKeptScenarios
  /// points at most; empty above): point_scenario returns these instead of
  /// building them again (the same function of the same spec).
  std::shared_ptr<const std::vector<Scenario>> scenarios;
};
/// The most points whose validated scenarios a SweepSpec keeps.
inline constexpr std::size_t kKeptScenarios = 16384;

/// Called now and then while the points are validated: (validated, total).
using ValidationProgress = std::function<void(std::size_t, std::size_t)>;

/// Loads and validates a sweep file (base scenario and every point, through
/// the scenario loader). Errors name the sweep file's line for a bad axis value.
/// The file must be a regular file of at most kMaxYamlBytes.
SweepSpec load_sweep(const std::string& path, const ValidationProgress& progress = {});
/// The same from YAML text (`name` stands for the file in errors; relative
/// base paths resolve against `dir`).
SweepSpec parse_sweep(const std::string& text, const std::string& name, const std::string& dir = ".",
                      const ValidationProgress& progress = {});

/// One file the points of a sweep read besides the sweep file itself.
struct SweepInput {
  std::string role;  ///< "base", "model NAME", "profile NAME" or "catalog"
  std::string path;  ///< the file read
  std::string hash;  ///< FNV-1a 64 of its bytes, 16 hex digits
};
/// Every file the points read: the base scenario (when it is its own file),
/// each distinct model and profile, the catalog when a point names an
/// instance; sorted by role. Loads each (errors as the loaders throw them).
std::vector<SweepInput> sweep_inputs(const SweepSpec& spec);
/// The identity the records of a sweep carry ("sweep"): the spec's id and the
/// contents of every input, so a changed model, profile, catalog or base
/// scenario makes another sweep.
std::string sweep_identity(const SweepSpec& spec, const std::vector<SweepInput>& inputs);
/// Indices of points that between them use every distinct model, profile and
/// instance of the sweep (only the axes that can change those vary).
std::vector<std::size_t> reference_points(const SweepSpec& spec);

/// The value index of each axis at point `index` (mixed radix, the first axis
/// most significant).
std::vector<std::size_t> point_digits(const SweepSpec& spec, std::size_t index);
/// The axis values of point `index`.
std::vector<std::pair<std::string, std::string>> point_params(const SweepSpec& spec, std::size_t index);
/// Stable key of a point: "k1=v1;k2=v2" over its axis values.
std::string point_key(const SweepSpec& spec, std::size_t index);
/// The validated scenario of a point (throws InputError naming the sweep file
/// and the value's line when an axis value is bad).
Scenario point_scenario(const SweepSpec& spec, std::size_t index);

/// Resolves every distinct model and profile the points of a sweep use, as
/// `gradwire sweep` loads them; a missing one is an InputError at the axis
/// value (sweep file) or the base scenario's field that names it.
void resolve_sweep_references(const SweepSpec& spec);

}  // namespace gw::plan
