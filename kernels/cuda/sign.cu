// 1-bit sign (EF-SignSGD) with per-chunk mean-magnitude scale, and majority
// vote. Encode, chunks up to 2048: one warp per chunk (sign_encode_warp_kernel,
// same canonical order; see there). Longer chunks: one 256-thread block per
// chunk; each thread reads 4-element
// groups (float4), ORs its 4 sign bits into 32-bit words with warp shuffles,
// and accumulates |x| in the canonical order of docs/kernels.md so the scale
// equals the CPU twin's bit for bit. The bits need no scale, so plain encode
// is one pass; the fused error feedback keeps the chunk in registers (chunks
// up to 4096) to write the residual after the scale is known.
#include "gradwire/kernels/sign_cuda.hpp"
#include "chunk_groups.cuh"
#include "launch_util.cuh"
#include "persistent.cuh"
#include "tuning_policy.cuh"

namespace gw::kernels {

namespace {

using detail::kDecodeThreads;
using detail::kRegGroups;
using detail::kWarpChunkMax;
using detail::kWarpThreads;
using detail::load_group;
using detail::store_group;
using detail::valid_chunk;

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
    sign_encode_kernel(const float* __restrict__ x, std::size_t n, std::size_t chunk, std::uint32_t* __restrict__ words,
                       float* __restrict__ scales, float* __restrict__ r) {
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
      for (int kk = 0; kk < kRegGroups; ++kk)
        if (static_cast<std::size_t>(kk) == k) v[kk] = a;
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
      store_group(r + begin, g, len, make_float4(residual(a.x), residual(a.y), residual(a.z), residual(a.w)));
    };
    detail::for_each_thread_group(v, in_regs, xc, groups, len, emit);
  }
}

// One warp per chunk for chunks up to kWarpChunkMax elements (the common
// case, chunk 1024). Lane l stands in for the canonical lanes t = 32w + l
// (w = 0..7, "virtual warp" w) of the 256-thread order of docs/kernels.md:
// slot (k, w) of lane l holds group g = 256k + 32w + l, and acc[w] adds the
// groups of canonical lane 32w + l in the canonical order (k ascending). The
// warp issues all its loads (R x 8 float4 per lane, each instruction
// contiguous) before reducing; no block barrier, 8 chunks per block,
// persistent over the chunks.
//
// Sum: the canonical per-warp shuffle-down tree pairs lane l with l + off;
// an xor butterfly pairs the same partial sums (a + b == b + a exactly), so
// it reproduces it bit for bit. Instead of 8 butterflies (40 shuffles) the
// 8 values are halved at each of the first three levels (each lane keeps
// the half selected by its lane bit and sends the other: 4 + 2 + 1
// shuffles), leaving lane l with virtual warp w = (l >> 2) & 7; two more
// levels (xor 2, 1) finish the warp sums, and the canonical tree over the
// 8 warp sums (w += w+4, +2, +1) is three more xor levels on lane bits 4, 3, 2.
// Bits: the same halving with OR over lane bits 2, 1, 0 leaves lane l with
// the word of virtual warp w = l & 7 at word offset 32k + 4w + (l >> 3);
// the 32 lanes then store 32 distinct words of one 128-byte line.
// kWarpThreads, kWarpChunkMax: tuning_policy.cuh.

template <int M>
__device__ __forceinline__ void halve_sum(float (&v)[8], unsigned lane, int off) {
  const bool hi = (lane & static_cast<unsigned>(off)) != 0;
#pragma unroll
  for (int i = 0; i < M / 2; ++i) {
    const float keep = hi ? v[i + M / 2] : v[i];
    const float send = hi ? v[i] : v[i + M / 2];
    v[i] = keep + __shfl_xor_sync(0xffffffffU, send, off);
  }
}

template <int M>
__device__ __forceinline__ void halve_or(std::uint32_t (&v)[8], unsigned lane, int off) {
  const bool hi = (lane & static_cast<unsigned>(off)) != 0;
#pragma unroll
  for (int i = 0; i < M / 2; ++i) {
    const std::uint32_t keep = hi ? v[i + M / 2] : v[i];
    const std::uint32_t send = hi ? v[i] : v[i + M / 2];
    v[i] = keep | __shfl_xor_sync(0xffffffffU, send, off);
  }
}

