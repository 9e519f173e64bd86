// Same-traffic reference kernels (traffic_reference.hpp).
#include "../cuda/persistent.cuh"
#include "traffic_reference.hpp"

#include <utility>

namespace gw::kernels::bench {

namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;
constexpr std::size_t kTile = static_cast<std::size_t>(kThreads) * kUnroll;

template <bool CS>
__device__ __forceinline__ void store16(uint4* p, uint4 v) {
  if constexpr (CS)
    __stcs(p, v);
  else
    *p = v;
}

template <int S, bool CS>
__global__ void __launch_bounds__(kThreads)
    expand_kernel(const uint4* __restrict__ in, uint4* __restrict__ out, std::size_t units) {
  for (std::size_t base = blockIdx.x * kTile; base < units; base += gridDim.x * kTile) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::size_t i = base + static_cast<std::size_t>(u) * kThreads + threadIdx.x;
      v[u] = i < units ? __ldg(in + (i >> S)) : make_uint4(0U, 0U, 0U, 0U);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::size_t i = base + static_cast<std::size_t>(u) * kThreads + threadIdx.x;
      if (i < units) store16<CS>(out + i, v[u]);
    }
  }
}

template <bool CS>
__global__ void __launch_bounds__(kThreads) write_kernel(uint4* __restrict__ out, std::size_t units) {
  for (std::size_t base = blockIdx.x * kTile; base < units; base += gridDim.x * kTile) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::size_t i = base + static_cast<std::size_t>(u) * kThreads + threadIdx.x;
      const auto w = static_cast<std::uint32_t>(i);
      if (i < units) store16<CS>(out + i, make_uint4(w, w, w, w));
    }
  }
}

template <int S, bool CS>
cudaError_t launch_expand(const void* in, void* out, std::size_t units, cudaStream_t stream) {
  const unsigned blocks =
      ::gw::kernels::detail::persistent_grid<expand_kernel<S, CS>, kThreads>((units + kTile - 1) / kTile);
  expand_kernel<S, CS><<<blocks, kThreads, 0, stream>>>(static_cast<const uint4*>(in), static_cast<uint4*>(out), units);
  return cudaGetLastError();
}

template <bool CS>
cudaError_t launch_write(void* out, std::size_t units, cudaStream_t stream) {
  const unsigned blocks =
      ::gw::kernels::detail::persistent_grid<write_kernel<CS>, kThreads>((units + kTile - 1) / kTile);
  write_kernel<CS><<<blocks, kThreads, 0, stream>>>(static_cast<uint4*>(out), units);
  return cudaGetLastError();
}

template <bool CS, int... S>
cudaError_t dispatch_expand(int shift, const void* in, void* out, std::size_t units, cudaStream_t stream,
                            std::integer_sequence<int, S...>) {
  cudaError_t err = cudaErrorInvalidValue;
  ((shift == S ? (err = launch_expand<S, CS>(in, out, units, stream), true) : false) || ...);
  return err;
}

}  // namespace

cudaError_t expand_reference(const void* in, void* out, std::size_t units, int shift, bool streaming_stores,
                             cudaStream_t stream) {
  if (units == 0) return cudaSuccess;
  using Shifts = std::make_integer_sequence<int, kMaxExpandShift + 1>;
  return streaming_stores ? dispatch_expand<true>(shift, in, out, units, stream, Shifts{})
                          : dispatch_expand<false>(shift, in, out, units, stream, Shifts{});
}

cudaError_t write_reference(void* out, std::size_t units, bool streaming_stores, cudaStream_t stream) {
  if (units == 0) return cudaSuccess;
  return streaming_stores ? launch_write<true>(out, units, stream) : launch_write<false>(out, units, stream);
}

}  // namespace gw::kernels::bench
