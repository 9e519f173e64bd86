// fp16 / bf16 casts: CUDA launchers (device pointers, caller's stream, no allocation).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "gradwire/kernels/cast.hpp"
#include "gradwire/kernels/store_hint.hpp"

namespace gw::kernels {

cudaError_t cast_encode_cuda(CastKind kind, const float* x, std::size_t n, float prescale, std::uint16_t* out,
                             cudaStream_t stream);
cudaError_t cast_decode_cuda(CastKind kind, const std::uint16_t* in, std::size_t n, float* y, cudaStream_t stream,
                             StoreHint hint = StoreHint::plain);
cudaError_t cast_encode_ef_cuda(CastKind kind, const float* x, std::size_t n, float prescale, std::uint16_t* out,
                                float* residual, cudaStream_t stream);

}  // namespace gw::kernels
