// fp16 / bf16 casts (optional pre-scale), CPU twins. Host-only.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gw::kernels {

enum class CastKind { fp16, bf16 };

/// float -> IEEE half / bfloat16 bits, round to nearest even (NaN stays NaN).
std::uint16_t float_to_half_bits(float x);
std::uint16_t float_to_bf16_bits(float x);
/// Exact widening back to float.
float half_bits_to_float(std::uint16_t h);
float bf16_bits_to_float(std::uint16_t h);

/// out[i] = cast(prescale * x[i]) (the product rounded to float first; skipped when prescale == 1).
void cast_encode_cpu(CastKind kind, const float* x, std::size_t n, float prescale, std::uint16_t* out);
/// y[i] = float(in[i]).
void cast_decode_cpu(CastKind kind, const std::uint16_t* in, std::size_t n, float* y);
/// Fused encode + error feedback: out as cast_encode_cpu, residual[i] = fl(prescale*x[i]) - decode(out[i]).
void cast_encode_ef_cpu(CastKind kind, const float* x, std::size_t n, float prescale, std::uint16_t* out,
                        float* residual);

}  // namespace gw::kernels
