// The one owning device allocation of the project: DeviceBuffer<T>, count
// elements of T on the current device (cudaMalloc of at least 1 byte so the
// pointer is valid), freed on destruction; movable, not copyable.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "gradwire/cuda/check.hpp"

namespace gw::cuda {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    void* p = nullptr;
    GW_CHECK(cudaMalloc(&p, count == 0 ? 1 : count * sizeof(T)));
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

}  // namespace gw::cuda
