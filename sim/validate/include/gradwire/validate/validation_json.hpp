// gradwire's validation results as JSON documents (docs/outputs.md):
// `gradwire validate --format json` (gradwire-validation/1) and
// `gradwire collective --compare LOG --format json` (gradwire-compare/1),
// each an object whose first field is "schema"; docs/schemas/ holds their
// JSON Schemas.
#pragma once

#include <string>
#include <vector>

#include "gradwire/validate/collectives.hpp"
#include "gradwire/validate/iterations.hpp"

namespace gw::validate {

/// gradwire-validation/1: {"schema", "collectives": {"cases", "ramp"}, "iterations":
/// {"cases", "summary"}}, each part present when its results are given ("ramp"
/// with `ramp`: the per-size ramp's fit, collectives.hpp RampFit).
std::string render_validation_json(const std::vector<CaseResult>* collectives, const IterationValidation* iterations,
                                   const RampFit* ramp = nullptr);
/// gradwire-compare/1: {"schema", "case"}, one measured log against its simulation.
std::string render_compare_json(const CaseResult& result);

}  // namespace gw::validate
