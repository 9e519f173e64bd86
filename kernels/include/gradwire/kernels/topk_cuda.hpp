// Top-K by magnitude: CUDA launchers (contract in topk.hpp; GPU == CPU bit for bit).
//
// All launchers run on `stream`, never allocate, never synchronize, accept
// any n (0 included) and return the launch error. Scratch memory is the
// caller's `workspace` (size from topk_workspace_bytes / topk_sort_workspace_bytes;
// too small -> cudaErrorInvalidValue, as are k > n and n > INT32_MAX).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "gradwire/kernels/topk.hpp"

namespace gw::kernels {

/// Radix select (three histogram passes over the 31 key bits, AIR Top-K
/// style, with candidate filtering) then an order-preserving compaction:
/// writes the k (value, index) pairs, indices ascending.
cudaError_t topk_encode_cuda(const float* x, std::size_t n, std::size_t k, float* values, std::int32_t* indices,
                             void* workspace, std::size_t workspace_bytes, cudaStream_t stream);

/// Fused encode + residual (residual[i] = x[i] - y[i], see topk_encode_ef_cpu).
cudaError_t topk_encode_ef_cuda(const float* x, std::size_t n, std::size_t k, float* values, std::int32_t* indices,
                                float* residual, void* workspace, std::size_t workspace_bytes, cudaStream_t stream);

/// Baseline: full cub::DeviceRadixSort of (key, index) pairs (stable,
/// descending), then a sort of the first k indices and a gather. Same output
/// as topk_encode_cuda; used by the benchmark and as a cross-check.
std::size_t topk_sort_workspace_bytes(std::size_t n, std::size_t k);
cudaError_t topk_sort_encode_cuda(const float* x, std::size_t n, std::size_t k, float* values, std::int32_t* indices,
                                  void* workspace, std::size_t workspace_bytes, cudaStream_t stream);

/// y = 0 (cudaMemsetAsync), then y[indices[i]] = values[i]. Out-of-range
/// indices are skipped (the CPU twin throws on them).
cudaError_t topk_decode_cuda(const float* values, const std::int32_t* indices, std::size_t k, std::size_t n, float* y,
                             cudaStream_t stream);

/// All-gathered decode: y = 0, then worker 0's pairs are added, then worker
/// 1's, ... (one launch per worker, so the float sums are in worker order and
/// bit-identical to topk_decode_gathered_cpu; indices within one worker are
/// distinct, so no atomics are needed).
cudaError_t topk_decode_gathered_cuda(const float* values, const std::int32_t* indices, std::size_t workers,
                                      std::size_t k, std::size_t n, float* y, cudaStream_t stream);

}  // namespace gw::kernels
