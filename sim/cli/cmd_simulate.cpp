// gradwire simulate SCENARIO [--format table|json|csv] [--trace FILE]
//                            [--profile NAME_OR_PATH]
// Predicts one training iteration of the scenario's workload on its cluster
// (docs/model.md) and prints the breakdown; --trace writes a Chrome/Perfetto
// trace of the representative rank. Bad input: a message naming the file,
// line and key, exit 2 (thrown as gw::InputError, mapped by main.cpp). A
// configuration whose per-GPU memory (gw::scenario_memory, the sweep's model)
// exceeds the GPU's: one line, exit 3 (kExitNoFit), unless
// --allow-oversubscribed-memory. With training.global_batch, micro-batch and k
// follow it (resolve_global_batch); with a training target, the table ends
// with the time-to-train and, when the cluster has a price, the cost.
#include <algorithm>
#include <cstdio>
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
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
#include "gradwire/plan/cost.hpp"
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

/// training.global_batch fixes micro-batch x k x GPUs: the split (resolve_global_batch)
/// written into the workload; a split that cannot be made is an input error at
/// the key, one that does not fit is left to the memory verdict.
BatchSplit apply_global_batch(Scenario& s, const ModelDesc& model, const Profile& profile) {
  const BatchSplit b =
      resolve_global_batch(s, model, compressor_memory(s, model, profile), gpu_capacity(s.cluster, profile));
  if (!b.fixed) return b;
  if (!b.found && !b.no_fit)
    throw InputError(s.file, s.training->global_batch_line, s.training->global_batch_column,
                     "training.global_batch", b.reason);
  if (b.micro_batch > 0) {
    s.workload->micro_batch = b.micro_batch;
    s.workload->accumulation = b.accumulation;
  }
  return b;
}

std::string batch_line(const BatchSplit& b, int world) {
  return "batch: global batch " + std::to_string(b.global_batch) + " = micro-batch " + std::to_string(b.micro_batch) +
         " x k = " + std::to_string(b.accumulation) + " x " + std::to_string(world) + " GPUs (training.global_batch; " +
         (b.found ? b.how : b.reason) + ")";
}

/// The scenario's training target at iteration time `seconds` (docs/planning.md,
/// "Time-to-train and cost"); a target the model cannot meet (tokens without a
/// sequence length) is an input error at `training`.
plan::TrainingEstimate estimate_of(const Scenario& s, const ModelDesc& model, double seconds) {
  try {
    const double batch = s.workload->micro_batch * static_cast<double>(s.workload->accumulation) * s.cluster.world_size();
    return plan::estimate_training(s, model, seconds, batch);
  } catch (const std::invalid_argument& x) {
    throw InputError(s.file, 0, 0, "training", x.what());
  }
}

/// "time-to-train: ..." and "cost: ..." under the table; the cost when the
/// cluster has a price (a catalog instance or its own).
std::string training_lines(const Scenario& s, const plan::TrainingEstimate& e, double seconds) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "time-to-train: %.0f iterations x %.4g s = %s (h:mm:ss, %s; %.6g samples at global batch %.0f, "
                "convergence factor %g%s)\n",
                e.time.iterations, seconds, units::format_hours(e.time.hours()).c_str(),
                units::format_duration_words(e.time.hours() * 3600.0).c_str(), e.time.samples,
                e.time.global_batch,
                e.time.convergence_factor, e.critical_batch ? ", critical-batch law" : "");
  std::string out = buf;
  if (!e.cost) {
    return out + "cost: no price known (a catalog instance, or cluster.cloud with price_per_gpu_hour / "
                 "price_per_node_hour; docs/planning.md)\n";
  }
  std::snprintf(buf, sizeof buf, "cost: $%.2f on demand (%d x %s at $%.4g per node hour, %s billed each)",
                e.cost->on_demand, s.cluster.nodes, e.priced->name.c_str(), e.priced->on_demand,
                units::format_duration(e.cost->billed_seconds).c_str());
  out += buf;
  if (e.cost->spot) {
    std::snprintf(buf, sizeof buf, ", $%.2f at spot rates", *e.cost->spot);
    out += buf;
  }
  return out + "\n";
}

/// The iteration JSON with `training` and `cost` (null without a price) added
/// after its fields, in their order ("schema" first).
std::string with_training_json(const std::string& text, const plan::TrainingEstimate& e) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(text);
  j["training"] = {{"samples", e.time.samples},         {"global_batch", e.time.global_batch},
                   {"iterations", e.time.iterations},   {"hours", e.time.hours()},
                   {"convergence_factor", e.time.convergence_factor}};
  if (e.critical_batch) j["training"]["critical_batch"] = *e.critical_batch;
  j["cost"] = nullptr;
  if (e.cost) {
    j["cost"] = {{"priced_by", e.priced->name}, {"on_demand_usd", e.cost->on_demand},
                 {"billed_s", e.cost->billed_seconds}, {"usd_per_hour", e.usd_per_hour}};
    j["cost"]["spot_usd"] = e.cost->spot ? nlohmann::ordered_json(*e.cost->spot) : nlohmann::ordered_json(nullptr);
  }
  return j.dump(2);
}

