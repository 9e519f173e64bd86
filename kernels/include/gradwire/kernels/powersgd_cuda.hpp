// PowerSGD: CUDA launchers of the separate steps (layouts and formulas in
// powersgd.hpp). A caller inserts the all-reduce of P between compute_p and
// orthogonalize_p and that of Q between compute_q and decompress; the
// calibrator times each step.
//
// The GEMMs go through cuBLAS (fp32, default math mode: no TF32) on a handle
// created up front by PowerSgdBlas, together with the cuBLAS workspace, so
// the steps never allocate. Every launcher runs on `stream`, never
// synchronizes and returns the first error (a cuBLAS failure is reported as
// cudaErrorUnknown). Sizes must pass powersgd_check_sizes
// (cudaErrorInvalidValue otherwise).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "gradwire/cuda/device_buffer.hpp"
#include "gradwire/kernels/powersgd.hpp"

namespace gw::kernels {

/// Owns a cuBLAS handle and its workspace (allocated in the constructor,
/// which throws std::runtime_error on failure). Not copyable.
class PowerSgdBlas {
 public:
  /// Workspace cuBLAS gets (NVIDIA's recommendation for Hopper is 32 MiB).
  static constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;
  PowerSgdBlas();
  ~PowerSgdBlas();
  PowerSgdBlas(const PowerSgdBlas&) = delete;
  PowerSgdBlas& operator=(const PowerSgdBlas&) = delete;
  /// The handle, for callers adding their own cuBLAS calls; after changing
  /// its stream or workspace, call rebind() before the next step.
  cublasHandle_t handle() const noexcept { return handle_; }
  /// Points the handle at `stream` and at our workspace (cublasSetStream
  /// resets the workspace, so both are set). Host-only; skipped when the
  /// handle is already bound to `stream`.
  cudaError_t bind(cudaStream_t stream);
  /// Forgets the current binding so the next bind() sets both again.
  void rebind() noexcept { bound_ = false; }

 private:
  cublasHandle_t handle_ = nullptr;
  ::gw::cuda::DeviceBuffer<unsigned char> workspace_;
  cudaStream_t stream_ = nullptr;
  bool bound_ = false;
};

/// P = M Q (cuBLAS SGEMM).
cudaError_t powersgd_compute_p_cuda(PowerSgdBlas& blas, const float* M, std::int64_t m, std::int64_t n, const float* Q,
                                    int r, float* P, cudaStream_t stream);

/// Modified Gram-Schmidt over the r columns of P, in place. One fused block
/// when m <= kPowersgdOrthoSmallRows (workspace may be null); otherwise two
/// launches per column with per-block partial sums in `workspace`
/// (powersgd_workspace_bytes(m, r)). Column sums are accumulated in double
/// in a fixed order (deterministic run to run).
cudaError_t powersgd_orthogonalize_p_cuda(float* P, std::int64_t m, int r, float eps, void* workspace,
                                          std::size_t workspace_bytes, cudaStream_t stream);

/// Q = M^T P (cuBLAS SGEMM); Q doubles as the warm start of the next call.
cudaError_t powersgd_compute_q_cuda(PowerSgdBlas& blas, const float* M, std::int64_t m, std::int64_t n, const float* P,
                                    int r, float* Q, cudaStream_t stream);

/// out = P Q^T, m x n row-major (cuBLAS SGEMM).
cudaError_t powersgd_decompress_cuda(PowerSgdBlas& blas, const float* P, const float* Q, std::int64_t m, std::int64_t n,
                                     int r, float* out, cudaStream_t stream);

}  // namespace gw::kernels
