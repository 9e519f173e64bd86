// gradwire sweep SWEEP.yaml [-j N] [--out RESULTS] [--shard i/N]: run a
// cartesian sweep of scenarios in worker processes, resumably.
#include <iostream>
#include <optional>
#include <string>
#include <thread>

#include "commands.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/core/options.hpp"
#include "gradwire/plan/plan_file.hpp"
#include "gradwire/plan/results_file.hpp"
#include "gradwire/plan/sweep.hpp"
#include "gradwire/replay/replay.hpp"

namespace po = boost::program_options;

namespace gw::cli {
namespace {

/// The evaluator of a sweep: "closed-form" (the iteration model's closed
/// forms) or "simulation" (the SimGrid replay, each point in its own child).
plan::Evaluator sweep_evaluator(const std::string& name) {
  if (name == "closed-form") return plan::closed_form_iteration;
  if (name == "simulation")
    return [](const Scenario& s, const ModelDesc& m, const Profile& p) {
      ReplayOptions o;
      o.share_durations = false;  // a point's figures do not depend on the points its worker ran before
      return simulate_iteration(s, m, p, o);
    };
  throw std::invalid_argument("evaluator \"" + name + "\" is not available in this build");
}

plan::RunOptions::Progress progress_of(const std::string& progress) {
  if (progress == "auto") return plan::RunOptions::Progress::Auto;
  if (progress == "bar") return plan::RunOptions::Progress::Bar;
  if (progress == "lines") return plan::RunOptions::Progress::Lines;
  if (progress == "none") return plan::RunOptions::Progress::None;
  throw std::invalid_argument("--progress expects auto, bar, lines or none");
}

}  // namespace

int run_sweep_command(const std::string& sweep_file, const std::string& out, int jobs, const std::string& shard,
                      const std::string& progress, const std::string& evaluator, bool quiet) {
  const auto spec = plan::load_sweep(sweep_file, validation_progress("gradwire sweep", sweep_file));
  plan::resolve_sweep_references(spec);  // a missing model or profile: its field's line, before any worker runs
  plan::RunOptions o;
  o.out = out.empty() ? plan::default_results_path(sweep_file) : out;
  if (jobs < 0 || jobs > 4096)
    throw std::invalid_argument("-j must be 0 (one worker per CPU) to 4096 (got " + std::to_string(jobs) + ")");
  o.jobs = jobs > 0 ? jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (!shard.empty()) std::tie(o.shard_index, o.shard_count) = plan::parse_shard(shard);
  o.progress = progress_of(progress);
  o.worker_per_point = full_simulation({});  // the full path: a fresh worker per point
  const std::string ev = evaluator.empty() ? spec.evaluator : evaluator;
  const auto sum = plan::run_sweep(spec, o, sweep_evaluator(ev), ev == "simulation" ? "simulation" : "closed form");
  if (!quiet || sum.interrupted) {
    std::cerr << "gradwire sweep: " << sweep_file << ": " << sum.in_shard << " points"
              << (o.shard_count > 1 ? " in shard " + std::to_string(o.shard_index) + "/" + std::to_string(o.shard_count)
                                    : std::string())
              << ", " << sum.skipped << " already done, " << sum.ran << " run now (" << sum.failed << " failed"
              << (sum.retried > 0 ? ", " + std::to_string(sum.retried) + " retried after an earlier error" : "")
              << ") in " << sum.seconds << " s -> " << o.out
              << (sum.interrupted ? " (interrupted; rerun to resume)" : "") << "\n";
  }
  if (sum.duplicates > 0) std::cerr << "gradwire sweep: note: " << plan::duplicates_note(o.out, sum.duplicates) << "\n";
  if (sum.interrupted) return kExitInterrupted;
  if (sum.errors_left > 0) {
    // Said even under --quiet (plan): the results are not complete.
    std::cerr << "gradwire sweep: " << o.out << ": " << sum.errors_left << " point" << (sum.errors_left == 1 ? "" : "s")
              << " ended in an error (status \"error\" records); rerun to "
              << "retry them; " << (sum.errors_left == 1 ? "" : "the first: ") << sum.first_error << "\n";
    return kExitFailure;
  }
  return kExitOk;
}

int cmd_sweep(int argc, char** argv) {
  po::options_description opts(
      "gradwire sweep SWEEP.yaml [-j N] [--out RESULTS] [--shard i/N] : run a sweep (docs/planning.md)");
  opts.add_options()("help,h", "show this help")("sweep", po::value<std::string>(), "sweep file")(
      "jobs,j", po::value<int>()->default_value(0), "parallel workers (0: one per CPU)")(
      "out,o", po::value<std::string>()->default_value(""), "results file (default: SWEEP.results.jsonl)")(
      "shard", po::value<std::string>()->default_value(""), "run only the points with index % N == i")(
      "progress", po::value<std::string>()->default_value("auto"), "auto (bar on a terminal), bar, lines, none")(
      "evaluator", po::value<std::string>()->default_value(""), "closed-form or simulation (default: the file's)");
  po::positional_options_description pos;
  pos.add("sweep", 1);
  const CommandLine parsed =
      parse_command(argc, argv, bad_option_usage("gradwire sweep", opts), opts, pos,
                    "\nExample: gradwire sweep scenarios/study-compression.yaml -j 4 -o /tmp/compression.jsonl\n");
  if (parsed.exit) return *parsed.exit;
  const po::variables_map& vm = parsed.vm;
  if (!vm.count("sweep")) {
    std::cerr << "gradwire sweep: give a sweep file\n" << opts;
    return kExitInput;
  }
  try {
    return run_sweep_command(vm["sweep"].as<std::string>(), vm["out"].as<std::string>(), vm["jobs"].as<int>(),
                             vm["shard"].as<std::string>(), vm["progress"].as<std::string>(),
                             vm["evaluator"].as<std::string>(), false);
  } catch (const std::invalid_argument& e) {
    std::cerr << "gradwire sweep: " << e.what() << "\n";
    return kExitInput;
  }
}

}  // namespace gw::cli
