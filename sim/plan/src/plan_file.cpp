#include "gradwire/plan/plan_file.hpp"

#include <filesystem>

#include "gradwire/core/atomic_file.hpp"
#include "gradwire/core/yaml_reader.hpp"

namespace gw::plan {
namespace {

void read_constraints(const yaml::Node& root, PlanRequest& req) {
  if (auto b = root.optional("budget")) {
    req.budget = b->as_double(0, 1e12);
    if (!(*req.budget > 0)) b->fail("the budget must be greater than 0");
  }
  if (auto d = root.optional("deadline")) {
    req.deadline_hours = d->as_time(0, 1e9) / 3600.0;
    if (!(*req.deadline_hours > 0)) d->fail("the deadline must be greater than 0");
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
  root.allow_keys({"sweep", "results", "budget", "deadline", "pricing"});
  const auto dir = std::filesystem::path(input).parent_path();
  auto rel = [&](const std::string& p) { return std::filesystem::path(p).is_relative() ? (dir / p).string() : p; };
  if (auto s = root.optional("sweep")) req.sweep = rel(s->as_string());
  if (auto r = root.optional("results")) req.results = rel(r->as_string());
  if (req.sweep.empty() && req.results.empty()) root.fail("give `sweep` (a sweep file) or `results` (a results file)");
  read_constraints(root, req);
  return req;
}

std::string default_results_path(const std::string& sweep) {
  std::filesystem::path p(sweep);
  return (p.parent_path() / (p.stem().string() + ".results.jsonl")).string();
}

}  // namespace gw::plan
