// Shared by the kernel benchmarks: CUDA error checks and CUDA-event timing
// (warm-up, then the median of repeated runs on one stream).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace gw::kernels::bench {

inline void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(err) + " (" +
                             cudaGetErrorString(err) + ")");
  }
}

/// Times work enqueued on one stream with a pair of CUDA events.
class EventTimer {
 public:
  explicit EventTimer(cudaStream_t s) : s_(s) {
    check(cudaEventCreate(&start_), "cudaEventCreate");
    check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  /// Runs f `warmup` times, then `runs` times each between two events;
  /// returns the median of the timed runs in milliseconds.
  template <typename F>
  double median_ms(int warmup, int runs, F&& f) {
    for (int i = 0; i < warmup; ++i) f();
    check(cudaStreamSynchronize(s_), "warm-up");
    std::vector<double> t;
    for (int i = 0; i < runs; ++i) {
      check(cudaEventRecord(start_, s_), "cudaEventRecord");
      f();
      check(cudaEventRecord(stop_, s_), "cudaEventRecord");
      check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
      float ms = 0;
      check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
      t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t.size() % 2 ? t[t.size() / 2] : 0.5 * (t[t.size() / 2 - 1] + t[t.size() / 2]);
  }

 private:
  cudaStream_t s_;
  cudaEvent_t start_{}, stop_{};
};

}  // namespace gw::kernels::bench
