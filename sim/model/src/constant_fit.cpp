#include "gradwire/model/constant_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>

namespace gw::fit {
namespace {

void check(const std::vector<Observation>& obs, std::size_t constants) {
  if (obs.empty()) throw std::invalid_argument("constant fit: no observations");
  if (constants == 0 || constants > kMaxConstants) {
    throw std::invalid_argument("constant fit: 1 to " + std::to_string(kMaxConstants) + " constants, not " +
                                std::to_string(constants));
  }
  for (const Observation& o : obs) {
    if (o.x.size() != constants) {
      throw std::invalid_argument("constant fit: observation of " + o.group + " has " + std::to_string(o.x.size()) +
                                  " terms, not " + std::to_string(constants));
    }
    bool finite = std::isfinite(o.y) && std::isfinite(o.weight);
    for (double v : o.x) finite = finite && std::isfinite(v);
    if (!finite || o.weight < 0) {
      throw std::invalid_argument("constant fit: observation of " + o.group + " has a non-finite value or weight");
    }
  }
}

// Solves the weighted normal equations restricted to the constants in
// `free` (a bit mask); nullopt when they are singular there.
std::optional<std::vector<double>> solve_subset(const std::vector<Observation>& obs, const std::vector<double>& w,
                                                std::size_t constants, unsigned free) {
  std::vector<std::size_t> idx;
  for (std::size_t j = 0; j < constants; ++j) {
    if (free & (1u << j)) idx.push_back(j);
  }
  const std::size_t m = idx.size();
  std::vector<std::vector<double>> a(m, std::vector<double>(m + 1, 0.0));  // [A | b]
  for (std::size_t i = 0; i < obs.size(); ++i) {
    for (std::size_t r = 0; r < m; ++r) {
      const double xr = obs[i].x[idx[r]] * w[i];
      for (std::size_t c = 0; c < m; ++c) a[r][c] += xr * obs[i].x[idx[c]];
      a[r][m] += xr * obs[i].y;
    }
  }
  double scale = 0;
  for (std::size_t r = 0; r < m; ++r) scale = std::max(scale, std::abs(a[r][r]));
  if (scale == 0) return std::nullopt;
  for (std::size_t col = 0; col < m; ++col) {  // Gaussian elimination, partial pivoting
    std::size_t pivot = col;
    for (std::size_t r = col + 1; r < m; ++r) {
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    }
    if (std::abs(a[pivot][col]) <= 1e-12 * scale) return std::nullopt;
    std::swap(a[col], a[pivot]);
    for (std::size_t r = 0; r < m; ++r) {
      if (r == col) continue;
      const double k = a[r][col] / a[col][col];
      for (std::size_t c = col; c <= m; ++c) a[r][c] -= k * a[col][c];
    }
  }
  std::vector<double> values(constants, 0.0);
  for (std::size_t r = 0; r < m; ++r) values[idx[r]] = a[r][m] / a[r][r];
  return values;
}

double weighted_squares(const std::vector<Observation>& obs, const std::vector<double>& w,
                        const std::vector<double>& values) {
  double sum = 0;
  for (std::size_t i = 0; i < obs.size(); ++i) {
    const double r = obs[i].y - predict(obs[i], values);
    sum += w[i] * r * r;
  }
  return sum;
}

// Exact non-negative least squares: the optimum is the unconstrained
// solution on its own support, so the best feasible subset solution is it.
std::vector<double> nonnegative_squares(const std::vector<Observation>& obs, const std::vector<double>& w,
                                        std::size_t constants) {
  std::vector<double> best(constants, 0.0);
  double best_cost = weighted_squares(obs, w, best);
  for (unsigned free = 1; free < (1u << constants); ++free) {
    const auto values = solve_subset(obs, w, constants, free);
    if (!values) continue;
    if (std::any_of(values->begin(), values->end(), [](double v) { return v < 0; })) continue;
    const double cost = weighted_squares(obs, w, *values);
    if (cost < best_cost) {
      best_cost = cost;
      best = *values;
    }
  }
  return best;
}

std::vector<double> weights_of(const std::vector<Observation>& obs) {
  std::vector<double> w;
  w.reserve(obs.size());
  for (const Observation& o : obs) w.push_back(o.weight);
  return w;
}

// Huber by iteratively reweighted least squares, from the squares solution.
std::vector<double> huber(const std::vector<Observation>& obs, std::size_t constants, double scale) {
  const std::vector<double> w0 = weights_of(obs);
  std::vector<double> values = nonnegative_squares(obs, w0, constants);
  std::vector<double> w = w0;
  for (int iteration = 0; iteration < 200; ++iteration) {
    for (std::size_t i = 0; i < obs.size(); ++i) {
      const double r = std::abs(obs[i].y - predict(obs[i], values));
      w[i] = w0[i] * (r <= scale ? 1.0 : scale / r);
    }
    const std::vector<double> next = nonnegative_squares(obs, w, constants);
    double change = 0;
    for (std::size_t j = 0; j < constants; ++j) {
      const double size = std::max(std::abs(next[j]), std::abs(values[j]));
      if (size > 0) change = std::max(change, std::abs(next[j] - values[j]) / size);
    }
    values = next;
    if (change < 1e-12) break;
  }
  return values;
}

}  // namespace

double predict(const Observation& o, const std::vector<double>& values) {
  double sum = 0;
  for (std::size_t j = 0; j < o.x.size() && j < values.size(); ++j) sum += o.x[j] * values[j];
  return sum;
}

ConstantFit fit_constants(const std::vector<Observation>& obs, std::size_t constants, const FitOptions& options) {
  check(obs, constants);
  if (options.loss == Loss::huber && !(options.huber_scale > 0)) {
    throw std::invalid_argument("constant fit: the Huber scale must be > 0");
  }
  ConstantFit fit;
  fit.values = options.loss == Loss::huber ? huber(obs, constants, options.huber_scale)
                                           : nonnegative_squares(obs, weights_of(obs), constants);
  double total_weight = 0;
  for (const Observation& o : obs) total_weight += o.weight;
  const double squares = weighted_squares(obs, weights_of(obs), fit.values);
  fit.rms = total_weight > 0 ? std::sqrt(squares / total_weight) : 0.0;
  fit.observations = obs.size();
  return fit;
}

std::vector<std::pair<std::string, ConstantFit>> leave_one_group_out(const std::vector<Observation>& obs,
                                                                     std::size_t constants, const FitOptions& options) {
  check(obs, constants);
  std::vector<std::string> groups;
  for (const Observation& o : obs) {
    if (std::find(groups.begin(), groups.end(), o.group) == groups.end()) groups.push_back(o.group);
  }
  if (groups.size() < 2) throw std::invalid_argument("constant fit: leaving a case out needs two cases or more");
  std::vector<std::pair<std::string, ConstantFit>> out;
  for (const std::string& g : groups) {
    std::vector<Observation> rest;
    for (const Observation& o : obs) {
      if (o.group != g) rest.push_back(o);
    }
    out.emplace_back(g, fit_constants(rest, constants, options));
  }
  return out;
}

}  // namespace gw::fit
