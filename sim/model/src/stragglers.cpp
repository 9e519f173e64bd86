#include "gradwire/model/stragglers.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>

#include "gradwire/core/yaml_reader.hpp"
#include "gradwire/model/data_dir.hpp"

namespace gw {

inline constexpr const char* kResidualsSchema = "gradwire-residuals/1";

double normal_quantile(double p) {
  // Phi(x) = erfc(-x / sqrt 2) / 2 is increasing: bisect on [-40, 40].
  double lo = -40, hi = 40;
  for (int i = 0; i < 200 && hi - lo > 1e-13; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (0.5 * std::erfc(-mid / std::numbers::sqrt2) < p) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return 0.5 * (lo + hi);
}

double expected_max_normal(int n) {
  if (n <= 1) return 0;
  // E[max] = integral x n phi(x) Phi(x)^(n-1) dx; the integrand is below 1e-30
  // outside [-12, 12] for any n a cluster has. Composite Simpson, h = 1e-3.
  constexpr double a = -12, b = 12;
  constexpr int steps = 24000;
  const double h = (b - a) / steps;
  const auto f = [n](double x) {
    const double phi = std::exp(-0.5 * x * x) / std::sqrt(2 * std::numbers::pi);
    const double cdf = 0.5 * std::erfc(-x / std::numbers::sqrt2);
    return x * n * phi * std::pow(cdf, n - 1);
  };
  double sum = f(a) + f(b);
  for (int i = 1; i < steps; ++i) sum += (i % 2 ? 4 : 2) * f(a + i * h);
  return sum * h / 3;
}

double max_normal_quantile(int n, double q) { return normal_quantile(std::pow(q, 1.0 / std::max(1, n))); }

std::vector<double> straggler_delays(double cv, int ranks, int accumulation, double step,
                                     const std::vector<double>& ready_compute) {
  std::vector<double> d(ready_compute.size(), 0.0);
  if (!(cv > 0) || ranks <= 1) return d;
  const double mu = expected_max_normal(ranks);
  const double folded = (accumulation - 1) * step * step;
  for (std::size_t b = 0; b < d.size(); ++b) d[b] = cv * mu * std::sqrt(folded + ready_compute[b] * ready_compute[b]);
  return d;
}

ModelResiduals load_model_residuals(const std::string& path) {
  ModelResiduals r;
  r.path = path.empty() ? data_dir() + "/validation/residuals.yaml" : path;
  const yaml::Document doc = yaml::load_file(r.path);
  const yaml::Node root = doc.root();
  root.allow_keys({"schema", "source", "quantity", "cases", "low", "high"});
  const yaml::Node schema = root.required("schema");
  if (schema.as_string() != kResidualsSchema) schema.fail(std::string("expected ") + kResidualsSchema);
  r.cases = static_cast<int>(root.required("cases").as_int(0, 1'000'000));
  r.low = root.required("low").as_double(-0.99, 10);
  r.high = root.required("high").as_double(-0.99, 10);
  if (r.high < r.low) root.required("high").fail("high is below low");
  return r;
}

const ModelResiduals& bundled_model_residuals() {
  static const ModelResiduals residuals = load_model_residuals();
  return residuals;
}

std::string model_residuals_yaml(const ModelResiduals& r) {
  char numbers[96];
  std::snprintf(numbers, sizeof numbers, "cases: %d\nlow: %.6f\nhigh: %.6f\n", r.cases, r.low, r.high);
  return std::string("schema: ") + kResidualsSchema +
         "\n"
         "# Written by `gradwire validate iterations --format residuals` (scripts/validation_docs.sh);\n"
         "# read by simulate for the band (docs/model.md, \"The band\"). Do not edit.\n"
         "source: gradwire validate iterations\n"
         "quantity: iteration-time error predicted / measured - 1 of every scored case out of sample (its "
         "leave-one-case-out fit), split-conformal 10-90% band\n" +
         numbers;
}

BandTerms band_terms(double total, double compute, double spread, double cv, int ranks, int accumulation, double step,
                     const ModelResiduals& residuals) {
  BandTerms t;
  t.spread_low = t.spread_high = compute * spread / 2;
  if (cv > 0) {
    const double sigma = cv * step * std::sqrt(static_cast<double>(accumulation));
    const double mu = expected_max_normal(ranks);
    t.jitter_low = sigma * std::max(0.0, mu - max_normal_quantile(ranks, kBandLowQuantile));
    t.jitter_high = sigma * std::max(0.0, max_normal_quantile(ranks, kBandHighQuantile) - mu);
  }
  if (total > 0) {  // the band is two-sided; the floors bind only on residuals all of one sign
    t.residual_low = total - total / (1 + std::max(residuals.high, 0.0));
    t.residual_high = total / (1 + std::min(residuals.low, 0.0)) - total;
  }
  return t;
}

void band_bounds(double total, const BandTerms& t, double& low, double& high) {
  low = total - std::hypot(t.spread_low, t.jitter_low, t.residual_low);
  high = total + std::sqrt(t.spread_high * t.spread_high + t.jitter_high * t.jitter_high +
                           t.residual_high * t.residual_high + t.interference_high * t.interference_high);
}

}  // namespace gw
