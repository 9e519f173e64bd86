// fp16 / bf16 casts: 8 elements per thread (two 16-byte loads, one 16-byte
// store), grid-stride, scalar tail for n % 8.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "gradwire/kernels/cast_cuda.hpp"
#include "launch_util.cuh"

namespace gw::kernels {

namespace {

using detail::global_thread;
using detail::grid_stride;

template <CastKind K>
__device__ __forceinline__ std::uint16_t to_bits(float v) {
  if constexpr (K == CastKind::fp16) return __half_as_ushort(__float2half_rn(v));
  else return __bfloat16_as_ushort(__float2bfloat16_rn(v));
}

template <CastKind K>
__device__ __forceinline__ float from_bits(std::uint16_t h) {
  if constexpr (K == CastKind::fp16) return __half2float(__ushort_as_half(h));
  else return __bfloat162float(__ushort_as_bfloat16(h));
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
    reinterpret_cast<uint4*>(out)[v] =
        make_uint4(h0 | (h1 << 16), h2 | (h3 << 16), h4 | (h5 << 16), h6 | (h7 << 16));
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

template <CastKind K>
__global__ void cast_decode_kernel(const std::uint16_t* __restrict__ in, std::size_t n,
                                   float* __restrict__ y) {
  const std::size_t nvec = n / 8;
  for (std::size_t v = global_thread(); v < nvec; v += grid_stride()) {
    const uint4 h = reinterpret_cast<const uint4*>(in)[v];
    const float4 a = make_float4(from_bits<K>(static_cast<std::uint16_t>(h.x)),
                                 from_bits<K>(static_cast<std::uint16_t>(h.x >> 16)),
                                 from_bits<K>(static_cast<std::uint16_t>(h.y)),
                                 from_bits<K>(static_cast<std::uint16_t>(h.y >> 16)));
    const float4 b = make_float4(from_bits<K>(static_cast<std::uint16_t>(h.z)),
                                 from_bits<K>(static_cast<std::uint16_t>(h.z >> 16)),
                                 from_bits<K>(static_cast<std::uint16_t>(h.w)),
                                 from_bits<K>(static_cast<std::uint16_t>(h.w >> 16)));
    reinterpret_cast<float4*>(y)[2 * v] = a;
    reinterpret_cast<float4*>(y)[2 * v + 1] = b;
  }
  const std::size_t i = 8 * nvec + global_thread();
  if (i < n) y[i] = from_bits<K>(in[i]);
}

template <bool EF>
cudaError_t launch_encode(CastKind kind, const float* x, std::size_t n, float prescale,
                          std::uint16_t* out, float* r, cudaStream_t stream) {
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

cudaError_t cast_encode_cuda(CastKind kind, const float* x, std::size_t n, float prescale,
                             std::uint16_t* out, cudaStream_t stream) {
  return launch_encode<false>(kind, x, n, prescale, out, nullptr, stream);
}

cudaError_t cast_encode_ef_cuda(CastKind kind, const float* x, std::size_t n, float prescale,
                                std::uint16_t* out, float* residual, cudaStream_t stream) {
  return launch_encode<true>(kind, x, n, prescale, out, residual, stream);
}

cudaError_t cast_decode_cuda(CastKind kind, const std::uint16_t* in, std::size_t n, float* y,
                             cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  if (!detail::aligned16(in) || !detail::aligned16(y)) return cudaErrorMisalignedAddress;
  const unsigned blocks = detail::blocks_for(n / 8 > 0 ? n / 8 : 1);
  if (kind == CastKind::fp16) {
    cast_decode_kernel<CastKind::fp16><<<blocks, detail::kElementwiseThreads, 0, stream>>>(in, n, y);
  } else {
    cast_decode_kernel<CastKind::bf16><<<blocks, detail::kElementwiseThreads, 0, stream>>>(in, n, y);
  }
  return cudaGetLastError();
}

}  // namespace gw::kernels
