// Top-K by magnitude on the GPU: radix select + ordered compaction, and the
// cub::DeviceRadixSort baseline. See docs/kernels-topk-powersgd.md.
//
// Radix select over the 31-bit key (|x| bits), digits of 11, 11 and 9 bits:
//   1. hist0    : full read, histogram of key >> 20.
//   2. select   : one block finds the digit d0 holding the k-th largest key.
//   3. filter   : full read; per tile, append the indices of every element
//                 whose top digit is >= d0 ("kept": all elements that can be
//                 selected) to a buffer, in index order within the tile, and
//                 record where the tile's slice starts; histogram the middle
//                 digit of the candidates (top digit == d0).
//   4. select   : middle digit.
//   5. cand_hist: over the kept elements, histogram of the low 9 bits of
//                 those matching the 22-bit prefix.
//   6. select   : threshold T (the k-th largest key) and k_eq, the number of
//                 elements equal to T to take (the first k_eq by index).
//   7. cand_tile: over the kept elements, per-tile counts of key > T and == T.
//   8. tile_scan: one block, exclusive prefix over tiles of (#key > T,
//                 #key == T).
//   9. write    : one warp per tile walks the tile's kept slice in index
//                 order; element e is selected when key > T, or key == T and
//                 E(e) < k_eq, where E(e) (G(e)) counts the elements == T
//                 (> T) before e; it goes to position G(e) + min(E(e), k_eq).
//                 The error-feedback variant instead re-reads all of x (it
//                 writes the whole residual anyway) with the same rule.
// Two full reads of x (three with error feedback); everything else touches
// O(kept + tiles), about 1% of n for k = 1% of Gaussian data.
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>

#include <climits>
#include <cstdint>

#include "gradwire/kernels/topk_cuda.hpp"

namespace gw::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kItems = static_cast<int>(kTopkTile) / kThreads;  // 16 per thread
constexpr int kWarpSpan = 32 * kItems;                          // 512 consecutive elements
constexpr int kSelectThreads = 1024;
static_assert(kTopkTile == static_cast<std::size_t>(kThreads * kItems), "tile geometry");

// State words (uint32) at the start of the workspace.
enum StateWord : int {
  kPrefix = 0,     // key bits fixed so far (lower bits zero)
  kRemaining = 1,  // how many to take inside the current bucket
  kKept = 2,       // indices appended by the filter pass
  kThreshold = 3,  // T
  kTies = 4,       // k_eq
};

__device__ __forceinline__ std::uint32_t key_of(float v) { return __float_as_uint(v) & 0x7fffffffu; }

__device__ __forceinline__ std::uint32_t lanemask_lt() { return (1u << (threadIdx.x & 31u)) - 1u; }

// Loads the tile's 16 elements of this thread: warp w owns the 512
// consecutive elements [w*512, (w+1)*512) of the tile, lane l takes
// element j*32 + l of that span in round j (coalesced 128-byte rows).
__device__ __forceinline__ void load_tile(const float* x, std::size_t n, std::size_t tile, float (&v)[kItems],
                                          bool (&valid)[kItems]) {
  const std::size_t base = tile * kTopkTile + (threadIdx.x / 32u) * kWarpSpan + (threadIdx.x & 31u);
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    const std::size_t i = base + static_cast<std::size_t>(j) * 32u;
    valid[j] = i < n;
    v[j] = valid[j] ? x[i] : 0.0f;
  }
}

__device__ __forceinline__ std::size_t element_index(std::size_t tile, int j) {
  return tile * kTopkTile + (threadIdx.x / 32u) * kWarpSpan + static_cast<std::size_t>(j) * 32u + (threadIdx.x & 31u);
}

