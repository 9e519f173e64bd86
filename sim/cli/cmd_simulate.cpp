// gradwire simulate SCENARIO [--format table|json|csv] [--trace FILE]
//                            [--profile NAME_OR_PATH]
// Predicts one training iteration of the scenario's workload on its cluster
// (docs/model.md) and prints the breakdown; --trace writes a Chrome/Perfetto
// trace of the representative rank. Bad input: a message naming the file,
// line and key, exit 2 (thrown as gw::InputError, mapped by main.cpp).
#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>
#include <string>

#include "commands.hpp"
#include "gradwire/atomic_file.hpp"
#include "gradwire/error.hpp"
#include "gradwire/model_desc.hpp"
#include "gradwire/profile.hpp"
#include "gradwire/replay.hpp"
#include "gradwire/report.hpp"
#include "gradwire/scenario.hpp"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace gw::cli {
namespace {

constexpr const char* kCmd = "gradwire simulate";

int usage_error(const std::string& msg, const po::options_description& opts) {
  std::cerr << kCmd << ": " << msg << "\n\nusage: gradwire simulate SCENARIO [options]\n" << opts;
  return kExitInput;
}

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos || s.ends_with(".yaml") || s.ends_with(".yml");
}

/// A relative path written in the scenario is taken relative to the scenario's
/// directory when it exists there.
std::string beside(const std::string& scenario_file, const std::string& value) {
  if (!looks_like_path(value) || fs::path(value).is_absolute()) return value;
  const fs::path candidate = fs::path(scenario_file).parent_path() / value;
  return fs::exists(candidate) ? candidate.string() : value;
}

}  // namespace

int cmd_simulate(int argc, char** argv) {
  po::options_description opts("options");
  // clang-format off
  opts.add_options()
      ("help,h", "show this help")
      ("format", po::value<std::string>()->default_value("table"), "table, json or csv")
      ("trace", po::value<std::string>(), "write a Chrome/Perfetto trace-event JSON to FILE")
      ("profile", po::value<std::string>(),
       "calibration profile (name in calibrate/profiles or a path); overrides the scenario's");
  // clang-format on
  po::options_description hidden;
  hidden.add_options()("scenario", po::value<std::string>());
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return usage_error(e.what(), opts);
  }
  if (vm.count("help")) {
    std::cout << "usage: gradwire simulate SCENARIO [options]\n"
                 "Predicts one data-parallel training iteration (PyTorch DDP) of the scenario.\n\n"
              << opts;
    return kExitOk;
  }
  if (!vm.count("scenario")) return usage_error("a scenario file is required", opts);
  const std::string format = vm["format"].as<std::string>();
  if (format != "table" && format != "json" && format != "csv")
    return usage_error("--format must be table, json or csv (got \"" + format + "\")", opts);

  const std::string path = vm["scenario"].as<std::string>();
  const Scenario scenario = load_scenario(path);
  if (!scenario.workload)
    throw InputError(scenario.file.empty() ? path : scenario.file, 0, 0, "workload",
                     "simulate needs a workload section (model, micro_batch, ...)");
  const std::string file = scenario.file.empty() ? path : scenario.file;
  const ModelDesc model = load_model(beside(file, scenario.workload->model),
                                     {fs::path(file).parent_path().string()});
  std::string profile_name = scenario.profile.empty() ? scenario.cluster.gpu : beside(file, scenario.profile);
  if (vm.count("profile")) profile_name = vm["profile"].as<std::string>();
  if (profile_name.empty())
    throw InputError(file, 0, 0, "cluster.gpu", "no profile: set cluster.gpu, profile, or pass --profile");
  const Profile profile = load_profile(profile_name);

  const IterationResult result = simulate_iteration(scenario, model, profile);

  if (vm.count("trace")) write_file_atomic(vm["trace"].as<std::string>(), chrome_trace(result));
  if (format == "json") {
    std::cout << result_to_json(result) << "\n";
  } else if (format == "csv") {
    std::cout << csv_header() << csv_row(result);
  } else {
    std::cout << format_table(result);
    if (vm.count("trace")) std::cout << "\ntrace: " << vm["trace"].as<std::string>() << "\n";
  }
  return kExitOk;
}

}  // namespace gw::cli
