// int8 with per-chunk absmax scales. Chunks up to 2048 elements: one warp per
// chunk (int8_encode_warp_kernel); longer chunks: one 256-thread block per
// chunk, read once into registers (up to 4096 elements; longer chunks are
// re-read, from L1/L2). Either way the chunk is reduced to absmax, then
// quantized in the same kernel. Arithmetic is op-for-op the CPU twin's (no
// FMA contraction).
#include "gradwire/kernels/counter_rng.hpp"
#include "gradwire/kernels/int8_cuda.hpp"
#include "chunk_groups.cuh"
#include "launch_util.cuh"
#include "persistent.cuh"
#include "tuning_policy.cuh"

namespace gw::kernels {

namespace {

using detail::kDecodeThreads;
using detail::kDecodeUnroll;
using detail::kRegGroups;  // groups of 4 elements kept per thread
using detail::kWarpChunkMax;
using detail::kWarpThreads;
using detail::load_group;
using detail::store_group;
using detail::valid_chunk;

__device__ __forceinline__ float quantize(float x, float inv, bool sr, std::uint64_t key, std::size_t i) {
  float t = __fmul_rn(x, inv);
  t = sr ? floorf(__fadd_rn(t, uniform01(key, i))) : rintf(t);
  // + 0.0f turns a -0 from rintf into +0, as the CPU twin's round trip through
  // int8 does, so residual = x - q * scale has the same sign of zero on both.
  return __fadd_rn(fminf(127.0f, fmaxf(-127.0f, t)), 0.0f);
}

// Quantizes group g (chunk offsets 4g .. 4g+3, clipped to len) of the chunk
// starting at `begin`; writes q (and with EF the residual).
template <bool EF>
__device__ __forceinline__ void emit_group(std::size_t g, float4 a, std::size_t begin, std::size_t len, float inv,
                                           float scale, bool sr, std::uint64_t key, std::int8_t* __restrict__ q,
                                           float* __restrict__ r) {
  const std::size_t e = begin + 4 * g;
  const float q0 = quantize(a.x, inv, sr, key, e);
  const float q1 = quantize(a.y, inv, sr, key, e + 1);
  const float q2 = quantize(a.z, inv, sr, key, e + 2);
  const float q3 = quantize(a.w, inv, sr, key, e + 3);
  if (4 * g + 3 < len) {
    const std::uint32_t packed =
        (static_cast<std::uint32_t>(static_cast<std::uint8_t>(static_cast<std::int8_t>(q0)))) |
        (static_cast<std::uint32_t>(static_cast<std::uint8_t>(static_cast<std::int8_t>(q1))) << 8) |
        (static_cast<std::uint32_t>(static_cast<std::uint8_t>(static_cast<std::int8_t>(q2))) << 16) |
        (static_cast<std::uint32_t>(static_cast<std::uint8_t>(static_cast<std::int8_t>(q3))) << 24);
    *reinterpret_cast<std::uint32_t*>(q + e) = packed;
  } else {
    if (4 * g < len) q[e] = static_cast<std::int8_t>(q0);
    if (4 * g + 1 < len) q[e + 1] = static_cast<std::int8_t>(q1);
    if (4 * g + 2 < len) q[e + 2] = static_cast<std::int8_t>(q2);
  }
  if constexpr (EF) {
    const float4 res = make_float4(__fsub_rn(a.x, __fmul_rn(q0, scale)), __fsub_rn(a.y, __fmul_rn(q1, scale)),
                                   __fsub_rn(a.z, __fmul_rn(q2, scale)), __fsub_rn(a.w, __fmul_rn(q3, scale)));
    store_group(r + begin, g, len, res);
  }
}

template <bool EF>
__global__ void __launch_bounds__(kChunkThreads)
    int8_encode_kernel(const float* __restrict__ x, std::size_t n, std::size_t chunk, bool sr, std::uint64_t key,
                       std::int8_t* __restrict__ q, float* __restrict__ scales, float* __restrict__ r) {
  __shared__ float warp_max[kChunkThreads / 32];
  const std::size_t c = blockIdx.x;
  const std::size_t begin = c * chunk;
  const std::size_t len = (n - begin < chunk) ? n - begin : chunk;
  const std::size_t groups = (len + 3) / 4;
  const float* xc = x + begin;
  const bool in_regs = groups <= static_cast<std::size_t>(kChunkThreads) * kRegGroups;

  float4 v[kRegGroups];
  float m = 0.0f;
  if (in_regs) {
#pragma unroll
    for (int k = 0; k < kRegGroups; ++k) {
      const std::size_t g = threadIdx.x + static_cast<std::size_t>(k) * kChunkThreads;
      v[k] = g < groups ? load_group(xc, g, len) : make_float4(0.f, 0.f, 0.f, 0.f);
      m = fmaxf(m, fmaxf(fmaxf(fabsf(v[k].x), fabsf(v[k].y)), fmaxf(fabsf(v[k].z), fabsf(v[k].w))));
    }
  } else {
    for (std::size_t g = threadIdx.x; g < groups; g += kChunkThreads) {
      const float4 a = load_group(xc, g, len);
      m = fmaxf(m, fmaxf(fmaxf(fabsf(a.x), fabsf(a.y)), fmaxf(fabsf(a.z), fabsf(a.w))));
    }
  }
#pragma unroll
  for (int off = 16; off >= 1; off /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffU, m, off));
  if ((threadIdx.x & 31U) == 0) warp_max[threadIdx.x / 32] = m;
  __syncthreads();
  float absmax = warp_max[0];
#pragma unroll
  for (int w = 1; w < kChunkThreads / 32; ++w) absmax = fmaxf(absmax, warp_max[w]);
  const float scale = __fdiv_rn(absmax, 127.0f);
  const float inv = absmax > 0.0f ? __fdiv_rn(127.0f, absmax) : 0.0f;
  if (threadIdx.x == 0) scales[c] = scale;

