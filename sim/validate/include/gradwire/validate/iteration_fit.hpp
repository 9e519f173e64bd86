// The iteration model's fitted constants (gw::FittedConstants) over the
// validation devset, the leave-one-case-out errors and the band
// (docs/validation.md, "Fitted constants and the band").
//
// Each scored case's iteration-time error e (iteration_time: predicted /
// published - 1; the quantities that go as 1 / T: 1 / (1 + error) - 1) is
// linearised in the constants: with every constant at 0 and with each
// alone at its probe value p_j (kFitProbe, near the fitted values),
//
//   e(c) ~= e(0) + sum_j s_j c_j,   s_j = (e(p_j alone) - e(0)) / p_j
//
// (four extra evaluations of each case; the mechanisms add nearly
// independently). The fit does not depend on the values compiled in, so
// that `validate iterations --fit` gives them in one run and the compiled
// values can be checked against it. The constants are fitted once over every
// scored case (each case weighs the same; Huber loss, scale 5%, so that a
// case no mechanism explains does not pull them: gw::fit::fit_constants),
// within their sourced bounds (kFitUpperBound: compute_under_nccl at most
// the 0.40 Lee et al. measured, kInterferenceRangeHigh; a constant past its
// bound is held there and the others refitted, exactly: gw::fit solves
// within the box), and again without each
// case: that case's out-of-sample error is its error at the values run,
// e(at), moved by the slopes to those constants: e(at) + s.(c_loo - at).
//
// The band: from n leave-one-case-out errors sorted, the split-conformal
// 10-90% band is [e_(k_lo), e_(k_hi)], k_lo = floor((n + 1) 0.1), k_hi =
// ceil((n + 1) 0.9): a new exchangeable case falls inside with probability
// >= 80%. Out of sample, each case is checked against the band of the other
// cases' leave-one-case-out errors. The band is made of the cases whose
// prediction carries it (takes_the_band): not the sharded cases, whose
// schedule has no band yet (docs/model.md, section 7c) and on which no
// fitted constant acts; they are fitted with the others all the same
// (slopes 0: they move no constant) and keep their out-of-sample errors.
#pragma once

#include <array>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "gradwire/model/interference.hpp"
#include "gradwire/model/iteration_model.hpp"
#include "gradwire/validate/iterations.hpp"

namespace gw::validate {

/// FittedConstants' members, in this order everywhere below.
inline constexpr std::array<const char*, kFittedConstantCount> kFittedConstantNames{"compute_under_nccl", "rank_jitter",
                                                                                    "host_per_collective"};
/// Each constant's probe value (alone, the others 0).
inline constexpr ConstantValues kFitProbe{0.1, 0.05, 20e-6};
/// Sourced upper ends: compute_under_nccl at most kInterferenceRangeHigh
/// (docs/model.md section 7); the others unbounded.
inline constexpr ConstantValues kFitUpperBound{kInterferenceRangeHigh, std::numeric_limits<double>::infinity(),
                                               std::numeric_limits<double>::infinity()};
/// Units the fit solves in (host_per_collective in microseconds), so that the
/// columns are of one magnitude.
inline constexpr ConstantValues kFitUnit{1, 1, 1e-6};
/// Huber scale of the fit: a time error beyond 5% weighs linearly.
inline constexpr double kFitHuberScale = 0.05;

ConstantValues constant_values(const FittedConstants& c);
FittedConstants fitted_constants_of(const ConstantValues& v);

/// Whether a case's errors make the band (above): every kind but `sharded`.
bool takes_the_band(const IterationCase& c);

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
