// gradwire validate [collectives|iterations]: gradwire's predictions against
// published measurements: nccl-tests tables (validation/collectives/) and
// DDP, compression and accumulation iterations (validation/iterations/);
// docs/validation.md. With no kind, both.
#include <iostream>
#include <string>
#include <optional>
#include <vector>

#include "commands.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/core/options.hpp"
#include "gradwire/validate/collectives.hpp"
#include "gradwire/validate/iterations.hpp"
#include "gradwire/validate/validation_json.hpp"

namespace po = boost::program_options;

namespace gw::cli {

namespace {

// Runs every case (each named on stderr as it starts).
template <typename Case, typename Run>
auto run_cases(const std::vector<Case>& cases, Run run) {
  std::vector<decltype(run(cases.front()))> results;
  for (const auto& c : cases) {
    std::cerr << "gradwire validate: " << c.devset << " " << c.name << "\n";
    results.push_back(run(c));
  }
  return results;
}

/// The text forms of one kind: summary, markdown or (iterations) residuals.
std::string render_collectives(const std::vector<validate::CaseResult>& r, const validate::RampFit& ramp,
                               const std::string& format) {
  return format == "summary" ? validate::render_summary(r, &ramp) : validate::render_markdown(r, &ramp);
}

std::string render_iterations(const validate::IterationValidation& r, const std::string& format) {
  return format == "summary"     ? validate::render_iterations_summary(r)
         : format == "residuals" ? validate::render_iterations_residuals(r)
                                 : validate::render_iterations_markdown(r);
}

/// A kind validate knows, a format it has for it, --cases with a kind, --fit
/// with iterations and no format.
bool valid_request(const std::string& what, const std::string& format, bool cases, bool refit) {
  const bool known = what.empty() || what == "collectives" || what == "iterations";
  const bool residuals = format == "residuals" && what == "iterations";
  const bool formatted = format == "summary" || format == "markdown" || format == "json" || residuals;
  return known && formatted && !(what.empty() && cases) && !(refit && (what != "iterations" || format != "summary"));
}

}  // namespace

int cmd_validate(int argc, char** argv) {
  po::options_description opts(
      "gradwire validate [collectives|iterations] [--cases DIR] [--format summary|markdown|json] [--fit]: "
      "predicted vs published (both kinds when none is named)");
  // clang-format off
  opts.add_options()
      ("help,h", "show this help")
      ("what", po::value<std::string>(),
       "collectives (the nccl-tests tables of the development set) or iterations (DDP, compression and "
       "accumulation runs); both when omitted")
      ("cases", po::value<std::string>(),
       "folder of case files (default: the bundled validation/collectives or validation/iterations of the data "
       "folder, README.md \"Data files\"; needs a kind)")
      ("format", po::value<std::string>()->default_value("summary"),
       "summary (one line a case), markdown (docs/validation.md's tables), json, or residuals (iterations "
       "only: validation/residuals.yaml, the band's model residuals)")
      ("fit",
       "iterations only: fit the model's fitted constants over the cases and print them with the line of C++ to "
       "compile in (docs/validation.md, \"Fitted constants and the band\")");
  // clang-format on
  po::positional_options_description pos;
  pos.add("what", 1);
  const CommandLine parsed = parse_command(argc, argv, bad_option_usage("gradwire validate", opts), opts, pos,
                                           "\nExample: gradwire validate collectives\n"
                                           "Example: gradwire validate iterations --format markdown\n"
                                           "Example: gradwire validate iterations --fit\n");
  if (parsed.exit) return *parsed.exit;
  const po::variables_map& vm = parsed.vm;
  const std::string what = vm.count("what") ? vm["what"].as<std::string>() : "";
  const std::string format = vm["format"].as<std::string>();
  const bool refit = vm.count("fit") > 0;
  if (!valid_request(what, format, vm.count("cases") > 0, refit)) {
    std::cerr << "gradwire validate: say what to validate (collectives, iterations, or nothing for both; --cases "
                 "needs one) and a format (summary, markdown, json; residuals with iterations; --fit with iterations "
                 "and no format)\n"
              << opts;
    return kExitInput;
  }
  // --cases, else the bundled cases of the data dir (an installed gradwire
  // finds them from any directory); a path that is no folder of cases is a
  // gw::InputError naming it (one line, exit 2).
  const auto dir = [&](const char* kind) {
    return vm.count("cases") ? vm["cases"].as<std::string>() : validate::bundled_cases_dir(kind);
  };
  std::optional<std::vector<validate::CaseResult>> collectives;
  std::optional<validate::IterationValidation> iterations;
  validate::RampFit ramp;  // the per-size ramp's constants fitted on the cases, each left out in turn
  if (what != "iterations") {
    collectives = run_cases(validate::load_collective_cases(dir("collectives")), validate::run_case);
    ramp = validate::fit_ramp(*collectives);
  }
  const auto name_case = [](const validate::IterationCase& c) {
    std::cerr << "gradwire validate: " << c.devset << " " << c.name << "\n";
  };
  if (refit) {
    std::cout << validate::render_iterations_fit(
        validate::validate_iterations(validate::load_iteration_cases(dir("iterations")), name_case));
    return kExitOk;
  }
  if (what != "collectives")
    iterations = validate::validate_iterations(validate::load_iteration_cases(dir("iterations")), name_case);
  if (format == "json") {
    std::cout << validate::render_validation_json(collectives ? &*collectives : nullptr,
                                                  iterations ? &*iterations : nullptr, collectives ? &ramp : nullptr);
    return kExitOk;
  }
  if (collectives) std::cout << render_collectives(*collectives, ramp, format);
  if (collectives && iterations) std::cout << "\n";
  if (iterations) std::cout << render_iterations(*iterations, format);
  return kExitOk;
}

}  // namespace gw::cli
