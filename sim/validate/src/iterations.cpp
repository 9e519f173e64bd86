#include "gradwire/validate/iterations.hpp"

#include "json_sections.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "gradwire/core/error.hpp"
#include "gradwire/core/yaml_reader.hpp"
#include "gradwire/model/fit.hpp"
#include "gradwire/model/scenario_refs.hpp"
#include "gradwire/model/scenario_yaml.hpp"
#include "gradwire/replay/replay.hpp"
#include "gradwire/validate/iteration_fit.hpp"

namespace gw::validate {
namespace fs = std::filesystem;

namespace {

bool is_ratio(const std::string& quantity) { return quantity == "scaling_efficiency" || quantity == "speedup"; }

// A setting: `cluster` (a scenario file of validation/clusters/, relative to
// the case) and `workload` (the scenario schema's workload section).
Scenario read_setting(const yaml::Node& n, const std::string& case_file) {
  n.expect_map();
  n.allow_keys({"cluster", "workload"});
  const auto cluster = n.required("cluster");
  const std::string cluster_file = (fs::path(case_file).parent_path() / cluster.as_name()).lexically_normal().string();
  if (!fs::is_regular_file(cluster_file)) cluster.fail("no cluster file " + cluster_file);
  Scenario s = load_scenario(cluster_file);
  if (s.workload) cluster.fail(cluster_file + " holds a workload; a validation cluster holds only the cluster");
  s.workload = parse_workload(n.required("workload"));
  s.file = case_file;
  return s;
}

double predicted_time(const Scenario& s) {
  const ScenarioRefs refs = resolve_scenario_references(s, s.file);
  return simulate_iteration(s, *refs.model, refs.profile).total;
}

double samples_per_gpu(const Scenario& s) {
  return static_cast<double>(s.workload->micro_batch) * s.workload->accumulation;
}

std::string opt_percent(const std::optional<double>& x, bool sign) {
  if (!x) return "-";
  return sign ? fmt::format("{:+.1f}%", 100 * *x) : fmt::format("{:.1f}%", 100 * *x);
}

std::string figure(const std::string& quantity, double x) {
  if (quantity == "iteration_time") return fmt::format("{:.3f} s", x);
  if (quantity == "per_gpu_throughput") return fmt::format("{:.3g}/s", x);
  return fmt::format("{:.3f}", x);
}

/// DDP and sharded cases score an absolute figure against the DDP targets.
bool absolute_kind(const std::string& kind) { return kind == "ddp" || kind == "sharded"; }

std::string verdict(const IterationCaseResult& r) {
  if (!r.error) return "unscored";
  if (absolute_kind(r.c.kind)) return std::abs(*r.error) <= kTargetDdpWorst ? "within 20%" : "outside 20%";
  const bool ok = r.same_sign.value_or(true) && std::abs(*r.error) <= kTargetSpeedup;
  return ok ? "sign and 25%: met" : (r.same_sign.value_or(true) ? "outside 25%" : "wrong sign");
}

}  // namespace

IterationCase load_iteration_case(const std::string& path) {
  const auto doc = yaml::load_file(path);
  const auto root = doc.root();
  root.allow_keys(
      case_header_keys({"kind", "quantity", "setup", "assumed", "published", "unscored", "scenario", "baseline"}));
  IterationCase c;
  static_cast<CaseHeader&>(c) = read_case_header(root, path);
  c.kind = root.required("kind").as_enum({"ddp", "sharded", "compression", "accumulation"});
  const auto quantity = root.required("quantity");
  c.quantity = quantity.as_enum({"iteration_time", "per_gpu_throughput", "scaling_efficiency", "speedup"});
  c.setup = root.required("setup").as_string();
  if (auto a = root.optional("assumed")) c.assumed = a->as_string();
  c.scenario = read_setting(root.required("scenario"), path);
  const auto baseline = root.optional("baseline");
  if (baseline) c.baseline = read_setting(*baseline, path);
  if (is_ratio(c.quantity) != baseline.has_value())
    quantity.fail("scaling_efficiency and speedup need a baseline; the other quantities take none");
  const auto published = root.optional("published");
  const auto unscored = root.optional("unscored");
  if (!published && !unscored) root.fail("a case gives `published` (the figure) or says why it is `unscored`");
  if (published) c.published = published->as_double(1e-9, 1e9);
  if (unscored) c.unscored = unscored->as_string();
  if (!absolute_kind(c.kind) && c.quantity != "speedup")
    quantity.fail("a compression or accumulation case compares a speedup against its baseline");
  return c;
}

std::vector<IterationCase> load_iteration_cases(const std::string& dir) {
  std::vector<IterationCase> cases;
  for (const auto& f : case_files(dir)) cases.push_back(load_iteration_case(f));
  return cases;
}

double iteration_quantity(const IterationCase& c, double time, std::optional<double> baseline_time) {
  const Scenario& s = c.scenario;
  if (c.quantity == "iteration_time") return time / s.workload->accumulation;
  const double per_gpu = samples_per_gpu(s) / time;
  if (c.quantity == "per_gpu_throughput") return per_gpu;
  const Scenario& b = c.baseline.value();
  const double base_per_gpu = samples_per_gpu(b) / baseline_time.value();
  if (c.quantity == "scaling_efficiency") return per_gpu / base_per_gpu;
  return per_gpu * s.cluster.world_size() / (base_per_gpu * b.cluster.world_size());
}

IterationCaseResult score_iteration_case(const IterationCase& c, double time, std::optional<double> baseline_time) {
  IterationCaseResult r;
  r.c = c;
  r.time = time;
  r.baseline_time = baseline_time;
  r.predicted = iteration_quantity(c, time, baseline_time);
  if (c.published && c.unscored.empty()) {
    r.error = r.predicted / *c.published - 1;
    if (c.quantity == "speedup") r.same_sign = (r.predicted > 1) == (*c.published > 1);
  }
  return r;
}

IterationCaseResult run_iteration_case(const IterationCase& c) {
  std::optional<double> base;
  if (c.baseline) base = predicted_time(*c.baseline);
  return score_iteration_case(c, predicted_time(c.scenario), base);
}

namespace {

/// A speedup with the published sign and within 25% at `error`.
bool speedup_met(const IterationCaseResult& r, double error) {
  return r.same_sign.value_or(false) && std::abs(error) <= kTargetSpeedup;
}

void set_median_worst(std::vector<double> v, std::optional<double>& median, std::optional<double>& worst) {
  if (v.empty()) return;
  median = fit::median(v);
  worst = *std::max_element(v.begin(), v.end());
}

}  // namespace

IterationSummary summarise(const std::vector<IterationCaseResult>& results) {
  IterationSummary s;
  std::vector<double> ddp, ddp_loo, sharded, sharded_loo;
  for (const auto& r : results) {
    if (!r.error) {
      ++s.unscored;
    } else if (absolute_kind(r.c.kind)) {
      const bool is_ddp = r.c.kind == "ddp";
      (is_ddp ? ddp : sharded).push_back(std::abs(*r.error));
      if (r.loo_error) (is_ddp ? ddp_loo : sharded_loo).push_back(std::abs(*r.loo_error));
    } else {
      ++s.speedup_scored;
      if (r.same_sign.value_or(false)) ++s.speedup_sign_ok;
      if (speedup_met(r, *r.error)) ++s.speedup_within;
      if (r.loo_error && speedup_met(r, *r.loo_error)) ++s.speedup_within_loo;
    }
  }
  s.ddp_scored = static_cast<int>(ddp.size());
  set_median_worst(ddp, s.ddp_median, s.ddp_worst);
  set_median_worst(ddp_loo, s.ddp_median_loo, s.ddp_worst_loo);
  s.sharded_scored = static_cast<int>(sharded.size());
  set_median_worst(sharded, s.sharded_median, s.sharded_worst);
  set_median_worst(sharded_loo, s.sharded_median_loo, s.sharded_worst_loo);
  return s;
}

IterationValidation validate_iterations(const std::vector<IterationCase>& cases,
                                        const std::function<void(const IterationCase&)>& on_case) {
  IterationValidation v;
  for (const auto& c : cases) {
    if (on_case) on_case(c);
    v.results.push_back(run_iteration_case(c));
  }
  v.fit = fit_iteration_constants(cases, v.results, fitted_constants());
  return v;
}

ModelResiduals iteration_residuals(const IterationValidation& v) { return v.fit ? v.fit->band : ModelResiduals{}; }

std::string render_iterations_residuals(const IterationValidation& v) {
  return model_residuals_yaml(iteration_residuals(v));
}

namespace {

/// "N scored, median |error| M in sample, L out of sample (target ...), worst ..."
std::string absolute_line(const char* what, int scored, const std::optional<double>& median,
                          const std::optional<double>& worst, const std::optional<double>& median_loo,
                          const std::optional<double>& worst_loo) {
  const bool loo = median_loo.has_value();
  return fmt::format("{}: {} scored, median |error| {}{} (target <= {:.0f}%), worst {}{} (target <= {:.0f}%).\n", what,
                     scored, opt_percent(median, false),
                     loo ? " in sample, " + opt_percent(median_loo, false) + " out of sample" : "",
                     100 * kTargetDdpMedian, opt_percent(worst, false),
                     loo ? " / " + opt_percent(worst_loo, false) : "", 100 * kTargetDdpWorst);
}

std::string summary_lines(const IterationSummary& s) {
  const bool loo = s.ddp_median_loo.has_value();
  return absolute_line("DDP cases", s.ddp_scored, s.ddp_median, s.ddp_worst, s.ddp_median_loo, s.ddp_worst_loo) +
         absolute_line("Sharded cases (FSDP, ZeRO)", s.sharded_scored, s.sharded_median, s.sharded_worst,
                       s.sharded_median_loo, s.sharded_worst_loo) +
         fmt::format(
             "Compression and accumulation cases: {} scored, {} with the published sign, {} with it and within "
             "{:.0f}%{}.\nUnscored cases: {}.\n",
             s.speedup_scored, s.speedup_sign_ok, s.speedup_within, 100 * kTargetSpeedup,
             loo ? fmt::format(" ({} out of sample)", s.speedup_within_loo) : "", s.unscored);
}

/// A constant as the source states it: host_per_collective in us.
std::string constant_text(std::size_t j, double v) {
  return j == 2 ? fmt::format("{:.3g} us", v * 1e6) : fmt::format("{:.4g}", v);
}

/// The fitted constants beside the compiled ones, and the band's coverage.
std::string fit_lines(const ConstantsFit& f) {
  std::string out = fmt::format(
      "Fitted constants (Huber, scale {:.0f}%, over the {} scored cases, each linearised from its runs without "
      "them and with each alone; refit: gradwire validate iterations --fit):\n",
      100 * kFitHuberScale, f.cases.size());
  const ConstantValues at = constant_values(f.at), fitted = constant_values(f.fitted), low = constant_values(f.loo_low),
                       high = constant_values(f.loo_high);
  for (std::size_t j = 0; j < kFittedConstantCount; ++j)
    out += fmt::format("  {:<20} run with {:<10} fitted {:<10} leave-one-case-out {} .. {}\n", kFittedConstantNames[j],
                       constant_text(j, at[j]), constant_text(j, fitted[j]), constant_text(j, low[j]),
                       constant_text(j, high[j]));
  const int n = f.band.cases;
  out += fmt::format(
      "Band: the 10-90% split-conformal band of the {} leave-one-case-out time errors is {:+.1f}% .. {:+.1f}%; out "
      "of sample (each case against the band of the others') it holds {} of {} cases ({:.0f}%, target >= 80%).\n",
      n, 100 * f.band.low, 100 * f.band.high, f.covered, n, n > 0 ? 100.0 * f.covered / n : 0.0);
  return out;
}

std::string all_summary_lines(const IterationValidation& v) {
  std::string out = summary_lines(summarise(v.results));
  if (v.fit) out += fit_lines(*v.fit);
  return out;
}

std::string published_text(const IterationCaseResult& r) {
  return r.c.published ? figure(r.c.quantity, *r.c.published) : std::string("-");
}

std::string band_text(const IterationCaseResult& r) { return r.in_band ? (*r.in_band ? "in" : "OUT") : "-"; }

}  // namespace

std::string render_iterations_summary(const IterationValidation& v) {
  std::string out = fmt::format("{:<5} {:<44} {:>5} {:<19} {:>10} {:>10} {:>8} {:>8} {:>4}  {}\n", "id", "case", "GPUs",
                                "quantity", "published", "predicted", "error", "LOO", "band", "verdict");
  for (const auto& r : v.results)
    out += fmt::format("{:<5} {:<44} {:>5} {:<19} {:>10} {:>10} {:>8} {:>8} {:>4}  {}\n", r.c.devset, r.c.name,
                       r.c.scenario.cluster.world_size(), r.c.quantity, published_text(r),
                       figure(r.c.quantity, r.predicted), opt_percent(r.error, true), opt_percent(r.loo_error, true),
                       band_text(r), verdict(r));
  return out + "\n" + all_summary_lines(v);
}

std::string render_iterations_fit(const IterationValidation& v) {
  if (!v.fit) return "no fit: fewer than two scored cases\n";
  return fit_lines(*v.fit) + summary_lines(summarise(v.results)) +
         "The line to compile in (sim/model/src/fitted_constants.cpp):\n  " + fitted_constants_source(v.fit->fitted) +
         "\n";
}

std::string render_iterations_markdown(const IterationValidation& v) {
  std::string out = all_summary_lines(v);
  out +=
      "\n| id | case | kind | GPUs | model | quantity | published | predicted | error | error (LOO) | band (LOO) | "
      "verdict |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : v.results)
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", r.c.devset, r.c.name,
                       r.c.kind, r.c.scenario.cluster.world_size(), r.c.scenario.workload->model, r.c.quantity,
                       published_text(r), figure(r.c.quantity, r.predicted), opt_percent(r.error, true),
                       opt_percent(r.loo_error, true), band_text(r), verdict(r));
  for (const auto& r : v.results) {
    out += fmt::format("\n#### {} `{}`\n\nSource: {} (confidence: {}). Setup: {}\n", r.c.devset, r.c.name, r.c.source,
                       r.c.confidence, r.c.setup);
    out += fmt::format("\nPredicted iteration time {:.4f} s", r.time);
    if (r.baseline_time) out += fmt::format(", baseline {:.4f} s", *r.baseline_time);
    out += ".\n";
    if (!r.c.assumed.empty()) out += "\nAssumed: " + r.c.assumed + "\n";
    if (!r.c.gap.empty()) out += "\nGap: " + r.c.gap + "\n";
    if (!r.c.unscored.empty()) out += "\nUnscored: " + r.c.unscored + "\n";
  }
  return out;
}

