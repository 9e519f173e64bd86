#include "gradwire/validate/validation_json.hpp"

#include <nlohmann/json.hpp>

#include "gradwire/core/output_schema.hpp"
#include "json_sections.hpp"

namespace gw::validate {

namespace {

nlohmann::ordered_json ramp_json(const RampFit& f) {
  const auto constants = [](const RampConstants& v) {
    return nlohmann::ordered_json{{"t_launch_us", v[0]}, {"t_stage_us", v[1]}, {"o_proxy_us", v[2]}};
  };
  auto opt = [](const std::optional<double>& x) { return x ? nlohmann::ordered_json(*x) : nullptr; };
  return {{"fitted", constants(f.fitted)},
          {"compiled", constants(f.compiled)},
          {"observations", f.observations},
          {"rms", f.rms},
          {"in_sample_median_small", opt(f.in_small)},
          {"in_sample_median_large", opt(f.in_large)},
          {"loo_median_small", opt(f.loo_small)},
          {"loo_median_large", opt(f.loo_large)}};
}

}  // namespace

std::string render_validation_json(const std::vector<CaseResult>* collectives, const IterationValidation* iterations,
                                   const RampFit* ramp) {
  nlohmann::ordered_json j{{"schema", kValidationSchema}};
  if (collectives != nullptr) {
    nlohmann::ordered_json cases = nlohmann::ordered_json::array();
    for (const auto& r : *collectives) cases.push_back(collective_case_json(r));
    j["collectives"] = {{"cases", std::move(cases)}};
    if (ramp) j["collectives"]["ramp"] = ramp_json(*ramp);
  }
  if (iterations != nullptr) j["iterations"] = iterations_section_json(*iterations);
  return j.dump(2) + "\n";
}

std::string render_compare_json(const CaseResult& result) {
  const nlohmann::ordered_json j{{"schema", kCompareSchema}, {"case", collective_case_json(result)}};
  return j.dump(2) + "\n";
}

}  // namespace gw::validate
