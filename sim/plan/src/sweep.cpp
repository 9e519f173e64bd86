#include "gradwire/plan/sweep.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <regex>
#include <set>
#include <stdexcept>

#include "gradwire/core/atomic_file.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/core/units.hpp"
#include "gradwire/plan/worker_pool.hpp"

namespace gw::plan {
namespace {

using Clock = std::chrono::steady_clock;

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

/// What every record of this run shares: the sweep, its identity and inputs.
struct RunContext {
  const SweepSpec& spec;
  const RunOptions& opt;
  std::vector<SweepInput> inputs;
  std::string id;
  std::vector<std::string> input_paths;  ///< the sweep file, the base, every input
  std::string out;                       ///< the results file (checked, links resolved)
  /// The version of the records written: kResultVersion, or the version of
  /// the records of the file resumed (a file holds one version, so that a
  /// resumed sweep ends byte for byte as one run without a stop would).
  int version = kResultVersion;

  bool in_shard(std::size_t i) const {
    return i % static_cast<std::size_t>(opt.shard_count) == static_cast<std::size_t>(opt.shard_index);
  }

  /// An error record of point `index` (a worker that failed, or a point that threw).
  ResultRecord error_record(std::size_t index, const std::string& why) const {
    ResultRecord r;
    r.index = index;
    r.of = spec.points;
    r.sweep = id;
    r.key = point_key(spec, index);
    for (const auto& in : inputs) r.inputs.emplace_back(in.role, in.hash);
    r.status = "error";
    r.reason = why;
    return r;
  }
};

/// Why a record of the results file does not belong to this sweep: names the
/// input that changed when the record says what it was made from.
std::string foreign_record_reason(const RunContext& run, const ResultRecord& r) {
  const SweepSpec& spec = run.spec;
  if (r.sweep != run.id && r.of == spec.points && r.key == point_key(spec, r.index)) {
    for (const auto& in : run.inputs) {
      const auto was =
          std::find_if(r.inputs.begin(), r.inputs.end(), [&](const auto& p) { return p.first == in.role; });
      if (was != r.inputs.end() && was->second != in.hash)
        return "was made with another version of " + in.path + " (" + in.role +
               "): it changed since, and resuming would mix old and new figures; use another --out, or "
               "remove it to run the sweep again";
    }
  }
  return "holds results of another sweep, or of this one before " + spec.file +
         " changed: use another --out or remove it";
}

/// Checks the records of an existing results file and keeps those this run
/// need not run again (the shard's error records are retried); rewrites the
/// file without the cut-off record, the duplicates and the records to retry.
/// Returns the indices kept; sets the version of the records to write.
std::set<std::size_t> resume(RunContext& run, RunSummary& sum) {
  std::set<std::size_t> done;
  if (!exists(run.out)) return done;
  bool partial = false;
  const auto lines = read_results(run.out, &partial);
  run.version = records_version(lines);
  PointRecords seen;  // one record per point: a duplicate is kept once, a conflict refused
  std::vector<const ResultLine*> keep;
  for (const auto& l : lines) {
    const ResultRecord& r = l.record;
    if (r.sweep != run.id || r.of != run.spec.points || r.key != point_key(run.spec, r.index))
      throw InputError(run.opt.out, l.line, 1, "sweep", foreign_record_reason(run, r));
    if (!seen.add(l, run.opt.out)) continue;
    if (r.status == "error" && run.in_shard(r.index)) {
      ++sum.retried;  // a failed point of this shard: run it again
      continue;
    }
    done.insert(r.index);
    keep.push_back(&l);
  }
  sum.duplicates = seen.duplicates();
  if (partial || sum.retried > 0 || keep.size() != lines.size()) {
    // Drop the cut-off record, the duplicates and the records to retry
    // before appending after them.
    std::string text;
    for (const auto* l : keep) text += l->text + "\n";
    write_file_atomic(run.out, text, run.input_paths);
  }
  return done;
}

/// The shard's points not done yet, in index order.
std::vector<std::size_t> points_to_run(const RunContext& run, const std::set<std::size_t>& done, RunSummary& sum) {
  std::vector<std::size_t> todo;
  for (std::size_t i = static_cast<std::size_t>(run.opt.shard_index); i < run.spec.points;
       i += static_cast<std::size_t>(run.opt.shard_count)) {
    ++sum.in_shard;
    if (done.count(i)) {
      ++sum.skipped;
    } else {
      todo.push_back(i);
    }
  }
  return todo;
}

/// The progress shown on stderr: a bar (redrawn at most every 100 ms) or a line per point.
class ProgressReport {
 public:
  ProgressReport(const SweepSpec& spec, const RunOptions& opt, std::size_t total, Clock::time_point t0)
      : name_(spec.name.empty() ? spec.file : spec.name),
        bar_(opt.progress == RunOptions::Progress::Bar || (opt.progress == RunOptions::Progress::Auto && ::isatty(2))),
        lines_(opt.progress == RunOptions::Progress::Lines),
        total_(total),
        t0_(t0),
        last_bar_(Clock::now() - std::chrono::seconds(1)) {}