template <bool EF, int R>
__global__ void __launch_bounds__(kWarpThreads)
    sign_encode_warp_kernel(const float* __restrict__ x, std::size_t n, std::size_t chunk, std::size_t chunks,
                            std::uint32_t* __restrict__ words, float* __restrict__ scales, float* __restrict__ r) {
  const unsigned lane = detail::lane_id();
  for (std::size_t c = detail::global_warp(); c < chunks; c += detail::warp_count()) {
    const std::size_t begin = c * chunk;
    const std::size_t len = (n - begin < chunk) ? n - begin : chunk;
    const std::size_t groups = (len + 3) / 4;
    const float* xc = x + begin;
    std::uint32_t* wc = words + begin / 32;
    float4 v[R][8];
    detail::load_chunk_slots<R>(xc, groups, len, lane, v);
    // Canonical per-lane sums (padding adds +0: exact).
    float acc[8];
#pragma unroll
    for (int w = 0; w < 8; ++w) {
      acc[w] = 0.0f;
#pragma unroll
      for (int k = 0; k < R; ++k) {
        acc[w] += fabsf(v[k][w].x);
        acc[w] += fabsf(v[k][w].y);
        acc[w] += fabsf(v[k][w].z);
        acc[w] += fabsf(v[k][w].w);
      }
    }
    // Sign words, one store per round k.
#pragma unroll
    for (int k = 0; k < R; ++k) {
      std::uint32_t bits[8];
#pragma unroll
      for (int w = 0; w < 8; ++w) {
        const std::size_t g = detail::slot_group(k, w, lane);
        bits[w] = g < groups ? nibble(v[k][w], g, len) << (4 * (lane & 7U)) : 0U;
      }
      halve_or<8>(bits, lane, 4);
      halve_or<4>(bits, lane, 2);
      halve_or<2>(bits, lane, 1);
      const std::size_t word = static_cast<std::size_t>(32 * k) + 4 * (lane & 7U) + (lane >> 3);
      if (8 * word < groups) wc[word] = bits[0];
    }
    halve_sum<8>(acc, lane, 16);
    halve_sum<4>(acc, lane, 8);
    halve_sum<2>(acc, lane, 4);
    float t = acc[0];
    t += __shfl_xor_sync(0xffffffffU, t, 2);
    t += __shfl_xor_sync(0xffffffffU, t, 1);
    t += __shfl_xor_sync(0xffffffffU, t, 16);
    t += __shfl_xor_sync(0xffffffffU, t, 8);
    t += __shfl_xor_sync(0xffffffffU, t, 4);
    const float scale = __fdiv_rn(t, static_cast<float>(len));
    if (lane == 0) scales[c] = scale;
    if constexpr (EF) {
      auto residual = [&](float xv) { return __fsub_rn(xv, xv >= 0.0f ? scale : -scale); };
#pragma unroll
      for (int k = 0; k < R; ++k) {
#pragma unroll
        for (int w = 0; w < 8; ++w) {
          const std::size_t g = detail::slot_group(k, w, lane);
          const float4 a = v[k][w];
          if (g < groups) {
            store_group(r + begin, g, len, make_float4(residual(a.x), residual(a.y), residual(a.z), residual(a.w)));
          }
        }
      }
    }
  }
}

__device__ __forceinline__ float signed_scale(std::uint32_t bit, float s) { return bit ? s : -s; }

// Decoders: a warp tile is 32 sign words = 1024 values. Lane l loads word
// tile*32 + l and the scale of its chunk (chunk % 32 == 0: one chunk per
// word), coalesced; then 8 store rounds, in round j lane l writes the float4
// of values 4(32j + l) .. +3, whose nibble is nibble (l & 7) of word 4j + (l >> 3),
// fetched with a shuffle, so every store instruction writes 512 contiguous
// bytes. kTilesPerIter tiles per iteration: their loads are all issued first.
// Persistent grid, grid-stride over warp tiles. CS: streaming stores
// (StoreHint::streaming).
// kDecodeThreads: tuning_policy.cuh.
constexpr int kTilesPerIter = 2;

template <bool CS>
__device__ __forceinline__ void store_tile_values(float* __restrict__ y, std::size_t n, std::size_t tile, unsigned lane,
                                                  int j, float4 out) {
  const std::size_t e = tile * 1024 + 4 * (32 * static_cast<std::size_t>(j) + lane);
  if (e + 3 < n) {
    detail::store_out<CS>(reinterpret_cast<float4*>(y + e), out);
    return;
  }
  if (e < n) detail::store_out<CS>(y + e, out.x);
  if (e + 1 < n) detail::store_out<CS>(y + e + 1, out.y);
  if (e + 2 < n) detail::store_out<CS>(y + e + 2, out.z);
}