// Pass 1: histogram of the top 11 key bits.
__global__ void __launch_bounds__(kThreads)
    hist0_kernel(const float* __restrict__ x, std::size_t n, std::size_t tiles, std::uint32_t* __restrict__ hist) {
  __shared__ std::uint32_t sh[kTopkBins0];
  for (int b = static_cast<int>(threadIdx.x); b < kTopkBins0; b += kThreads) sh[b] = 0;
  __syncthreads();
  for (std::size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    float v[kItems];
    bool valid[kItems];
    load_tile(x, n, tile, v, valid);
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      if (valid[j]) atomicAdd(&sh[key_of(v[j]) >> 20], 1u);
    }
  }
  __syncthreads();
  for (int b = static_cast<int>(threadIdx.x); b < kTopkBins0; b += kThreads) {
    if (sh[b] != 0) atomicAdd(&hist[b], sh[b]);
  }
}

// Finds the digit of the bucket holding the `remaining`-th largest key among
// the elements counted in `hist`, updates prefix/remaining. Pass 0 starts
// from remaining = k. One block of kSelectThreads.
__global__ void __launch_bounds__(kSelectThreads)
    select_kernel(const std::uint32_t* __restrict__ hist, int bins, int shift, int pass, std::uint32_t k,
                  std::uint32_t* __restrict__ state) {
  using Scan = cub::BlockScan<std::uint32_t, kSelectThreads>;
  __shared__ typename Scan::TempStorage temp;
  const std::uint32_t remaining = pass == 0 ? k : state[kRemaining];
  const int per = (bins + kSelectThreads - 1) / kSelectThreads;
  // Thread t owns the descending positions [t*per, t*per + per): bin = bins-1-pos.
  std::uint32_t local = 0;
  for (int i = 0; i < per; ++i) {
    const int pos = static_cast<int>(threadIdx.x) * per + i;
    if (pos < bins) local += hist[bins - 1 - pos];
  }
  std::uint32_t above = 0;
  Scan(temp).ExclusiveSum(local, above);
  for (int i = 0; i < per; ++i) {
    const int pos = static_cast<int>(threadIdx.x) * per + i;
    if (pos >= bins) break;
    const int bin = bins - 1 - pos;
    const std::uint32_t h = hist[bin];
    if (above < remaining && above + h >= remaining) {
      const std::uint32_t prefix = (pass == 0 ? 0u : state[kPrefix]) | (static_cast<std::uint32_t>(bin) << shift);
      const std::uint32_t left = remaining - above;
      state[kPrefix] = prefix;
      state[kRemaining] = left;
      if (pass == 2) {
        state[kThreshold] = prefix;
        state[kTies] = left;
      }
    }
    above += h;
  }
}

