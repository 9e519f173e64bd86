// The one CUDA error check of the project (kernels, benchmarks, calibrator):
// GW_CHECK(call) throws std::runtime_error naming the call, its file and
// line, and the library's own error text when a CUDA runtime or cuBLAS call
// fails. The calibrator adds the NCCL overload (calibrate/cuda/nccl_check.hpp).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace gw::cuda {

inline std::string where(const char* what, const char* file, int line) {
  return std::string(file) + ":" + std::to_string(line) + ": " + what + ": ";
}

inline void check(cudaError_t e, const char* what, const char* file, int line) {
  if (e != cudaSuccess) {
    throw std::runtime_error(where(what, file, line) + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
  }
}

inline void check(cublasStatus_t e, const char* what, const char* file, int line) {
  if (e != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(where(what, file, line) + "cuBLAS status " + std::to_string(static_cast<int>(e)));
  }
}

}  // namespace gw::cuda

#define GW_CHECK(x) ::gw::cuda::check((x), #x, __FILE__, __LINE__)
