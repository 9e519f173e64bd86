// `gradwire plan --format json` (docs/outputs.md, schema gradwire-plan/2 in
// docs/schemas/gradwire-plan-2.schema.json): the request, the file's exclusions, and per
// comparable group (one global batch) its Pareto front, recommendation,
// baseline and band verdict, as the text form prints them. Plain C++.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "gradwire/plan/planner.hpp"

namespace gw::plan {

struct PlanJsonRequest {
  std::string results;           ///< the results file read
  std::size_t records = 0;       ///< distinct records in it (one per point)
  std::optional<double> budget;  ///< USD
  std::optional<double> deadline_hours;
  bool spot = false;
};

/// The plan of `points` (plan_points' output; `excluded` its counts) as one
/// JSON document (indent 2, no trailing newline). `found` is set when a group
/// has a recommendation (the command's exit code follows it).
std::string plan_json(const PlanJsonRequest& req, const std::vector<PlanPoint>& points, const Exclusions& excluded,
                      bool* found);

}  // namespace gw::plan
