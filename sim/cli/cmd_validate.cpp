// gradwire validate collectives: gradwire's collectives against published
// nccl-tests tables (validation/collectives/, docs/validation.md).
#include <iostream>
#include <string>

#include "commands.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/core/options.hpp"
#include "gradwire/validate/collectives.hpp"

namespace po = boost::program_options;

namespace gw::cli {

int cmd_validate(int argc, char** argv) {
  po::options_description opts(
      "gradwire validate collectives [--cases DIR] [--format summary|markdown|json]: predicted vs "
      "published");
  // clang-format off
  opts.add_options()
      ("help,h", "show this help")
      ("what", po::value<std::string>(), "collectives (the nccl-tests tables of the development set)")
      ("cases", po::value<std::string>()->default_value("validation/collectives"), "folder of case files")
      ("format", po::value<std::string>()->default_value("summary"),
       "summary (one line a case), markdown (docs/validation.md's tables) or json");
  // clang-format on
  po::positional_options_description pos;
  pos.add("what", 1);
  std::optional<po::variables_map> vm;
  try {
    vm = parse_options(argc, argv, opts, pos,
                       "\nExample: gradwire validate collectives\n"
                       "Example: gradwire validate collectives --format markdown\n");
  } catch (const po::error& e) {
    std::cerr << "gradwire validate: " << e.what() << "\n" << opts;
    return kExitInput;
  }
  if (!vm) return kExitOk;
  const std::string what = vm->count("what") ? (*vm)["what"].as<std::string>() : "";
  const std::string format = (*vm)["format"].as<std::string>();
  if (what != "collectives" || (format != "summary" && format != "markdown" && format != "json")) {
    std::cerr << "gradwire validate: say what to validate (collectives) and a format (summary, markdown, "
                 "json)\n"
              << opts;
    return kExitInput;
  }
  std::vector<validate::CaseResult> results;
  for (const auto& c : validate::load_collective_cases((*vm)["cases"].as<std::string>())) {
    std::cerr << "gradwire validate: " << c.devset << " " << c.name << "\n";
    results.push_back(validate::run_case(c));
  }
  if (format == "summary") std::cout << validate::render_summary(results);
  if (format == "markdown") std::cout << validate::render_markdown(results);
  if (format == "json") std::cout << validate::render_json(results);
  return kExitOk;
}

}  // namespace gw::cli
