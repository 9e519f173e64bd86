// The randomk codec (CUDA) behind the uniform Codec interface: randomk (and randomk_ef), K values
// at seeded random positions.
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
#include "gradwire/kernels/randomk_cuda.hpp"
#include "gradwire/kernels/traffic.hpp"

namespace gw::kernels::cuda {

namespace {

using detail::CudaCodecBase;
using detail::store_hint;
using ::gw::cuda::DeviceBuffer;

class RandomKCodec final : public CudaCodecBase {
 public:
  RandomKCodec(std::size_t n, const CodecConfig& cfg, bool ef, cudaStream_t s)
      : CudaCodecBase(ef ? "randomk_ef" : "randomk", n, ef, traffic::randomk(n, sparse_count(n, cfg.ratio), ef), s,
                      store_hint(cfg)),
        p_{sparse_count(n, cfg.ratio), cfg.seed, cfg.step},
        v_(p_.k) {}
  void encode() override {
    GW_CHECK(ef_ ? randomk_encode_ef_cuda(x_.get(), n_, p_, v_.get(), r_.get(), stream_)
                 : randomk_encode_cuda(x_.get(), n_, p_, v_.get(), stream_));
  }
  void decode() override { GW_CHECK(randomk_decode_cuda(v_.get(), n_, p_, y_.get(), stream_, hint_)); }

 private:
  RandomKParams p_;
  DeviceBuffer<float> v_;
};

}  // namespace

std::unique_ptr<Codec> make_randomk(std::size_t n, const CodecConfig& c, cudaStream_t s) {
  return std::make_unique<RandomKCodec>(n, c, false, s);
}
std::unique_ptr<Codec> make_randomk_ef(std::size_t n, const CodecConfig& c, cudaStream_t s) {
  return std::make_unique<RandomKCodec>(n, c, true, s);
}

}  // namespace gw::kernels::cuda
