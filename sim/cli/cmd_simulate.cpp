// gradwire simulate SCENARIO [--format table|json|csv] [--trace FILE]
//                            [--profile NAME_OR_PATH]
// Predicts one training iteration of the scenario's workload on its cluster
// (docs/model.md) and prints the breakdown; --trace writes a Chrome/Perfetto
// trace of the representative rank. Options -> the scenario's references
// (resolve_scenario_references) -> plan::evaluate_scenario with the replay
// (the sweep's evaluation: batch split, memory verdict, iteration,
// time-to-train, cost) -> one printer (table, json or csv). Bad input: a
// message naming the file, line and key, exit 2 (thrown as gw::InputError,
// mapped by main.cpp). A configuration whose per-GPU memory exceeds the
// GPU's: one line, exit 3 (kExitNoFit), unless --allow-oversubscribed-memory.
// With training.global_batch, micro-batch and k follow it
// (resolve_global_batch); with a training target, the table ends with the
// time-to-train and, when the cluster has a price, the cost.
#include <algorithm>
#include <cstdio>
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

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
#include "gradwire/plan/scenario_outcome.hpp"
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

/// One line on stderr when the scenario does not fit: the refusal, or (when
/// that is allowed) a warning.
void refuse_oversubscribed(const MemoryBreakdown& memory, const std::string& path, bool allowed,
                           const std::vector<plan::SchemeAlternative>& fitting = {}) {
  if (memory.fits()) return;
  std::cerr << kCmd << ": " << (allowed ? "warning: " : "") << path
            << " does not fit in GPU memory: " << memory_verdict(memory)
            << (allowed ? "; simulated anyway (--allow-oversubscribed-memory)"
                        : "; not simulated (--allow-oversubscribed-memory simulates it anyway)");
  std::string alternatives;
  for (const auto& a : fitting) {
    alternatives += (alternatives.empty() ? "" : ", ") + a.label + " (" + units::format_size(a.memory);
    alternatives += a.seconds ? ", " + units::format_time(*a.seconds) + " per iteration, closed form)" : ")";
  }
  if (!alternatives.empty()) std::cerr << "; fits under workload.sharding: " << alternatives;
  std::cerr << "\n";
}

std::string batch_line(const BatchSplit& b, int world) {
  return "batch: global batch " + std::to_string(b.global_batch) + " = micro-batch " + std::to_string(b.micro_batch) +
         " x k = " + std::to_string(b.accumulation) + " x " + std::to_string(world) + " GPUs (training.global_batch; " +
         (b.found ? b.how : b.reason) + ")";
}

