// fp16 / bf16 casts. Encode: 8 elements per thread (two 16-byte loads, one
// 16-byte store), grid-stride, scalar tail for n % 8. Decode: see below.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "gradwire/kernels/cast_cuda.hpp"
#include "launch_util.cuh"
#include "persistent.cuh"
#include "tuning_policy.cuh"

namespace gw::kernels {

namespace {

using detail::global_thread;
using detail::grid_stride;

template <CastKind K>
__device__ __forceinline__ std::uint16_t to_bits(float v) {
  if constexpr (K == CastKind::fp16)
    return __half_as_ushort(__float2half_rn(v));
  else
    return __bfloat16_as_ushort(__float2bfloat16_rn(v));
}

template <CastKind K>
__device__ __forceinline__ float from_bits(std::uint16_t h) {
  if constexpr (K == CastKind::fp16)
    return __half2float(__ushort_as_half(h));
  else
    return __bfloat162float(__ushort_as_bfloat16(h));
}

template <CastKind K, bool EF>
__device__ __forceinline__ std::uint16_t encode_one(float x, float prescale, float* r) {
  const float v = __fmul_rn(prescale, x);
  const std::uint16_t h = to_bits<K>(v);
  if constexpr (EF) *r = __fsub_rn(v, from_bits<K>(h));
  return h;
}

template <CastKind K, bool EF>
__global__ void cast_encode_kernel(const float* __restrict__ x, std::size_t n, float prescale,
                                   std::uint16_t* __restrict__ out, float* __restrict__ r) {
  const std::size_t nvec = n / 8;
  for (std::size_t v = global_thread(); v < nvec; v += grid_stride()) {
    const float4 a = reinterpret_cast<const float4*>(x)[2 * v];
    const float4 b = reinterpret_cast<const float4*>(x)[2 * v + 1];
    float4 ra, rb;
    const std::uint32_t h0 = encode_one<K, EF>(a.x, prescale, &ra.x);
    const std::uint32_t h1 = encode_one<K, EF>(a.y, prescale, &ra.y);
    const std::uint32_t h2 = encode_one<K, EF>(a.z, prescale, &ra.z);
    const std::uint32_t h3 = encode_one<K, EF>(a.w, prescale, &ra.w);
    const std::uint32_t h4 = encode_one<K, EF>(b.x, prescale, &rb.x);
    const std::uint32_t h5 = encode_one<K, EF>(b.y, prescale, &rb.y);
    const std::uint32_t h6 = encode_one<K, EF>(b.z, prescale, &rb.z);
    const std::uint32_t h7 = encode_one<K, EF>(b.w, prescale, &rb.w);
    reinterpret_cast<uint4*>(out)[v] = make_uint4(h0 | (h1 << 16), h2 | (h3 << 16), h4 | (h5 << 16), h6 | (h7 << 16));
    if constexpr (EF) {
      reinterpret_cast<float4*>(r)[2 * v] = ra;
      reinterpret_cast<float4*>(r)[2 * v + 1] = rb;
    }
  }
  const std::size_t i = 8 * nvec + global_thread();
  if (i < n) {
    float ri = 0.f;
    out[i] = encode_one<K, EF>(x[i], prescale, &ri);
    if constexpr (EF) r[i] = ri;
  }
}

// Decode: a unit is 4 values (one 8-byte load, one 16-byte store). A block
// tile is kDecodeUnroll x 256 units; unit u of a thread is tile + u*256 + tid,
// so every load and every store instruction of a warp is contiguous (256 B
// loaded, 512 B stored, whole sectors). All loads of a tile are issued before
// its stores. Persistent grid (all SMs x resident blocks), grid-stride tiles.
// CS: streaming stores (StoreHint::streaming). kDecodeThreads, kDecodeUnroll:
// tuning_policy.cuh.
using detail::kDecodeThreads;
using detail::kDecodeUnroll;

template <CastKind K, bool CS>
__global__ void __launch_bounds__(kDecodeThreads)
    cast_decode_kernel(const std::uint16_t* __restrict__ in, std::size_t n, float* __restrict__ y) {
  const std::size_t units = n / 4;
  constexpr std::size_t kTile = static_cast<std::size_t>(kDecodeThreads) * kDecodeUnroll;
  const uint2* in2 = reinterpret_cast<const uint2*>(in);
  float4* y4 = reinterpret_cast<float4*>(y);
  for (std::size_t base = blockIdx.x * kTile; base < units; base += gridDim.x * kTile) {
    uint2 h[kDecodeUnroll];
#pragma unroll
    for (int u = 0; u < kDecodeUnroll; ++u) {
      const std::size_t i = base + static_cast<std::size_t>(u) * kDecodeThreads + threadIdx.x;
      h[u] = i < units ? __ldg(in2 + i) : make_uint2(0U, 0U);
    }
#pragma unroll
    for (int u = 0; u < kDecodeUnroll; ++u) {
      const std::size_t i = base + static_cast<std::size_t>(u) * kDecodeThreads + threadIdx.x;
      if (i < units) {
        detail::store_out<CS>(y4 + i, make_float4(from_bits<K>(static_cast<std::uint16_t>(h[u].x)),
                                                  from_bits<K>(static_cast<std::uint16_t>(h[u].x >> 16)),
                                                  from_bits<K>(static_cast<std::uint16_t>(h[u].y)),
                                                  from_bits<K>(static_cast<std::uint16_t>(h[u].y >> 16))));
      }
    }
  }
  // n % 4 trailing values.
  const std::size_t i = 4 * units + global_thread();
  if (i < n) detail::store_out<CS>(y + i, from_bits<K>(in[i]));
}

template <CastKind K, bool CS>
cudaError_t launch_decode(const std::uint16_t* in, std::size_t n, float* y, cudaStream_t stream) {
  constexpr std::size_t kTile = static_cast<std::size_t>(kDecodeThreads) * kDecodeUnroll;
  const std::size_t tiles = (n / 4 + kTile - 1) / kTile;
  const unsigned blocks = detail::persistent_grid<cast_decode_kernel<K, CS>, kDecodeThreads>(tiles);
  cast_decode_kernel<K, CS><<<blocks, kDecodeThreads, 0, stream>>>(in, n, y);
  return cudaGetLastError();
}

template <CastKind K>
cudaError_t launch_decode(const std::uint16_t* in, std::size_t n, float* y, cudaStream_t stream, StoreHint hint) {
  return hint == StoreHint::streaming ? launch_decode<K, true>(in, n, y, stream)
                                      : launch_decode<K, false>(in, n, y, stream);
}

template <bool EF>
cudaError_t launch_encode(CastKind kind, const float* x, std::size_t n, float prescale, std::uint16_t* out, float* r,
                          cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  if (!detail::aligned16(x) || !detail::aligned16(out) || (EF && !detail::aligned16(r))) {
    return cudaErrorMisalignedAddress;
  }
  const unsigned blocks = detail::blocks_for(n / 8 > 0 ? n / 8 : 1);
  if (kind == CastKind::fp16) {
    cast_encode_kernel<CastKind::fp16, EF><<<blocks, detail::kElementwiseThreads, 0, stream>>>(x, n, prescale, out, r);
  } else {
    cast_encode_kernel<CastKind::bf16, EF><<<blocks, detail::kElementwiseThreads, 0, stream>>>(x, n, prescale, out, r);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t cast_encode_cuda(CastKind kind, const float* x, std::size_t n, float prescale, std::uint16_t* out,
                             cudaStream_t stream) {
  return launch_encode<false>(kind, x, n, prescale, out, nullptr, stream);
}

cudaError_t cast_encode_ef_cuda(CastKind kind, const float* x, std::size_t n, float prescale, std::uint16_t* out,
                                float* residual, cudaStream_t stream) {
  return launch_encode<true>(kind, x, n, prescale, out, residual, stream);
}

cudaError_t cast_decode_cuda(CastKind kind, const std::uint16_t* in, std::size_t n, float* y, cudaStream_t stream,
                             StoreHint hint) {
  if (n == 0) return cudaSuccess;
  if (!detail::aligned16(in) || !detail::aligned16(y)) return cudaErrorMisalignedAddress;
  return kind == CastKind::fp16 ? launch_decode<CastKind::fp16>(in, n, y, stream, hint)
                                : launch_decode<CastKind::bf16>(in, n, y, stream, hint);
}

}  // namespace gw::kernels
