// The int8 codec (CUDA) behind the uniform Codec interface: int8 (and int8_ef), per-chunk
// absmax scales.
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
#include "gradwire/kernels/int8_cuda.hpp"
#include "gradwire/kernels/traffic.hpp"

namespace gw::kernels::cuda {

namespace {

using detail::CudaCodecBase;
using detail::store_hint;
using ::gw::cuda::DeviceBuffer;

class Int8Codec final : public CudaCodecBase {
 public:
  Int8Codec(std::size_t n, const CodecConfig& cfg, bool ef, cudaStream_t s)
      : CudaCodecBase(ef ? "int8_ef" : "int8", n, ef, traffic::int8(n, cfg.chunk, ef), s, store_hint(cfg)),
        p_{cfg.chunk, cfg.stochastic_rounding, cfg.seed},
        q_(n),
        s_((check_chunk(cfg.chunk), int8_scale_count(n, cfg.chunk))) {}
  void encode() override {
    GW_CHECK(ef_ ? int8_encode_ef_cuda(x_.get(), n_, p_, q_.get(), s_.get(), r_.get(), stream_)
                 : int8_encode_cuda(x_.get(), n_, p_, q_.get(), s_.get(), stream_));
  }
  void decode() override { GW_CHECK(int8_decode_cuda(q_.get(), s_.get(), n_, p_.chunk, y_.get(), stream_, hint_)); }

 private:
  Int8Params p_;
  DeviceBuffer<std::int8_t> q_;
  DeviceBuffer<float> s_;
};

}  // namespace

std::unique_ptr<Codec> make_int8(std::size_t n, const CodecConfig& c, cudaStream_t s) {
  return std::make_unique<Int8Codec>(n, c, false, s);
}
std::unique_ptr<Codec> make_int8_ef(std::size_t n, const CodecConfig& c, cudaStream_t s) {
  return std::make_unique<Int8Codec>(n, c, true, s);
}

}  // namespace gw::kernels::cuda
