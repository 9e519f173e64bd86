// Sweeps: a base scenario and cartesian axes over scenario fields by key path
// (docs/planning.md, "Sweep files"), run in parallel worker processes,
// resumable, shardable. Plain C++ (POSIX fork/pipe/poll).
//
//   auto spec = gw::plan::load_sweep("study.yaml");
//   gw::plan::RunOptions o; o.jobs = 2; o.out = "study.results.jsonl";
//   auto summary = gw::plan::run_sweep(spec, o, gw::plan::closed_form_iteration, "closed form");
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gradwire/plan/evaluate.hpp"
#include "gradwire/scenario.hpp"

namespace gw::plan {

/// Sweeps larger than this are refused.
inline constexpr std::size_t kMaxSweepPoints = 1'000'000;

/// One axis: a single key, or a zip group of keys advancing together.
struct Axis {
  std::vector<std::string> keys;
  std::vector<std::vector<YAML::Node>> values;   ///< values[i][k]: i-th value of keys[k]
  std::size_t size() const { return values.size(); }
};

struct SweepSpec {
  std::string file;              ///< the sweep file
  std::string name;
  YAML::Node base;               ///< the base scenario tree
  std::string base_file;         ///< where the base came from (the sweep file when inline)
  int base_line = 0;             ///< line of `base:` in the sweep file
  std::vector<Axis> axes;        ///< most significant first
  PointOptions options;
  std::string evaluator = "closed-form";   ///< closed-form or simulation
  std::string id;                ///< hash of the base, axes and options (the spec alone)
  std::size_t points = 0;
};

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
  std::string role;   ///< "base", "model NAME", "profile NAME" or "catalog"
  std::string path;   ///< the file read
  std::string hash;   ///< FNV-1a 64 of its bytes, 16 hex digits
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

/// The axis values of point `index` (mixed radix, the first axis most significant).
std::vector<std::pair<std::string, std::string>> point_params(const SweepSpec& spec, std::size_t index);
/// Stable key of a point: "k1=v1;k2=v2" over its axis values.
std::string point_key(const SweepSpec& spec, std::size_t index);
/// The validated scenario of a point (throws InputError naming the sweep file
/// and the value's line when an axis value is bad).
Scenario point_scenario(const SweepSpec& spec, std::size_t index);

struct RunOptions {
  int jobs = 1;
  std::string out;               ///< results file (JSON lines)
  int shard_index = 0, shard_count = 1;
  enum class Progress { Auto, None, Bar, Lines } progress = Progress::Auto;
};

struct RunSummary {
  std::size_t in_shard = 0;   ///< points of this shard
  std::size_t skipped = 0;    ///< already in the results file
  std::size_t ran = 0;        ///< finished in this run
  std::size_t failed = 0;     ///< of those, status error
  std::size_t retried = 0;    ///< error records of earlier runs dropped and run again
  std::size_t errors_left = 0;  ///< error records in the results file at the end
  std::string out;            ///< the results file written (links resolved)
  bool interrupted = false;   ///< stopped by SIGINT/SIGTERM
  double seconds = 0;
};

/// Runs the points of the shard that the results file does not hold yet,
/// `jobs` at a time, each in a forked worker process; appends each finished
/// record durably; on completion rewrites the file sorted by index. SIGINT /
/// SIGTERM stop it cleanly (summary.interrupted; finished records kept).
/// The results file is locked (OUT.lock, holding the PID) for the whole run:
/// a second sweep or merge of the same file is refused (InputError naming the
/// holder). On resume every record is checked (identity, inputs, duplicates,
/// conflicts: InputError at FILE:LINE) and the shard's `error` records are
/// dropped and run again.
RunSummary run_sweep(const SweepSpec& spec, const RunOptions& options, const Evaluator& evaluator,
                     const std::string& evaluator_name);

/// "i/N" -> (i, N); throws std::invalid_argument.
std::pair<int, int> parse_shard(const std::string& text);

// --- Results files -----------------------------------------------------------
struct ResultLine {
  std::size_t index = 0;
  std::size_t of = 0;
  std::string sweep;
  std::string key;
  std::string status;
  std::string text;    ///< the JSON object as written (without a trailing CR)
  std::string file;    ///< where it was read
  int line = 0;        ///< its line there
};
/// Reads a results file (a regular file of at most kMaxResultsBytes); a final
/// line without its newline (a crash during the append) is ignored; any other
/// malformed or invalid record (wrong type, non-finite or negative number,
/// unknown status, index >= of, ...) is an InputError at FILE:LINE naming the
/// key. `partial` (when given) is set when such a final line was dropped.
std::vector<ResultLine> read_results(const std::string& path, bool* partial = nullptr);
/// Parses and checks one record as read_results does (throws InputError at
/// `file`:`line` naming the key); returns it with index, of, sweep, key and
/// status filled in.
ResultLine parse_result_line(std::string text, const std::string& file, int line);
/// The canonical text: records sorted by index, one per line.
std::string canonical_results(std::vector<ResultLine> lines);
/// Merges shard files into `out` (atomically, under the results file's lock).
/// Throws InputError for records of different sweeps or conflicting records
/// of one point, for an `out` that is one of the shards, and for an existing
/// `out` that is not a results file of the same sweep. Returns the
/// number of distinct points and the sweep's size.
std::pair<std::size_t, std::size_t> merge_results(const std::string& out, const std::vector<std::string>& shards);

}  // namespace gw::plan
