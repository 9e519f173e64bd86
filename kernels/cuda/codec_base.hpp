// The state every CUDA codec shares (device input, decode output, optional
// error-feedback residual, the stream, traffic figures), for every
// codec alike. Host code.
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <utility>
#include <vector>

#include "gradwire/cuda/check.hpp"
#include "gradwire/cuda/device_buffer.hpp"
#include "gradwire/kernels/codec.hpp"
#include "gradwire/kernels/store_hint.hpp"
#include "gradwire/kernels/traffic.hpp"

namespace gw::kernels::cuda::detail {

/// The store form of a codec's decoder, from its configuration.
inline StoreHint store_hint(const CodecConfig& cfg) {
  return cfg.streaming_stores ? StoreHint::streaming : StoreHint::plain;
}

using ::gw::cuda::DeviceBuffer;

class CudaCodecBase : public Codec {
 public:
  /// `hint`: how the decoder writes its output (CodecConfig::streaming_stores;
  /// codecs whose decoder takes no hint leave it plain).
  CudaCodecBase(std::string name, std::size_t n, bool ef, traffic::Sizes sizes, cudaStream_t s,
                StoreHint hint = StoreHint::plain)
      : name_(std::move(name)), n_(n), ef_(ef), sizes_(sizes), stream_(s), hint_(hint), x_(n), y_(n), r_(ef ? n : 0) {}
  std::string name() const override { return name_; }
  std::size_t elements() const override { return n_; }
  void set_input(const float* host_values) override {
    GW_CHECK(cudaMemcpyAsync(x_.get(), host_values, n_ * sizeof(float), cudaMemcpyHostToDevice, stream_));
    GW_CHECK(cudaStreamSynchronize(stream_));
  }
  void synchronize() override { GW_CHECK(cudaStreamSynchronize(stream_)); }
  std::size_t wire_bytes() const override { return sizes_.wire; }
  double encode_traffic_bytes() const override { return sizes_.encode; }
  double decode_traffic_bytes() const override { return sizes_.decode; }
  std::vector<float> decoded() override { return to_host(y_); }
  std::vector<float> residual() override { return ef_ ? to_host(r_) : std::vector<float>{}; }

 protected:
  std::vector<float> to_host(const DeviceBuffer<float>& b) {
    std::vector<float> h(b.size());
    GW_CHECK(cudaMemcpyAsync(h.data(), b.get(), b.bytes(), cudaMemcpyDeviceToHost, stream_));
    GW_CHECK(cudaStreamSynchronize(stream_));
    return h;
  }
  std::string name_;
  std::size_t n_;
  bool ef_;
  traffic::Sizes sizes_;
  cudaStream_t stream_;
  StoreHint hint_;
  DeviceBuffer<float> x_, y_, r_;
};

}  // namespace gw::kernels::cuda::detail
