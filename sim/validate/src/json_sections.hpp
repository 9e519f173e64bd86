// The JSON of validation results, by part (validation_json.cpp puts them
// in their documents): a collective case (collectives.cpp) and the
// iteration cases with their summary (iterations.cpp). Private to gw_validate.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "gradwire/validate/collectives.hpp"
#include "gradwire/validate/iterations.hpp"

namespace gw::validate {

/// One collective case: its header, errors, verdict and points.
nlohmann::ordered_json collective_case_json(const CaseResult& result);
/// {"cases": [...], "summary": {...}, "fit": {...} or null}.
nlohmann::ordered_json iterations_section_json(const IterationValidation& validation);

}  // namespace gw::validate
