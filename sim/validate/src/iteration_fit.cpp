#include "gradwire/validate/iteration_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "gradwire/model/constant_fit.hpp"

namespace gw::validate {

ConstantValues constant_values(const FittedConstants& c) {
  return {c.compute_under_nccl, c.rank_jitter, c.host_per_collective};
}

FittedConstants fitted_constants_of(const ConstantValues& v) {
  FittedConstants c;
  c.compute_under_nccl = v[0];
  c.rank_jitter = v[1];
  c.host_per_collective = v[2];
  return c;
}

namespace {

/// An error between the case's own quantity and the iteration time (either
/// way: 1 / (1 + e) - 1 is its own inverse), for the quantities that go as 1 / T.
double quantity_error(const IterationCaseResult& r, double error) {
  return r.c.quantity == "iteration_time" ? error : 1 / (1 + error) - 1;
}

}  // namespace

bool takes_the_band(const IterationCase& c) { return c.kind != "sharded"; }

std::optional<double> time_error(const IterationCaseResult& r) {
  if (!r.error) return std::nullopt;
  return quantity_error(r, *r.error);
}

std::pair<double, double> conformal_band(std::vector<double> errors) {
  if (errors.empty()) return {0.0, 0.0};
  std::sort(errors.begin(), errors.end());
  const auto n = static_cast<double>(errors.size());
  const auto rank = [&](double r) { return static_cast<std::size_t>(std::clamp(r, 1.0, n)) - 1; };
  const double alpha = kBandLowQuantile + (1 - kBandHighQuantile);
  return {errors[rank(std::floor((n + 1) * alpha / 2))], errors[rank(std::ceil((n + 1) * (1 - alpha / 2)))]};
}

namespace {

/// Linearised time error of case `s` at constants `c`.
double linear_error(const CaseSlopes& s, const ConstantValues& at, const ConstantValues& c) {
  double e = s.error;
  for (std::size_t j = 0; j < kFittedConstantCount; ++j) e += s.slope[j] * (c[j] - at[j]);
  return e;
}

/// Values in the fit's units (kFitUnit) back to the constants'.
ConstantValues from_fit_units(const std::vector<double>& v) {
  ConstantValues c{};
  for (std::size_t j = 0; j < kFittedConstantCount; ++j) c[j] = v.at(j) * kFitUnit[j];
  return c;
}

/// Observations y = -e(0), x = s (in the fit's units): y - x.c = -e(c).
std::vector<fit::Observation> observations(const std::vector<CaseSlopes>& slopes) {
  std::vector<fit::Observation> obs;
  for (const auto& s : slopes) {
    fit::Observation o;
    o.group = std::to_string(s.result);
    o.y = -s.reference_error;
    for (std::size_t j = 0; j < kFittedConstantCount; ++j) o.x.push_back(s.slope[j] * kFitUnit[j]);
    obs.push_back(std::move(o));
  }
  return obs;
}

/// The fit's options: Huber, the constants held within kFitUpperBound.
fit::FitOptions fit_options() {
  fit::FitOptions options{fit::Loss::huber, kFitHuberScale, {}};
  for (std::size_t j = 0; j < kFittedConstantCount; ++j) options.upper.push_back(kFitUpperBound[j] / kFitUnit[j]);
  return options;
}

/// Out of sample: each case against the band of the others' errors. Only
/// the cases whose schedule takes the band (takes_the_band) make it.
void mark_coverage(ConstantsFit& f, std::vector<IterationCaseResult>& results, const std::vector<double>& all_loo) {
  std::vector<double> loo;
  std::vector<std::size_t> which;  // index into f.cases
  for (std::size_t i = 0; i < all_loo.size(); ++i)
    if (takes_the_band(results.at(f.cases[i].result).c)) {
      loo.push_back(all_loo[i]);
      which.push_back(i);
    }
  f.covered = 0;
  for (std::size_t i = 0; i < loo.size(); ++i) {
    std::vector<double> others = loo;
    others.erase(others.begin() + static_cast<std::ptrdiff_t>(i));
    const auto [low, high] = conformal_band(others);
    const bool inside = low <= loo[i] && loo[i] <= high;
    results.at(f.cases[which[i]].result).in_band = inside;
    f.covered += inside ? 1 : 0;
  }
  const auto [low, high] = conformal_band(loo);
  f.band.low = low;
  f.band.high = high;
  f.band.cases = static_cast<int>(loo.size());
}

}  // namespace

ConstantsFit fit_from_slopes(const FittedConstants& at, std::vector<CaseSlopes> slopes,
                             std::vector<IterationCaseResult>& results) {
  ConstantsFit f;
  f.at = at;
  f.cases = std::move(slopes);
  const ConstantValues a = constant_values(at);
  const auto obs = observations(f.cases);
  const fit::FitOptions options = fit_options();
  const fit::ConstantFit all = fit::fit_constants(obs, kFittedConstantCount, options);
  f.rms = all.rms;
  ConstantValues low = from_fit_units(all.values), high = low;
  f.fitted = fitted_constants_of(low);
  const auto left_out = fit::leave_one_group_out(obs, kFittedConstantCount, options);  // a case per observation
  std::vector<double> loo;
  for (std::size_t i = 0; i < obs.size(); ++i) {
    const ConstantValues c = from_fit_units(left_out.at(i).second.values);
    for (std::size_t j = 0; j < kFittedConstantCount; ++j) {
      low[j] = std::min(low[j], c[j]);
      high[j] = std::max(high[j], c[j]);
    }
    loo.push_back(linear_error(f.cases[i], a, c));
    IterationCaseResult& r = results.at(f.cases[i].result);
    r.loo_error = quantity_error(r, loo.back());
  }
  f.loo_low = fitted_constants_of(low);
  f.loo_high = fitted_constants_of(high);
  mark_coverage(f, results, loo);
  return f;
}

std::optional<ConstantsFit> fit_iteration_constants(const std::vector<IterationCase>& cases,
                                                    std::vector<IterationCaseResult>& results,
                                                    const FittedConstants& at) {
  std::vector<CaseSlopes> slopes;
  for (std::size_t i = 0; i < results.size(); ++i)
    if (const auto e = time_error(results[i])) slopes.push_back({i, *e, {}, 0.0});
  if (slopes.size() < 2) return std::nullopt;
  const auto error_with = [&](const ConstantValues& c, const CaseSlopes& s) {
    const ScopedFittedConstants scoped(fitted_constants_of(c));
    return time_error(run_iteration_case(cases.at(s.result))).value();
  };
  for (auto& s : slopes) s.reference_error = error_with({}, s);
  for (std::size_t j = 0; j < kFittedConstantCount; ++j) {
    ConstantValues probe{};
    probe[j] = kFitProbe[j];
    for (auto& s : slopes) s.slope[j] = (error_with(probe, s) - s.reference_error) / kFitProbe[j];
  }
  return fit_from_slopes(at, std::move(slopes), results);
}

std::string fitted_constants_source(const FittedConstants& c) {
  return fmt::format("const FittedConstants kFittedConstants{{{:.4g}, {:.4g}, {:.4g}}};", c.compute_under_nccl,
                     c.rank_jitter, c.host_per_collective);
}

}  // namespace gw::validate
