// Persistent (grid-stride) launch sizing for the elementwise codecs: enough
// blocks to fill every multiprocessor of the current device at the kernel's
// occupancy, read at run time and cached (no allocation, no synchronization).
// Also the chunk-index helper that avoids a 64-bit division when the chunk is
// a power of two.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace gw::kernels::detail {

/// Multiprocessor count of the current device, cached per device ordinal.
inline int current_sm_count() {
  constexpr int kMaxDevices = 64;
  static std::atomic<int> cache[kMaxDevices] = {};
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return 1;
  if (dev >= 0 && dev < kMaxDevices) {
    const int cached = cache[dev].load(std::memory_order_relaxed);
    if (cached > 0) return cached;
  }
  int sms = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms < 1) {
    return 1;
  }
  if (dev >= 0 && dev < kMaxDevices) cache[dev].store(sms, std::memory_order_relaxed);
  return sms;
}

/// Resident blocks of `Kernel` per multiprocessor at `Threads` threads, cached per kernel.
template <auto Kernel, int Threads>
int resident_blocks_per_sm() {
  static const int blocks = [] {
    int b = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, Kernel, Threads, 0) != cudaSuccess || b < 1) {
      return 1;
    }
    return b;
  }();
  return blocks;
}

/// Grid of a persistent launch: all SMs x resident blocks, but no more blocks than `needed`.
template <auto Kernel, int Threads>
unsigned persistent_grid(std::size_t needed) {
  const std::size_t full = static_cast<std::size_t>(current_sm_count()) *
                           static_cast<std::size_t>(resident_blocks_per_sm<Kernel, Threads>());
  const std::size_t b = needed < full ? needed : full;
  return static_cast<unsigned>(b == 0 ? 1 : b);
}

/// chunk -> log2(chunk) when a power of two, else -1.
inline int pow2_shift(std::size_t chunk) {
  if (chunk == 0 || (chunk & (chunk - 1)) != 0) return -1;
  int s = 0;
  while ((std::size_t{1} << s) < chunk) ++s;
  return s;
}

/// Chunk index of element e: a shift for power-of-two chunks, a division otherwise.
__device__ __forceinline__ std::size_t chunk_of(std::size_t e, std::size_t chunk, int shift) {
  return shift >= 0 ? (e >> shift) : e / chunk;
}

__device__ __forceinline__ unsigned lane_id() { return threadIdx.x & 31U; }

/// Global warp index and warp count of the grid.
__device__ __forceinline__ std::size_t global_warp() {
  return (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
}
__device__ __forceinline__ std::size_t warp_count() { return static_cast<std::size_t>(gridDim.x) * blockDim.x / 32; }

}  // namespace gw::kernels::detail
