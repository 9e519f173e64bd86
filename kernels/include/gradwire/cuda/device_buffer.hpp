// The one owning device allocation of the project (kernels, benchmarks,
// tests, calibrator): DeviceBuffer<T>, count elements of T on one device
// (cudaMalloc of at least 1 byte so the pointer is valid), freed on
// destruction on the device it was allocated on; movable, not copyable.
// ensure() regrows a buffer reused across sizes and devices.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "gradwire/cuda/check.hpp"

namespace gw::cuda {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  /// count elements on the current device.
  explicit DeviceBuffer(std::size_t count) {
    GW_CHECK(cudaGetDevice(&device_));
    allocate(count);
  }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), count_(o.count_), device_(o.device_) {
    o.ptr_ = nullptr;
    o.count_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = o.ptr_;
      count_ = o.count_;
      device_ = o.device_;
      o.ptr_ = nullptr;
      o.count_ = 0;
    }
    return *this;
  }

  /// At least `count` elements on `device`: keeps the allocation when it
  /// already is that, otherwise frees it and allocates anew on `device`,
  /// which it then leaves current (the contents are not kept).
  void ensure(int device, std::size_t count) {
    if (ptr_ != nullptr && count_ >= count && device_ == device) return;
    release();
    GW_CHECK(cudaSetDevice(device));
    device_ = device;
    allocate(count);
  }
  /// Frees the allocation (on its device; the current device is kept).
  void release() noexcept {
    if (ptr_ == nullptr) return;
    int current = device_;
    if (cudaGetDevice(&current) != cudaSuccess) current = device_;
    if (current != device_) cudaSetDevice(device_);
    cudaFree(ptr_);
    if (current != device_) cudaSetDevice(current);
    ptr_ = nullptr;
    count_ = 0;
  }

  T* get() const { return ptr_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  void allocate(std::size_t count) {
    void* p = nullptr;
    GW_CHECK(cudaMalloc(&p, count == 0 ? 1 : count * sizeof(T)));
    ptr_ = static_cast<T*>(p);
    count_ = count;
  }

  T* ptr_ = nullptr;
  std::size_t count_ = 0;
  int device_ = 0;
};

}  // namespace gw::cuda
