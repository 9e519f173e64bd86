// Fitting the model's unsourced constants once over the whole devset
// (plain C++, no SimGrid).
//
// The validation rules (DEVELOPERS.md, docs/validation.md): a constant that
// no source states is fitted once, by least squares over every devset case
// that exercises its mechanism, and every case is also predicted out of
// sample (the fit redone without it). The mechanisms are written so that a
// case's prediction is linear in the constants (or linearised around them):
//
//   y ~= sum_j x[j] c[j],   c >= 0
//
// e.g. a collective time T = T0 + c1 + c2 M + c3 F against a measured Tm,
// scored in relative error: y = (Tm - T0) / Tm, x = {1, M, F} / Tm, and a
// weight of 1 / (points of the case) so that every case weighs the same.
//
//   auto fit = gw::fit::fit_constants(obs, 3);                 // all cases
//   auto loo = gw::fit::leave_one_group_out(obs, 3);           // one per case
//
// Non-negative least squares is solved exactly by trying every set of free
// constants (2^n normal-equation solves; n <= kMaxConstants), which is
// simple to check and fast for the handful of constants a mechanism may have
// (at most two per mechanism). The Huber loss (robust to a case that no
// mechanism explains) is iteratively reweighted least squares.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace gw::fit {

/// One observation of a model linear in its constants: y ~= x . c, with a
/// weight; `group` is the devset case the observation belongs to.
struct Observation {
  std::string group;
  double y = 0;
  std::vector<double> x;
  double weight = 1;
};

enum class Loss { squares, huber };

struct FitOptions {
  Loss loss = Loss::squares;
  double huber_scale = 0.05;  ///< |residual| beyond which Huber weighs linearly (same unit as y)
};

struct ConstantFit {
  std::vector<double> values;    ///< one per constant, each >= 0
  double rms = 0;                ///< sqrt(sum w r^2 / sum w) at the solution (r = y - x . c)
  std::size_t observations = 0;  ///< observations the fit used
};

/// The most constants one fit may have (2^n subsets are tried).
constexpr std::size_t kMaxConstants = 8;

/// x . c
double predict(const Observation& o, const std::vector<double>& values);

/// min sum w (y - x . c)^2 over c >= 0 (Huber: iteratively reweighted).
/// A constant no observation exercises (its column all zero) comes out 0.
/// Throws std::invalid_argument for no observations, constants outside
/// 1..kMaxConstants, an x of another length, a negative or non-finite
/// weight, or a non-finite y or x.
ConstantFit fit_constants(const std::vector<Observation>& obs, std::size_t constants, const FitOptions& options = {});

/// Per distinct group, in order of first appearance: the fit without that
/// group's observations (the constants a case is predicted with out of
/// sample). Throws as fit_constants, and when only one group exists.
std::vector<std::pair<std::string, ConstantFit>> leave_one_group_out(const std::vector<Observation>& obs,
                                                                     std::size_t constants,
                                                                     const FitOptions& options = {});

}  // namespace gw::fit