// Pass 2: per tile, append the indices of the elements with top digit >= d0
// (in index order) and record the tile's slice; histogram the middle digit
// of the candidates (top digit == d0).
__global__ void __launch_bounds__(kThreads)
    filter_kernel(const float* __restrict__ x, std::size_t n, std::size_t tiles, std::uint32_t* __restrict__ state,
                  std::uint32_t* __restrict__ hist1, std::uint32_t* __restrict__ tile_base,
                  std::uint32_t* __restrict__ tile_count, std::int32_t* __restrict__ kept) {
  __shared__ std::uint32_t sh[kTopkBins1];
  __shared__ std::uint32_t warp_kept[kWarps];
  __shared__ std::uint32_t block_base;
  for (int b = static_cast<int>(threadIdx.x); b < kTopkBins1; b += kThreads) sh[b] = 0;
  const std::uint32_t d0 = state[kPrefix] >> 20;
  const unsigned warp = threadIdx.x / 32u;
  const unsigned lane = threadIdx.x & 31u;
  __syncthreads();
  for (std::size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    float v[kItems];
    bool valid[kItems];
    load_tile(x, n, tile, v, valid);
    std::uint32_t keep_mask[kItems];
    std::uint32_t n_keep = 0;
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const std::uint32_t key = key_of(v[j]);
      const std::uint32_t digit = key >> 20;
      keep_mask[j] = __ballot_sync(0xffffffffu, valid[j] && digit >= d0);
      n_keep += static_cast<std::uint32_t>(__popc(keep_mask[j]));
      if (valid[j] && digit == d0) atomicAdd(&sh[(key >> 9) & 0x7ffu], 1u);
    }
    if (lane == 0) warp_kept[warp] = n_keep;
    __syncthreads();
    if (threadIdx.x == 0) {
      std::uint32_t total = 0;
      for (int w = 0; w < kWarps; ++w) {
        const std::uint32_t c = warp_kept[w];
        warp_kept[w] = total;  // becomes the warp's exclusive offset
        total += c;
      }
      block_base = total != 0 ? atomicAdd(&state[kKept], total) : 0u;
      tile_base[tile] = block_base;
      tile_count[tile] = total;
    }
    __syncthreads();
    std::uint32_t pos = block_base + warp_kept[warp];
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      if (keep_mask[j] & (1u << lane)) {
        kept[pos + static_cast<std::uint32_t>(__popc(keep_mask[j] & lanemask_lt()))] =
            static_cast<std::int32_t>(element_index(tile, j));
      }
      pos += static_cast<std::uint32_t>(__popc(keep_mask[j]));
    }
    __syncthreads();  // warp_kept / block_base are reused by the next tile
  }
  for (int b = static_cast<int>(threadIdx.x); b < kTopkBins1; b += kThreads) {
    if (sh[b] != 0) atomicAdd(&hist1[b], sh[b]);
  }
}

// The kept-element passes are latency-bound gathers (kept[i] -> x[idx]):
// every thread handles kUnroll independent elements per round.
constexpr int kUnroll = 4;

// Pass 3: histogram of the low 9 bits over the kept elements matching 22 bits.
__global__ void __launch_bounds__(kThreads)
    cand_hist_kernel(const float* __restrict__ x, const std::int32_t* __restrict__ kept,
                     const std::uint32_t* __restrict__ state, std::uint32_t* __restrict__ hist2) {
  __shared__ std::uint32_t sh[kTopkBins2];
  for (int b = static_cast<int>(threadIdx.x); b < kTopkBins2; b += kThreads) sh[b] = 0;
  __syncthreads();
  const std::uint32_t count = state[kKept];
  const std::uint32_t high = state[kPrefix] >> 9;
  const std::uint32_t stride = gridDim.x * kThreads * kUnroll;
  for (std::uint32_t i0 = blockIdx.x * kThreads * kUnroll + threadIdx.x; i0 < count; i0 += stride) {
    std::uint32_t key[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::uint32_t i = i0 + static_cast<std::uint32_t>(u) * kThreads;
      key[u] = i < count ? key_of(x[kept[i]]) : 0xffffffffu;
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (key[u] != 0xffffffffu && (key[u] >> 9) == high) atomicAdd(&sh[key[u] & 0x1ffu], 1u);
    }
  }
  __syncthreads();
  for (int b = static_cast<int>(threadIdx.x); b < kTopkBins2; b += kThreads) {
    if (sh[b] != 0) atomicAdd(&hist2[b], sh[b]);
  }
}

