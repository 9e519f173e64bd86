// Host-side CUDA error checks for the codec classes and tools: throw
// std::runtime_error naming the call site.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace gw::kernels::detail {

[[noreturn]] inline void throw_cuda(cudaError_t err, const char* what, const char* file, int line) {
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + what + ": " +
                           cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}

#define GW_CUDA_CHECK(call)                                                              \
  do {                                                                                   \
    const cudaError_t gw_err_ = (call);                                                  \
    if (gw_err_ != cudaSuccess) ::gw::kernels::detail::throw_cuda(gw_err_, #call, __FILE__, __LINE__); \
  } while (0)

/// Owning device allocation (cudaMalloc; at least 1 byte so the pointer is valid).
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    void* p = nullptr;
    GW_CUDA_CHECK(cudaMalloc(&p, count == 0 ? 1 : count * sizeof(T)));
    ptr_ = static_cast<T*>(p);
  }
  ~DeviceBuffer() { if (ptr_ != nullptr) cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), count_(o.count_) { o.ptr_ = nullptr; o.count_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      if (ptr_ != nullptr) cudaFree(ptr_);
      ptr_ = o.ptr_;
      count_ = o.count_;
      o.ptr_ = nullptr;
      o.count_ = 0;
    }
    return *this;
  }
  T* get() const { return ptr_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace gw::kernels::detail
