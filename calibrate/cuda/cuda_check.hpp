// Error checks shared by the calibrator's CUDA, cuBLAS and NCCL code: a failed
// call throws std::runtime_error naming the call, its file and line, and the
// library's own error text.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <stdexcept>
#include <string>

namespace gw::calibrate::detail {

inline void check(cudaError_t e, const char* what, const char* file, int line) {
  if (e != cudaSuccess) {
    throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + what + ": " +
                             cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
  }
}

inline void check(cublasStatus_t e, const char* what, const char* file, int line) {
  if (e != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + what + ": cuBLAS status " +
                             std::to_string(static_cast<int>(e)));
  }
}

inline void check(ncclResult_t e, const char* what, const char* file, int line) {
  if (e != ncclSuccess) {
    throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + what + ": " +
                             ncclGetErrorString(e));
  }
}

}  // namespace gw::calibrate::detail

#define GW_CHECK(x) ::gw::calibrate::detail::check((x), #x, __FILE__, __LINE__)
