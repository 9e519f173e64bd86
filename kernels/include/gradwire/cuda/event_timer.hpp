// The one CUDA-event timer of the project: a pair of events around work
// enqueued on one stream; median_ms() runs warm-ups then times repeats.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <vector>

#include "gradwire/cuda/check.hpp"

namespace gw::cuda {

class EventTimer {
 public:
  explicit EventTimer(cudaStream_t s) : s_(s) {
    GW_CHECK(cudaEventCreate(&start_));
    GW_CHECK(cudaEventCreate(&stop_));
  }
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  /// Records the start and the stop event on the stream.
  void start() { GW_CHECK(cudaEventRecord(start_, s_)); }
  void stop() { GW_CHECK(cudaEventRecord(stop_, s_)); }
  /// Waits for the stop event; milliseconds from start to stop.
  double elapsed_ms() {
    GW_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    GW_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return static_cast<double>(ms);
  }

  /// Runs f `warmup` times, then `runs` times each between the two events;
  /// returns the median of the timed runs in milliseconds.
  template <typename F>
  double median_ms(int warmup, int runs, F&& f) {
    for (int i = 0; i < warmup; ++i) f();
    GW_CHECK(cudaStreamSynchronize(s_));
    std::vector<double> t;
    for (int i = 0; i < runs; ++i) {
      start();
      f();
      stop();
      t.push_back(elapsed_ms());
    }
    std::sort(t.begin(), t.end());
    return t.size() % 2 ? t[t.size() / 2] : 0.5 * (t[t.size() / 2 - 1] + t[t.size() / 2]);
  }

 private:
  cudaStream_t s_;
  cudaEvent_t start_{}, stop_{};
};

}  // namespace gw::cuda
