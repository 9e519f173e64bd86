// Random-K: CUDA launchers.
#pragma once

#include <cuda_runtime_api.h>

#include "gradwire/kernels/randomk.hpp"
#include "gradwire/kernels/store_hint.hpp"

namespace gw::kernels {

cudaError_t randomk_encode_cuda(const float* x, std::size_t n, const RandomKParams& p, float* values,
                                cudaStream_t stream);
/// Zero-fills y (cudaMemsetAsync; with StoreHint::streaming a zero-fill
/// kernel with streaming stores) then scatters the K values.
cudaError_t randomk_decode_cuda(const float* values, std::size_t n, const RandomKParams& p, float* y,
                                cudaStream_t stream, StoreHint hint = StoreHint::plain);
/// Elementwise: slot = inverse permutation of i; slot < K -> values[slot] = x[i], residual 0.
cudaError_t randomk_encode_ef_cuda(const float* x, std::size_t n, const RandomKParams& p, float* values,
                                   float* residual, cudaStream_t stream);

}  // namespace gw::kernels
