// PowerSGD (Vogels et al. 2019) low-rank compressor following PyTorch's
// powerSGD_hook: CPU twins of the separate steps and the workspace query of
// the CUDA orthogonalization. Host-only header (no CUDA include).
//
// Layouts (shared with the CUDA launchers in powersgd_cuda.hpp):
//   * M   : the gradient tensor as an m x n matrix, row-major (a PyTorch
//           weight (out, in, kh, kw) viewed as (out, in*kh*kw)).
//   * P   : m x r, column-major (column j at P + j*m).
//   * Q   : n x r, column-major (column j at Q + j*n). Q is the warm start:
//           compute_q overwrites it and the next call starts from it.
//   * out : m x n, row-major, out = P Q^T.
// One iteration for one worker: P = M Q; [all-reduce P]; orthogonalize P;
// Q = M^T P; [all-reduce Q]; out = P Q^T.
// r must already be the effective rank min(rank, m, n) (powersgd_effective_rank).
//
// Orthogonalization (modified Gram-Schmidt, as torch's
// _orthogonalize_gram_schmidt): for column i = 0..r-1, with s_ij = <p_i, p_j>
// taken from the current columns (double accumulation):
//   d = sqrt(s_ii) + eps; if d == 0 the column becomes 0 and later columns are
//   left alone (torch's intent; its tensor division would give NaN);
//   otherwise p_i /= d and p_j -= (s_ij / d) * p_i for j > i.
// torch switches to QR for r > 2 in fp32; the result differs only in column
// signs and rounding, and gradwire always uses Gram-Schmidt.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace gw::kernels {

/// min(rank, m, n) as torch's hook clamps the rank; 0 if any is <= 0.
inline int powersgd_effective_rank(std::int64_t m, std::int64_t n, int rank) noexcept {
  if (m <= 0 || n <= 0 || rank <= 0) return 0;
  return static_cast<int>(std::min<std::int64_t>({static_cast<std::int64_t>(rank), m, n}));
}

/// torch's test: compress only when (m + n) r * min_compression_rate < m n.
inline bool powersgd_worth_compressing(std::int64_t m, std::int64_t n, int rank,
                                       double min_compression_rate = 2.0) noexcept {
  return static_cast<double>(m + n) * rank * min_compression_rate < static_cast<double>(m) * static_cast<double>(n);
}

/// (rows, cols) of the matrix the "powersgd" codec makes of n values:
/// rows x cols when both are non-zero (their product must be n), otherwise
/// the most square factorization rows * cols = n with rows <= cols (a prime n
/// gives 1 x n). Throws std::invalid_argument for n == 0 or a bad shape.
std::pair<std::size_t, std::size_t> powersgd_matrix_shape(std::size_t n, std::size_t rows = 0, std::size_t cols = 0);

/// Fills the n x r warm-start Q with N(0, 1) values from a fixed generator
/// (mt19937_64 + Box-Muller), identical on every platform for a given seed.
void powersgd_init_q(float* q, std::int64_t n, int r, std::uint64_t seed);

/// Throws std::invalid_argument unless m, n >= 1, 1 <= r <= min(m, n) and
/// m, n, m*n fit in int (cuBLAS's int dimensions).
void powersgd_check_sizes(std::int64_t m, std::int64_t n, int r);

// CPU twins, instantiated for float (the twin of the CUDA code) and double
// (the reference the GPU tests compare against). Accumulation is in double.
template <class T>
void powersgd_compute_p_cpu(const T* M, std::int64_t m, std::int64_t n, const T* Q, int r, T* P);
template <class T>
void powersgd_orthogonalize_cpu(T* P, std::int64_t m, int r, double eps = 0.0);
template <class T>
void powersgd_compute_q_cpu(const T* M, std::int64_t m, std::int64_t n, const T* P, int r, T* Q);
template <class T>
void powersgd_decompress_cpu(const T* P, const T* Q, std::int64_t m, std::int64_t n, int r, T* out);

/// All four steps back to back for one worker (no all-reduce): P, Q updated,
/// out = P Q^T.
template <class T>
void powersgd_step_cpu(const T* M, std::int64_t m, std::int64_t n, int r, T* P, T* Q, T* out, double eps = 0.0);

/// Bytes on the wire of one worker per iteration: (m + n) r fp32 (P and Q).
inline std::size_t powersgd_wire_bytes(std::int64_t m, std::int64_t n, int r) noexcept {
  return static_cast<std::size_t>((m + n) * r) * sizeof(float);
}

// ---------------------------------------------------------------------------
// Workspace of gw::kernels::cuda::powersgd_orthogonalize_p (pure arithmetic).
// ---------------------------------------------------------------------------

/// Threads per block of the CUDA orthogonalization kernels.
inline constexpr int kPowersgdOrthoThreads = 256;
/// At most this many blocks share the column reductions of a tall P.
inline constexpr int kPowersgdOrthoMaxBlocks = 512;
/// P with at most this many rows is orthogonalized by one fused block.
inline constexpr std::int64_t kPowersgdOrthoSmallRows = 16384;

/// Blocks the multi-block orthogonalization uses for m rows.
inline int powersgd_ortho_blocks(std::int64_t m) noexcept {
  const std::int64_t per_block = 4 * static_cast<std::int64_t>(kPowersgdOrthoThreads);
  const std::int64_t b = (m + per_block - 1) / per_block;
  return static_cast<int>(std::clamp<std::int64_t>(b, 1, kPowersgdOrthoMaxBlocks));
}

/// Workspace bytes of the CUDA orthogonalization of an m x r P (0 when one
/// block does it): per-block partial sums of r doubles.
inline std::size_t powersgd_workspace_bytes(std::int64_t m, int r) noexcept {
  if (m <= kPowersgdOrthoSmallRows || r <= 0) return 0;
  return static_cast<std::size_t>(powersgd_ortho_blocks(m)) * static_cast<std::size_t>(r) * sizeof(double);
}

}  // namespace gw::kernels
