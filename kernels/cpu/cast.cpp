// fp16 / bf16 casts on the CPU: bit-level round-to-nearest-even conversions
// matching __float2half_rn / __float2bfloat16_rn.
#include "gradwire/kernels/cast.hpp"

#include <bit>
#include <cstring>

namespace gw::kernels {

std::uint16_t float_to_half_bits(float x) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  const auto sign = static_cast<std::uint16_t>((u >> 16) & 0x8000U);
  const std::uint32_t a = u & 0x7fffffffU;
  if (a > 0x7f800000U) return static_cast<std::uint16_t>(sign | 0x7fffU);   // NaN
  if (a >= 0x477ff000U) return static_cast<std::uint16_t>(sign | 0x7c00U);  // >= 65520 -> inf
  if (a >= 0x38800000U) {                                                   // normal half: |x| >= 2^-14
    const std::uint32_t exp = (a >> 23) - 112U;
    std::uint32_t h = (exp << 10) | ((a >> 13) & 0x3ffU);
    const std::uint32_t rem = a & 0x1fffU;
    if (rem > 0x1000U || (rem == 0x1000U && (h & 1U))) ++h;  // carry may bump the exponent
    return static_cast<std::uint16_t>(sign | h);
  }
  // Subnormal half (units of 2^-24) or zero.
  const std::uint32_t e = a >> 23;
  if (e < 102U) return sign;  // below 2^-25: rounds to zero
  const std::uint32_t m = (a & 0x7fffffU) | 0x800000U;
  const std::uint32_t shift = 126U - e;  // 14 .. 24
  std::uint32_t h = m >> shift;
  const std::uint32_t rem = m & ((1U << shift) - 1U);
  const std::uint32_t halfway = 1U << (shift - 1U);
  if (rem > halfway || (rem == halfway && (h & 1U))) ++h;
  return static_cast<std::uint16_t>(sign | h);
}

std::uint16_t float_to_bf16_bits(float x) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  if ((u & 0x7fffffffU) > 0x7f800000U) return static_cast<std::uint16_t>((u >> 16) | 0x40U);
  const std::uint32_t bias = 0x7fffU + ((u >> 16) & 1U);
  return static_cast<std::uint16_t>((u + bias) >> 16);
}

float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000U) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fU;
  const std::uint32_t mant = h & 0x3ffU;
  if (exp == 0) {
    const float v = static_cast<float>(mant) * (1.0f / 16777216.0f);  // exact: mant * 2^-24
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000U | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112U) << 23) | (mant << 13));
}

float bf16_bits_to_float(std::uint16_t h) { return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16); }

namespace {
inline std::uint16_t to_bits(CastKind kind, float v) {
  return kind == CastKind::fp16 ? float_to_half_bits(v) : float_to_bf16_bits(v);
}
inline float from_bits(CastKind kind, std::uint16_t h) {
  return kind == CastKind::fp16 ? half_bits_to_float(h) : bf16_bits_to_float(h);
}
}  // namespace

void cast_encode_cpu(CastKind kind, const float* x, std::size_t n, float prescale, std::uint16_t* out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = to_bits(kind, prescale * x[i]);
}

void cast_decode_cpu(CastKind kind, const std::uint16_t* in, std::size_t n, float* y) {
  for (std::size_t i = 0; i < n; ++i) y[i] = from_bits(kind, in[i]);
}

void cast_encode_ef_cpu(CastKind kind, const float* x, std::size_t n, float prescale, std::uint16_t* out,
                        float* residual) {
  for (std::size_t i = 0; i < n; ++i) {
    const float v = prescale * x[i];
    const std::uint16_t h = to_bits(kind, v);
    out[i] = h;
    residual[i] = v - from_bits(kind, h);
  }
}

}  // namespace gw::kernels