  auto emit = [&](std::size_t g, float4 a) { emit_group<EF>(g, a, begin, len, inv, scale, sr, key, q, r); };
  detail::for_each_thread_group(v, in_regs, xc, groups, len, emit);
}

// One warp per chunk for chunks up to kWarpChunkMax elements (the common
// case, chunk 1024): the warp issues all its loads (R x 8 float4 per lane)
// before any reduction, takes the absmax with a 5-step shuffle butterfly (max
// is exact and order-free), then quantizes from registers: no block barrier,
// no re-read, and 8 warps (8 chunks) per block, persistent over the chunks.
// Lane l, slot (k, w) holds group g = 256k + 32w + l: every load and store
// instruction of the warp is contiguous. kWarpThreads, kWarpChunkMax:
// tuning_policy.cuh.

template <bool EF, int R>
__global__ void __launch_bounds__(kWarpThreads)
    int8_encode_warp_kernel(const float* __restrict__ x, std::size_t n, std::size_t chunk, std::size_t chunks, bool sr,
                            std::uint64_t key, std::int8_t* __restrict__ q, float* __restrict__ scales,
                            float* __restrict__ r) {
  const unsigned lane = detail::lane_id();
  for (std::size_t c = detail::global_warp(); c < chunks; c += detail::warp_count()) {
    const std::size_t begin = c * chunk;
    const std::size_t len = (n - begin < chunk) ? n - begin : chunk;
    const std::size_t groups = (len + 3) / 4;
    const float* xc = x + begin;
    float4 v[R][8];
    detail::load_chunk_slots<R>(xc, groups, len, lane, v);
    float m = 0.0f;
#pragma unroll
    for (int k = 0; k < R; ++k) {
#pragma unroll
      for (int w = 0; w < 8; ++w) {
        const float4 a = v[k][w];
        m = fmaxf(m, fmaxf(fmaxf(fabsf(a.x), fabsf(a.y)), fmaxf(fabsf(a.z), fabsf(a.w))));
      }
    }
#pragma unroll
    for (int off = 16; off >= 1; off /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffU, m, off));
    const float absmax = m;
    const float scale = __fdiv_rn(absmax, 127.0f);
    const float inv = absmax > 0.0f ? __fdiv_rn(127.0f, absmax) : 0.0f;
    if (lane == 0) scales[c] = scale;
#pragma unroll
    for (int k = 0; k < R; ++k) {
#pragma unroll
      for (int w = 0; w < 8; ++w) {
        const std::size_t g = detail::slot_group(k, w, lane);
        if (g < groups) emit_group<EF>(g, v[k][w], begin, len, inv, scale, sr, key, q, r);
      }
    }
  }
}

// Decode: a unit is 4 values (one 4-byte load of q, one 16-byte store). A
// block tile is kDecodeUnroll x 256 units, unit u of a thread at
// tile + u*256 + tid, so every warp instruction is contiguous (128 B loaded,
// 512 B stored). The scale index is a shift for power-of-two chunks (no 64-bit
// division). Loads (q and scale) of a tile are all issued before its stores.
// CS: streaming stores (StoreHint::streaming). kDecodeThreads, kDecodeUnroll:
// tuning_policy.cuh.