/// A training target the model cannot meet (tokens without a sequence
/// length) is an input error at `training`, found before the run.
void check_training_target(const Scenario& s, const ModelDesc& model) {
  if (!s.training) return;
  try {
    const double batch =
        s.workload->micro_batch * static_cast<double>(s.workload->accumulation) * s.cluster.world_size();
    (void)plan::estimate_training(s, model, 1.0, batch);
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
                units::format_duration_words(e.time.hours() * 3600.0).c_str(), e.time.samples, e.time.global_batch,
                e.time.convergence_factor, e.critical_batch ? ", critical-batch law" : "");
  std::string out = buf;
  if (!e.cost) {
    return out +
           "cost: no price known (a catalog instance, or cluster.cloud with price_per_gpu_hour / "
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

/// The iteration JSON with `training` and `cost` (null without a price)
/// after its fields.
std::string outcome_json(const plan::ScenarioOutcome& o) {
  nlohmann::ordered_json j = result_json(*o.iteration, &*o.memory);
  if (o.training) {
    const plan::TrainingEstimate& e = *o.training;
    j["training"] = {{"samples", e.time.samples},
                     {"global_batch", e.time.global_batch},
                     {"iterations", e.time.iterations},
                     {"hours", e.time.hours()},
                     {"convergence_factor", e.time.convergence_factor}};
    if (e.critical_batch) j["training"]["critical_batch"] = *e.critical_batch;
    j["cost"] = nullptr;
    if (e.cost) {
      j["cost"] = {{"priced_by", e.priced->name},
                   {"on_demand_usd", e.cost->on_demand},
                   {"billed_s", e.cost->billed_seconds},
                   {"usd_per_hour", e.usd_per_hour}};
      j["cost"]["spot_usd"] = e.cost->spot ? nlohmann::ordered_json(*e.cost->spot) : nlohmann::ordered_json(nullptr);
    }
  }
  return j.dump(2);
}

/// The CSV header and row with the time-to-train and cost columns at the
/// end; each is empty when unknown (no training target, no price, no spot
/// price), so the columns are the same for every scenario.
std::string outcome_csv(const plan::ScenarioOutcome& o) {
  std::string hours, on_demand, spot;
  if (const auto& e = o.training) {
    hours = fmt::format("{:.9g}", e->time.hours());
    if (e->cost) {
      on_demand = fmt::format("{:.9g}", e->cost->on_demand);
      if (e->cost->spot) spot = fmt::format("{:.9g}", *e->cost->spot);
    }
  }
  auto chomp = [](std::string t) {
    if (!t.empty() && t.back() == '\n') t.pop_back();
    return t;
  };
  return chomp(csv_header(true)) + ",time_to_train_hours,cost_on_demand_usd,cost_spot_usd\n" +
         chomp(csv_row(*o.iteration, &*o.memory)) + "," + hours + "," + on_demand + "," + spot + "\n";
}

/// The table: the breakdown, the network, the batch split, the profile
/// choice, the time-to-train and cost, the trace's path.
std::string outcome_table(const plan::ScenarioOutcome& o, const ScenarioRefs& refs, const std::string& trace) {
  const Scenario& s = o.scenario;
  const IterationResult& result = *o.iteration;
  std::string out = format_table(result, &*o.memory) + describe_network(refs.cluster) + "\n";
  if (o.split.fixed) out += batch_line(o.split, s.cluster.world_size()) + "\n";
  if (s.cluster.instance && !refs.profile_choice.empty()) out += "profile choice: " + refs.profile_choice + "\n";
  if (o.training) out += training_lines(s, *o.training, result.total);
  if (!trace.empty()) out += "\ntrace: " + trace + "\n";
  return out;
}

// The scenario, which simulate needs with a workload section.
Scenario load_scenario_with_workload(const std::string& path) {
  Scenario scenario = load_scenario(path);
  if (!scenario.workload)
    throw InputError(scenario.file.empty() ? path : scenario.file, 0, 0, "workload",
                     "simulate needs a workload section (model, micro_batch, ...)");
  return scenario;
}

po::options_description simulate_options() {
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
  return opts;
}

/// What a run of simulate was asked for.
struct Request {
  std::string path, format;
  std::optional<std::string> profile, trace;  ///< trace: given, even empty (refused then)
  bool allow_oversubscribed = false;
  ReplayOptions replay;
};

/// The scenario evaluated (evaluate_scenario with the replay) and printed.
int simulate(const Request& q) {
  const Scenario scenario = load_scenario_with_workload(q.path);
  // Model and profile, resolved as `gradwire check` does: a missing one is
  // reported at the line of the field that names it.
  const ScenarioRefs refs = resolve_scenario_references(scenario, q.path, q.profile);
  for (const auto& w : refs.warnings) std::cerr << kCmd << ": warning: " << w << "\n";
  const ModelDesc& model = *refs.model;
  const std::vector<std::string> inputs{q.path, model.path, refs.profile.path};
  plan::PointOptions options;
  options.run_oversubscribed = q.allow_oversubscribed;
  // Just before the run: the memory warning, a bad training target, the
  // progress line, the trace's path (never a device, FIFO, directory or input).
  const auto before_run = [&](const plan::ScenarioOutcome& o) {
    refuse_oversubscribed(*o.memory, q.path, true);
    check_training_target(o.scenario, model);
    const std::string label =
        std::string(kCmd) + ": simulating " + std::to_string(o.scenario.cluster.world_size()) + " GPUs";
    engine::enable_progress(label);                                 // stderr, once the run takes long
    engine::announce_simulation_memory(label, o.scenario.cluster);  // stderr, at once for a large run
    if (q.trace && *q.trace != "-") checked_output_path(*q.trace, inputs);
  };
  const auto replay = [&](const Scenario& s, const ModelDesc& m, const Profile& p) {
    return simulate_iteration(s, m, p, q.replay);
  };
  const plan::ScenarioOutcome o = plan::evaluate_scenario(scenario, {model, refs.profile}, replay, options, before_run);
  if (o.status == plan::OutcomeStatus::Invalid)  // training.global_batch cannot be split as asked
    throw InputError(scenario.file, scenario.training->global_batch_line, scenario.training->global_batch_column,
                     "training.global_batch", o.reason);
  if (!o.iteration) {  // NoFit
    refuse_oversubscribed(*o.memory, q.path, false, plan::fitting_schemes(o.scenario, {model, refs.profile}));
    return kExitNoFit;
  }
  if (q.trace == "-") {
    std::cout << chrome_trace(*o.iteration);
    return kExitOk;
  }
  if (q.trace) write_file_atomic(*q.trace, chrome_trace(*o.iteration), inputs);
  if (q.format == "json") {
    std::cout << outcome_json(o) << "\n";
  } else if (q.format == "csv") {
    std::cout << outcome_csv(o);
  } else {
    std::cout << outcome_table(o, refs, q.trace.value_or(""));
  }
  return kExitOk;
}

}  // namespace

int cmd_simulate(int argc, char** argv) {
  const po::options_description opts = simulate_options();
  po::options_description hidden;
  hidden.add_options()("scenario", po::value<std::string>());
  po::positional_options_description pos;
  pos.add("scenario", 1);
  std::ostringstream usage;
  usage << "\nusage: gradwire simulate SCENARIO [options]\n" << opts;
  const CommandLine parsed = parse_command(
      argc, argv, bad_option_usage(kCmd, usage.str()), opts, hidden, pos,
      "usage: gradwire simulate SCENARIO [options]\n"
      "Predicts one data-parallel training iteration (PyTorch DDP) of the scenario.\n\n",
      "\nExample: gradwire simulate scenarios/default.yaml\n"
      "Example: gradwire simulate scenarios/gpt2-topk-lowbw.yaml --format json --trace /tmp/gpt2.trace.json\n");
  if (parsed.exit) return *parsed.exit;
  const po::variables_map& vm = parsed.vm;
  if (!vm.count("scenario")) return usage_error("a scenario file is required", opts);
  Request q;
  q.format = vm["format"].as<std::string>();
  if (q.format != "table" && q.format != "json" && q.format != "csv")
    return usage_error("--format must be table, json or csv (got \"" + q.format + "\")", opts);
  q.path = vm["scenario"].as<std::string>();
  if (vm.count("profile")) q.profile = vm["profile"].as<std::string>();
  if (vm.count("trace")) q.trace = vm["trace"].as<std::string>();
  q.allow_oversubscribed = vm.count("allow-oversubscribed-memory") > 0;
  q.replay.full_simulation = vm.count("full-simulation") > 0;
  return simulate(q);
}

}  // namespace gw::cli