// Per-tile counts of key > T and key == T over the kept elements (every
// element with key >= T is kept). Kept indices were appended tile by tile,
// so neighbouring lanes mostly share a tile: one atomic per group of equal
// (tile, kind).
__global__ void __launch_bounds__(kThreads)
    cand_tile_kernel(const float* __restrict__ x, const std::int32_t* __restrict__ kept,
                     const std::uint32_t* __restrict__ state, std::uint32_t* __restrict__ tile_gt,
                     std::uint32_t* __restrict__ tile_eq) {
  const std::uint32_t count = state[kKept];
  const std::uint32_t threshold = state[kThreshold];
  const std::uint32_t stride = gridDim.x * kThreads * kUnroll;
  // Every lane of a warp runs the same number of rounds (for __match_any_sync).
  const std::uint32_t rounds = (count + stride - 1) / stride;
  for (std::uint32_t r = 0; r < rounds; ++r) {
    const std::uint32_t i0 = r * stride + blockIdx.x * kThreads * kUnroll + threadIdx.x;
    std::uint32_t tag[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::uint32_t i = i0 + static_cast<std::uint32_t>(u) * kThreads;
      tag[u] = 0xffffffffu;  // none
      if (i < count) {
        const std::int32_t idx = kept[i];
        const std::uint32_t key = key_of(x[idx]);
        const std::uint32_t tile = static_cast<std::uint32_t>(idx) / static_cast<std::uint32_t>(kTopkTile);
        if (key > threshold) tag[u] = tile * 2u;
        if (key == threshold) tag[u] = tile * 2u + 1u;
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::uint32_t group = __match_any_sync(0xffffffffu, tag[u]);
      if (tag[u] != 0xffffffffu && (threadIdx.x & 31u) == static_cast<unsigned>(__ffs(group) - 1)) {
        std::uint32_t* counter = (tag[u] & 1u) != 0 ? &tile_eq[tag[u] >> 1] : &tile_gt[tag[u] >> 1];
        atomicAdd(counter, static_cast<std::uint32_t>(__popc(group)));
      }
    }
  }
}

// Exclusive prefix over tiles: g_before[t] = #(key > T) and e_before[t] =
// #(key == T) in tiles < t. One block; all loads of a chunk of
// kScanRounds x 1024 tiles are issued before the scans (latency-bound otherwise).
constexpr int kScanRounds = 16;
__global__ void __launch_bounds__(kSelectThreads)
    tile_scan_kernel(const std::uint32_t* __restrict__ tile_gt, const std::uint32_t* __restrict__ tile_eq,
                     std::size_t tiles, std::uint32_t* __restrict__ g_before, std::uint32_t* __restrict__ e_before) {
  using Scan = cub::BlockScan<unsigned long long, kSelectThreads>;
  __shared__ typename Scan::TempStorage temp;
  unsigned long long running = 0;  // (#gt << 32) | #eq; both < 2^31
  for (std::size_t base = 0; base < tiles; base += kSelectThreads * kScanRounds) {
    unsigned long long mine[kScanRounds];
#pragma unroll
    for (int q = 0; q < kScanRounds; ++q) {
      const std::size_t t = base + static_cast<std::size_t>(q) * kSelectThreads + threadIdx.x;
      mine[q] = t < tiles ? (static_cast<unsigned long long>(tile_gt[t]) << 32) | tile_eq[t] : 0ull;
    }
#pragma unroll
    for (int q = 0; q < kScanRounds; ++q) {
      if (base + static_cast<std::size_t>(q) * kSelectThreads >= tiles) break;  // block-uniform
      const std::size_t t = base + static_cast<std::size_t>(q) * kSelectThreads + threadIdx.x;
      unsigned long long before = 0, total = 0;
      Scan(temp).ExclusiveSum(mine[q], before, total);
      before += running;
      if (t < tiles) {
        g_before[t] = static_cast<std::uint32_t>(before >> 32);
        e_before[t] = static_cast<std::uint32_t>(before & 0xffffffffu);
      }
      running += total;
      __syncthreads();  // temp is reused
    }
  }
}

// Final pass (no error feedback): one warp per tile walks the tile's kept
// slice, which is in index order, with the rule in the file header.
__global__ void __launch_bounds__(kThreads)
    write_kept_kernel(const float* __restrict__ x, std::size_t tiles, const std::int32_t* __restrict__ kept,
                      const std::uint32_t* __restrict__ tile_base, const std::uint32_t* __restrict__ tile_count,
                      const std::uint32_t* __restrict__ state, const std::uint32_t* __restrict__ g_before,
                      const std::uint32_t* __restrict__ e_before, float* __restrict__ values,
                      std::int32_t* __restrict__ indices) {
  const std::uint32_t threshold = state[kThreshold];
  const std::uint32_t ties = state[kTies];
  const unsigned lane = threadIdx.x & 31u;
  const std::uint32_t lt = lanemask_lt();
  const std::size_t warps = static_cast<std::size_t>(gridDim.x) * kWarps;
  for (std::size_t tile = blockIdx.x * static_cast<std::size_t>(kWarps) + threadIdx.x / 32u; tile < tiles;
       tile += warps) {
    const std::uint32_t base = tile_base[tile];
    const std::uint32_t count = tile_count[tile];
    std::uint32_t g = g_before[tile], e = e_before[tile];
    for (std::uint32_t c = 0; c < count; c += 32) {
      const bool valid = c + lane < count;
      std::int32_t idx = 0;
      float v = 0.0f;
      if (valid) {
        idx = kept[base + c + lane];
        v = x[idx];
      }
      const std::uint32_t key = key_of(v);
      const std::uint32_t gm = __ballot_sync(0xffffffffu, valid && key > threshold);
      const std::uint32_t em = __ballot_sync(0xffffffffu, valid && key == threshold);
      const std::uint32_t bit = 1u << lane;
      const std::uint32_t my_e = e + static_cast<std::uint32_t>(__popc(em & lt));
      if ((gm & bit) != 0 || ((em & bit) != 0 && my_e < ties)) {
        const std::uint32_t pos = g + static_cast<std::uint32_t>(__popc(gm & lt)) + min(my_e, ties);
        values[pos] = v;
        indices[pos] = idx;
      }
      g += static_cast<std::uint32_t>(__popc(gm));
      e += static_cast<std::uint32_t>(__popc(em));
    }
  }
}

// Final pass with error feedback: full read of x, ordered compaction of the
// selected elements and the residual of every element (see file header).
template <bool kResidual>
__global__ void __launch_bounds__(kThreads)
    write_kernel(const float* __restrict__ x, std::size_t n, std::size_t tiles, const std::uint32_t* __restrict__ state,
                 const std::uint32_t* __restrict__ g_before, const std::uint32_t* __restrict__ e_before,
                 float* __restrict__ values, std::int32_t* __restrict__ indices, float* __restrict__ residual) {
  __shared__ std::uint32_t masks[kWarps][2][kItems];
  __shared__ std::uint32_t warp_g[kWarps];
  __shared__ std::uint32_t warp_e[kWarps];
  const std::uint32_t threshold = state[kThreshold];
  const std::uint32_t ties = state[kTies];
  const unsigned warp = threadIdx.x / 32u;
  const unsigned lane = threadIdx.x & 31u;
  for (std::size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    float v[kItems];
    bool valid[kItems];
    load_tile(x, n, tile, v, valid);
    std::uint32_t n_g = 0, n_e = 0;
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const std::uint32_t key = key_of(v[j]);
      const std::uint32_t gm = __ballot_sync(0xffffffffu, valid[j] && key > threshold);
      const std::uint32_t em = __ballot_sync(0xffffffffu, valid[j] && key == threshold);
      if (lane == 0) {
        masks[warp][0][j] = gm;
        masks[warp][1][j] = em;
      }
      n_g += static_cast<std::uint32_t>(__popc(gm));
      n_e += static_cast<std::uint32_t>(__popc(em));
    }
    if (lane == 0) {
      warp_g[warp] = n_g;
      warp_e[warp] = n_e;
    }
    __syncthreads();
    std::uint32_t g = g_before[tile], e = e_before[tile];
    for (unsigned w = 0; w < warp; ++w) {
      g += warp_g[w];
      e += warp_e[w];
    }
    const std::uint32_t lt = lanemask_lt();
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const std::uint32_t gm = masks[warp][0][j];
      const std::uint32_t em = masks[warp][1][j];
      const std::uint32_t bit = 1u << lane;
      const std::uint32_t my_e = e + static_cast<std::uint32_t>(__popc(em & lt));
      const std::uint32_t my_g = g + static_cast<std::uint32_t>(__popc(gm & lt));
      const bool selected = (gm & bit) != 0 || ((em & bit) != 0 && my_e < ties);
      if (selected) {
        const std::uint32_t pos = my_g + min(my_e, ties);
        values[pos] = v[j];
        indices[pos] = static_cast<std::int32_t>(element_index(tile, j));
      }
      if (kResidual && valid[j]) {
        residual[element_index(tile, j)] = selected ? __fsub_rn(v[j], v[j]) : v[j];
      }
      g += static_cast<std::uint32_t>(__popc(gm));
      e += static_cast<std::uint32_t>(__popc(em));
    }
    __syncthreads();  // masks / warp sums are reused by the next tile
  }
}