template <bool CS>
__global__ void __launch_bounds__(kDecodeThreads)
    int8_decode_kernel(const std::int8_t* __restrict__ q, const float* __restrict__ scales, std::size_t n,
                       std::size_t chunk, int shift, float* __restrict__ y) {
  const std::size_t units = n / 4;
  constexpr std::size_t kTile = static_cast<std::size_t>(kDecodeThreads) * kDecodeUnroll;
  const std::uint32_t* q4 = reinterpret_cast<const std::uint32_t*>(q);
  float4* y4 = reinterpret_cast<float4*>(y);
  for (std::size_t base = blockIdx.x * kTile; base < units; base += gridDim.x * kTile) {
    std::uint32_t p[kDecodeUnroll];
    float s[kDecodeUnroll];
#pragma unroll
    for (int u = 0; u < kDecodeUnroll; ++u) {
      const std::size_t i = base + static_cast<std::size_t>(u) * kDecodeThreads + threadIdx.x;
      p[u] = i < units ? __ldg(q4 + i) : 0U;
      // chunk % 32 == 0: the 4 values of a unit share one chunk.
      s[u] = i < units ? __ldg(scales + detail::chunk_of(4 * i, chunk, shift)) : 0.0f;
    }
#pragma unroll
    for (int u = 0; u < kDecodeUnroll; ++u) {
      const std::size_t i = base + static_cast<std::size_t>(u) * kDecodeThreads + threadIdx.x;
      if (i < units) {
        float4 out;
        out.x = __fmul_rn(static_cast<float>(static_cast<std::int8_t>(p[u] & 0xffU)), s[u]);
        out.y = __fmul_rn(static_cast<float>(static_cast<std::int8_t>((p[u] >> 8) & 0xffU)), s[u]);
        out.z = __fmul_rn(static_cast<float>(static_cast<std::int8_t>((p[u] >> 16) & 0xffU)), s[u]);
        out.w = __fmul_rn(static_cast<float>(static_cast<std::int8_t>(p[u] >> 24)), s[u]);
        detail::store_out<CS>(y4 + i, out);
      }
    }
  }
  // n % 4 trailing values.
  const std::size_t i = 4 * units + detail::global_thread();
  if (i < n) detail::store_out<CS>(y + i, __fmul_rn(static_cast<float>(q[i]), scales[i / chunk]));
}

template <bool EF>
cudaError_t launch_encode(const float* x, std::size_t n, const Int8Params& p, std::int8_t* q, float* scales, float* r,
                          cudaStream_t stream) {
  if (!valid_chunk(p.chunk)) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (!detail::aligned16(x) || !detail::aligned16(q) || (EF && !detail::aligned16(r))) {
    return cudaErrorMisalignedAddress;
  }
  const std::size_t chunks = chunk_count(n, p.chunk);
  if (chunks > 0x7fffffffU) return cudaErrorInvalidValue;
  const std::uint64_t key = stream_key(p.seed, kTagStochasticRounding);
  detail::launch_encode_ladder(
      p.chunk, chunks,
      [&](auto rounds, std::size_t warp_blocks) {
        constexpr int R = decltype(rounds)::value;
        int8_encode_warp_kernel<EF, R>
            <<<detail::persistent_grid<int8_encode_warp_kernel<EF, R>, kWarpThreads>(warp_blocks), kWarpThreads, 0,
               stream>>>(x, n, p.chunk, chunks, p.stochastic_rounding, key, q, scales, r);
      },
      [&](unsigned blocks) {
        int8_encode_kernel<EF>
            <<<blocks, kChunkThreads, 0, stream>>>(x, n, p.chunk, p.stochastic_rounding, key, q, scales, r);
      });
  return cudaGetLastError();
}

}  // namespace

cudaError_t int8_encode_cuda(const float* x, std::size_t n, const Int8Params& p, std::int8_t* q, float* scales,
                             cudaStream_t stream) {
  return launch_encode<false>(x, n, p, q, scales, nullptr, stream);
}

cudaError_t int8_encode_ef_cuda(const float* x, std::size_t n, const Int8Params& p, std::int8_t* q, float* scales,
                                float* residual, cudaStream_t stream) {
  return launch_encode<true>(x, n, p, q, scales, residual, stream);
}

cudaError_t int8_decode_cuda(const std::int8_t* q, const float* scales, std::size_t n, std::size_t chunk, float* y,
                             cudaStream_t stream, StoreHint hint) {
  if (!valid_chunk(chunk)) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (!detail::aligned16(q) || !detail::aligned16(y)) return cudaErrorMisalignedAddress;
  constexpr std::size_t kTile = static_cast<std::size_t>(kDecodeThreads) * kDecodeUnroll;
  const std::size_t tiles = (n / 4 + kTile - 1) / kTile;
  const int shift = detail::pow2_shift(chunk);
  if (hint == StoreHint::streaming) {
    int8_decode_kernel<true>
        <<<detail::persistent_grid<int8_decode_kernel<true>, kDecodeThreads>(tiles), kDecodeThreads, 0, stream>>>(
            q, scales, n, chunk, shift, y);
  } else {
    int8_decode_kernel<false>
        <<<detail::persistent_grid<int8_decode_kernel<false>, kDecodeThreads>(tiles), kDecodeThreads, 0, stream>>>(
            q, scales, n, chunk, shift, y);
  }
  return cudaGetLastError();
}

}  // namespace gw::kernels
