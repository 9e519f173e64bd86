// Validation of whole training iterations against published DDP, compression
// and accumulation measurements (validation/iterations/*.yaml).
//
// A case is one published figure: the scenario as published (a cluster of
// validation/clusters/ plus the workload, with the bundled model and profile
// closest to what the source ran), optionally a baseline scenario, and the
// quantity the source reports, computed from gradwire's predicted iteration
// time T (samples per GPU per iteration b = micro_batch x accumulation, W GPUs):
//
//   iteration_time      T / accumulation    (seconds per micro-batch step)
//   per_gpu_throughput  b / T
//   scaling_efficiency  (b / T) / (b_base / T_base)
//   speedup             (W b / T) / (W_base b_base / T_base)
//
//   error = predicted / published - 1
//
// Nothing is fitted per case. A case the model cannot reproduce stays, with
// its error and the mechanism it lacks (`gap`); one whose setup is too
// incomplete to simulate honestly is shown, with its published figure when
// there is one, and not scored (`unscored` says why).
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gradwire/model/iteration_model.hpp"
#include "gradwire/model/scenario.hpp"
#include "gradwire/model/stragglers.hpp"
#include "gradwire/validate/case_header.hpp"

namespace gw::validate {

/// A case: its header (case_header.hpp: file, name, devset, source,
/// confidence, gap) and the figure.
struct IterationCase : CaseHeader {
  std::string kind;                  ///< ddp, sharded, compression or accumulation (which target applies)
  std::string quantity;              ///< iteration_time, per_gpu_throughput, scaling_efficiency, speedup
  std::string setup;                 ///< the source's setup, quoted or summarised
  std::string assumed;               ///< what the source does not state and the case assumes ("" if nothing)
  std::string unscored;              ///< why the case is not scored ("" when it is)
  std::optional<double> published;   ///< the published figure (s, samples/s or a ratio), if any
  Scenario scenario;                 ///< cluster + workload simulated
  std::optional<Scenario> baseline;  ///< for scaling_efficiency and speedup
};

/// Loads a case strictly (unknown keys, bad values: gw::InputError at the field).
IterationCase load_iteration_case(const std::string& path);
/// Every *.yaml case in `dir`, in file-name order (case_files: gw::InputError
/// when `dir` is no folder of cases).
std::vector<IterationCase> load_iteration_cases(const std::string& dir);

struct IterationCaseResult {
  IterationCase c;
  double time = 0;                      ///< predicted iteration time of the scenario, s
  std::optional<double> baseline_time;  ///< of the baseline, s
  double predicted = 0;                 ///< the case's quantity from the prediction
  std::optional<double> error;          ///< predicted / published - 1 (scored cases)
  std::optional<bool> same_sign;        ///< speedups: both above 1 or both below
  /// Out of sample (iteration_fit.hpp): the error with the constants fitted
  /// without this case, as `error`; and whether its iteration-time error is
  /// inside the band of the other cases' out-of-sample errors.
  std::optional<double> loo_error;
  std::optional<bool> in_band;
};

/// Issue 15's targets: DDP cases median |error| <= 10%, worst <= 20% (issue
/// 33: the sharded cases the same);
/// compression and accumulation speedups with the published sign, within 25%.
constexpr double kTargetDdpMedian = 0.10;
constexpr double kTargetDdpWorst = 0.20;
constexpr double kTargetSpeedup = 0.25;

/// The quantity from predicted times (the closed forms above).
double iteration_quantity(const IterationCase& c, double time, std::optional<double> baseline_time);
/// Scores a case from its predicted time(s).
IterationCaseResult score_iteration_case(const IterationCase& c, double time, std::optional<double> baseline_time);
/// Simulates the scenario (and baseline) as `gradwire simulate` does, then scores.
IterationCaseResult run_iteration_case(const IterationCase& c);

inline constexpr std::size_t kFittedConstantCount = 3;
using ConstantValues = std::array<double, kFittedConstantCount>;
/// One scored case linearised: its result's index, its time error with the
/// constants it ran with (`error`) and with none (`reference_error`), and
/// the slopes.
struct CaseSlopes {
  std::size_t result = 0;
  double error = 0;
  ConstantValues slope{};
  double reference_error = 0;
};

struct ConstantsFit {
  FittedConstants at;                 ///< the constants the cases ran with
  FittedConstants fitted;             ///< the fit over every scored case
  FittedConstants loo_low, loo_high;  ///< the range of the leave-one-case-out fits
  double rms = 0;                     ///< rms linearised time error at `fitted`
  std::vector<CaseSlopes> cases;      ///< the scored cases, in the results' order
  ModelResiduals band;                ///< the band of all leave-one-case-out errors
  int covered = 0;                    ///< cases inside the band of the others' (out of sample)
};

/// Every case's result and, with two scored cases or more, the fit.
struct IterationValidation {
  std::vector<IterationCaseResult> results;
  std::optional<ConstantsFit> fit;
};

struct IterationSummary {
  int ddp_scored = 0;
  std::optional<double> ddp_median, ddp_worst;  ///< |error| over the scored DDP cases
  int speedup_scored = 0, speedup_sign_ok = 0, speedup_within = 0;
  int unscored = 0;
  /// Sharded cases (FSDP, ZeRO: kind sharded), against the DDP targets.
  int sharded_scored = 0;
  std::optional<double> sharded_median, sharded_worst, sharded_median_loo, sharded_worst_loo;
  /// Out of sample (loo_error; none without a fit): the DDP median and worst
  /// |error|, the speedups with the published sign and within 25%.
  std::optional<double> ddp_median_loo, ddp_worst_loo;
  int speedup_within_loo = 0;
};
IterationSummary summarise(const std::vector<IterationCaseResult>& results);

/// Runs every case (run_iteration_case; `on_case` first, e.g. to name it)
/// with the constants in effect, then fits them (iteration_fit.hpp).
IterationValidation validate_iterations(const std::vector<IterationCase>& cases,
                                        const std::function<void(const IterationCase&)>& on_case = {});
/// The model's residuals for the band (docs/model.md, "The band"): the fit's
/// split-conformal 10-90% band of the scored cases' leave-one-case-out
/// iteration-time errors; none (0 cases) without a fit.
ModelResiduals iteration_residuals(const IterationValidation& v);
/// validation/residuals.yaml: model_residuals_yaml(iteration_residuals(v)).
std::string render_iterations_residuals(const IterationValidation& v);

std::string render_iterations_markdown(const IterationValidation& v);
std::string render_iterations_summary(const IterationValidation& v);
/// `validate iterations --fit`: the fitted constants, the line to compile in,
/// and the figures of the refit.
std::string render_iterations_fit(const IterationValidation& v);
/// As JSON: validation_json.hpp.

}  // namespace gw::validate