  void point_done(std::size_t index, std::size_t ran) {
    if (lines_) {
      write_all_stderr("point " + std::to_string(index) + " done (" + std::to_string(ran) + "/" +
                       std::to_string(total_) + ")\n");
    }
    if (!bar_ || (Clock::now() - last_bar_ <= std::chrono::milliseconds(100) && ran != total_)) return;
    last_bar_ = Clock::now();
    const double el = std::chrono::duration<double>(Clock::now() - t0_).count();
    const double done = static_cast<double>(ran), todo = static_cast<double>(total_);
    const double rate = done / std::max(el, 1e-9);
    char msg[200];
    std::snprintf(msg, sizeof msg, "\rsweep %s: %zu/%zu points (%.0f%%), %.1f points/s, ETA %s   ", name_.c_str(), ran,
                  total_, 100.0 * done / std::max(todo, 1.0), rate,
                  units::format_duration((todo - done) / std::max(rate, 1e-9)).c_str());
    write_all_stderr(msg);
  }

  void end() const {
    if (bar_ && total_ > 0) write_all_stderr("\n");
  }

 private:
  std::string name_;
  bool bar_, lines_;
  std::size_t total_;
  Clock::time_point t0_, last_bar_;
};

/// The line a finished worker leaves in the file: its own line when that is
/// a valid record of its point, else an error record saying why; "" when the
/// run was interrupted before the worker finished. `record`: the line's record.
std::string finished_line(const RunContext& run, const WorkerPool::Finished& f, ResultRecord& record) {
  std::string line;
  if (const auto own = f.line()) {
    line = *own;
  } else if (!StopSignalGuard::stop_requested()) {
    line = to_json(run.error_record(f.index, f.failure()), run.version);
  }
  if (line.empty()) return line;
  // Only a valid record of this point goes into the file (a bad one would
  // make every later read of it fail).
  try {
    ResultLine r = parse_result_line(line, "worker output", 1);
    if (r.record.index != f.index || r.record.sweep != run.id)
      throw InputError("worker output", 1, 1, "index", "another point");
    record = std::move(r.record);
  } catch (const InputError& e) {
    record = run.error_record(f.index, "the worker wrote an invalid record (" + e.key() + ": " + e.reason() + ")");
    line = to_json(record, run.version);
  }
  return line;
}

/// The points to run split into one contiguous run per worker slot: a
/// worker takes its own run in order, then the far end of the longest run
/// left. Neighbouring points (which often differ only in a field the
/// replay child does not read, e.g. the accumulation) then tend to meet in
/// one worker, which reuses the child's outcome (docs/engine.md, "Replay
/// children's results, reused"); every record is the same whichever worker
/// makes it.
class PointQueues {
 public:
  PointQueues(const std::vector<std::size_t>& todo, std::size_t slots) : todo_(todo), runs_(slots) {
    for (std::size_t s = 0; s < slots; ++s) runs_[s] = {todo.size() * s / slots, todo.size() * (s + 1) / slots};
  }
  bool empty() const {
    return std::all_of(runs_.begin(), runs_.end(), [](const auto& r) { return r.first == r.second; });
  }
  /// The next point for `slot` (not empty()).
  std::size_t next(std::size_t slot) {
    auto& own = runs_[slot];
    if (own.first < own.second) return todo_[own.first++];
    auto longest = std::max_element(runs_.begin(), runs_.end(), [](const auto& x, const auto& y) {
      return x.second - x.first < y.second - y.first;
    });
    return todo_[--longest->second];
  }

