// What `gradwire plan` is asked (docs/planning.md, "Plan files"): a results
// file, a sweep file, or a plan file naming a sweep and/or a results file
// with a budget, a deadline and the pricing. Plain C++.
#pragma once

#include <optional>
#include <string>

namespace gw::plan {

struct PlanRequest {
  std::string sweep;             ///< the sweep to run first ("" when none)
  std::string results;           ///< its results file ("" when the sweep's default)
  std::optional<double> budget;  ///< USD
  std::optional<double> deadline_hours;
  std::optional<bool> spot;  ///< spot rates (true) or on-demand; unset when the input does not say
};

/// True when `path` holds sweep results (its first non-blank byte is '{', or
/// it is empty); the file must be a regular file within the results cap
/// (InputError otherwise).
bool looks_like_results(const std::string& path);

/// The request an input file makes: a results file, a sweep file (a `base`
/// key), or a plan file (`sweep`, `results` relative to the plan file's
/// directory, `budget`, `deadline`, `pricing`). Throws InputError at the
/// plan file's line for a bad field.
PlanRequest read_plan_input(const std::string& input);

/// A deadline as the command line and plan files both write it: a duration
/// with its unit (units::parse_time: "10h", "90min", "3600s", "1.5h"), greater
/// than 0 and at most 1e9 s. A bare number is refused in both places (no
/// implicit hours). Returns hours; nullopt with *why on an error.
std::optional<double> parse_deadline_hours(const std::string& text, std::string* why = nullptr);

/// The default results file of a sweep: SWEEP without its extension, plus
/// .results.jsonl, beside it.
std::string default_results_path(const std::string& sweep);

}  // namespace gw::plan
