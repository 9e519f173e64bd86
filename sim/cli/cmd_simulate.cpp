// gradwire simulate SCENARIO [--format table|json|csv] [--trace FILE]
//                            [--profile NAME_OR_PATH]
// Predicts one training iteration of the scenario's workload on its cluster
// (docs/model.md) and prints the breakdown; --trace writes a Chrome/Perfetto
// trace of the representative rank. Bad input: a message naming the file,
// line and key, exit 2 (thrown as gw::InputError, mapped by main.cpp).
#include <iostream>
#include <optional>
#include <string>

#include "commands.hpp"
#include "gradwire/core/atomic_file.hpp"
#include "gradwire/engine/engine.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/model/model_desc.hpp"
#include "gradwire/core/options.hpp"
#include "gradwire/model/profile.hpp"
#include "gradwire/replay/replay.hpp"
#include "gradwire/replay/report.hpp"
#include "gradwire/model/scenario.hpp"
#include "gradwire/model/scenario_refs.hpp"

namespace po = boost::program_options;

namespace gw::cli {
namespace {

constexpr const char* kCmd = "gradwire simulate";

int usage_error(const std::string& msg, const po::options_description& opts) {
  std::cerr << kCmd << ": " << msg << "\n\nusage: gradwire simulate SCENARIO [options]\n" << opts;
  return kExitInput;
}

}  // namespace

int cmd_simulate(int argc, char** argv) {
  po::options_description opts("options");
  // clang-format off
  opts.add_options()
      ("help,h", "show this help")
      ("format", po::value<std::string>()->default_value("table"), "table, json or csv")
      ("trace", po::value<std::string>(),
       "write a Chrome/Perfetto trace-event JSON to FILE (a new or regular file, replaced atomically; "
       "- writes the trace to standard output instead of the breakdown)")
      ("profile", po::value<std::string>(),
       "calibration profile (name in calibrate/profiles or a path); overrides the scenario's");
  // clang-format on
  po::options_description hidden;
  hidden.add_options()("scenario", po::value<std::string>());
  po::positional_options_description pos;
  pos.add("scenario", 1);
  std::optional<po::variables_map> parsed;
  try {
    parsed = parse_options(argc, argv, opts, hidden, pos,
                           "usage: gradwire simulate SCENARIO [options]\n"
                           "Predicts one data-parallel training iteration (PyTorch DDP) of the scenario.\n\n",
                           "\nExample: gradwire simulate scenarios/default.yaml\n"
                           "Example: gradwire simulate scenarios/gpt2-topk-lowbw.yaml --format json --trace /tmp/gpt2.trace.json\n");
  } catch (const po::error& e) {
    return usage_error(e.what(), opts);
  }
  if (!parsed) return kExitOk;
  const po::variables_map& vm = *parsed;
  if (!vm.count("scenario")) return usage_error("a scenario file is required", opts);
  const std::string format = vm["format"].as<std::string>();
  if (format != "table" && format != "json" && format != "csv")
    return usage_error("--format must be table, json or csv (got \"" + format + "\")", opts);

  const std::string path = vm["scenario"].as<std::string>();
  const Scenario scenario = load_scenario(path);
  if (!scenario.workload)
    throw InputError(scenario.file.empty() ? path : scenario.file, 0, 0, "workload",
                     "simulate needs a workload section (model, micro_batch, ...)");
  // Model and profile, resolved as `gradwire check` does: a missing one is
  // reported at the line of the field that names it.
  std::optional<std::string> profile_override;
  if (vm.count("profile")) profile_override = vm["profile"].as<std::string>();
  const ScenarioRefs refs = resolve_scenario_references(scenario, path, profile_override);
  const ModelDesc& model = *refs.model;
  const Profile& profile = refs.profile;

  engine::enable_progress(std::string(kCmd) + ": simulating " + std::to_string(scenario.cluster.world_size()) +
                          " GPUs");  // stderr, once the run takes long
  // The trace's path is checked before the simulation runs: never a device,
  // FIFO or directory, never one of the files this run reads.
  std::string trace;
  if (vm.count("trace")) {
    trace = vm["trace"].as<std::string>();
    if (trace != "-") checked_output_path(trace, {path, model.path, profile.path});
  }

  const IterationResult result = simulate_iteration(scenario, model, profile);

  if (trace == "-") {
    std::cout << chrome_trace(result);
    return kExitOk;
  }
  if (!trace.empty()) write_file_atomic(trace, chrome_trace(result), {path, model.path, profile.path});
  if (format == "json") {
    std::cout << result_to_json(result) << "\n";
  } else if (format == "csv") {
    std::cout << csv_header() << csv_row(result);
  } else {
    std::cout << format_table(result);
    if (!trace.empty()) std::cout << "\ntrace: " << trace << "\n";
  }
  return kExitOk;
}

}  // namespace gw::cli