int sm_count() {
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || sms <= 0) {
    sms = 132;
  }
  return sms;
}

unsigned stream_grid(std::size_t tiles, int per_sm) {
  const std::size_t cap = static_cast<std::size_t>(sm_count()) * static_cast<std::size_t>(per_sm);
  return static_cast<unsigned>(tiles < cap ? (tiles == 0 ? 1 : tiles) : cap);
}

bool bad_sizes(std::size_t n, std::size_t k) { return k > n || n > static_cast<std::size_t>(INT_MAX); }

template <class T>
T* at(void* base, std::size_t offset) {
  return reinterpret_cast<T*>(static_cast<char*>(base) + offset);
}

cudaError_t radix_select(const float* x, std::size_t n, std::size_t k, float* values, std::int32_t* indices,
                         float* residual, void* workspace, std::size_t workspace_bytes, cudaStream_t stream) {
  if (bad_sizes(n, k)) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if (k == 0) {
    if (residual == nullptr) return cudaSuccess;
    return cudaMemcpyAsync(residual, x, n * sizeof(float), cudaMemcpyDeviceToDevice, stream);
  }
  const TopkWorkspaceLayout l = topk_workspace_layout(n);
  if (workspace == nullptr || workspace_bytes < l.total) return cudaErrorInvalidValue;
  auto* state = at<std::uint32_t>(workspace, l.state);
  auto* hist0 = at<std::uint32_t>(workspace, l.hist);
  auto* hist1 = hist0 + kTopkBins0;
  auto* hist2 = hist1 + kTopkBins1;
  auto* tile_gt = at<std::uint32_t>(workspace, l.tile_gt);
  auto* tile_eq = at<std::uint32_t>(workspace, l.tile_eq);
  auto* tile_base = at<std::uint32_t>(workspace, l.tile_base);
  auto* tile_count = at<std::uint32_t>(workspace, l.tile_count);
  auto* g_before = at<std::uint32_t>(workspace, l.tile_gbefore);
  auto* e_before = at<std::uint32_t>(workspace, l.tile_ebefore);
  auto* kept = at<std::int32_t>(workspace, l.kept);
  const std::size_t tiles = (n + kTopkTile - 1) / kTopkTile;
  const auto k32 = static_cast<std::uint32_t>(k);
  const unsigned grid = stream_grid(tiles, 4);
  const unsigned kept_grid = stream_grid(tiles, 8);
  const unsigned warp_grid = stream_grid((tiles + kWarps - 1) / kWarps, 8);

  cudaError_t err = cudaMemsetAsync(workspace, 0, l.zero_bytes, stream);
  if (err != cudaSuccess) return err;
  hist0_kernel<<<grid, kThreads, 0, stream>>>(x, n, tiles, hist0);
  select_kernel<<<1, kSelectThreads, 0, stream>>>(hist0, kTopkBins0, 20, 0, k32, state);
  filter_kernel<<<grid, kThreads, 0, stream>>>(x, n, tiles, state, hist1, tile_base, tile_count, kept);
  select_kernel<<<1, kSelectThreads, 0, stream>>>(hist1, kTopkBins1, 9, 1, k32, state);
  cand_hist_kernel<<<kept_grid, kThreads, 0, stream>>>(x, kept, state, hist2);
  select_kernel<<<1, kSelectThreads, 0, stream>>>(hist2, kTopkBins2, 0, 2, k32, state);
  cand_tile_kernel<<<kept_grid, kThreads, 0, stream>>>(x, kept, state, tile_gt, tile_eq);
  tile_scan_kernel<<<1, kSelectThreads, 0, stream>>>(tile_gt, tile_eq, tiles, g_before, e_before);
  if (residual != nullptr) {
    write_kernel<true>
        <<<grid, kThreads, 0, stream>>>(x, n, tiles, state, g_before, e_before, values, indices, residual);
  } else {
    write_kept_kernel<<<warp_grid, kThreads, 0, stream>>>(x, tiles, kept, tile_base, tile_count, state, g_before,
                                                          e_before, values, indices);
  }
  return cudaGetLastError();
}

