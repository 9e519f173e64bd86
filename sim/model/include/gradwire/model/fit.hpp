// Fitting measured cost curves (plain C++, no SimGrid, no CUDA).
//
//   auto s = gw::fit::summarize({t1, t2, t3});            // median, spread
//   gw::PiecewiseLogFit k = gw::fit::fit_piecewise_log(points, 0.02);
//   gw::AlphaBetaFit ab = gw::fit::fit_alpha_beta(points);  // t = alpha + bytes / beta
//
// Sizes span decades, so every fit and residual here is in relative error.
// See docs/profiles.md.
#pragma once

#include <string>
#include <vector>

#include "gradwire/model/profile.hpp"

namespace gw::fit {

/// Median and spread of repeated timings.
struct Summary {
  double median = 0;
  double spread = 0;  ///< (max - min) / median; 0 for one sample
  int repeats = 0;
};
/// Throws std::invalid_argument for an empty list or a non-finite / negative sample.
Summary summarize(std::vector<double> samples);

/// Sorts points by x and merges points with the same x (median of their
/// times, largest spread, summed repeats). Throws std::invalid_argument for
/// x <= 0, seconds <= 0 or a non-finite value.
std::vector<CurvePoint> normalize_points(std::vector<CurvePoint> points);

/// Non-decreasing times: the closest non-decreasing curve in log time (pool
/// adjacent violators; a pooled run takes the geometric mean of its times).
/// Sizes are kept; a curve that already does not decrease is returned as is.
std::vector<CurvePoint> monotone_times(std::vector<CurvePoint> points);

/// Piecewise fit through the (normalized) points: one knot per measured size,
/// with times made non-decreasing (monotone_times: moving more data never
/// costs less; measured noise at launch-bound sizes can say otherwise).
/// With thin_tolerance > 0, interior knots are removed greedily (the one whose
/// removal hurts least first) while every measured point stays predicted within
/// thin_tolerance relative error. max_rel_residual is computed over all points.
/// Throws std::invalid_argument for no points.
PiecewiseLogFit fit_piecewise_log(const std::vector<CurvePoint>& points, double thin_tolerance = 0);

/// Largest |fit(x) - t| / t over the points.
double max_rel_residual(const PiecewiseLogFit& fit, const std::vector<CurvePoint>& points);
double max_rel_residual(const AlphaBetaFit& fit, const std::vector<CurvePoint>& points);

/// Held-out check of the piecewise fit: each interior point is left out in
/// turn, the fit is rebuilt from the others and the left-out time predicted.
/// Returns the largest relative error (0 with fewer than 3 distinct sizes).
double held_out_max_rel_error(const std::vector<CurvePoint>& points);
/// The relative errors of that check, one per interior point, in size order.
std::vector<double> held_out_rel_errors(const std::vector<CurvePoint>& points);
/// Median of a list of values (0 for an empty list).
double median(std::vector<double> values);

/// Alpha-beta least squares minimising the sum of squared relative errors
/// ((alpha + x / beta - t) / t)^2, so that microsecond latencies and
/// second-long transfers weigh the same. alpha is clamped at 0 (then beta is
/// refitted alone). Throws std::invalid_argument with fewer than 2 distinct
/// sizes or when time does not grow with size (no positive bandwidth).
AlphaBetaFit fit_alpha_beta(const std::vector<CurvePoint>& points);

// The nccl-tests bus-bandwidth factors: gw::bus_bandwidth_factor
// (gradwire/model/collectives.hpp).

}  // namespace gw::fit
