// gradwire simulate SCENARIO [--format table|json|csv] [--trace FILE]
//                            [--profile NAME_OR_PATH]
// Predicts one training iteration of the scenario's workload on its cluster
// (docs/model.md) and prints the breakdown; --trace writes a Chrome/Perfetto
// trace of the representative rank. Bad input: a message naming the file,
// line and key, exit 2 (thrown as gw::InputError, mapped by main.cpp). A
// configuration whose per-GPU memory (gw::scenario_memory, the sweep's model)
// exceeds the GPU's: one line, exit 3 (kExitNoFit), unless
// --allow-oversubscribed-memory.
#include <algorithm>
#include <iostream>
#include <optional>
#include <string>

#include "commands.hpp"
#include "gradwire/core/atomic_file.hpp"
#include "gradwire/engine/engine.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/model/memory.hpp"
#include "gradwire/model/model_desc.hpp"
#include "gradwire/core/options.hpp"
#include "gradwire/core/units.hpp"
#include "gradwire/model/profile.hpp"
#include "gradwire/replay/replay.hpp"
#include "gradwire/replay/report.hpp"
#include "gradwire/model/scenario.hpp"
#include "gradwire/model/topology.hpp"
#include "gradwire/model/scenario_refs.hpp"

namespace po = boost::program_options;

namespace gw::cli {
namespace {

constexpr const char* kCmd = "gradwire simulate";

int usage_error(const std::string& msg, const po::options_description& opts) {
  std::cerr << kCmd << ": " << msg << "\n\nusage: gradwire simulate SCENARIO [options]\n" << opts;
  return kExitInput;
}

/// "needs 878 GiB per GPU, 80 GiB available (parameters 25.1 GiB, ...)"
std::string memory_verdict(const MemoryBreakdown& m) {
  std::string terms;
  for (const auto& [name, bytes] : memory_terms(m)) {
    if (bytes <= 0) continue;
    std::string label = name;
    std::replace(label.begin(), label.end(), '_', ' ');
    terms += (terms.empty() ? "" : ", ") + label + " " + units::format_size(bytes);
  }
  return "needs " + units::format_size(m.total) + " per GPU, " + units::format_size(m.capacity) + " available (" +
         terms + ")";
}

/// True (after one line on stderr) when the scenario does not fit and that is
/// not allowed; when it is allowed, a warning and false.
bool refuse_oversubscribed(const MemoryBreakdown& memory, const std::string& path, bool allowed) {
  if (memory.fits()) return false;
  std::cerr << kCmd << ": " << (allowed ? "warning: " : "") << path
            << " does not fit in GPU memory: " << memory_verdict(memory)
            << (allowed ? "; simulated anyway (--allow-oversubscribed-memory)\n"
                        : "; not simulated (--allow-oversubscribed-memory simulates it anyway)\n");
  return !allowed;
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
       "calibration profile (name in calibrate/profiles or a path); overrides the scenario's")
      ("allow-oversubscribed-memory",
       "simulate a configuration that does not fit in GPU memory (the output says it does not fit)");
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
  const MemoryBreakdown memory = scenario_memory(scenario, model, profile);
  if (refuse_oversubscribed(memory, path, vm.count("allow-oversubscribed-memory") > 0)) return kExitNoFit;

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
    std::cout << result_to_json(result, 2, &memory) << "\n";
  } else if (format == "csv") {
    std::cout << csv_header(true) << csv_row(result, &memory);
  } else {
    std::cout << format_table(result, &memory) << describe_network(resolve_cluster(scenario, profile)) << "\n";
    if (!trace.empty()) std::cout << "\ntrace: " << trace << "\n";
  }
  return kExitOk;
}

}  // namespace gw::cli