 private:
  const std::vector<std::size_t>& todo_;
  std::vector<std::pair<std::size_t, std::size_t>> runs_;  ///< [first, second) of todo_ per slot
};

/// Runs `todo` in the pool, `jobs` at a time, appending the records durably
/// (those that arrived together with one write and one fsync, after the
/// freed workers got their next points), until all are done or a stop is requested.
void run_points(const RunContext& run, WorkerPool& pool, const std::vector<std::size_t>& todo, ProgressReport& progress,
                RunSummary& sum) {
  const auto jobs = static_cast<std::size_t>(run.opt.jobs);
  PointQueues queues(todo, jobs);
  auto hand_out = [&] {
    for (std::size_t slot = 0; slot < jobs && !queues.empty() && !StopSignalGuard::stop_requested(); ++slot)
      if (!pool.busy(slot)) pool.spawn(queues.next(slot), slot);
  };
  while (!StopSignalGuard::stop_requested() && (!queues.empty() || pool.running() > 0)) {
    hand_out();
    std::string text;
    std::vector<std::pair<std::size_t, bool>> done;  // index, an error record
    for (const auto& f : pool.collect(200)) {
      ResultRecord record;
      const std::string line = finished_line(run, f, record);
      if (line.empty()) continue;  // interrupted: not finished
      text += line + "\n";
      done.emplace_back(f.index, record.status == "error");  // the record's own status
    }
    if (done.empty()) continue;
    // The freed workers start their next points before this round's fsync;
    // a spawn that fails still leaves the finished records in the file.
    try {
      hand_out();
    } catch (...) {
      append_line_durable(run.out, text);
      throw;
    }
    append_line_durable(run.out, text);
    for (const auto& [index, error] : done) {
      ++sum.ran;
      if (error) ++sum.failed;
      progress.point_done(index, sum.ran);
    }
  }
}

/// `text` as one line for a terminal: each control character or line break
/// (text_unit_at) shown as '?' (a reason may quote anything an exception said).
std::string one_line(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const TextUnit u = text_unit_at(text, i);
    out += u.control ? std::string("?") : text.substr(i, u.length);
    i += u.length;
  }
  return out;
}

/// Complete: the file rewritten in canonical order (sorted by index).
void finish_file(const RunContext& run, RunSummary& sum) {
  if (!exists(run.out)) write_file_atomic(run.out, "", run.input_paths);  // nothing was to run
  auto lines = read_results(run.out);
  // Error records left in the file (this run's failures; another shard's too),
  // the first of them said in full.
  const ResultRecord* first = nullptr;
  for (const auto& l : lines) {
    if (l.record.status != "error") continue;
    ++sum.errors_left;
    if (first == nullptr || l.record.index < first->index) first = &l.record;
  }
  if (first != nullptr) {
    sum.first_error = one_line("sweep point " + std::to_string(first->index) + " (" + first->key +
                               "): " + first->reason.value_or("no reason given"));
  }
  write_file_atomic(run.out, canonical_results(std::move(lines)), run.input_paths);
}

/// Nothing half-written: a file this run created without one whole record in
/// it (e.g. the disk was full at the first append) goes.
void remove_if_no_record(const std::string& out) {
  std::string text;
  try {
    text = read_file(out);
  } catch (const std::exception&) {
  }
  if (text.find('\n') == std::string::npos) ::unlink(out.c_str());
}

}  // namespace

RunSummary run_sweep(const SweepSpec& spec, const RunOptions& opt, const Evaluator& evaluator,
                     const std::string& evaluator_name) {
  const auto t0 = Clock::now();
  if (opt.out.empty()) throw std::invalid_argument("no results file given");
  if (opt.jobs < 1) throw std::invalid_argument("-j must be at least 1");
  RunSummary sum;
  // What the points read, and the identity that covers it.
  RunContext run{spec, opt, sweep_inputs(spec), {}, {spec.file, spec.base_file}, {}};
  run.id = sweep_identity(spec, run.inputs);
  for (const auto& in : run.inputs) run.input_paths.push_back(in.path);
  // The output: checked (not an input, not a device, FIFO, directory, dangling
  // link) and locked before anything is read or run.
  run.out = sum.out = checked_output_path(opt.out, run.input_paths);
  ResultsLock lock(run.out, opt.out);
  const std::vector<std::size_t> todo = points_to_run(run, resume(run, sum), sum);

  PointEvaluator pe(spec.options, evaluator, evaluator_name);
  {
    StringPairs hashes;
    for (const auto& in : run.inputs) hashes.emplace_back(in.role, in.hash);
    pe.set_inputs(std::move(hashes));
  }
  // Workers inherit the loaded models and profiles (the points were all
  // validated by load_sweep: no second pass over them here).
  for (std::size_t i : reference_points(spec)) pe.preload(point_scenario(spec, i));
  // The results file is created by the first append (or, with nothing to
  // run, at the end): a run that fails before any record leaves no file.
  const bool created_here = !exists(run.out);
  ProgressReport progress(spec, opt, todo.size(), t0);
  const StopSignalGuard signals;
  WorkerPool pool(
      [&](std::size_t index) {
        ResultRecord r;
        try {
          r = pe.evaluate(index, spec.points, run.id, point_key(spec, index), point_params(spec, index),
                          point_scenario(spec, index));
        } catch (const std::exception& e) {
          r = run.error_record(index, point_error_reason(e));
        } catch (...) {
          r = run.error_record(index, "the evaluation failed with an unknown exception");
        }
        return to_json(r, run.version);  // never throws on bad UTF-8
      },
      lock.fd(), opt.worker_per_point);
  try {
    run_points(run, pool, todo, progress, sum);
  } catch (...) {
    pool.terminate();
    if (created_here) remove_if_no_record(run.out);
    throw;
  }
  progress.end();
  if (StopSignalGuard::stop_requested()) {
    sum.interrupted = true;
    pool.terminate();
  } else {
    finish_file(run, sum);
  }
  sum.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return sum;
}

std::pair<int, int> parse_shard(const std::string& text) {
  static const std::regex re(R"((\d{1,6})/(\d{1,6}))");
  std::smatch m;
  if (!std::regex_match(text, m, re)) throw std::invalid_argument("--shard expects i/N, e.g. 0/4");
  const int i = std::stoi(m[1]), n = std::stoi(m[2]);
  if (n < 1 || i >= n) throw std::invalid_argument("--shard " + text + ": need 0 <= i < N");
  return {i, n};
}

}  // namespace gw::plan
