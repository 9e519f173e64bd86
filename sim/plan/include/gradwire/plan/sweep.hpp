// Sweeps: a base scenario and cartesian axes over scenario fields by key path
// (docs/planning.md, "Sweep files"), run in parallel worker processes,
// resumable, shardable. Three units under it: the spec (sweep_spec.hpp:
// parse and expand), the worker pool (worker_pool.hpp: fork, poll, signals)
// and the results file (results_file.hpp: records, read, canonicalise,
// merge, lock); run_sweep ties them together. Plain C++ (POSIX fork/pipe/poll).
//
//   auto spec = gw::plan::load_sweep("study.yaml");
//   gw::plan::RunOptions o; o.jobs = 2; o.out = "study.results.jsonl";
//   auto summary = gw::plan::run_sweep(spec, o, gw::plan::closed_form_iteration, "closed form");
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include "gradwire/plan/evaluate.hpp"
#include "gradwire/plan/results_file.hpp"
#include "gradwire/plan/sweep_spec.hpp"

namespace gw::plan {

struct RunOptions {
  int jobs = 1;
  std::string out;  ///< results file (JSON lines)
  int shard_index = 0, shard_count = 1;
  enum class Progress { Auto, None, Bar, Lines } progress = Progress::Auto;
  /// Each point in a worker of its own (the path before workers evaluated
  /// many points; `gradwire sweep` sets it under GRADWIRE_FULL_SIMULATION).
  bool worker_per_point = false;
};

struct RunSummary {
  std::size_t in_shard = 0;     ///< points of this shard
  std::size_t skipped = 0;      ///< already in the results file
  std::size_t ran = 0;          ///< finished in this run
  std::size_t failed = 0;       ///< of those, status error
  std::size_t retried = 0;      ///< error records of earlier runs dropped and run again
  std::size_t duplicates = 0;   ///< repeated records of a point dropped on resume (PointRecords)
  std::size_t errors_left = 0;  ///< error records in the results file at the end
  /// The first of them (lowest index), "sweep point N (KEY): REASON"; "" when none.
  std::string first_error;
  std::string out;           ///< the results file written (links resolved)
  bool interrupted = false;  ///< stopped by SIGINT/SIGTERM
  double seconds = 0;
};

/// Runs the points of the shard that the results file does not hold yet,
/// `jobs` at a time, in forked worker processes; appends each finished
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

}  // namespace gw::plan