// ----- baseline: full radix sort --------------------------------------------

__global__ void make_pairs_kernel(const float* __restrict__ x, std::size_t n, std::uint32_t* __restrict__ keys,
                                  std::int32_t* __restrict__ idx) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    keys[i] = key_of(x[i]);
    idx[i] = static_cast<std::int32_t>(i);
  }
}

__global__ void gather_kernel(const float* __restrict__ x, const std::int32_t* __restrict__ idx, std::size_t k,
                              float* __restrict__ values) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < k;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    values[i] = x[idx[i]];
  }
}

struct SortLayout {
  std::size_t keys_in, keys_out, idx_in, idx_out, temp, temp_bytes, total;
};

int index_bits(std::size_t n) {
  int bits = 1;
  while (bits < 31 && (std::size_t{1} << bits) < n) ++bits;
  return bits;
}

SortLayout sort_layout(std::size_t n, std::size_t k, cudaError_t* err) {
  auto align = [](std::size_t b) { return (b + 255u) & ~static_cast<std::size_t>(255u); };
  SortLayout s{};
  std::size_t pairs_bytes = 0, keys_bytes = 0;
  const int items = static_cast<int>(n);
  *err = cub::DeviceRadixSort::SortPairsDescending(
      nullptr, pairs_bytes, static_cast<const std::uint32_t*>(nullptr), static_cast<std::uint32_t*>(nullptr),
      static_cast<const std::int32_t*>(nullptr), static_cast<std::int32_t*>(nullptr), items, 0, 31);
  if (*err == cudaSuccess) {
    *err = cub::DeviceRadixSort::SortKeys(nullptr, keys_bytes, static_cast<const std::int32_t*>(nullptr),
                                          static_cast<std::int32_t*>(nullptr), static_cast<int>(k), 0, index_bits(n));
  }
  const std::size_t a = align(n * 4);
  s.keys_in = 0;
  s.keys_out = a;
  s.idx_in = 2 * a;
  s.idx_out = 3 * a;
  s.temp = 4 * a;
  s.temp_bytes = align(pairs_bytes > keys_bytes ? pairs_bytes : keys_bytes);
  s.total = s.temp + s.temp_bytes;
  return s;
}

}  // namespace