template <bool CS>
__global__ void __launch_bounds__(kDecodeThreads)
    sign_decode_kernel(const std::uint32_t* __restrict__ words, const float* __restrict__ scales, std::size_t n,
                       std::size_t chunk, int shift, float* __restrict__ y) {
  const unsigned lane = detail::lane_id();
  const std::size_t nw = (n + 31) / 32, tiles = (nw + 31) / 32;
  const std::size_t stride = detail::warp_count();
  for (std::size_t t0 = detail::global_warp() * kTilesPerIter; t0 < tiles; t0 += stride * kTilesPerIter) {
    std::uint32_t wd[kTilesPerIter];
    float sc[kTilesPerIter];
#pragma unroll
    for (int u = 0; u < kTilesPerIter; ++u) {
      const std::size_t wi = (t0 + u) * 32 + lane;
      wd[u] = wi < nw ? __ldg(words + wi) : 0U;
      sc[u] = wi < nw ? __ldg(scales + detail::chunk_of(32 * wi, chunk, shift)) : 0.0f;
    }
#pragma unroll
    for (int u = 0; u < kTilesPerIter; ++u) {
      if (t0 + u >= tiles) break;  // uniform in the warp
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const int src = 4 * j + static_cast<int>(lane >> 3);
        const std::uint32_t nib = (__shfl_sync(0xffffffffU, wd[u], src) >> (4 * (lane & 7U))) & 0xfU;
        const float s = __shfl_sync(0xffffffffU, sc[u], src);
        store_tile_values<CS>(y, n, t0 + u, lane, j,
                              make_float4(signed_scale(nib & 1U, s), signed_scale(nib & 2U, s),
                                          signed_scale(nib & 4U, s), signed_scale(nib & 8U, s)));
      }
    }
  }
}

// Majority vote over N workers, same warp tiles: lane l reads word l of the
// tile from every worker (coalesced; loads unrolled so several are in flight)
// and counts the votes of its 32 bits at once in P bit-planes (a ripple
// adder on whole words: plane p holds bit p of the 32 counts; N < 2^P).
// Then gt = (votes > N/2) and eq = (votes == N/2) by a bit-sliced comparison
// from the top plane: 2v > N <=> v > floor(N/2); 2v < N <=> !(v > floor(N/2))
// and not (N even and v == N/2). The scale is the workers' scales summed in
// worker order, then divided by N, as the CPU twin does.
template <int P, bool CS>
__global__ void __launch_bounds__(kDecodeThreads)
    majority_vote_kernel(const std::uint32_t* __restrict__ words, const float* __restrict__ scales, int workers,
                         std::size_t n, std::size_t chunk, int shift, float* __restrict__ y) {
  const unsigned lane = detail::lane_id();
  const std::size_t nw = (n + 31) / 32, nc = (n + chunk - 1) / chunk, tiles = (nw + 31) / 32;
  const auto half = static_cast<std::uint32_t>(workers / 2);
  const bool even = (workers % 2) == 0;
  for (std::size_t t = detail::global_warp(); t < tiles; t += detail::warp_count()) {
    const std::size_t wi = t * 32 + lane;
    const bool valid = wi < nw;
    const std::size_t c = valid ? detail::chunk_of(32 * wi, chunk, shift) : 0;
    std::uint32_t plane[P];
#pragma unroll
    for (int p = 0; p < P; ++p) plane[p] = 0U;
    float s = 0.0f;
#pragma unroll 8
    for (int w = 0; w < workers; ++w) {
      const auto wu = static_cast<std::size_t>(w);
      std::uint32_t carry = valid ? __ldg(words + wu * nw + wi) : 0U;
      s = __fadd_rn(s, valid ? __ldg(scales + wu * nc + c) : 0.0f);
#pragma unroll
      for (int p = 0; p < P; ++p) {
        const std::uint32_t next = plane[p] & carry;
        plane[p] ^= carry;
        carry = next;
      }
    }
    s = __fdiv_rn(s, static_cast<float>(workers));
    std::uint32_t gt = 0U, eq = 0xffffffffU;
#pragma unroll
    for (int p = P - 1; p >= 0; --p) {
      const std::uint32_t tb = ((half >> p) & 1U) ? 0xffffffffU : 0U;
      gt |= eq & plane[p] & ~tb;
      eq &= ~(plane[p] ^ tb);
    }
    const std::uint32_t pos = gt;
    const std::uint32_t neg = ~gt & (even ? ~eq : 0xffffffffU);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int src = 4 * j + static_cast<int>(lane >> 3);
      const unsigned sh = 4 * (lane & 7U);
      const std::uint32_t pn = (__shfl_sync(0xffffffffU, pos, src) >> sh) & 0xfU;
      const std::uint32_t nn = (__shfl_sync(0xffffffffU, neg, src) >> sh) & 0xfU;
      const float sv = __shfl_sync(0xffffffffU, s, src);
      auto vote = [&](unsigned b) { return (pn >> b) & 1U ? sv : (((nn >> b) & 1U) ? -sv : 0.0f); };
      store_tile_values<CS>(y, n, t, lane, j, make_float4(vote(0), vote(1), vote(2), vote(3)));
    }
  }
}

