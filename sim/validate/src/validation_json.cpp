#include "gradwire/validate/validation_json.hpp"

#include <nlohmann/json.hpp>

#include "gradwire/core/output_schema.hpp"
#include "json_sections.hpp"

namespace gw::validate {

std::string render_validation_json(const std::vector<CaseResult>* collectives, const IterationValidation* iterations) {
  nlohmann::ordered_json j{{"schema", kValidationSchema}};
  if (collectives != nullptr) {
    nlohmann::ordered_json cases = nlohmann::ordered_json::array();
    for (const auto& r : *collectives) cases.push_back(collective_case_json(r));
    j["collectives"] = {{"cases", std::move(cases)}};
  }
  if (iterations != nullptr) j["iterations"] = iterations_section_json(*iterations);
  return j.dump(2) + "\n";
}

std::string render_compare_json(const CaseResult& result) {
  const nlohmann::ordered_json j{{"schema", kCompareSchema}, {"case", collective_case_json(result)}};
  return j.dump(2) + "\n";
}

}  // namespace gw::validate
