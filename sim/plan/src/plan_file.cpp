#include "gradwire/plan/plan_file.hpp"

#include <filesystem>

#include "gradwire/core/atomic_file.hpp"
#include "gradwire/core/units.hpp"
#include "gradwire/core/yaml_reader.hpp"

namespace gw::plan {
namespace {

constexpr double kMaxDeadlineSeconds = 1e9;

void read_constraints(const yaml::Node& root, PlanRequest& req) {
  if (auto b = root.optional("budget")) {
    req.budget = b->as_double(0, 1e12);
    if (!(*req.budget > 0)) b->fail("the budget must be greater than 0");
  }
  if (auto d = root.optional("deadline")) {
    std::string why;
    req.deadline_hours = parse_deadline_hours(d->as_string(), &why);
    if (!req.deadline_hours) d->fail(why);
  }
  if (auto p = root.optional("pricing")) req.spot = p->as_enum({"on_demand", "spot"}) == "spot";
}

}  // namespace

bool looks_like_results(const std::string& path) {
  // A regular file within the results cap (a FIFO or /dev/zero is refused, exit 2).
  const std::string text = read_input_file(path, kMaxResultsBytes);
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') continue;
    return c == '{';
  }
  return true;  // empty: an empty results file
}

PlanRequest read_plan_input(const std::string& input) {
  PlanRequest req;
  if (looks_like_results(input)) {
    req.results = input;
    return req;
  }
  auto doc = yaml::load_file(input);
  auto root = doc.root();
  if (root.has("base")) {
    req.sweep = input;
    return req;
  }
  if (root.is_map() && (root.has("cluster") || root.has("workload")) && !root.has("sweep") && !root.has("results")) {
    root.fail(
        "is a scenario; plan reads sweep results (.jsonl from gradwire sweep), a sweep file or a plan file: "
        "sweep this scenario (a sweep file with `base: " +
        std::filesystem::path(input).filename().string() +
        "`, docs/planning.md) and run gradwire sweep SWEEP.yaml first, or gradwire simulate " + input +
        " for this one configuration");
  }
  root.allow_keys({"sweep", "results", "budget", "deadline", "pricing"});
  const auto dir = std::filesystem::path(input).parent_path();
  auto rel = [&](const std::string& p) { return std::filesystem::path(p).is_relative() ? (dir / p).string() : p; };
  if (auto s = root.optional("sweep")) req.sweep = rel(s->as_string());
  if (auto r = root.optional("results")) req.results = rel(r->as_string());
  if (req.sweep.empty() && req.results.empty()) root.fail("give `sweep` (a sweep file) or `results` (a results file)");
  read_constraints(root, req);
  return req;
}

std::optional<double> parse_deadline_hours(const std::string& text, std::string* why) {
  std::string reason;
  const auto seconds = units::parse_time(text, &reason);
  if (!seconds) {
    if (why) *why = "the deadline is a duration with its unit, such as 2d, 10h, 90min or 3600s: " + reason;
    return std::nullopt;
  }
  if (!(*seconds > 0) || *seconds > kMaxDeadlineSeconds) {
    if (why) *why = "the deadline must be greater than 0 and at most 1e9 s (got \"" + text + "\")";
    return std::nullopt;
  }
  return *seconds / 3600.0;
}

std::string default_results_path(const std::string& sweep) {
  std::filesystem::path p(sweep);
  return (p.parent_path() / (p.stem().string() + ".results.jsonl")).string();
}

}  // namespace gw::plan
