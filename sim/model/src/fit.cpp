#include "gradwire/model/fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace gw::fit {

Summary summarize(std::vector<double> samples) {
  if (samples.empty()) throw std::invalid_argument("summarize: no samples");
  for (double s : samples) {
    if (!std::isfinite(s) || s < 0) throw std::invalid_argument("summarize: a sample is negative or not finite");
  }
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  Summary out;
  out.median = n % 2 == 1 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  out.spread = out.median > 0 ? (samples.back() - samples.front()) / out.median : 0.0;
  out.repeats = static_cast<int>(n);
  return out;
}

std::vector<CurvePoint> normalize_points(std::vector<CurvePoint> points) {
  for (const auto& p : points) {
    if (!std::isfinite(p.x) || !std::isfinite(p.seconds) || !std::isfinite(p.spread) || p.x <= 0 || p.seconds <= 0 ||
        p.spread < 0) {
      throw std::invalid_argument("a curve point has a size or time that is not positive and finite");
    }
  }
  std::stable_sort(points.begin(), points.end(), [](const CurvePoint& a, const CurvePoint& b) { return a.x < b.x; });
  std::vector<CurvePoint> out;
  for (std::size_t i = 0; i < points.size();) {
    std::size_t j = i;
    std::vector<double> times;
    CurvePoint merged;
    merged.x = points[i].x;
    while (j < points.size() && points[j].x == points[i].x) {
      times.push_back(points[j].seconds);
      merged.spread = std::max(merged.spread, points[j].spread);
      merged.repeats += points[j].repeats;
      ++j;
    }
    merged.seconds = summarize(times).median;
    out.push_back(merged);
    i = j;
  }
  return out;
}

double max_rel_residual(const PiecewiseLogFit& fit, const std::vector<CurvePoint>& points) {
  double worst = 0;
  for (const auto& p : points) worst = std::max(worst, std::abs(fit.evaluate(p.x) - p.seconds) / p.seconds);
  return worst;
}

double max_rel_residual(const AlphaBetaFit& fit, const std::vector<CurvePoint>& points) {
  double worst = 0;
  for (const auto& p : points) worst = std::max(worst, std::abs(fit.evaluate(p.x) - p.seconds) / p.seconds);
  return worst;
}

std::vector<CurvePoint> monotone_times(std::vector<CurvePoint> points) {
  struct Block {
    double sum_log;
    std::size_t count;
    double mean() const { return sum_log / static_cast<double>(count); }
  };
  std::vector<Block> blocks;
  for (const auto& p : points) {
    blocks.push_back({std::log(p.seconds), 1});
    while (blocks.size() >= 2 && blocks[blocks.size() - 2].mean() > blocks.back().mean()) {
      blocks[blocks.size() - 2].sum_log += blocks.back().sum_log;
      blocks[blocks.size() - 2].count += blocks.back().count;
      blocks.pop_back();
    }
  }
  if (blocks.size() == points.size()) return points;  // already non-decreasing: unchanged, bit for bit
  std::size_t i = 0;
  for (const auto& b : blocks) {
    const double t = b.count == 1 ? points[i].seconds : std::exp(b.mean());
    for (std::size_t k = 0; k < b.count; ++k, ++i) points[i].seconds = t;
  }
  return points;
}

PiecewiseLogFit fit_piecewise_log(const std::vector<CurvePoint>& points, double thin_tolerance) {
  std::vector<CurvePoint> pts = normalize_points(points);
  if (pts.empty()) throw std::invalid_argument("fit_piecewise_log: no points");
  PiecewiseLogFit fit;
  fit.knots = monotone_times(pts);
  if (thin_tolerance > 0) {
    while (fit.knots.size() > 2) {
      double best_err = std::numeric_limits<double>::infinity();
      std::size_t best = 0;
      for (std::size_t i = 1; i + 1 < fit.knots.size(); ++i) {
        PiecewiseLogFit trial;
        trial.knots = fit.knots;
        trial.knots.erase(trial.knots.begin() + static_cast<std::ptrdiff_t>(i));
        double err = max_rel_residual(trial, pts);
        if (err < best_err) {
          best_err = err;
          best = i;
        }
      }
      if (best_err > thin_tolerance) break;
      fit.knots.erase(fit.knots.begin() + static_cast<std::ptrdiff_t>(best));
    }
  }
  fit.max_rel_residual = max_rel_residual(fit, pts);
  return fit;
}

std::vector<double> held_out_rel_errors(const std::vector<CurvePoint>& points) {
  std::vector<CurvePoint> pts = normalize_points(points);
  std::vector<double> errors;
  for (std::size_t i = 1; i + 1 < pts.size(); ++i) {
    std::vector<CurvePoint> rest = pts;
    rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(i));
    PiecewiseLogFit fit = fit_piecewise_log(rest);
    errors.push_back(std::abs(fit.evaluate(pts[i].x) - pts[i].seconds) / pts[i].seconds);
  }
  return errors;
}

double held_out_max_rel_error(const std::vector<CurvePoint>& points) {
  double worst = 0;
  for (double e : held_out_rel_errors(points)) worst = std::max(worst, e);
  return worst;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t m = values.size() / 2;
  return values.size() % 2 ? values[m] : 0.5 * (values[m - 1] + values[m]);
}

AlphaBetaFit fit_alpha_beta(const std::vector<CurvePoint>& points) {
  std::vector<CurvePoint> pts = normalize_points(points);
  if (pts.size() < 2) throw std::invalid_argument("fit_alpha_beta: needs at least 2 distinct sizes");
  // Minimise sum ((a + x g - t) / t)^2 = sum (a u + g v - 1)^2 with u = 1/t, v = x/t.
  double suu = 0, suv = 0, svv = 0, su = 0, sv = 0;
  for (const auto& p : pts) {
    const double u = 1.0 / p.seconds;
    const double v = p.x / p.seconds;
    suu += u * u;
    suv += u * v;
    svv += v * v;
    su += u;
    sv += v;
  }
  double a = 0, g = 0;
  const double det = suu * svv - suv * suv;
  if (det > 1e-12 * suu * svv) {
    a = (su * svv - sv * suv) / det;
    g = (suu * sv - suv * su) / det;
  }
  if (!(g > 0) || !std::isfinite(g)) {
    throw std::invalid_argument("fit_alpha_beta: time does not grow with size (no positive bandwidth)");
  }
  if (!(a > 0)) {
    // A negative latency is not physical: fit bandwidth alone with alpha = 0.
    a = 0;
    g = sv / svv;
  }
  if (!(g > 0) || !std::isfinite(g)) {
    throw std::invalid_argument("fit_alpha_beta: time does not grow with size (no positive bandwidth)");
  }
  AlphaBetaFit fit;
  fit.alpha = a;
  fit.beta = 1.0 / g;
  fit.max_rel_residual = max_rel_residual(fit, pts);
  return fit;
}

}  // namespace gw::fit