template <bool EF>
cudaError_t launch_encode(const float* x, std::size_t n, std::size_t chunk, std::uint32_t* words, float* scales,
                          float* r, cudaStream_t stream) {
  if (!valid_chunk(chunk)) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (!detail::aligned16(x) || (EF && !detail::aligned16(r))) return cudaErrorMisalignedAddress;
  const std::size_t chunks = chunk_count(n, chunk);
  if (chunks > 0x7fffffffU) return cudaErrorInvalidValue;
  detail::launch_encode_ladder(
      chunk, chunks,
      [&](auto rounds, std::size_t warp_blocks) {
        constexpr int R = decltype(rounds)::value;
        sign_encode_warp_kernel<EF, R>
            <<<detail::persistent_grid<sign_encode_warp_kernel<EF, R>, kWarpThreads>(warp_blocks), kWarpThreads, 0,
               stream>>>(x, n, chunk, chunks, words, scales, r);
      },
      [&](unsigned blocks) {
        sign_encode_kernel<EF><<<blocks, kChunkThreads, 0, stream>>>(x, n, chunk, words, scales, r);
      });
  return cudaGetLastError();
}

}  // namespace

cudaError_t sign_encode_cuda(const float* x, std::size_t n, std::size_t chunk, std::uint32_t* words, float* scales,
                             cudaStream_t stream) {
  return launch_encode<false>(x, n, chunk, words, scales, nullptr, stream);
}

cudaError_t sign_encode_ef_cuda(const float* x, std::size_t n, std::size_t chunk, std::uint32_t* words, float* scales,
                                float* residual, cudaStream_t stream) {
  return launch_encode<true>(x, n, chunk, words, scales, residual, stream);
}

namespace {

template <bool CS>
void launch_sign_decode(const std::uint32_t* words, const float* scales, std::size_t n, std::size_t chunk, float* y,
                        cudaStream_t stream) {
  const std::size_t tiles = ((n + 31) / 32 + 31) / 32;
  const std::size_t warps_needed = (tiles + kTilesPerIter - 1) / kTilesPerIter;
  const std::size_t blocks = (warps_needed + kDecodeThreads / 32 - 1) / (kDecodeThreads / 32);
  sign_decode_kernel<CS>
      <<<detail::persistent_grid<sign_decode_kernel<CS>, kDecodeThreads>(blocks), kDecodeThreads, 0, stream>>>(
          words, scales, n, chunk, detail::pow2_shift(chunk), y);
}

template <int P, bool CS>
void launch_majority_vote(const std::uint32_t* words, const float* scales, int workers, std::size_t n,
                          std::size_t chunk, float* y, cudaStream_t stream) {
  const std::size_t tiles = ((n + 31) / 32 + 31) / 32;
  const std::size_t blocks = (tiles + kDecodeThreads / 32 - 1) / (kDecodeThreads / 32);
  majority_vote_kernel<P, CS>
      <<<detail::persistent_grid<majority_vote_kernel<P, CS>, kDecodeThreads>(blocks), kDecodeThreads, 0, stream>>>(
          words, scales, workers, n, chunk, detail::pow2_shift(chunk), y);
}

template <bool CS>
void launch_majority_vote(const std::uint32_t* words, const float* scales, int workers, std::size_t n,
                          std::size_t chunk, float* y, cudaStream_t stream) {
  if (workers <= 15)
    launch_majority_vote<4, CS>(words, scales, workers, n, chunk, y, stream);
  else if (workers <= 255)
    launch_majority_vote<8, CS>(words, scales, workers, n, chunk, y, stream);
  else
    launch_majority_vote<32, CS>(words, scales, workers, n, chunk, y, stream);
}

}  // namespace

cudaError_t sign_decode_cuda(const std::uint32_t* words, const float* scales, std::size_t n, std::size_t chunk,
                             float* y, cudaStream_t stream, StoreHint hint) {
  if (!valid_chunk(chunk)) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (!detail::aligned16(y)) return cudaErrorMisalignedAddress;
  if (hint == StoreHint::streaming)
    launch_sign_decode<true>(words, scales, n, chunk, y, stream);
  else
    launch_sign_decode<false>(words, scales, n, chunk, y, stream);
  return cudaGetLastError();
}

cudaError_t majority_vote_decode_cuda(const std::uint32_t* words, const float* scales, int workers, std::size_t n,
                                      std::size_t chunk, float* y, cudaStream_t stream, StoreHint hint) {
  if (!valid_chunk(chunk) || workers < 1) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (!detail::aligned16(y)) return cudaErrorMisalignedAddress;
  if (hint == StoreHint::streaming)
    launch_majority_vote<true>(words, scales, workers, n, chunk, y, stream);
  else
    launch_majority_vote<false>(words, scales, workers, n, chunk, y, stream);
  return cudaGetLastError();
}

}  // namespace gw::kernels
