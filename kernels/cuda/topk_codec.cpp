// The topk codec (CUDA) behind the uniform Codec interface; same semantics
// as the CPU codec in kernels/cpu/topk_codec.cpp.
// Every buffer and workspace (and the cuBLAS handle) is created in the
// constructor; encode()/decode() only enqueue on the codec's stream.
#include "codec_factories.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "../cpu/codec_factories.hpp"
#include "codec_base.hpp"
#include "gradwire/cuda/check.hpp"
#include "gradwire/cuda/device_buffer.hpp"
#include "gradwire/kernels/topk_cuda.hpp"

namespace gw::kernels::cuda {
namespace {

using ::gw::cuda::DeviceBuffer;

using detail::CudaCodecBase;

class TopkCodec final : public CudaCodecBase {
 public:
  TopkCodec(std::size_t n, const CodecConfig& cfg, bool ef, cudaStream_t s)
      : CudaCodecBase(ef ? "topk_ef" : "topk", n, ef, topk_codec_sizes(n, sparse_count(n, cfg.ratio), ef), s),
        k_(sparse_count(n, cfg.ratio)),
        v_(k_),
        i_(k_),
        ws_((topk_check_sizes(n, k_), topk_workspace_bytes(n))) {}
  void encode() override {
    GW_CHECK(ef_ ? topk_encode_ef_cuda(x_.get(), n_, k_, v_.get(), i_.get(), r_.get(), ws_.get(), ws_.bytes(), stream_)
                 : topk_encode_cuda(x_.get(), n_, k_, v_.get(), i_.get(), ws_.get(), ws_.bytes(), stream_));
  }
  void decode() override { GW_CHECK(topk_decode_cuda(v_.get(), i_.get(), k_, n_, y_.get(), stream_)); }

 private:
  std::size_t k_;
  DeviceBuffer<float> v_;
  DeviceBuffer<std::int32_t> i_;
  DeviceBuffer<unsigned char> ws_;
};

}  // namespace

std::unique_ptr<Codec> make_topk(std::size_t n, const CodecConfig& c, cudaStream_t s) {
  return std::make_unique<TopkCodec>(n, c, false, s);
}
std::unique_ptr<Codec> make_topk_ef(std::size_t n, const CodecConfig& c, cudaStream_t s) {
  return std::make_unique<TopkCodec>(n, c, true, s);
}

}  // namespace gw::kernels::cuda
