#include "gradwire/validate/collectives.hpp"

#include "json_sections.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "gradwire/model/closed_form.hpp"
#include "gradwire/model/collectives.hpp"
#include "gradwire/engine/engine.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/core/units.hpp"
#include "gradwire/model/fit.hpp"
#include "gradwire/model/nccl_model.hpp"
#include "gradwire/model/scenario.hpp"
#include "gradwire/core/yaml_reader.hpp"

namespace gw::validate {
namespace fs = std::filesystem;

namespace {

constexpr double kMaxBytes = 1e15;

constexpr double kUs = 1e-6;
constexpr int kRampSteps = 100;  // Gauss-Newton steps at most (a few settle it)

constexpr double kStepUs = 1e-3;  // the linearisation's step in each constant (us)

// The closed form of the point's pair at other constants.
std::function<double(const NcclRamp&)> closed_form_at(const ClusterSpec& c, CollectiveOp op,
                                                      const CollectiveChoice& pick, NcclShape shape, double bytes) {
  return [=](const NcclRamp& r) {
    return collective_time(op, pick.algorithm, pick.protocol, c, shape, bytes, r).value_or(0.0);
  };
}

// The point's time linearised at `at` (forward differences of kStepUs).
RampTerms ramp_terms_at(const PointResult& p, const RampConstants& at) {
  if (!p.time_at) return p.ramp;
  RampTerms t;
  const double here = p.time_at(ramp_from_fit_units(at));
  t.base = here;
  for (std::size_t j = 0; j < at.size(); ++j) {
    RampConstants step = at;
    step[j] += kStepUs;
    t.per_unit[j] = (p.time_at(ramp_from_fit_units(step)) - here) / kStepUs;
    t.base -= at[j] * t.per_unit[j];
  }
  return t;
}

std::optional<double> median_of(const std::vector<double>& v) {
  return v.empty() ? std::optional<double>() : std::optional<double>(fit::median(v));
}

// The published time of a scored point (busbw > 0).
double published_time(const PointResult& p, double factor) { return p.published.bytes * factor / p.published.busbw; }

// The case's errors with its time moved by (v - compiled) x per_unit: the
// leave-one-case-out columns.
void score_left_out(CaseResult& r, const RampConstants& v, const RampConstants& compiled) {
  const double factor = bus_bandwidth_factor(parse_collective_op(r.c.op), r.gpus);
  std::vector<double> small, large;
  r.loo_constants = v;
  for (auto& p : r.points) {
    if (!p.error) continue;
    double t = p.predicted_time;
    if (p.time_at)
      t += p.time_at(ramp_from_fit_units(v)) - p.time_at(ramp_from_fit_units(compiled));
    else
      for (std::size_t j = 0; j < v.size(); ++j) t += (v[j] - compiled[j]) * p.ramp.per_unit[j];
    p.loo_error = published_time(p, factor) / t - 1;
    (p.published.bytes < kLargeFrom ? small : large).push_back(std::abs(*p.loo_error));
  }
  r.loo_small = median_of(small);
  r.loo_large = median_of(large);
}

RampConstants to_constants(const std::vector<double>& v) { return {v.at(0), v.at(1), v.at(2)}; }

PublishedPoint read_point(const yaml::Node& n, double unit) {
  n.expect_seq();
  if (n.size() != 2 && n.size() != 3) n.fail("a point is [bytes, busbw] or [bytes, busbw, time in us]");
  const auto e = n.elements();
  PublishedPoint p;
  p.bytes = static_cast<double>(e[0].as_int(1, static_cast<std::int64_t>(kMaxBytes)));
  p.busbw = e[1].as_double(0, 1e5) * unit;
  if (e.size() == 3) p.time = e[2].as_double(0, 1e9) * 1e-6;
  return p;
}

// "auto", "ring", "ring / Simple": the algorithm and the protocol the case pins.
std::string algo_label(const CollectiveCase& c) {
  return c.protocol == "auto" ? c.algorithm : c.algorithm + " / " + c.protocol;
}

// The pair NCCL's rule picks at each point (the one the engine ran), and the
// closed form's terms in the ramp's constants there.
void label_pairs(CaseResult& r, const ClusterSpec& cluster, const engine::CollectiveRequest& req) {
  const NcclShape shape = collective_shape(cluster, r.gpus);
  for (auto& p : r.points) {
    const auto pick = choose_collective(req.op, req.algorithm, req.protocol, cluster, shape, p.published.bytes);
    p.pair = to_string(pick.algorithm) + "/" + to_string(pick.protocol);
    p.time_at = closed_form_at(cluster, req.op, pick, shape, p.published.bytes);
    p.ramp = ramp_terms_at(p, ramp_in_fit_units(nccl_ramp()));
  }
}

std::string percent(const std::optional<double>& x) { return x ? fmt::format("{:.1f}%", 100 * *x) : std::string("-"); }

std::string signed_percent(const std::optional<double>& x) {
  return x ? fmt::format("{:+.1f}%", 100 * *x) : std::string("(rounded to 0)");
}

std::string verdict(const CaseResult& r) {
  const bool small_ok = !r.median_small || *r.median_small <= kTargetSmall;
  const bool large_ok = !r.median_large || *r.median_large <= kTargetLarge;
  if (!r.median_small && !r.median_large) return "no scored point";
  return small_ok && large_ok ? "within target" : "outside target";
}

}  // namespace

RampConstants ramp_in_fit_units(const NcclRamp& r) { return {r.launch / kUs, r.stage / kUs, r.proxy / kUs}; }
NcclRamp ramp_from_fit_units(const RampConstants& v) { return {v[0] * kUs, v[1] * kUs, v[2] * kUs}; }
const std::array<const char*, 3>& ramp_constant_names() {
  static const std::array<const char*, 3> names{"t_launch", "t_stage", "o_proxy"};
  return names;
}
const std::array<const char*, 3>& ramp_constant_units() {
  static const std::array<const char*, 3> units{"us", "us", "us"};
  return units;
}

std::vector<fit::Observation> ramp_observations(const CaseResult& r, const RampConstants& at) {
  const double factor = bus_bandwidth_factor(parse_collective_op(r.c.op), r.gpus);
  std::vector<fit::Observation> out;
  for (const auto& p : r.points) {
    if (!p.error) continue;
    const RampTerms terms = ramp_terms_at(p, at);
    double t = terms.base;
    for (std::size_t j = 0; j < at.size(); ++j) t += at[j] * terms.per_unit[j];
    // log T(c) ~= log T(at) + (T(c) - T(at)) / T(at), T(c) = base + per_unit . c
    fit::Observation o{r.c.devset, std::log(published_time(p, factor) / t) + (t - terms.base) / t, {}, 1};
    for (double x : terms.per_unit) o.x.push_back(x / t);
    out.push_back(std::move(o));
  }
  for (auto& o : out) o.weight = 1.0 / static_cast<double>(out.size());
  return out;
}

namespace {

// Gauss-Newton on the log residuals: each step the non-negative linear fit
// of the observations linearised at the last constants, from one fixed start
// until the constants settle. `skip`: a case left out ("" none); nullopt
// when no other case has a scored point.
std::optional<fit::ConstantFit> fit_ramp_on(const std::vector<CaseResult>& results, const std::string& skip) {
  RampConstants at{1, 1, 1};
  fit::ConstantFit f;
  for (int step = 0; step < kRampSteps; ++step) {
    std::vector<fit::Observation> obs;
    for (const auto& r : results)
      if (r.c.devset != skip) {
        auto o = ramp_observations(r, at);
        obs.insert(obs.end(), o.begin(), o.end());
      }
    if (obs.empty()) return std::nullopt;
    f = fit::fit_constants(obs, at.size());
    const RampConstants next = to_constants(f.values);
    double moved = 0;
    for (std::size_t j = 0; j < at.size(); ++j) moved = std::max(moved, std::abs(next[j] - at[j]));
    at = next;
    if (moved < 1e-9) break;
  }
  return f;
}

}  // namespace

RampFit fit_ramp(std::vector<CaseResult>& results) {
  RampFit f;
  f.compiled = ramp_in_fit_units(nccl_ramp());
  const auto all = fit_ramp_on(results, "");
  if (!all) return f;
  f.fitted = to_constants(all->values);
  f.rms = all->rms;
  f.observations = all->observations;
  std::vector<double> in_small, in_large, loo_small, loo_large;
  for (auto& r : results) {
    const auto left_out = fit_ramp_on(results, r.c.devset);  // the other cases alone (the full fit if none)
    score_left_out(r, left_out ? to_constants(left_out->values) : f.fitted, f.compiled);
    for (auto [x, list] : {std::pair{r.median_small, &in_small},
                           {r.median_large, &in_large},
                           {r.loo_small, &loo_small},
                           {r.loo_large, &loo_large}})
      if (x) list->push_back(*x);
  }
  f.in_small = median_of(in_small);
  f.in_large = median_of(in_large);
  f.loo_small = median_of(loo_small);
  f.loo_large = median_of(loo_large);
  return f;
}

std::string ramp_line(const RampFit& f) {
  std::string constants;
  for (std::size_t j = 0; j < f.fitted.size(); ++j)
    constants += fmt::format("{}{} {:.3g}{} (compiled {:.3g})", j == 0 ? "" : ", ", ramp_constant_names()[j],
                             f.fitted[j], ramp_constant_units()[j], f.compiled[j]);
  return fmt::format(
      "Per-size ramp fitted on {} points: {}; rms log(published / predicted time) {:.3f}. Median over cases: in "
      "sample {} below 1 MiB, {} from 1 MiB; leave one case out {} below, {} from 1 MiB (target <= {:.0f}%).\n",
      f.observations, constants, f.rms, percent(f.in_small), percent(f.in_large), percent(f.loo_small),
      percent(f.loo_large), 100 * kTargetLooLarge);
}

CollectiveCase load_collective_case(const std::string& path) {
  const auto doc = yaml::load_file(path);
  const auto root = doc.root();
  root.allow_keys(
      case_header_keys({"cluster", "op", "algorithm", "protocol", "published_algorithm", "unit", "points"}));
  CollectiveCase c;
  static_cast<CaseHeader&>(c) = read_case_header(root, path);
  const auto cluster = root.required("cluster");
  c.cluster_file = (fs::path(path).parent_path() / cluster.as_name()).lexically_normal().string();
  const auto op = root.required("op");
  c.op = op.as_enum(collective_op_names());
  c.algorithm = root.required("algorithm").as_enum(algorithm_names());
  if (auto p = root.optional("protocol")) c.protocol = p->as_enum(protocol_names());
  if (auto a = root.optional("published_algorithm")) c.published_algorithm = a->as_name();
  const std::string unit = root.required("unit").as_enum({"GB/s", "Gbit/s"});
  const double scale = unit == "GB/s" ? 1e9 : 1e9 / 8;
  const auto points = root.required("points");
  points.expect_seq();
  if (points.size() == 0) points.fail("at least one published point is required");
  double last = 0;
  for (const auto& n : points.elements()) {
    c.points.push_back(read_point(n, scale));
    if (!(c.points.back().bytes > last)) n.fail("points must be in increasing size order");
    last = c.points.back().bytes;
  }
  return c;
}

std::vector<CollectiveCase> load_collective_cases(const std::string& dir) {
  std::vector<CollectiveCase> cases;
  for (const auto& f : case_files(dir)) cases.push_back(load_collective_case(f));
  return cases;
}

CaseResult score_case(const CollectiveCase& c, int gpus, const std::vector<double>& times) {
  CaseResult r;
  r.c = c;
  r.gpus = gpus;
  const double factor = bus_bandwidth_factor(parse_collective_op(c.op), gpus);
  std::vector<double> small, large;
  for (std::size_t i = 0; i < c.points.size(); ++i) {
    PointResult p;
    p.published = c.points[i];
    p.predicted_time = times.at(i);
    p.predicted_busbw = p.predicted_time > 0 ? p.published.bytes / p.predicted_time * factor : 0;
    if (p.published.busbw > 0) {
      p.error = p.predicted_busbw / p.published.busbw - 1;
      const double a = std::abs(*p.error);
      (p.published.bytes < kLargeFrom ? small : large).push_back(a);
      if (!r.worst || a > *r.worst) {
        r.worst = a;
        r.worst_bytes = p.published.bytes;
      }
    }
    r.points.push_back(p);
  }
  if (!small.empty()) r.median_small = fit::median(small);
  if (!large.empty()) r.median_large = fit::median(large);
  return r;
}

CaseResult run_case(const CollectiveCase& c) {
  const Scenario s = load_scenario(c.cluster_file);
  if (s.cluster.intra_node_from_profile)
    throw InputError(c.cluster_file, 0, 0, "cluster.intra_node",
                     "a validation cluster states its intra-node link (as published)");
  engine::CollectiveRequest req;
  req.op = parse_collective_op(c.op);
  req.algorithm = engine::parse_algorithm(c.algorithm);
  req.protocol = engine::parse_protocol(c.protocol);
  std::vector<double> sizes;
  for (const auto& p : c.points) sizes.push_back(p.bytes);
  CaseResult r = score_case(c, s.cluster.world_size(), engine::collective_times(s.cluster, req, sizes, c.file));
  label_pairs(r, s.cluster, req);
  return r;
}

std::string summary_line(const std::vector<CaseResult>& results) {
  int within = 0, outside = 0;
  std::vector<double> small, large;
  for (const auto& r : results) {
    const std::string v = verdict(r);
    within += v == "within target";
    outside += v == "outside target";
    for (const auto& p : r.points)
      if (p.error) (p.published.bytes < kLargeFrom ? small : large).push_back(std::abs(*p.error));
  }
  const auto median = [](const std::vector<double>& v) {
    return v.empty() ? std::optional<double>() : std::optional<double>(fit::median(v));
  };
  return fmt::format(
      "Collective cases: {}, {} within target, {} outside; median |error| {} below 1 MiB (target <= "
      "{:.0f}%), {} from 1 MiB (target <= {:.0f}%), over {} scored points.\n",
      results.size(), within, outside, percent(median(small)), 100 * kTargetSmall, percent(median(large)),
      100 * kTargetLarge, small.size() + large.size());
}

std::string render_summary(const std::vector<CaseResult>& results, const RampFit* ramp) {
  const auto loo = [&](const std::optional<double>& x) { return ramp ? fmt::format(" {:>10}", percent(x)) : ""; };
  std::string out = fmt::format("{:<5} {:<40} {:>5} {:>14} {:>14}{}{} {:>10}  {}\n", "id", "case", "GPUs",
                                "median <1MiB", "median >=1MiB", ramp ? fmt::format(" {:>10}", "LOO <1MiB") : "",
                                ramp ? fmt::format(" {:>10}", "LOO >=1MiB") : "", "worst", "verdict");
  for (const auto& r : results)
    out += fmt::format("{:<5} {:<40} {:>5} {:>14} {:>14}{}{} {:>10}  {}\n", r.c.devset, r.c.name, r.gpus,
                       percent(r.median_small), percent(r.median_large), loo(r.loo_small), loo(r.loo_large),
                       percent(r.worst), verdict(r));
  return out + "\n" + summary_line(results) + (ramp ? ramp_line(*ramp) : "");
}

namespace {

// The fitted constants beside the compiled ones, as a Markdown table.
std::string ramp_markdown(const RampFit& f) {
  std::string out = "| constant | fitted | compiled |\n|---|---|---|\n";
  for (std::size_t j = 0; j < f.fitted.size(); ++j)
    out += fmt::format("| {} | {:.3g} {} | {:.3g} {} |\n", ramp_constant_names()[j], f.fitted[j],
                       ramp_constant_units()[j], f.compiled[j], ramp_constant_units()[j]);
  return out + "\n" + ramp_line(f) + "\n";
}

}  // namespace

std::string render_markdown(const std::vector<CaseResult>& results, const RampFit* ramp) {
  std::string out = ramp ? ramp_markdown(*ramp) : "";
  out += fmt::format(
      "| id | case | GPUs | op / gradwire algorithm | published algorithm | median abs error < 1 MiB "
      "| median abs error >= 1 MiB | {}worst | verdict |\n|---|---|---|---|---|---|---|{}---|---|\n",
      ramp ? "leave one case out < 1 MiB | leave one case out >= 1 MiB | " : "", ramp ? "---|---|" : "");
  for (const auto& r : results)
    out +=
        fmt::format("| {} | {} | {} | {} / {} | {} | {} | {} | {}{} at {} | {} |\n", r.c.devset, r.c.name, r.gpus,
                    r.c.op, algo_label(r.c), r.c.published_algorithm.empty() ? "not stated" : r.c.published_algorithm,
                    percent(r.median_small), percent(r.median_large),
                    ramp ? percent(r.loo_small) + " | " + percent(r.loo_large) + " | " : "", percent(r.worst),
                    units::format_size(r.worst_bytes), verdict(r));
  for (const auto& r : results) {
    out += fmt::format("\n### {} `{}`\n\n", r.c.devset, r.c.name);
    out += fmt::format("{} GPUs, {} simulated as `{}` on `{}`; published: {} (confidence: {}).\n", r.gpus, r.c.op,
                       algo_label(r.c), shown_path(r.c.cluster_file), r.c.source, r.c.confidence);
    if (!r.c.gap.empty()) out += "\nMechanism gradwire lacks: " + r.c.gap + "\n";
    out +=
        "\n| size | published busbw (GB/s) | predicted busbw (GB/s) | predicted time (us) | error | "
        "gradwire algorithm/protocol |\n|---|---|---|---|---|---|\n";
    for (const auto& p : r.points)
      out += fmt::format("| {} | {:.2f} | {:.2f} | {:.2f} | {} | {} |\n", units::format_size(p.published.bytes),
                         p.published.busbw / 1e9, p.predicted_busbw / 1e9, p.predicted_time * 1e6,
                         signed_percent(p.error), p.pair);
  }
  return out;
}

nlohmann::ordered_json collective_case_json(const CaseResult& r) {
  nlohmann::ordered_json c{{"case", r.c.name},
                           {"devset", r.c.devset},
                           {"file", r.c.file},
                           {"source", r.c.source},
                           {"confidence", r.c.confidence},
                           {"cluster", shown_path(r.c.cluster_file)},
                           {"gpus", r.gpus},
                           {"op", r.c.op},
                           {"algorithm", r.c.algorithm},
                           {"protocol", r.c.protocol},
                           {"published_algorithm", r.c.published_algorithm},
                           {"gap", r.c.gap}};
  auto opt = [](const std::optional<double>& x) { return x ? nlohmann::ordered_json(*x) : nullptr; };
  c["median_abs_error_small"] = opt(r.median_small);
  c["median_abs_error_large"] = opt(r.median_large);
  c["worst_abs_error"] = opt(r.worst);
  c["loo_median_abs_error_small"] = opt(r.loo_small);
  c["loo_median_abs_error_large"] = opt(r.loo_large);
  c["verdict"] = verdict(r);
  c["points"] = nlohmann::ordered_json::array();
  for (const auto& p : r.points)
    c["points"].push_back({{"size_bytes", p.published.bytes},
                           {"published_busbw_bytes_per_s", p.published.busbw},
                           {"predicted_busbw_bytes_per_s", p.predicted_busbw},
                           {"predicted_time_s", p.predicted_time},
                           {"error", opt(p.error)},
                           {"loo_error", opt(p.loo_error)},
                           {"pair", p.pair}});
  return c;
}

}  // namespace gw::validate
