// int8 per-chunk absmax quantization: CUDA launchers (one block per chunk).
#pragma once

#include <cuda_runtime_api.h>

#include "gradwire/kernels/int8.hpp"
#include "gradwire/kernels/store_hint.hpp"

namespace gw::kernels {

cudaError_t int8_encode_cuda(const float* x, std::size_t n, const Int8Params& p, std::int8_t* q, float* scales,
                             cudaStream_t stream);
cudaError_t int8_decode_cuda(const std::int8_t* q, const float* scales, std::size_t n, std::size_t chunk, float* y,
                             cudaStream_t stream, StoreHint hint = StoreHint::plain);
cudaError_t int8_encode_ef_cuda(const float* x, std::size_t n, const Int8Params& p, std::int8_t* q, float* scales,
                                float* residual, cudaStream_t stream);

}  // namespace gw::kernels
