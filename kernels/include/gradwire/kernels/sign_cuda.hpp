// Sign / majority vote: CUDA launchers.
#pragma once

#include <cuda_runtime_api.h>

#include "gradwire/kernels/sign.hpp"
#include "gradwire/kernels/store_hint.hpp"

namespace gw::kernels {

cudaError_t sign_encode_cuda(const float* x, std::size_t n, std::size_t chunk, std::uint32_t* words, float* scales,
                             cudaStream_t stream);
cudaError_t sign_decode_cuda(const std::uint32_t* words, const float* scales, std::size_t n, std::size_t chunk,
                             float* y, cudaStream_t stream, StoreHint hint = StoreHint::plain);
cudaError_t sign_encode_ef_cuda(const float* x, std::size_t n, std::size_t chunk, std::uint32_t* words, float* scales,
                                float* residual, cudaStream_t stream);
cudaError_t majority_vote_decode_cuda(const std::uint32_t* words, const float* scales, int workers, std::size_t n,
                                      std::size_t chunk, float* y, cudaStream_t stream,
                                      StoreHint hint = StoreHint::plain);

}  // namespace gw::kernels