/// The CSV line pair with the time-to-train and cost columns added at the
/// end; each is empty when unknown (no training target, no price, no spot
/// price), so the columns are the same for every scenario.
std::string with_training_csv(const std::string& header, const std::string& row,
                              const std::optional<plan::TrainingEstimate>& e) {
  auto chomp = [](std::string t) {
    if (!t.empty() && t.back() == '\n') t.pop_back();
    return t;
  };
  std::string hours, on_demand, spot;
  if (e) {
    hours = fmt::format("{:.9g}", e->time.hours());
    if (e->cost) {
      on_demand = fmt::format("{:.9g}", e->cost->on_demand);
      if (e->cost->spot) spot = fmt::format("{:.9g}", *e->cost->spot);
    }
  }
  return chomp(header) + ",time_to_train_hours,cost_on_demand_usd,cost_spot_usd\n" + chomp(row) + "," + hours + "," +
         on_demand + "," + spot + "\n";
}

/// What simulate prints, once the iteration is predicted.
struct Printed {
  const Scenario& scenario;
  const ScenarioRefs& refs;
  const BatchSplit& split;
  const MemoryBreakdown& memory;
  const IterationResult& result;
  const std::string& trace;
};

void print_result(const std::string& format, const Printed& p) {
  const Scenario& s = p.scenario;
  std::optional<plan::TrainingEstimate> estimate;
  if (s.training) estimate = estimate_of(s, *p.refs.model, p.result.total);
  if (format == "json") {
    const std::string json = result_to_json(p.result, 2, &p.memory);
    std::cout << (estimate ? with_training_json(json, *estimate) : json) << "\n";
  } else if (format == "csv") {
    std::cout << with_training_csv(csv_header(true), csv_row(p.result, &p.memory), estimate);
  } else {
    std::cout << format_table(p.result, &p.memory) << describe_network(resolve_cluster(s, p.refs.profile)) << "\n";
    if (p.split.fixed) std::cout << batch_line(p.split, s.cluster.world_size()) << "\n";
    if (s.cluster.instance && !p.refs.profile_choice.empty())
      std::cout << "profile choice: " << p.refs.profile_choice << "\n";
    if (estimate) std::cout << training_lines(s, *estimate, p.result.total);
    if (!p.trace.empty()) std::cout << "\ntrace: " << p.trace << "\n";
  }
}

// The scenario, which simulate needs with a workload section.
Scenario load_scenario_with_workload(const std::string& path) {
  Scenario scenario = load_scenario(path);
  if (!scenario.workload)
    throw InputError(scenario.file.empty() ? path : scenario.file, 0, 0, "workload",
                     "simulate needs a workload section (model, micro_batch, ...)");
  return scenario;
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
       "simulate a configuration that does not fit in GPU memory (the output says it does not fit)")
      ("full-simulation",
       "simulate every collective in full: none replayed from an identical earlier one, no phase solved on "
       "its symmetry classes (same results, slower; also GRADWIRE_FULL_SIMULATION=1; docs/engine.md, "
       "\"Memoised collectives\")");
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
  Scenario scenario = load_scenario_with_workload(path);
  // Model and profile, resolved as `gradwire check` does: a missing one is
  // reported at the line of the field that names it.
  std::optional<std::string> profile_override;
  if (vm.count("profile")) profile_override = vm["profile"].as<std::string>();
  const ScenarioRefs refs = resolve_scenario_references(scenario, path, profile_override);
  for (const auto& w : refs.warnings) std::cerr << kCmd << ": warning: " << w << "\n";
  const ModelDesc& model = *refs.model;
  const Profile& profile = refs.profile;
  const BatchSplit split = apply_global_batch(scenario, model, profile);
  const MemoryBreakdown memory = scenario_memory(scenario, model, profile);
  if (refuse_oversubscribed(memory, path, vm.count("allow-oversubscribed-memory") > 0)) return kExitNoFit;
  if (scenario.training) estimate_of(scenario, model, 1.0);  // a bad target fails before the run

  const std::string label = std::string(kCmd) + ": simulating " + std::to_string(scenario.cluster.world_size()) + " GPUs";
  engine::enable_progress(label);                                  // stderr, once the run takes long
  engine::announce_simulation_memory(label, scenario.cluster);     // stderr, at once for a large run
  // The trace's path is checked before the simulation runs: never a device,
  // FIFO or directory, never one of the files this run reads.
  std::string trace;
  if (vm.count("trace")) {
    trace = vm["trace"].as<std::string>();
    if (trace != "-") checked_output_path(trace, {path, model.path, profile.path});
  }

  ReplayOptions replay;
  replay.full_simulation = vm.count("full-simulation") > 0;
  const IterationResult result = simulate_iteration(scenario, model, profile, replay);

  if (trace == "-") {
    std::cout << chrome_trace(result);
    return kExitOk;
  }
  if (!trace.empty()) write_file_atomic(trace, chrome_trace(result), {path, model.path, profile.path});
  Printed what{scenario, refs, split, memory, result, trace};
  print_result(format, what);
  return kExitOk;
}

}  // namespace gw::cli
