// 1-bit sign (EF-SignSGD) with per-chunk mean-magnitude scale, and majority
// vote. Encode: one 256-thread block per chunk; each thread reads 4-element
// groups (float4), ORs its 4 sign bits into 32-bit words with warp shuffles,
// and accumulates |x| in the canonical order of docs/kernels.md so the scale
// equals the CPU twin's bit for bit. The bits need no scale, so plain encode
// is one pass; the fused error feedback keeps the chunk in registers (chunks
// up to 4096) to write the residual after the scale is known.
#include "gradwire/kernels/sign_cuda.hpp"
#include "launch_util.cuh"

namespace gw::kernels {

namespace {

using detail::load_group;
using detail::store_group;

constexpr int kRegGroups = 4;

__device__ __forceinline__ std::uint32_t nibble(float4 a, std::size_t g, std::size_t len) {
  const std::size_t e = 4 * g;
  std::uint32_t b = 0;
  if (e < len && a.x >= 0.0f) b |= 1U;
  if (e + 1 < len && a.y >= 0.0f) b |= 2U;
  if (e + 2 < len && a.z >= 0.0f) b |= 4U;
  if (e + 3 < len && a.w >= 0.0f) b |= 8U;
  return b;
}

template <bool EF>
__global__ void __launch_bounds__(kChunkThreads)
sign_encode_kernel(const float* __restrict__ x, std::size_t n, std::size_t chunk,
                   std::uint32_t* __restrict__ words, float* __restrict__ scales,
                   float* __restrict__ r) {
  __shared__ float warp_sum[kChunkThreads / 32];
  __shared__ float chunk_scale;
  const std::size_t c = blockIdx.x;
  const std::size_t begin = c * chunk;
  const std::size_t len = (n - begin < chunk) ? n - begin : chunk;
  const std::size_t groups = (len + 3) / 4;
  const float* xc = x + begin;
  std::uint32_t* wc = words + begin / 32;
  const unsigned lane = threadIdx.x & 31U;
  const std::size_t rounds = (groups + kChunkThreads - 1) / kChunkThreads;  // uniform in the block
  const bool in_regs = EF && rounds <= kRegGroups;

  float4 v[kRegGroups];
  float acc = 0.0f;
  for (std::size_t k = 0; k < rounds; ++k) {
    const std::size_t g = threadIdx.x + k * kChunkThreads;
    const float4 a = g < groups ? load_group(xc, g, len) : make_float4(0.f, 0.f, 0.f, 0.f);
    if (EF && in_regs) {
#pragma unroll
      for (int kk = 0; kk < kRegGroups; ++kk) if (static_cast<std::size_t>(kk) == k) v[kk] = a;
    }
    // Canonical order: |x| of the group's elements in order (padding adds +0: exact).
    acc += fabsf(a.x);
    acc += fabsf(a.y);
    acc += fabsf(a.z);
    acc += fabsf(a.w);
    // Lanes 8m..8m+7 hold the 8 nibbles of one 32-bit word.
    std::uint32_t bits = g < groups ? nibble(a, g, len) << (4 * (lane & 7U)) : 0U;
    bits |= __shfl_xor_sync(0xffffffffU, bits, 1);
    bits |= __shfl_xor_sync(0xffffffffU, bits, 2);
    bits |= __shfl_xor_sync(0xffffffffU, bits, 4);
    if ((lane & 7U) == 0 && g < groups) wc[g / 8] = bits;
  }
#pragma unroll
  for (int off = 16; off >= 1; off /= 2) acc += __shfl_down_sync(0xffffffffU, acc, off);
  if (lane == 0) warp_sum[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s[kChunkThreads / 32];
#pragma unroll
    for (int w = 0; w < kChunkThreads / 32; ++w) s[w] = warp_sum[w];
#pragma unroll
    for (int off = kChunkThreads / 64; off >= 1; off /= 2) {
#pragma unroll
      for (int l = 0; l < off; ++l) s[l] += s[l + off];
    }
    const float scale = __fdiv_rn(s[0], static_cast<float>(len));
    scales[c] = scale;
    chunk_scale = scale;
  }
  if constexpr (EF) {
    __syncthreads();
    const float scale = chunk_scale;
    auto residual = [&](float xv) { return __fsub_rn(xv, xv >= 0.0f ? scale : -scale); };
    auto emit = [&](std::size_t g, float4 a) {
      store_group(r + begin, g, len,
                  make_float4(residual(a.x), residual(a.y), residual(a.z), residual(a.w)));
    };
    if (in_regs) {
#pragma unroll
      for (int k = 0; k < kRegGroups; ++k) {
        const std::size_t g = threadIdx.x + static_cast<std::size_t>(k) * kChunkThreads;
        if (g < groups) emit(g, v[k]);
      }
    } else {
      for (std::size_t g = threadIdx.x; g < groups; g += kChunkThreads) emit(g, load_group(xc, g, len));
    }
  }
}

__device__ __forceinline__ float signed_scale(std::uint32_t bit, float s) { return bit ? s : -s; }

__global__ void sign_decode_kernel(const std::uint32_t* __restrict__ words,
                                   const float* __restrict__ scales, std::size_t n,
                                   std::size_t chunk, float* __restrict__ y) {
  const std::size_t groups = (n + 3) / 4;
  for (std::size_t g = detail::global_thread(); g < groups; g += detail::grid_stride()) {
    const std::uint32_t nib = (words[g / 8] >> (4 * (g % 8))) & 0xfU;
    const float s = scales[4 * g / chunk];
    store_group(y, g, n,
                make_float4(signed_scale(nib & 1U, s), signed_scale(nib & 2U, s),
                            signed_scale(nib & 4U, s), signed_scale(nib & 8U, s)));
  }
}

__global__ void majority_vote_kernel(const std::uint32_t* __restrict__ words,
                                     const float* __restrict__ scales, int workers, std::size_t n,
                                     std::size_t chunk, float* __restrict__ y) {
  const std::size_t groups = (n + 3) / 4;
  const std::size_t nw = (n + 31) / 32, nc = (n + chunk - 1) / chunk;
  for (std::size_t g = detail::global_thread(); g < groups; g += detail::grid_stride()) {
    const std::size_t c = 4 * g / chunk;
    int v0 = 0, v1 = 0, v2 = 0, v3 = 0;
    float s = 0.0f;
    for (int w = 0; w < workers; ++w) {
      const std::size_t wu = static_cast<std::size_t>(w);
      const std::uint32_t nib = (words[wu * nw + g / 8] >> (4 * (g % 8))) & 0xfU;
      v0 += static_cast<int>(nib & 1U);
      v1 += static_cast<int>((nib >> 1) & 1U);
      v2 += static_cast<int>((nib >> 2) & 1U);
      v3 += static_cast<int>((nib >> 3) & 1U);
      s = __fadd_rn(s, scales[wu * nc + c]);
    }
    s = __fdiv_rn(s, static_cast<float>(workers));
    auto vote = [&](int votes) { return 2 * votes > workers ? s : (2 * votes < workers ? -s : 0.0f); };
    store_group(y, g, n, make_float4(vote(v0), vote(v1), vote(v2), vote(v3)));
  }
}

bool valid_chunk(std::size_t chunk) { return chunk != 0 && chunk % 32 == 0; }

template <bool EF>
cudaError_t launch_encode(const float* x, std::size_t n, std::size_t chunk, std::uint32_t* words,
                          float* scales, float* r, cudaStream_t stream) {
  if (!valid_chunk(chunk)) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (!detail::aligned16(x) || (EF && !detail::aligned16(r))) return cudaErrorMisalignedAddress;
  const std::size_t chunks = chunk_count(n, chunk);
  if (chunks > 0x7fffffffU) return cudaErrorInvalidValue;
  sign_encode_kernel<EF><<<static_cast<unsigned>(chunks), kChunkThreads, 0, stream>>>(
      x, n, chunk, words, scales, r);
  return cudaGetLastError();
}

}  // namespace

cudaError_t sign_encode_cuda(const float* x, std::size_t n, std::size_t chunk,
                             std::uint32_t* words, float* scales, cudaStream_t stream) {
  return launch_encode<false>(x, n, chunk, words, scales, nullptr, stream);
}

cudaError_t sign_encode_ef_cuda(const float* x, std::size_t n, std::size_t chunk,
                                std::uint32_t* words, float* scales, float* residual,
                                cudaStream_t stream) {
  return launch_encode<true>(x, n, chunk, words, scales, residual, stream);
}

cudaError_t sign_decode_cuda(const std::uint32_t* words, const float* scales, std::size_t n,
                             std::size_t chunk, float* y, cudaStream_t stream) {
  if (!valid_chunk(chunk)) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (!detail::aligned16(y)) return cudaErrorMisalignedAddress;
  sign_decode_kernel<<<detail::blocks_for((n + 3) / 4), detail::kElementwiseThreads, 0, stream>>>(
      words, scales, n, chunk, y);
  return cudaGetLastError();
}

cudaError_t majority_vote_decode_cuda(const std::uint32_t* words, const float* scales,
                                      int workers, std::size_t n, std::size_t chunk, float* y,
                                      cudaStream_t stream) {
  if (!valid_chunk(chunk) || workers < 1) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (!detail::aligned16(y)) return cudaErrorMisalignedAddress;
  majority_vote_kernel<<<detail::blocks_for((n + 3) / 4), detail::kElementwiseThreads, 0, stream>>>(
      words, scales, workers, n, chunk, y);
  return cudaGetLastError();
}

}  // namespace gw::kernels
