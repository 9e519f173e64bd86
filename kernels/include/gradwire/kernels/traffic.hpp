// Minimal device-memory traffic (bytes read + written) and wire sizes of
// the elementwise codecs (cast, int8, sign, randomk), shared by the CPU and
// CUDA Codec classes so both report the same numbers.
#pragma once

#include <cstddef>

#include "gradwire/kernels/int8.hpp"
#include "gradwire/kernels/sign.hpp"

namespace gw::kernels::traffic {

struct Sizes {
  std::size_t wire = 0;
  double encode = 0, decode = 0;
};

inline Sizes cast(std::size_t n, bool ef) {
  const double d = static_cast<double>(n);
  return {2 * n, 4 * d + 2 * d + (ef ? 4 * d : 0), 2 * d + 4 * d};
}
inline Sizes int8(std::size_t n, std::size_t chunk, bool ef) {
  const double d = static_cast<double>(n), s = 4.0 * static_cast<double>(int8_scale_count(n, chunk));
  return {int8_wire_bytes(n, chunk), 4 * d + d + s + (ef ? 4 * d : 0), d + s + 4 * d};
}
inline Sizes sign(std::size_t n, std::size_t chunk, bool ef) {
  const double d = static_cast<double>(n), w = static_cast<double>(sign_wire_bytes(n, chunk));
  return {sign_wire_bytes(n, chunk), 4 * d + w + (ef ? 4 * d : 0), w + 4 * d};
}
inline Sizes majority_vote(std::size_t n, std::size_t chunk, int workers) {
  Sizes s = sign(n, chunk, false);
  s.decode = static_cast<double>(workers) * static_cast<double>(s.wire) + 4.0 * static_cast<double>(n);
  return s;
}
inline Sizes randomk(std::size_t n, std::size_t k, bool ef) {
  const double d = static_cast<double>(n), kk = static_cast<double>(k);
  return {4 * k, ef ? 4 * d + 4 * d + 4 * kk : 8 * kk, 4 * d + 4 * kk};
}

}  // namespace gw::kernels::traffic
