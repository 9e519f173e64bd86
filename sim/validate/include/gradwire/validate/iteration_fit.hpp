// The iteration model's fitted constants (gw::FittedConstants) over the
// validation devset, the leave-one-case-out errors and the band
// (docs/validation.md, "Fitted constants and the band").
//
// Each scored case's iteration-time error e (iteration_time: predicted /
// published - 1; the quantities that go as 1 / T: 1 / (1 + error) - 1) is
// linearised in the constants around the values `at` the cases ran with:
//
//   e(c) ~= e(at) + sum_j s_j (c_j - at_j),
//   s_j = (e(at with c_j = p_j) - e(at)) / (p_j - at_j)
//
// one extra evaluation of the case per constant, the probe p_j 0 when at_j
// > 0 (the slope of switching the mechanism off), else kFitProbe[j]. The
// constants are fitted once over every scored case (each case weighs the
// same; Huber loss, scale 5%, so that a case no mechanism explains does not
// pull them: gw::fit::fit_constants), and again without each case
// (gw::fit::leave_one_group_out): that case's out-of-sample error is its
// linearised error at those constants.
//
// The band: from n leave-one-case-out errors sorted, the split-conformal
// 10-90% band is [e_(k_lo), e_(k_hi)], k_lo = floor((n + 1) 0.1), k_hi =
// ceil((n + 1) 0.9): a new exchangeable case falls inside with probability
// >= 80%. Out of sample, each case is checked against the band of the other
// cases' leave-one-case-out errors.
#pragma once

#include <array>
#include <optional>
#include <utility>
#include <vector>

#include "gradwire/model/iteration_model.hpp"
#include "gradwire/validate/iterations.hpp"

namespace gw::validate {

/// FittedConstants' members, in this order everywhere below.
inline constexpr std::array<const char*, kFittedConstantCount> kFittedConstantNames{
    "compute_under_nccl", "rank_jitter", "host_per_collective"};
/// Probe value of a constant that is 0 where the cases ran.
inline constexpr ConstantValues kFitProbe{0.1, 0.05, 20e-6};
/// Units the fit solves in (host_per_collective in microseconds), so that the
/// columns are of one magnitude.
inline constexpr ConstantValues kFitUnit{1, 1, 1e-6};
/// Huber scale of the fit: a time error beyond 5% weighs linearly.
inline constexpr double kFitHuberScale = 0.05;

ConstantValues constant_values(const FittedConstants& c);
FittedConstants fitted_constants_of(const ConstantValues& v);

/// Iteration-time error of a scored result (above); nullopt when unscored.
std::optional<double> time_error(const IterationCaseResult& r);

/// The split-conformal band (above) of `errors`; {0, 0} when empty.
std::pair<double, double> conformal_band(std::vector<double> errors);

/// Runs the scored cases again, once per constant at its probe (under
/// ScopedFittedConstants), fits, and fills each scored result's loo_error
/// and in_band. `results` are the cases' results at `at` (the constants in
/// effect). Needs two scored cases or more (else nullopt, results unchanged).
std::optional<ConstantsFit> fit_iteration_constants(const std::vector<IterationCase>& cases,
                                                    std::vector<IterationCaseResult>& results,
                                                    const FittedConstants& at);
/// The fit from the slopes alone (no simulation): what fit_iteration_constants
/// does after its runs; fills results' loo_error and in_band.
ConstantsFit fit_from_slopes(const FittedConstants& at, std::vector<CaseSlopes> slopes,
                             std::vector<IterationCaseResult>& results);

/// The line of C++ that compiles `c` in (iteration_model.hpp's kFittedConstants).
std::string fitted_constants_source(const FittedConstants& c);

}  // namespace gw::validate
