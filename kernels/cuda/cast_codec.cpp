// The cast codec (CUDA) behind the uniform Codec interface: fp16 and bf16 (and their _ef
// variants): a cast to 16 bits, optionally prescaled.
// Host code only: all buffers are allocated in the constructor;
// encode()/decode() only enqueue.
#include "codec_factories.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "codec_base.hpp"
#include "gradwire/cuda/check.hpp"
#include "gradwire/cuda/device_buffer.hpp"
#include "gradwire/kernels/cast_cuda.hpp"
#include "gradwire/kernels/traffic.hpp"

namespace gw::kernels::cuda {

namespace {

using detail::CudaCodecBase;
using detail::store_hint;
using ::gw::cuda::DeviceBuffer;

class CastCodec final : public CudaCodecBase {
 public:
  CastCodec(CastKind kind, std::size_t n, const CodecConfig& cfg, bool ef, cudaStream_t s)
      : CudaCodecBase(std::string(kind == CastKind::fp16 ? "fp16" : "bf16") + (ef ? "_ef" : ""), n, ef,
                      traffic::cast(n, ef), s, store_hint(cfg)),
        kind_(kind),
        prescale_(cfg.prescale),
        msg_(n) {}
  void encode() override {
    GW_CHECK(ef_ ? cast_encode_ef_cuda(kind_, x_.get(), n_, prescale_, msg_.get(), r_.get(), stream_)
                 : cast_encode_cuda(kind_, x_.get(), n_, prescale_, msg_.get(), stream_));
  }
  void decode() override { GW_CHECK(cast_decode_cuda(kind_, msg_.get(), n_, y_.get(), stream_, hint_)); }

 private:
  CastKind kind_;
  float prescale_;
  DeviceBuffer<std::uint16_t> msg_;
};

}  // namespace

std::unique_ptr<Codec> make_fp16(std::size_t n, const CodecConfig& c, cudaStream_t s) {
  return std::make_unique<CastCodec>(CastKind::fp16, n, c, false, s);
}
std::unique_ptr<Codec> make_bf16(std::size_t n, const CodecConfig& c, cudaStream_t s) {
  return std::make_unique<CastCodec>(CastKind::bf16, n, c, false, s);
}
std::unique_ptr<Codec> make_fp16_ef(std::size_t n, const CodecConfig& c, cudaStream_t s) {
  return std::make_unique<CastCodec>(CastKind::fp16, n, c, true, s);
}
std::unique_ptr<Codec> make_bf16_ef(std::size_t n, const CodecConfig& c, cudaStream_t s) {
  return std::make_unique<CastCodec>(CastKind::bf16, n, c, true, s);
}

}  // namespace gw::kernels::cuda
