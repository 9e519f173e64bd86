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
  std::string id;                ///< hash of the base, axes and options
  std::size_t points = 0;
};

/// Loads and validates a sweep file (base scenario and every point, through
/// the scenario loader). Errors name the sweep file's line for a bad axis value.
SweepSpec load_sweep(const std::string& path);
/// The same from YAML text (`name` stands for the file in errors; relative
/// base paths resolve against `dir`).
SweepSpec parse_sweep(const std::string& text, const std::string& name, const std::string& dir = ".");

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
  bool interrupted = false;   ///< stopped by SIGINT/SIGTERM
  double seconds = 0;
};

/// Runs the points of the shard that the results file does not hold yet,
/// `jobs` at a time, each in a forked worker process; appends each finished
/// record durably; on completion rewrites the file sorted by index. SIGINT /
/// SIGTERM stop it cleanly (summary.interrupted; finished records kept).
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
  std::string text;    ///< the JSON object as written
};
/// Reads a results file; a final line without its newline (a crash during
/// the append) is ignored; any other malformed line is an InputError with its line.
/// `partial` (when given) is set when such a final line was dropped.
std::vector<ResultLine> read_results(const std::string& path, bool* partial = nullptr);
/// The canonical text: records sorted by index, one per line.
std::string canonical_results(std::vector<ResultLine> lines);
/// Merges shard files into `out` (atomically). Throws InputError for records
/// of different sweeps or conflicting records of one point. Returns the
/// number of distinct points and the sweep's size.
std::pair<std::size_t, std::size_t> merge_results(const std::string& out, const std::vector<std::string>& shards);

}  // namespace gw::plan
