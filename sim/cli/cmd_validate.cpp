// gradwire validate [collectives|iterations]: gradwire's predictions against
// published measurements: nccl-tests tables (validation/collectives/) and
// DDP, compression and accumulation iterations (validation/iterations/);
// docs/validation.md. With no kind, both.
#include <iostream>
#include <string>
#include <type_traits>

#include "commands.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/core/options.hpp"
#include "gradwire/validate/collectives.hpp"
#include "gradwire/validate/iterations.hpp"

namespace po = boost::program_options;

namespace gw::cli {

namespace {

// Runs every case and prints the results in `format` with the matching renderer.
template <typename Case, typename Run, typename Render>
void print_cases(const std::vector<Case>& cases, Run run, const std::string& format, Render summary, Render markdown,
                 Render json) {
  using Result = decltype(run(cases.front()));
  std::vector<Result> results;
  for (const auto& c : cases) {
    std::cerr << "gradwire validate: " << c.devset << " " << c.name << "\n";
    results.push_back(run(c));
  }
  if constexpr (std::is_same_v<Result, validate::IterationCaseResult>) {
    if (format == "residuals") {
      std::cout << validate::render_iterations_residuals(results);
      return;
    }
  }
  std::cout << (format == "summary" ? summary : format == "markdown" ? markdown : json)(results);
}

void print_collectives(const std::string& dir, const std::string& format) {
  print_cases(validate::load_collective_cases(dir), validate::run_case, format, validate::render_summary,
              validate::render_markdown, validate::render_json);
}

void print_iterations(const std::string& dir, const std::string& format) {
  print_cases(validate::load_iteration_cases(dir), validate::run_iteration_case, format,
              validate::render_iterations_summary, validate::render_iterations_markdown,
              validate::render_iterations_json);
}

}  // namespace

int cmd_validate(int argc, char** argv) {
  po::options_description opts(
      "gradwire validate [collectives|iterations] [--cases DIR] [--format summary|markdown|json]: predicted vs "
      "published (both kinds when none is named)");
  // clang-format off
  opts.add_options()
      ("help,h", "show this help")
      ("what", po::value<std::string>(),
       "collectives (the nccl-tests tables of the development set) or iterations (DDP, compression and "
       "accumulation runs); both when omitted")
      ("cases", po::value<std::string>(),
       "folder of case files (default validation/collectives or validation/iterations; needs a kind)")
      ("format", po::value<std::string>()->default_value("summary"),
       "summary (one line a case), markdown (docs/validation.md's tables), json, or residuals (iterations "
       "only: validation/residuals.yaml, the band's model residuals)");
  // clang-format on
  po::positional_options_description pos;
  pos.add("what", 1);
  std::optional<po::variables_map> vm;
  try {
    vm = parse_options(argc, argv, opts, pos,
                       "\nExample: gradwire validate collectives\n"
                       "Example: gradwire validate iterations --format markdown\n");
  } catch (const po::error& e) {
    std::cerr << "gradwire validate: " << e.what() << "\n" << opts;
    return kExitInput;
  }
  if (!vm) return kExitOk;
  const std::string what = vm->count("what") ? (*vm)["what"].as<std::string>() : "";
  const std::string format = (*vm)["format"].as<std::string>();
  const bool known = what.empty() || what == "collectives" || what == "iterations";
  const bool residuals = format == "residuals" && what == "iterations";
  if (!known || (format != "summary" && format != "markdown" && format != "json" && !residuals) ||
      (what.empty() && vm->count("cases"))) {
    std::cerr << "gradwire validate: say what to validate (collectives, iterations, or nothing for both; --cases "
                 "needs one) and a format (summary, markdown, json; residuals with iterations)\n"
              << opts;
    return kExitInput;
  }
  const auto dir = [&](const char* fallback) {
    return vm->count("cases") ? (*vm)["cases"].as<std::string>() : std::string(fallback);
  };
  if (what.empty() && format == "json") {
    std::cout << "{\"collectives\":\n";
    print_collectives(dir("validation/collectives"), format);
    std::cout << ",\"iterations\":\n";
    print_iterations(dir("validation/iterations"), format);
    std::cout << "}\n";
    return kExitOk;
  }
  if (what != "iterations") print_collectives(dir("validation/collectives"), format);
  if (what.empty()) std::cout << "\n";
  if (what != "collectives") print_iterations(dir("validation/iterations"), format);
  return kExitOk;
}

}  // namespace gw::cli
