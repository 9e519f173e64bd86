// PowerSGD steps on the GPU: cuBLAS GEMMs and a Gram-Schmidt kernel.
// Layouts: M row-major m x n (= column-major n x m with ld n, which is how
// cuBLAS sees it), P column-major m x r (ld m), Q column-major n x r (ld n).
#include <cub/block/block_reduce.cuh>

#include <climits>
#include <cmath>
#include <stdexcept>
#include <string>

#include "gradwire/kernels/powersgd_cuda.hpp"

namespace gw::kernels {
namespace {

constexpr int kThreads = kPowersgdOrthoThreads;
using BlockSum = cub::BlockReduce<double, kThreads>;

bool sizes_ok(std::int64_t m, std::int64_t n, int r) {
  try {
    powersgd_check_sizes(m, n, r);
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

cudaError_t blas_error(cublasStatus_t s) { return s == CUBLAS_STATUS_SUCCESS ? cudaSuccess : cudaErrorUnknown; }

// One block: all r columns, every phase separated by block reductions.
// Thread t owns rows t, t + blockDim, ... of every column, so the in-place
// updates need no synchronization; only the sums do.
__global__ void __launch_bounds__(kThreads) gram_schmidt_block_kernel(float* __restrict__ P, int m, int r, float eps) {
  __shared__ typename BlockSum::TempStorage temp;
  __shared__ double sums[2];
  for (int i = 0; i < r; ++i) {
    float* pi = P + static_cast<std::size_t>(i) * m;
    double nrm2 = 0.0;
    for (int k = static_cast<int>(threadIdx.x); k < m; k += kThreads) {
      nrm2 += static_cast<double>(pi[k]) * pi[k];
    }
    nrm2 = BlockSum(temp).Sum(nrm2);
    if (threadIdx.x == 0) sums[0] = nrm2;
    __syncthreads();
    const double d = sqrt(sums[0]) + static_cast<double>(eps);
    __syncthreads();
    // The dots of column i with the later columns use column i before it is
    // scaled (s_ij), exactly as the CPU twin.
    for (int j = i + 1; j < r; ++j) {
      const float* pj = P + static_cast<std::size_t>(j) * m;
      double dot = 0.0;
      for (int k = static_cast<int>(threadIdx.x); k < m; k += kThreads) {
        dot += static_cast<double>(pi[k]) * pj[k];
      }
      dot = BlockSum(temp).Sum(dot);
      __syncthreads();
      if (threadIdx.x == 0) sums[1] = dot;
      __syncthreads();
      const double c = d == 0.0 ? 0.0 : sums[1] / d;
      // p_j -= c * p_i_hat, where p_i_hat = fl(p_i / d) is what column i becomes.
      for (int k = static_cast<int>(threadIdx.x); k < m; k += kThreads) {
        const float hat = d == 0.0 ? 0.0f : static_cast<float>(pi[k] * (1.0 / d));
        P[static_cast<std::size_t>(j) * m + k] = static_cast<float>(pj[k] - c * hat);
      }
      __syncthreads();
    }
    for (int k = static_cast<int>(threadIdx.x); k < m; k += kThreads) {
      pi[k] = d == 0.0 ? 0.0f : static_cast<float>(pi[k] * (1.0 / d));
    }
    __syncthreads();
  }
}

// Multi-block: partial[b * r + j] = sum over block b's rows of p_i * p_j, j >= i.
__global__ void __launch_bounds__(kThreads)
    gram_schmidt_dots_kernel(const float* __restrict__ P, int m, int r, int i, double* __restrict__ partial) {
  __shared__ typename BlockSum::TempStorage temp;
  const float* pi = P + static_cast<std::size_t>(i) * m;
  for (int j = i; j < r; ++j) {
    const float* pj = P + static_cast<std::size_t>(j) * m;
    double dot = 0.0;
    for (int k = static_cast<int>(blockIdx.x * kThreads + threadIdx.x); k < m;
         k += static_cast<int>(gridDim.x * kThreads)) {
      dot += static_cast<double>(pi[k]) * pj[k];
    }
    dot = BlockSum(temp).Sum(dot);
    if (threadIdx.x == 0) partial[static_cast<std::size_t>(blockIdx.x) * r + j] = dot;
    __syncthreads();
  }
}

// Multi-block: every block sums the partials in block order (so all blocks
// see the same s_ij), then scales column i and updates the later columns.
__global__ void __launch_bounds__(kThreads)
    gram_schmidt_update_kernel(float* __restrict__ P, int m, int r, int i, float eps,
                               const double* __restrict__ partial, int blocks) {
  extern __shared__ double s[];  // r values
  for (int j = i + static_cast<int>(threadIdx.x); j < r; j += kThreads) {
    double acc = 0.0;
    for (int b = 0; b < blocks; ++b) acc += partial[static_cast<std::size_t>(b) * r + j];
    s[j] = acc;
  }
  __syncthreads();
  const double d = sqrt(s[i]) + static_cast<double>(eps);
  float* pi = P + static_cast<std::size_t>(i) * m;
  for (int k = static_cast<int>(blockIdx.x * kThreads + threadIdx.x); k < m;
       k += static_cast<int>(gridDim.x * kThreads)) {
    const float hat = d == 0.0 ? 0.0f : static_cast<float>(pi[k] * (1.0 / d));
    pi[k] = hat;
    for (int j = i + 1; j < r; ++j) {
      const double c = d == 0.0 ? 0.0 : s[j] / d;
      float* pj = P + static_cast<std::size_t>(j) * m;
      pj[k] = static_cast<float>(pj[k] - c * hat);
    }
  }
}

}  // namespace

PowerSgdBlas::PowerSgdBlas() : workspace_(kWorkspaceBytes) {
  if (cublasCreate(&handle_) != CUBLAS_STATUS_SUCCESS) {
    handle_ = nullptr;
    throw std::runtime_error("PowerSgdBlas: cublasCreate failed");
  }
  cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH);
  cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_HOST);
}

PowerSgdBlas::~PowerSgdBlas() {
  if (handle_ != nullptr) cublasDestroy(handle_);
}

cudaError_t PowerSgdBlas::bind(cudaStream_t stream) {
  if (bound_ && stream == stream_) return cudaSuccess;
  bound_ = false;
  cudaError_t err = blas_error(cublasSetStream(handle_, stream));
  if (err == cudaSuccess) err = blas_error(cublasSetWorkspace(handle_, workspace_.get(), kWorkspaceBytes));
  if (err == cudaSuccess) {
    stream_ = stream;
    bound_ = true;
  }
  return err;
}

cudaError_t powersgd_compute_p_cuda(PowerSgdBlas& blas, const float* M, std::int64_t m, std::int64_t n, const float* Q,
                                    int r, float* P, cudaStream_t stream) {
  if (!sizes_ok(m, n, r)) return cudaErrorInvalidValue;
  cudaError_t err = blas.bind(stream);
  if (err != cudaSuccess) return err;
  const float one = 1.0f, zero = 0.0f;
  const int mi = static_cast<int>(m), ni = static_cast<int>(n);
  // P (m x r) = (M^T as stored: n x m)^T * Q (n x r)
  return blas_error(cublasSgemm(blas.handle(), CUBLAS_OP_T, CUBLAS_OP_N, mi, r, ni, &one, M, ni, Q, ni, &zero, P, mi));
}

cudaError_t powersgd_compute_q_cuda(PowerSgdBlas& blas, const float* M, std::int64_t m, std::int64_t n, const float* P,
                                    int r, float* Q, cudaStream_t stream) {
  if (!sizes_ok(m, n, r)) return cudaErrorInvalidValue;
  cudaError_t err = blas.bind(stream);
  if (err != cudaSuccess) return err;
  const float one = 1.0f, zero = 0.0f;
  const int mi = static_cast<int>(m), ni = static_cast<int>(n);
  // Q (n x r) = (M^T as stored: n x m) * P (m x r)
  return blas_error(cublasSgemm(blas.handle(), CUBLAS_OP_N, CUBLAS_OP_N, ni, r, mi, &one, M, ni, P, mi, &zero, Q, ni));
}

cudaError_t powersgd_decompress_cuda(PowerSgdBlas& blas, const float* P, const float* Q, std::int64_t m, std::int64_t n,
                                     int r, float* out, cudaStream_t stream) {
  if (!sizes_ok(m, n, r)) return cudaErrorInvalidValue;
  cudaError_t err = blas.bind(stream);
  if (err != cudaSuccess) return err;
  const float one = 1.0f, zero = 0.0f;
  const int mi = static_cast<int>(m), ni = static_cast<int>(n);
  // out^T (n x m, column-major = out row-major) = Q (n x r) * P^T (r x m)
  return blas_error(
      cublasSgemm(blas.handle(), CUBLAS_OP_N, CUBLAS_OP_T, ni, mi, r, &one, Q, ni, P, mi, &zero, out, ni));
}

cudaError_t powersgd_orthogonalize_p_cuda(float* P, std::int64_t m, int r, float eps, void* workspace,
                                          std::size_t workspace_bytes, cudaStream_t stream) {
  if (m < 1 || m > INT_MAX || r < 1 || static_cast<std::int64_t>(r) > m) {
    return cudaErrorInvalidValue;
  }
  const int mi = static_cast<int>(m);
  if (m <= kPowersgdOrthoSmallRows) {
    gram_schmidt_block_kernel<<<1, kThreads, 0, stream>>>(P, mi, r, eps);
    return cudaGetLastError();
  }
  if (workspace == nullptr || workspace_bytes < powersgd_workspace_bytes(m, r)) {
    return cudaErrorInvalidValue;
  }
  auto* partial = static_cast<double*>(workspace);
  const int blocks = powersgd_ortho_blocks(m);
  const std::size_t shared = static_cast<std::size_t>(r) * sizeof(double);
  for (int i = 0; i < r; ++i) {
    gram_schmidt_dots_kernel<<<blocks, kThreads, 0, stream>>>(P, mi, r, i, partial);
    gram_schmidt_update_kernel<<<blocks, kThreads, shared, stream>>>(P, mi, r, i, eps, partial, blocks);
  }
  return cudaGetLastError();
}

}  // namespace gw::kernels
