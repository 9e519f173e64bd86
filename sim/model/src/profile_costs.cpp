// DeviceCosts from a calibration profile. Kept apart from iteration_model.cpp
// so code that builds DeviceCosts by hand does not need the profile library.
#include <stdexcept>

#include "gradwire/model/iteration_model.hpp"
#include "gradwire/model/profile.hpp"

namespace gw {

std::string compute_precision_for(Precision gradient_precision, const Profile& profile) {
  switch (gradient_precision) {
    case Precision::BF16: return "bf16";
    case Precision::FP16: return "fp16";
    case Precision::FP32: break;
  }
  const auto tf32 = profile.gemm_flops.find("tf32");
  return tf32 != profile.gemm_flops.end() && tf32->second > 0 ? "tf32" : "fp32";
}

DeviceCosts device_costs(const Profile& profile, Precision gradient_precision) {
  DeviceCosts c;
  c.compute_precision = compute_precision_for(gradient_precision, profile);
  const auto it = profile.gemm_flops.find(c.compute_precision);
  if (it == profile.gemm_flops.end() || !(it->second > 0))
    throw std::invalid_argument("profile '" + profile.name + "' has no " + c.compute_precision +
                                " GEMM rate (gemm_flops." + c.compute_precision + ")");
  c.flops = it->second;
  c.copy_bandwidth = profile.copy_bandwidth;
  const Profile* p = &profile;
  c.codec_time = [p](const std::string& codec, bool encode, double elements) {
    return p->codec_time(codec, encode, elements);
  };
  return c;
}

}  // namespace gw
