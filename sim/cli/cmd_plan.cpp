// gradwire plan PLAN.yaml | SWEEP.yaml [RESULTS] | RESULTS [--budget USD]
// [--deadline DURATION] [--spot] [--format text|json]: the Pareto front of (time-to-train, cost) and a
// recommendation with its reason (rule in docs/planning.md).
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/core/options.hpp"
#include "gradwire/core/units.hpp"
#include "gradwire/plan/plan_file.hpp"
#include "gradwire/plan/plan_json.hpp"
#include "gradwire/plan/planner.hpp"
#include "gradwire/plan/results_file.hpp"

namespace po = boost::program_options;

namespace gw::cli {
namespace {

/// A constraint must be finite and greater than 0 ("at most $nan" is no rule).
double positive(const char* name, double v) {
  if (!std::isfinite(v) || v <= 0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", v);
    throw std::invalid_argument(std::string(name) + " must be a finite number greater than 0 (got " + buf + ")");
  }
  return v;
}

/// The command line's options over the input file's.
void apply_options(const po::variables_map& vm, plan::PlanRequest& req) {
  if (vm.count("budget")) req.budget = positive("--budget", vm["budget"].as<double>());
  if (vm.count("deadline")) {
    std::string why;
    req.deadline_hours = plan::parse_deadline_hours(vm["deadline"].as<std::string>(), &why);
    if (!req.deadline_hours) throw std::invalid_argument("--deadline: " + why);
  }
  if (vm["jobs"].as<int>() < 0) throw std::invalid_argument("-j must be 0 (one per CPU) or more");
  const auto& format = vm["format"].as<std::string>();
  if (format != "text" && format != "json")
    throw std::invalid_argument("--format must be text or json, not '" + format + "'");
}

void print_front(const std::vector<plan::PlanPoint>& points) {
  std::cout << "Pareto front (time-to-train, cost):\n";
  std::printf("  %6s  %-72s %12s %12s  %-10s %14s\n", "#", "configuration", "iter (ms)", "h:mm:ss", "in words", "USD");
  for (std::size_t i : plan::pareto_front(points)) {
    const auto& p = points[i];
    char usd[32] = "-";
    if (p.priced) std::snprintf(usd, sizeof usd, "%.2f", p.cost);
    std::printf("  %6zu  %-72s %12.4g %12s  %-10s %14s\n", p.index, plan::describe(p).c_str(), p.iteration * 1e3,
                units::format_hours(p.hours).c_str(), units::format_duration_words(p.hours * 3600.0).c_str(), usd);
  }
}

/// One group's recommendation; true when one was found.
bool print_recommendation(const std::vector<plan::PlanPoint>& points, const plan::PlanRequest& req,
                          const plan::Exclusions& excluded) {
  const auto rec = plan::recommend(points, req.budget, req.deadline_hours, excluded);
  std::cout << "rule: " << rec.rule << "\n";
  if (rec.excluded.total() > 0) std::cout << "excluded: " << plan::describe(rec.excluded) << "\n";
  if (!rec.found) {
    std::cout << "no recommendation: " << rec.reason << "\n";
    return false;
  }
  std::cout << "recommendation: " << rec.reason << "\n";
  std::cout << plan::band_verdict(rec, points, req.budget, req.deadline_hours) << "\n";
  if (rec.baseline && rec.baseline->index != rec.choice.index) {
    std::printf("baseline (#%zu): %s: %s", rec.baseline->index, plan::describe(*rec.baseline).c_str(),
                units::format_hours(rec.baseline->hours).c_str());
    if (rec.baseline->priced) std::printf(", $%.2f", rec.baseline->cost);
    std::printf("\n");
  }
  return true;
}

int print_plan(const std::string& results, const plan::PlanRequest& req, bool json) {
  std::size_t duplicates = 0;
  const auto lines = plan::read_distinct_results(results, &duplicates);
  if (duplicates > 0) std::cerr << "gradwire plan: note: " << plan::duplicates_note(results, duplicates) << "\n";
  plan::Exclusions excluded;
  const bool spot = req.spot.value_or(false);
  const auto points = plan::plan_points(lines, spot ? plan::Pricing::Spot : plan::Pricing::OnDemand, &excluded);
  if (json) {
    bool found = false;
    std::cout << plan::plan_json({results, lines.size(), req.budget, req.deadline_hours, spot}, points, excluded,
                                 &found)
              << "\n";
    return found ? kExitOk : kExitFailure;
  }
  const bool priced = points.empty() || points.front().priced;
  std::cout << "results: " << results << " (" << lines.size() << " points, " << points.size() << " with a time-to-train"
            << (priced ? std::string(spot ? " and a spot" : " and an on-demand") + " cost"
                       : " and no price: ranked by time")
            << ")\n";
  std::string note;
  const auto groups = plan::comparable_groups(points, &note);
  if (groups.size() == 1 && !points.empty() && points.front().global_batch > 0 && note.empty())
    std::printf("global batch: %.0f samples per optimizer step, for every point\n", points.front().global_batch);
  if (!note.empty()) std::cout << "note: " << note << "\n";
  bool found = false;
  for (const auto& group : groups) {
    std::cout << "\n";
    if (groups.size() > 1) std::printf("== global batch %.0f ==\n", group.front().global_batch);
    print_front(group);
    std::cout << "\n";
    // The exclusions are the file's; printed once, with the first group.
    found = print_recommendation(group, req, &group == &groups.front() ? excluded : plan::Exclusions{}) || found;
  }
  return found ? kExitOk : kExitFailure;
}

}  // namespace

int cmd_plan(int argc, char** argv) {
  po::options_description opts(
      "gradwire plan PLAN.yaml | SWEEP.yaml [RESULTS] | RESULTS [--budget USD] [--deadline DURATION] [--spot] "
      "[--format text|json]");
  opts.add_options()("help,h", "show this help")("input", po::value<std::string>(), "plan, sweep or results file")(
      "results", po::value<std::string>(), "results file of the sweep (default: SWEEP.results.jsonl)")(
      "budget", po::value<double>(), "largest acceptable cost, USD")(
      "deadline", po::value<std::string>(),
      "latest acceptable time-to-train: a duration with its unit (10h, 90min, 3600s), as in plan files")(
      "spot", "price at spot rates (points without a spot price are left out)")(
      "jobs,j", po::value<int>()->default_value(0), "workers when the sweep has to be run")(
      "format", po::value<std::string>()->default_value("text"),
      "text, or json (schema gradwire-plan/2, docs/outputs.md)");
  po::positional_options_description pos;
  pos.add("input", 1).add("results", 1);
  const CommandLine parsed = parse_command(
      argc, argv, bad_option_usage("gradwire plan", opts), opts, pos,
      "\nExample: gradwire plan scenarios/study-accumulation.yaml /tmp/accumulation.jsonl --deadline 10h\n"
      "Example: gradwire plan /tmp/accumulation.jsonl --deadline 600min --budget 1000\n"
      "Example: gradwire plan /tmp/accumulation.jsonl --format json\n");
  if (parsed.exit) return *parsed.exit;
  const po::variables_map& vm = parsed.vm;
  if (!vm.count("input")) {
    std::cerr << "gradwire plan: give a plan, sweep or results file\n" << opts;
    return kExitInput;
  }
  plan::PlanRequest req = plan::read_plan_input(vm["input"].as<std::string>());
  if (!req.spot) req.spot = vm.count("spot") > 0;  // a plan file's pricing wins
  if (vm.count("results")) req.results = vm["results"].as<std::string>();
  try {
    apply_options(vm, req);
  } catch (const std::invalid_argument& e) {
    std::cerr << "gradwire plan: " << e.what() << "\n";
    return kExitInput;
  }
  if (!req.sweep.empty()) {
    if (req.results.empty()) req.results = plan::default_results_path(req.sweep);
    const int rc = run_sweep_command(req.sweep, req.results, vm["jobs"].as<int>(), "", "auto", "", true);
    if (rc == kExitInterrupted) return rc;
  }
  return print_plan(req.results, req, vm["format"].as<std::string>() == "json");
}

}  // namespace gw::cli