namespace {

nlohmann::ordered_json fit_json(const ConstantsFit& f) {
  nlohmann::ordered_json constants = nlohmann::ordered_json::array();
  const ConstantValues at = constant_values(f.at), fitted = constant_values(f.fitted), low = constant_values(f.loo_low),
                       high = constant_values(f.loo_high);
  for (std::size_t j = 0; j < kFittedConstantCount; ++j)
    constants.push_back({{"name", kFittedConstantNames[j]},
                         {"run_with", at[j]},
                         {"fitted", fitted[j]},
                         {"loo_low", low[j]},
                         {"loo_high", high[j]}});
  return {{"loss", "huber"},
          {"huber_scale", kFitHuberScale},
          {"cases", f.cases.size()},
          {"rms_time_error", f.rms},
          {"constants", constants},
          {"band", {{"low", f.band.low}, {"high", f.band.high}, {"cases", f.band.cases}, {"covered", f.covered}}}};
}

}  // namespace

nlohmann::ordered_json iterations_section_json(const IterationValidation& v) {
  auto opt = [](const auto& x) { return x ? nlohmann::ordered_json(*x) : nlohmann::ordered_json(nullptr); };
  nlohmann::ordered_json cases = nlohmann::ordered_json::array();
  for (const auto& r : v.results)
    cases.push_back({{"case", r.c.name},
                     {"devset", r.c.devset},
                     {"file", r.c.file},
                     {"source", r.c.source},
                     {"confidence", r.c.confidence},
                     {"kind", r.c.kind},
                     {"gpus", r.c.scenario.cluster.world_size()},
                     {"model", r.c.scenario.workload->model},
                     {"quantity", r.c.quantity},
                     {"published", opt(r.c.published)},
                     {"predicted", r.predicted},
                     {"time_s", r.time},
                     {"baseline_time_s", opt(r.baseline_time)},
                     {"error", opt(r.error)},
                     {"loo_error", opt(r.loo_error)},
                     {"in_band", opt(r.in_band)},
                     {"same_sign", opt(r.same_sign)},
                     {"verdict", verdict(r)},
                     {"assumed", r.c.assumed},
                     {"gap", r.c.gap},
                     {"unscored", r.c.unscored}});
  const IterationSummary s = summarise(v.results);
  nlohmann::ordered_json summary{{"ddp_scored", s.ddp_scored},
                                 {"ddp_median_abs_error", opt(s.ddp_median)},
                                 {"ddp_worst_abs_error", opt(s.ddp_worst)},
                                 {"ddp_median_abs_error_loo", opt(s.ddp_median_loo)},
                                 {"ddp_worst_abs_error_loo", opt(s.ddp_worst_loo)},
                                 {"sharded_scored", s.sharded_scored},
                                 {"sharded_median_abs_error", opt(s.sharded_median)},
                                 {"sharded_worst_abs_error", opt(s.sharded_worst)},
                                 {"sharded_median_abs_error_loo", opt(s.sharded_median_loo)},
                                 {"sharded_worst_abs_error_loo", opt(s.sharded_worst_loo)},
                                 {"speedup_scored", s.speedup_scored},
                                 {"speedup_sign_ok", s.speedup_sign_ok},
                                 {"speedup_within", s.speedup_within},
                                 {"speedup_within_loo", s.speedup_within_loo},
                                 {"unscored", s.unscored}};
  return nlohmann::ordered_json{
      {"cases", cases}, {"summary", summary}, {"fit", v.fit ? fit_json(*v.fit) : nlohmann::ordered_json(nullptr)}};
}

}  // namespace gw::validate
