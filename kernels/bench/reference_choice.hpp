// Which same-traffic reference (traffic_reference.hpp) a kernel is compared
// with in gw_kernels_bench. Host-only, so the CPU tests check the choice.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>

namespace gw::kernels::bench {

struct ReferenceChoice {
  std::string name;  ///< "write" or "expandS"
  int shift = -1;    ///< S of expandS; -1 for the write-only reference
};

/// A kernel that reads `read` bytes and writes `write` is compared with
/// expand by 2^S, S = round(log2(write / read)) clamped to [0, max_shift];
/// with the write-only reference when it reads nothing.
inline ReferenceChoice same_traffic_reference(double read, double write, int max_shift) {
  if (!(read > 0) || !(write > 0)) return {"write", -1};
  const double s = std::round(std::log2(write / read));
  const int shift = static_cast<int>(std::clamp(s, 0.0, static_cast<double>(max_shift)));
  return {"expand" + std::to_string(shift), shift};
}

}  // namespace gw::kernels::bench
