// Validation of the collectives against published nccl-tests tables.
//
// A case (validation/collectives/*.yaml) is one published table: the cluster
// as published (a scenario file), the op, the algorithm gradwire simulates,
// the published bus bandwidth per size, its source and confidence, and the
// mechanism gradwire lacks when the case needs one. Nothing is fitted per
// case: the cluster holds datasheet values, the rest is the model's.
//
//   error = predicted busbw / published busbw - 1 at each size
//
// summarised per case as the median |error| below and from 1 MiB, and the
// worst. Points the source rounds to 0.00 GB/s are shown, not scored.
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gradwire/model/constant_fit.hpp"
#include "gradwire/model/nccl_model.hpp"
#include "gradwire/validate/case_header.hpp"

namespace gw::validate {

struct PublishedPoint {
  double bytes = 0;            ///< nccl-tests size (per-rank buffer for all-reduce, total for all-gather)
  double busbw = 0;            ///< bytes/s, as published (converted from the case's unit)
  std::optional<double> time;  ///< seconds, when the source gives it
};

/// A case: its header (case_header.hpp: file, name, devset, source,
/// confidence, gap) and the table.
struct CollectiveCase : CaseHeader {
  std::string cluster_file;         ///< scenario whose cluster is simulated
  std::string op;                   ///< allreduce, allgather, ...
  std::string algorithm;            ///< what gradwire simulates (auto: NCCL's rule per size)
  std::string protocol = "auto";    ///< LL, LL128, Simple or auto (the case's optional `protocol`)
  std::string published_algorithm;  ///< what the source ran, when it says ("" if not)
  std::vector<PublishedPoint> points;
};

/// Loads a case strictly (unknown keys, bad values: gw::InputError at the field).
CollectiveCase load_collective_case(const std::string& path);
/// Every *.yaml case in `dir`, in file-name order (case_files: gw::InputError
/// when `dir` is no folder of cases).
std::vector<CollectiveCase> load_collective_cases(const std::string& dir);

/// The per-size ramp's constants (nccl_model.hpp NcclRamp) in the fit's
/// units and order: t_launch (us), t_stage (us), o_proxy (us).
using RampConstants = std::array<double, 3>;
RampConstants ramp_in_fit_units(const NcclRamp& r);
NcclRamp ramp_from_fit_units(const RampConstants& v);
/// "t_launch", "t_stage", "o_proxy" and their units ("us" each).
const std::array<const char*, 3>& ramp_constant_names();
const std::array<const char*, 3>& ramp_constant_units();

/// A point's closed-form time (the pair the engine ran) near some constants,
/// linear in them: time = base + sum_j per_unit[j] x constant j (seconds).
/// Exact in t_launch and t_stage; piecewise in o_proxy (the proxy's excess
/// over the transfer, closed_form.hpp collective_cost), hence linearised.
struct RampTerms {
  double base = 0;
  RampConstants per_unit{};
};

struct PointResult {
  PublishedPoint published;
  double predicted_time = 0;    ///< s
  double predicted_busbw = 0;   ///< bytes/s
  std::optional<double> error;  ///< predicted/published - 1; none when the source rounds to 0
  std::string pair;             ///< the algorithm/protocol simulated at this size ("nvls/Simple")
  RampTerms ramp;               ///< run_case's, at the compiled constants; zero for a score_case alone
  /// The closed form of the pair at other constants (run_case's; empty for a
  /// score_case alone, whose `ramp` is then taken as exact).
  std::function<double(const NcclRamp&)> time_at;
  std::optional<double> loo_error;  ///< error with the ramp refitted without this point's case (fit_ramp)
};

struct CaseResult {
  CollectiveCase c;
  int gpus = 0;
  std::vector<PointResult> points;
  std::optional<double> median_small;  ///< median |error| below 1 MiB
  std::optional<double> median_large;  ///< median |error| from 1 MiB
  std::optional<double> worst;         ///< largest |error|
  double worst_bytes = 0;
  /// Leave one case out (fit_ramp): the median |loo_error| below and from
  /// 1 MiB, and the constants fitted without this case.
  std::optional<double> loo_small, loo_large;
  RampConstants loo_constants{};
};

/// The ramp's constants fitted once over every scored point of the cases:
/// least squares on log(published / predicted time), each case weighing the
/// same, constants >= 0 (Gauss-Newton: a linear fit per step).
struct RampFit {
  RampConstants compiled{};  ///< nccl_ramp()
  RampConstants fitted{};
  double rms = 0;  ///< of log(published / predicted time), weighted
  std::size_t observations = 0;
  /// Medians over cases of the per-case medians: in sample (the engine's
  /// errors) and leave one case out; below / from 1 MiB.
  std::optional<double> in_small, in_large, loo_small, loo_large;
};
/// A case's observations for the fit, linearised at the constants `at`: one
/// per scored point, group its devset id, weight 1 / its scored points, and
///   y - x . c = log(published time / T(at)) - (T(c) - T(at)) / T(at)
/// (T(c) = base + per_unit . c; RampTerms), the first-order log residual.
std::vector<fit::Observation> ramp_observations(const CaseResult& r, const RampConstants& at);
/// Fits the ramp once over `results`, then per case refits without it and
/// predicts its points (engine time + the constants' change x per_unit):
/// fills each case's loo fields.
RampFit fit_ramp(std::vector<CaseResult>& results);

/// Issue 13's targets: median |error| <= 25% below 1 MiB and <= 10% from 1 MiB.
constexpr double kTargetSmall = 0.25;
constexpr double kTargetLarge = 0.10;
constexpr double kLargeFrom = 1024.0 * 1024.0;

/// Simulates the case's collective at each published size on its cluster.
CaseResult run_case(const CollectiveCase& c);
/// Scores a case from predicted times (one per published point).
CaseResult score_case(const CollectiveCase& c, int gpus, const std::vector<double>& predicted_times);

/// The report: a table per case and a summary, as Markdown (docs/validation.md);
/// with `ramp`, the fitted constants and the leave-one-case-out columns.
std::string render_markdown(const std::vector<CaseResult>& results, const RampFit* ramp = nullptr);
/// The summary alone, as aligned text (the terminal): a line a case, then
/// summary_line (and, with `ramp`, ramp_line).
std::string render_summary(const std::vector<CaseResult>& results, const RampFit* ramp = nullptr);
/// The fitted constants beside the compiled ones, and the medians over cases
/// in sample and left out (target: <= 15% from 1 MiB left out).
std::string ramp_line(const RampFit& ramp);
/// Leave-one-case-out target: median over cases from 1 MiB.
constexpr double kTargetLooLarge = 0.15;
/// One line over all cases: how many, how many within and outside target,
/// and the median |error| of every scored point below and from 1 MiB.
std::string summary_line(const std::vector<CaseResult>& results);
/// As JSON: validation_json.hpp.

}  // namespace gw::validate
