// Random-K: the K indices are the first K outputs of the keyed Feistel
// permutation of (seed, step) (counter_rng.hpp), recomputed by each thread,
// so nothing is stored and nothing is allocated.
#include "gradwire/kernels/counter_rng.hpp"
#include "gradwire/kernels/randomk_cuda.hpp"
#include "launch_util.cuh"
#include "persistent.cuh"

namespace gw::kernels {

namespace {

__global__ void randomk_gather_kernel(const float* __restrict__ x, FeistelPermutation perm, std::size_t k,
                                      float* __restrict__ values) {
  for (std::size_t j = detail::global_thread(); j < k; j += detail::grid_stride()) {
    values[j] = x[perm.forward(j)];
  }
}

// Scatter after the zero fill: kScatterUnroll slots per thread per
// iteration (slot u at base + u*256 + tid: contiguous value loads), all value
// loads and index computations independent, so several random stores are in
// flight per thread. Persistent grid, grid-stride.
constexpr int kScatterThreads = 256;
constexpr int kScatterUnroll = 4;

__global__ void __launch_bounds__(kScatterThreads)
    randomk_scatter_kernel(const float* __restrict__ values, FeistelPermutation perm, std::size_t k,
                           float* __restrict__ y) {
  constexpr std::size_t kTile = static_cast<std::size_t>(kScatterThreads) * kScatterUnroll;
  for (std::size_t base = blockIdx.x * kTile; base < k; base += gridDim.x * kTile) {
    float v[kScatterUnroll];
#pragma unroll
    for (int u = 0; u < kScatterUnroll; ++u) {
      const std::size_t j = base + static_cast<std::size_t>(u) * kScatterThreads + threadIdx.x;
      v[u] = j < k ? __ldg(values + j) : 0.0f;
    }
#pragma unroll
    for (int u = 0; u < kScatterUnroll; ++u) {
      const std::size_t j = base + static_cast<std::size_t>(u) * kScatterThreads + threadIdx.x;
      if (j < k) y[perm.forward(j)] = v[u];
    }
  }
}

// Zero fill with streaming stores (StoreHint::streaming; the plain form uses
// cudaMemsetAsync): float4 stores, grid-stride, scalar tail for n % 4.
__global__ void randomk_zero_streaming_kernel(float* __restrict__ y, std::size_t n) {
  const std::size_t nvec = n / 4;
  for (std::size_t v = detail::global_thread(); v < nvec; v += detail::grid_stride()) {
    detail::store_out<true>(reinterpret_cast<float4*>(y) + v, make_float4(0.f, 0.f, 0.f, 0.f));
  }
  const std::size_t i = 4 * nvec + detail::global_thread();
  if (i < n) detail::store_out<true>(y + i, 0.0f);
}

// Elementwise: each input element finds its slot with the inverse permutation.
__global__ void randomk_ef_kernel(const float* __restrict__ x, std::size_t n, FeistelPermutation perm, std::size_t k,
                                  float* __restrict__ values, float* __restrict__ r) {
  for (std::size_t i = detail::global_thread(); i < n; i += detail::grid_stride()) {
    const float xi = x[i];
    const std::uint64_t slot = perm.inverse(i);
    if (slot < k) {
      values[slot] = xi;
      r[i] = 0.0f;
    } else {
      r[i] = xi;
    }
  }
}

}  // namespace

cudaError_t randomk_encode_cuda(const float* x, std::size_t n, const RandomKParams& p, float* values,
                                cudaStream_t stream) {
  if (p.k > n) return cudaErrorInvalidValue;
  if (p.k == 0) return cudaSuccess;
  const FeistelPermutation perm = make_randomk_permutation(n, p.seed, p.step);
  randomk_gather_kernel<<<detail::blocks_for(p.k), detail::kElementwiseThreads, 0, stream>>>(x, perm, p.k, values);
  return cudaGetLastError();
}

cudaError_t randomk_decode_cuda(const float* values, std::size_t n, const RandomKParams& p, float* y,
                                cudaStream_t stream, StoreHint hint) {
  if (p.k > n) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (hint == StoreHint::streaming) {
    if (!detail::aligned16(y)) return cudaErrorMisalignedAddress;
    randomk_zero_streaming_kernel<<<detail::blocks_for(n / 4 > 0 ? n / 4 : 1), detail::kElementwiseThreads, 0,
                                    stream>>>(y, n);
    if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess) return err;
  } else {
    const cudaError_t err = cudaMemsetAsync(y, 0, n * sizeof(float), stream);
    if (err != cudaSuccess) return err;
  }
  if (p.k == 0) return cudaSuccess;
  const FeistelPermutation perm = make_randomk_permutation(n, p.seed, p.step);
  constexpr std::size_t kTile = static_cast<std::size_t>(kScatterThreads) * kScatterUnroll;
  randomk_scatter_kernel<<<detail::persistent_grid<randomk_scatter_kernel, kScatterThreads>((p.k + kTile - 1) / kTile),
                           kScatterThreads, 0, stream>>>(values, perm, p.k, y);
  return cudaGetLastError();
}

cudaError_t randomk_encode_ef_cuda(const float* x, std::size_t n, const RandomKParams& p, float* values,
                                   float* residual, cudaStream_t stream) {
  if (p.k > n) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  const FeistelPermutation perm = make_randomk_permutation(n, p.seed, p.step);
  randomk_ef_kernel<<<detail::blocks_for(n), detail::kElementwiseThreads, 0, stream>>>(x, n, perm, p.k, values,
                                                                                       residual);
  return cudaGetLastError();
}

}  // namespace gw::kernels
