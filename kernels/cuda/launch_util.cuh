// Launch helpers shared by the elementwise codecs' .cu files (grid sizing, alignment checks).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace gw::kernels::detail {

inline constexpr int kElementwiseThreads = 256;

/// Blocks for `work` items of one thread each, capped (kernels are grid-stride).
inline unsigned blocks_for(std::size_t work, int threads = kElementwiseThreads) {
  const std::size_t b = (work + static_cast<std::size_t>(threads) - 1) / static_cast<std::size_t>(threads);
  const std::size_t cap = std::size_t{1} << 20;
  return static_cast<unsigned>(b == 0 ? 1 : (b < cap ? b : cap));
}

inline bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15U) == 0; }

/// Global thread index and grid stride as 64-bit values.
__device__ __forceinline__ std::size_t global_thread() {
  return static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ std::size_t grid_stride() { return static_cast<std::size_t>(gridDim.x) * blockDim.x; }

/// A global store, plain or streaming (st.global.cs) by template argument.
template <bool Streaming>
__device__ __forceinline__ void store_out(float4* p, float4 v) {
  if constexpr (Streaming)
    __stcs(p, v);
  else
    *p = v;
}
template <bool Streaming>
__device__ __forceinline__ void store_out(float* p, float v) {
  if constexpr (Streaming)
    __stcs(p, v);
  else
    *p = v;
}

/// Loads group g (elements 4g .. 4g+3) of x[0..len); elements past len read as 0.
__device__ __forceinline__ float4 load_group(const float* x, std::size_t g, std::size_t len) {
  const std::size_t e = 4 * g;
  if (e + 3 < len) return *reinterpret_cast<const float4*>(x + e);
  float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
  if (e < len) v.x = x[e];
  if (e + 1 < len) v.y = x[e + 1];
  if (e + 2 < len) v.z = x[e + 2];
  return v;
}

/// Stores group g of y[0..len), skipping elements past len.
__device__ __forceinline__ void store_group(float* y, std::size_t g, std::size_t len, float4 v) {
  const std::size_t e = 4 * g;
  if (e + 3 < len) {
    *reinterpret_cast<float4*>(y + e) = v;
    return;
  }
  if (e < len) y[e] = v.x;
  if (e + 1 < len) y[e + 1] = v.y;
  if (e + 2 < len) y[e + 2] = v.z;
}

}  // namespace gw::kernels::detail
