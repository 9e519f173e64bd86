// Whether a CUDA device can be used (any error from cudaGetDeviceCount = no GPU).
#include <cuda_runtime_api.h>

#include <string>

#include "gradwire/kernels/codec_cuda.hpp"

namespace gw::kernels {

bool cuda_device_available(std::string* why) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    if (why != nullptr) {
      *why = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")";
    }
    cudaGetLastError();  // clear the sticky error state for later callers
    return false;
  }
  if (count == 0) {
    if (why != nullptr) *why = "no CUDA device";
    return false;
  }
  if (why != nullptr) *why = std::to_string(count) + " CUDA device(s)";
  return true;
}

}  // namespace gw::kernels