cudaError_t topk_encode_cuda(const float* x, std::size_t n, std::size_t k, float* values, std::int32_t* indices,
                             void* workspace, std::size_t workspace_bytes, cudaStream_t stream) {
  return radix_select(x, n, k, values, indices, nullptr, workspace, workspace_bytes, stream);
}

cudaError_t topk_encode_ef_cuda(const float* x, std::size_t n, std::size_t k, float* values, std::int32_t* indices,
                                float* residual, void* workspace, std::size_t workspace_bytes, cudaStream_t stream) {
  if (residual == nullptr) return cudaErrorInvalidValue;
  return radix_select(x, n, k, values, indices, residual, workspace, workspace_bytes, stream);
}

std::size_t topk_sort_workspace_bytes(std::size_t n, std::size_t k) {
  if (bad_sizes(n, k) || n == 0) return 0;
  cudaError_t err = cudaSuccess;
  const SortLayout s = sort_layout(n, k, &err);
  return err == cudaSuccess ? s.total : 0;
}

cudaError_t topk_sort_encode_cuda(const float* x, std::size_t n, std::size_t k, float* values, std::int32_t* indices,
                                  void* workspace, std::size_t workspace_bytes, cudaStream_t stream) {
  if (bad_sizes(n, k)) return cudaErrorInvalidValue;
  if (n == 0 || k == 0) return cudaSuccess;
  cudaError_t err = cudaSuccess;
  const SortLayout s = sort_layout(n, k, &err);
  if (err != cudaSuccess) return err;
  if (workspace == nullptr || workspace_bytes < s.total) return cudaErrorInvalidValue;
  auto* keys_in = at<std::uint32_t>(workspace, s.keys_in);
  auto* keys_out = at<std::uint32_t>(workspace, s.keys_out);
  auto* idx_in = at<std::int32_t>(workspace, s.idx_in);
  auto* idx_out = at<std::int32_t>(workspace, s.idx_out);
  void* temp = at<char>(workspace, s.temp);
  const unsigned grid = stream_grid((n + kThreads - 1) / kThreads, 8);
  make_pairs_kernel<<<grid, kThreads, 0, stream>>>(x, n, keys_in, idx_in);
  std::size_t temp_bytes = s.temp_bytes;
  // Stable: equal keys keep ascending index order, so the first k are ours.
  err = cub::DeviceRadixSort::SortPairsDescending(temp, temp_bytes, keys_in, keys_out, idx_in, idx_out,
                                                  static_cast<int>(n), 0, 31, stream);
  if (err != cudaSuccess) return err;
  temp_bytes = s.temp_bytes;
  err =
      cub::DeviceRadixSort::SortKeys(temp, temp_bytes, idx_out, indices, static_cast<int>(k), 0, index_bits(n), stream);
  if (err != cudaSuccess) return err;
  gather_kernel<<<stream_grid((k + kThreads - 1) / kThreads, 8), kThreads, 0, stream>>>(x, indices, k, values);
  return cudaGetLastError();
}

