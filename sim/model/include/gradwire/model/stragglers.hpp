// Stragglers and the band on a prediction (docs/model.md, "Stragglers" and
// "The band"). Plain C++, no SimGrid.
//
// Stragglers: each rank's compute of one micro-step is C (1 + cv Z), Z a
// standard normal, independent across ranks and micro-steps (cv =
// workload.compute_jitter). A rank reaches bucket b of the synchronizing
// micro-step after (k-1) C + F + R_b (R_b: the backward up to the bucket's last
// gradient), with standard deviation
//   sigma_b = cv sqrt((k-1) C^2 + (F + R_b)^2)
// (the k-1 micro-steps under no_sync average: the relative spread of their sum
// is cv / sqrt(k-1)). The collective of bucket b starts when the slowest of
// the N ranks is ready, expected
//   D_b = sigma_b mu_N,   mu_N = E[max of N standard normals]
//       = integral x N phi(x) Phi(x)^(N-1) dx
// (Royston 1982, "Expected normal order statistics (exact and approximate)",
// Applied Statistics 31(2):161-165; exact: mu_2 = 1/sqrt(pi), mu_3 =
// 3/(2 sqrt(pi))). The last bucket's delay D = cv C sqrt(k) mu_N is the
// straggler wait of the iteration. Quantile q of the slowest rank:
// z = Phi^-1(q^(1/N)) (P(max <= z) = Phi(z)^N).
#pragma once

#include <string>
#include <vector>

namespace gw {

/// Standard normal quantile Phi^-1(p), 0 < p < 1 (bisection on erfc, 1e-12).
double normal_quantile(double p);
/// E[max of n i.i.d. standard normals] (Simpson's rule on [-12, 12], 1e-9);
/// 0 for n <= 1.
double expected_max_normal(int n);
/// Quantile q of the max of n i.i.d. standard normals: Phi^-1(q^(1/n)).
double max_normal_quantile(int n, double q);

/// Per-bucket expected straggler delays D_b (above): `ready_compute[b]` is
/// F + R_b of bucket b (seconds, without copies or interference), `step` is
/// C = F + B of one micro-step. All zero when cv or n <= 1 gives none.
std::vector<double> straggler_delays(double cv, int ranks, int accumulation, double step,
                                     const std::vector<double>& ready_compute);

/// Quantiles of the band (docs/model.md, "The band"): 10% and 90%.
inline constexpr double kBandLowQuantile = 0.10;
inline constexpr double kBandHighQuantile = 0.90;

/// The model's residuals on the validation cases (validation/residuals.yaml,
/// written by `gradwire validate iterations --format residuals`): the
/// split-conformal 10-90% band of the iteration-time error predicted /
/// measured - 1 of every scored case out of sample (leave-one-case-out).
struct ModelResiduals {
  double low = 0;    ///< the band's low end (time error)
  double high = 0;   ///< its high end
  int cases = 0;     ///< scored cases they come from
  std::string path;  ///< the file read (empty: none)
};
/// Loads data_dir()/validation/residuals.yaml (or `path`). A missing or
/// malformed file throws gw::InputError naming it.
ModelResiduals load_model_residuals(const std::string& path = "");
/// load_model_residuals() of the bundled file, read once per process.
const ModelResiduals& bundled_model_residuals();
/// The YAML text load_model_residuals reads back.
std::string model_residuals_yaml(const ModelResiduals& r);

/// What the band is made of, each a (below, above) distance in seconds from
/// the prediction; combined root-sum-square (independent sources).
struct BandTerms {
  double spread_low = 0, spread_high = 0;      ///< (a) the profile's measured spread
  double jitter_low = 0, jitter_high = 0;      ///< (b) the slowest rank's 10-90% range
  double residual_low = 0, residual_high = 0;  ///< (c) the validation residuals
  double interference_high = 0;  ///< (d) unmeasured interference: overlapped compute x the published upper end
};
/// (a): compute x s / 2 each side, s the relative spread of the compute rate.
/// (b): sigma (mu_N - z_0.1) below, sigma (z_0.9 - mu_N) above, sigma = cv C sqrt(k).
/// (c): T - T / (1 + max(high, 0)) below, T / (1 + min(low, 0)) - T above.
BandTerms band_terms(double total, double compute, double spread, double cv, int ranks, int accumulation, double step,
                     const ModelResiduals& residuals);
/// Low and high of the band around `total` from its terms.
void band_bounds(double total, const BandTerms& terms, double& low, double& high);

}  // namespace gw
