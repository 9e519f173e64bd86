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

#include <optional>
#include <string>
#include <vector>

#include "gradwire/model/scenario.hpp"
#include "gradwire/model/stragglers.hpp"
#include "gradwire/validate/case_header.hpp"

namespace gw::validate {

/// A case: its header (case_header.hpp: file, name, devset, source,
/// confidence, gap) and the figure.
struct IterationCase : CaseHeader {
  std::string kind;                  ///< ddp, compression or accumulation (which target applies)
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
};

/// Issue 15's targets: DDP cases median |error| <= 10%, worst <= 20%;
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

struct IterationSummary {
  int ddp_scored = 0;
  std::optional<double> ddp_median, ddp_worst;  ///< |error| over the scored DDP cases
  int speedup_scored = 0, speedup_sign_ok = 0, speedup_within = 0;
  int unscored = 0;
};
IterationSummary summarise(const std::vector<IterationCaseResult>& results);

/// The model's residuals for the band (docs/model.md, "The band"): over the
/// scored DDP cases, the iteration-time error (iteration_time: error; the
/// other quantities go as 1 / T: 1 / (1 + error) - 1), its 10% and 90%
/// quantiles (linear between order statistics).
ModelResiduals iteration_residuals(const std::vector<IterationCaseResult>& results);
/// validation/residuals.yaml: model_residuals_yaml(iteration_residuals(results)).
std::string render_iterations_residuals(const std::vector<IterationCaseResult>& results);

std::string render_iterations_markdown(const std::vector<IterationCaseResult>& results);
std::string render_iterations_summary(const std::vector<IterationCaseResult>& results);
/// As JSON: validation_json.hpp.

}  // namespace gw::validate