// ----- decoders ---------------------------------------------------------------

namespace {
__global__ void scatter_add_kernel(const float* __restrict__ values, const std::int32_t* __restrict__ indices,
                                   std::size_t k, std::size_t n, float* __restrict__ y, bool add) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < k;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::int32_t idx = indices[i];
    if (idx < 0 || static_cast<std::size_t>(idx) >= n) continue;
    y[idx] = add ? __fadd_rn(y[idx], values[i]) : values[i];
  }
}
}  // namespace

cudaError_t topk_decode_gathered_cuda(const float* values, const std::int32_t* indices, std::size_t workers,
                                      std::size_t k, std::size_t n, float* y, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  cudaError_t err = cudaMemsetAsync(y, 0, n * sizeof(float), stream);
  if (err != cudaSuccess || k == 0) return err;
  const unsigned grid = stream_grid((k + kThreads - 1) / kThreads, 8);
  for (std::size_t w = 0; w < workers; ++w) {
    // 0 + v == v exactly (also for -0: the CPU twin adds to +0 too).
    scatter_add_kernel<<<grid, kThreads, 0, stream>>>(values + w * k, indices + w * k, k, n, y, true);
  }
  return cudaGetLastError();
}

cudaError_t topk_decode_cuda(const float* values, const std::int32_t* indices, std::size_t k, std::size_t n, float* y,
                             cudaStream_t stream) {
  return topk_decode_gathered_cuda(values, indices, 1, k, n, y, stream);
}

}  // namespace gw::kernels
