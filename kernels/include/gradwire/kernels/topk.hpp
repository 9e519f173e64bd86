// Top-K sparsification by magnitude: CPU twin, decoders and the workspace
// query of the CUDA radix select. Host-only header (no CUDA include).
//
// Contract shared by the CPU twin and the CUDA kernels (bit for bit):
//   * key(x) = bits(x) & 0x7fffffff, i.e. |x| reinterpreted as uint32. For
//     non-negative floats this order equals the numeric order; +0 and -0 tie.
//     NaN keys (0x7f800001..0x7fffffff) are above +inf, so NaNs are selected
//     first (ordered by payload) - a NaN gradient stays visible after
//     compression instead of being silently dropped.
//   * The k selected elements are the k largest keys; among equal keys the
//     lower index wins.
//   * Output order: indices strictly ascending; values[i] = x[indices[i]]
//     (the original signed value, bit-exact).
//   * 0 <= k <= n <= INT32_MAX (indices are int32). k = 0 writes nothing.
//   * Wire message: k fp32 values then k int32 indices (topk_wire_bytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace gw::kernels {

/// The magnitude key of a float (see the contract above).
inline std::uint32_t topk_key(float x) noexcept {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  return bits & 0x7fffffffu;
}

/// Throws std::invalid_argument unless 0 <= k <= n <= INT32_MAX.
void topk_check_sizes(std::size_t n, std::size_t k);

/// CPU twin: the k largest-magnitude elements of x[0..n), indices ascending.
void topk_encode_cpu(const float* x, std::size_t n, std::size_t k, float* values, std::int32_t* indices);

/// Fused encode + error feedback: as topk_encode_cpu, and
/// residual[i] = x[i] - y[i] (one float subtraction) with y = decode(message),
/// i.e. fl(x - x) where selected (0 for finite x) and x elsewhere.
void topk_encode_ef_cpu(const float* x, std::size_t n, std::size_t k, float* values, std::int32_t* indices,
                        float* residual);

/// Decode: y[0..n) = 0, then y[indices[i]] = values[i].
/// Indices must be in [0, n) (checked, std::invalid_argument otherwise).
void topk_decode_cpu(const float* values, const std::int32_t* indices, std::size_t k, std::size_t n, float* y);

/// All-gathered decode: `workers` blocks of k (values, indices) laid out one
/// after the other (worker w at offset w*k, as an all-gather leaves them).
/// y = 0, then for w = 0..workers-1 in order: y[idx] += value.
/// The worker order is fixed so the float sum is reproducible; the CUDA twin
/// adds in the same order and is bit-identical.
void topk_decode_gathered_cpu(const float* values, const std::int32_t* indices, std::size_t workers, std::size_t k,
                              std::size_t n, float* y);

/// Bytes of each wire message for one worker: k fp32 values + k int32 indices.
inline std::size_t topk_wire_bytes(std::size_t k) noexcept { return k * (sizeof(float) + sizeof(std::int32_t)); }

// ---------------------------------------------------------------------------
// Workspace of the CUDA radix select (gw::kernels::cuda::topk). Pure
// arithmetic so that host code can size buffers without CUDA.
// ---------------------------------------------------------------------------

/// Elements per tile of the CUDA radix select's streaming passes.
inline constexpr std::size_t kTopkTile = 4096;
/// Histogram sizes of the three radix passes over the 31 key bits (11+11+9).
inline constexpr int kTopkBins0 = 2048;
inline constexpr int kTopkBins1 = 2048;
inline constexpr int kTopkBins2 = 512;

/// Byte offsets of the parts of the radix-select workspace (256-byte aligned).
struct TopkWorkspaceLayout {
  std::size_t state = 0;         ///< 16 uint32 of selection state
  std::size_t hist = 0;          ///< kTopkBins0 + kTopkBins1 + kTopkBins2 uint32
  std::size_t tile_gt = 0;       ///< per tile: elements with key > threshold
  std::size_t tile_eq = 0;       ///< per tile: elements with key == threshold
  std::size_t tile_base = 0;     ///< per tile: offset of its kept indices in `kept`
  std::size_t tile_count = 0;    ///< per tile: how many indices it kept
  std::size_t tile_gbefore = 0;  ///< per tile: elements > threshold in earlier tiles
  std::size_t tile_ebefore = 0;  ///< per tile: elements == threshold in earlier tiles
  std::size_t kept = 0;          ///< n int32: indices whose top digit is >= the pivot's
  std::size_t zero_bytes = 0;    ///< bytes from offset 0 the select zeroes each call
  std::size_t total = 0;
};

inline TopkWorkspaceLayout topk_workspace_layout(std::size_t n) noexcept {
  auto align = [](std::size_t b) { return (b + 255u) & ~static_cast<std::size_t>(255u); };
  const std::size_t tiles = (n + kTopkTile - 1) / kTopkTile;
  const std::size_t tile_bytes = align(tiles * sizeof(std::uint32_t));
  TopkWorkspaceLayout l;
  l.state = 0;
  l.hist = 256;
  l.tile_gt = l.hist + align((kTopkBins0 + kTopkBins1 + kTopkBins2) * sizeof(std::uint32_t));
  l.tile_eq = l.tile_gt + tile_bytes;
  l.zero_bytes = l.tile_eq + tile_bytes;  // state, histograms and the two atomic counters
  l.tile_base = l.zero_bytes;
  l.tile_count = l.tile_base + tile_bytes;
  l.tile_gbefore = l.tile_count + tile_bytes;
  l.tile_ebefore = l.tile_gbefore + tile_bytes;
  l.kept = l.tile_ebefore + tile_bytes;
  l.total = l.kept + align(n * sizeof(std::int32_t));
  return l;
}

/// Workspace bytes of the CUDA radix select (topk_encode_cuda) for n elements, any k.
inline std::size_t topk_workspace_bytes(std::size_t n) noexcept { return topk_workspace_layout(n).total; }

}  // namespace gw::kernels
