// gradwire plan PLAN.yaml | SWEEP.yaml [RESULTS] | RESULTS [--budget USD]
// [--deadline HOURS] [--spot]: the Pareto front of (time-to-train, cost) and a
// recommendation with its reason (rule in docs/planning.md).
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>

#include "commands.hpp"
#include "gradwire/atomic_file.hpp"
#include "gradwire/error.hpp"
#include "gradwire/plan/planner.hpp"
#include "gradwire/plan/sweep.hpp"
#include "gradwire/units.hpp"
#include "gradwire/yaml_reader.hpp"

namespace po = boost::program_options;

namespace gw::cli {

std::string default_results_path(const std::string& sweep);
int run_sweep_command(const std::string& sweep_file, const std::string& out, int jobs, const std::string& shard,
                      const std::string& progress, const std::string& evaluator, bool quiet);

namespace {

bool looks_like_results(const std::string& path) {
  // A regular file within the results cap (a FIFO or /dev/zero is refused, exit 2).
  const std::string text = read_input_file(path, kMaxResultsBytes);
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') continue;
    return c == '{';
  }
  return true;  // empty: an empty results file
}

std::string f(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

}  // namespace

int cmd_plan(int argc, char** argv) {
  po::options_description opts(
      "gradwire plan PLAN.yaml | SWEEP.yaml [RESULTS] | RESULTS [--budget USD] [--deadline HOURS] [--spot]");
  opts.add_options()("help,h", "show this help")("input", po::value<std::string>(), "plan, sweep or results file")(
      "results", po::value<std::string>(), "results file of the sweep (default: SWEEP.results.jsonl)")(
      "budget", po::value<double>(), "largest acceptable cost, USD")(
      "deadline", po::value<double>(), "latest acceptable time-to-train, hours")(
      "spot", "price at spot rates (points without a spot price are left out)")(
      "jobs,j", po::value<int>()->default_value(0), "workers when the sweep has to be run");
  po::positional_options_description pos;
  pos.add("input", 1).add("results", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(opts).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "gradwire plan: " << e.what() << "\n" << opts;
    return kExitInput;
  }
  if (vm.count("help")) {
    std::cout << opts;
    return kExitOk;
  }
  if (!vm.count("input")) {
    std::cerr << "gradwire plan: give a plan, sweep or results file\n" << opts;
    return kExitInput;
  }
  const std::string input = vm["input"].as<std::string>();
  std::optional<double> budget, deadline;
  bool spot = vm.count("spot") > 0;
  std::string results;
  std::string sweep;
  if (looks_like_results(input)) {
    results = input;
  } else {
    auto doc = yaml::load_file(input);
    auto root = doc.root();
    if (root.has("base")) {
      sweep = input;
    } else {
      root.allow_keys({"sweep", "results", "budget", "deadline", "pricing"});
      const auto dir = std::filesystem::path(input).parent_path();
      auto rel = [&](const std::string& p) {
        return std::filesystem::path(p).is_relative() ? (dir / p).string() : p;
      };
      if (auto s = root.optional("sweep")) sweep = rel(s->as_string());
      if (auto r = root.optional("results")) results = rel(r->as_string());
      if (sweep.empty() && results.empty()) root.fail("give `sweep` (a sweep file) or `results` (a results file)");
      if (auto b = root.optional("budget")) {
        budget = b->as_double(0, 1e12);
        if (!(*budget > 0)) b->fail("the budget must be greater than 0");
      }
      if (auto d = root.optional("deadline")) {
        deadline = d->as_time(0, 1e9) / 3600.0;
        if (!(*deadline > 0)) d->fail("the deadline must be greater than 0");
      }
      if (auto p = root.optional("pricing")) spot = p->as_enum({"on_demand", "spot"}) == "spot";
    }
  }
  if (vm.count("results")) results = vm["results"].as<std::string>();
  // Constraints: finite and greater than 0 ("at most $nan" is no rule).
  auto positive = [](const char* name, double v) {
    if (!std::isfinite(v) || v <= 0) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%g", v);
      throw std::invalid_argument(std::string(name) + " must be a finite number greater than 0 (got " + buf + ")");
    }
    return v;
  };
  try {
    if (vm.count("budget")) budget = positive("--budget", vm["budget"].as<double>());
    if (vm.count("deadline")) deadline = positive("--deadline", vm["deadline"].as<double>());
    if (vm["jobs"].as<int>() < 0) throw std::invalid_argument("-j must be 0 (one per CPU) or more");
  } catch (const std::invalid_argument& e) {
    std::cerr << "gradwire plan: " << e.what() << "\n";
    return kExitInput;
  }
  if (!sweep.empty()) {
    if (results.empty()) results = default_results_path(sweep);
    const int rc = run_sweep_command(sweep, results, vm["jobs"].as<int>(), "", "auto", "", true);
    if (rc == kExitInterrupted) return rc;
  }
  const auto lines = plan::read_results(results);
  const auto points = plan::plan_points(lines, spot ? plan::Pricing::Spot : plan::Pricing::OnDemand);
  std::cout << "results: " << results << " (" << lines.size() << " points, " << points.size()
            << " with a time-to-train and a " << (spot ? "spot" : "on-demand") << " cost)\n\n";
  const auto front = plan::pareto_front(points);
  std::cout << "Pareto front (time-to-train, cost):\n";
  std::printf("  %6s  %-52s %12s %12s %14s\n", "#", "configuration", "iter (ms)", "hours", "USD");
  for (std::size_t i : front) {
    const auto& p = points[i];
    std::printf("  %6zu  %-52s %12.4g %12.4g %14.2f\n", p.index, plan::describe(p).c_str(), p.iteration * 1e3, p.hours,
                p.cost);
  }
  const auto rec = plan::recommend(points, budget, deadline);
  std::cout << "\nrule: " << rec.rule << "\n";
  if (!rec.found) {
    std::cout << "no recommendation: " << rec.reason << "\n";
    return kExitFailure;
  }
  std::cout << "recommendation: " << rec.reason << "\n";
  if (rec.baseline && rec.baseline->index != rec.choice.index) {
    std::cout << "baseline (#" << rec.baseline->index << "): " << plan::describe(*rec.baseline) << ": "
              << f("%.4g", rec.baseline->hours) << " h, $" << f("%.2f", rec.baseline->cost) << "\n";
  }
  return kExitOk;
}

}  // namespace gw::cli
