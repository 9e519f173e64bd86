// DeviceCosts from a calibration profile. Kept apart from iteration_model.cpp
// so code that builds DeviceCosts by hand does not need the profile library.
#include <stdexcept>

#include "gradwire/model/iteration_model.hpp"
#include "gradwire/model/profile.hpp"

namespace gw {

std::string compute_precision_for(Precision gradient_precision, const Profile& profile) {
  switch (gradient_precision) {
    case Precision::BF16:
      return "bf16";
    case Precision::FP16:
      return "fp16";
    case Precision::FP32:
      break;
  }
  const auto tf32 = profile.gemm_flops.find("tf32");
  return tf32 != profile.gemm_flops.end() && tf32->second > 0 ? "tf32" : "fp32";
}

std::string profile_gemm_rates(const Profile& profile) {
  std::string s;
  for (const auto& [precision, rate] : profile.gemm_flops)
    if (rate > 0) s += (s.empty() ? "" : ", ") + precision;
  return s;
}

DeviceCosts device_costs(const Profile& profile, Precision gradient_precision, const std::string& compute_precision) {
  DeviceCosts c;
  c.compute_precision =
      compute_precision.empty() ? compute_precision_for(gradient_precision, profile) : compute_precision;
  const std::string rate = gemm_rate_of(c.compute_precision);
  const auto it = profile.gemm_flops.find(rate);
  if (it == profile.gemm_flops.end() || !(it->second > 0))
    throw std::invalid_argument("profile '" + profile.name + "' has no " + rate + " GEMM rate (gemm_flops." + rate +
                                "); it has " + profile_gemm_rates(profile));
  c.flops = it->second;
  const auto points = profile.gemm_points.find(rate);
  if (points != profile.gemm_points.end() && !points->second.empty())
    c.flops_spread = points->second.back().spread;  // sorted by size: the compute-bound GEMM
  c.copy_bandwidth = profile.copy_bandwidth;
  const auto gradient_rate = profile.gemm_flops.find(to_string(gradient_precision));
  if (gradient_rate != profile.gemm_flops.end()) c.gradient_gemm_flops = gradient_rate->second;
  c.interference = profile.interference;
  c.fitted = fitted_constants();
  c.cluster_collectives = measured_collectives(profile);
  const Profile* p = &profile;
  c.codec_time = [p](const std::string& codec, bool encode, double elements) {
    return p->codec_time(codec, encode, elements);
  };
  return c;
}

}  // namespace gw
