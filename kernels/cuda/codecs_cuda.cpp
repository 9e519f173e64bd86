// K1's CUDA codecs behind the uniform Codec interface. Host code only: all
// buffers are allocated in the constructors; encode()/decode() only enqueue.
#include "codecs_cuda.hpp"

#include <stdexcept>
#include <vector>

#include "codec_base.hpp"
#include "gradwire/cuda/check.hpp"
#include "gradwire/cuda/device_buffer.hpp"
#include "gradwire/kernels/cast_cuda.hpp"
#include "gradwire/kernels/int8_cuda.hpp"
#include "gradwire/kernels/randomk_cuda.hpp"
#include "gradwire/kernels/sign_cuda.hpp"
#include "gradwire/kernels/traffic.hpp"

namespace gw::kernels::cuda {

namespace {

using ::gw::cuda::DeviceBuffer;

using detail::CudaCodecBase;

StoreHint store_hint(const CodecConfig& cfg) {
  return cfg.streaming_stores ? StoreHint::streaming : StoreHint::plain;
}

class CastCodec final : public CudaCodecBase {
 public:
  CastCodec(CastKind kind, std::size_t n, const CodecConfig& cfg, bool ef, cudaStream_t s)
      : CudaCodecBase(std::string(kind == CastKind::fp16 ? "fp16" : "bf16") + (ef ? "_ef" : ""), n,
                      ef, traffic::cast(n, ef), s, store_hint(cfg)),
        kind_(kind), prescale_(cfg.prescale), msg_(n) {}
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

class Int8Codec final : public CudaCodecBase {
 public:
  Int8Codec(std::size_t n, const CodecConfig& cfg, bool ef, cudaStream_t s)
      : CudaCodecBase(ef ? "int8_ef" : "int8", n, ef, traffic::int8(n, cfg.chunk, ef), s, store_hint(cfg)),
        p_{cfg.chunk, cfg.stochastic_rounding, cfg.seed}, q_(n),
        s_((check_chunk(cfg.chunk), int8_scale_count(n, cfg.chunk))) {}
  void encode() override {
    GW_CHECK(ef_ ? int8_encode_ef_cuda(x_.get(), n_, p_, q_.get(), s_.get(), r_.get(), stream_)
                      : int8_encode_cuda(x_.get(), n_, p_, q_.get(), s_.get(), stream_));
  }
  void decode() override {
    GW_CHECK(int8_decode_cuda(q_.get(), s_.get(), n_, p_.chunk, y_.get(), stream_, hint_));
  }

 private:
  Int8Params p_;
  DeviceBuffer<std::int8_t> q_;
  DeviceBuffer<float> s_;
};

class SignCodec final : public CudaCodecBase {
 public:
  SignCodec(std::size_t n, const CodecConfig& cfg, bool ef, cudaStream_t s)
      : CudaCodecBase(ef ? "sign_ef" : "sign", n, ef, traffic::sign(n, cfg.chunk, ef), s, store_hint(cfg)),
        chunk_(cfg.chunk), w_(sign_word_count(n)),
        s_((check_chunk(cfg.chunk), sign_scale_count(n, cfg.chunk))) {}
  void encode() override {
    GW_CHECK(ef_ ? sign_encode_ef_cuda(x_.get(), n_, chunk_, w_.get(), s_.get(), r_.get(), stream_)
                      : sign_encode_cuda(x_.get(), n_, chunk_, w_.get(), s_.get(), stream_));
  }
  void decode() override {
    GW_CHECK(sign_decode_cuda(w_.get(), s_.get(), n_, chunk_, y_.get(), stream_, hint_));
  }

 private:
  std::size_t chunk_;
  DeviceBuffer<std::uint32_t> w_;
  DeviceBuffer<float> s_;
};

/// Worker 0 is this codec's input; the synthetic peers 1.. are encoded on the
/// host by the CPU twin at set_input and uploaded (identical messages).
class MajorityVoteCodec final : public CudaCodecBase {
 public:
  MajorityVoteCodec(std::size_t n, const CodecConfig& cfg, cudaStream_t s)
      : CudaCodecBase("majority_vote", n, false, traffic::majority_vote(n, cfg.chunk, cfg.workers), s,
                      store_hint(cfg)),
        chunk_(cfg.chunk), workers_(cfg.workers), seed_(cfg.seed),
        nw_(sign_word_count(n)), nc_((check_chunk(cfg.chunk), sign_scale_count(n, cfg.chunk))),
        w_(nw_ * static_cast<std::size_t>(cfg.workers < 1 ? 1 : cfg.workers)),
        s_(nc_ * static_cast<std::size_t>(cfg.workers < 1 ? 1 : cfg.workers)) {
    if (workers_ < 1) throw std::invalid_argument("majority_vote: workers must be >= 1");
  }
  void set_input(const float* host_values) override {
    CudaCodecBase::set_input(host_values);
    std::vector<float> peer(n_);
    std::vector<std::uint32_t> words(nw_);
    std::vector<float> scales(nc_);
    for (int p = 1; p < workers_; ++p) {
      const auto pu = static_cast<std::size_t>(p);
      majority_vote_peer_input(host_values, n_, seed_, p, peer.data());
      sign_encode_cpu(peer.data(), n_, chunk_, words.data(), scales.data());
      GW_CHECK(cudaMemcpyAsync(w_.get() + pu * nw_, words.data(), nw_ * 4, cudaMemcpyHostToDevice, stream_));
      GW_CHECK(cudaMemcpyAsync(s_.get() + pu * nc_, scales.data(), nc_ * 4, cudaMemcpyHostToDevice, stream_));
      GW_CHECK(cudaStreamSynchronize(stream_));
    }
  }
  void encode() override {
    GW_CHECK(sign_encode_cuda(x_.get(), n_, chunk_, w_.get(), s_.get(), stream_));
  }
  void decode() override {
    GW_CHECK(majority_vote_decode_cuda(w_.get(), s_.get(), workers_, n_, chunk_, y_.get(), stream_, hint_));
  }

 private:
  std::size_t chunk_;
  int workers_;
  std::uint64_t seed_;
  std::size_t nw_, nc_;
  DeviceBuffer<std::uint32_t> w_;
  DeviceBuffer<float> s_;
};

class RandomKCodec final : public CudaCodecBase {
 public:
  RandomKCodec(std::size_t n, const CodecConfig& cfg, bool ef, cudaStream_t s)
      : CudaCodecBase(ef ? "randomk_ef" : "randomk", n, ef,
                      traffic::randomk(n, sparse_count(n, cfg.ratio), ef), s, store_hint(cfg)),
        p_{sparse_count(n, cfg.ratio), cfg.seed, cfg.step}, v_(p_.k) {}
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

std::unique_ptr<Codec> make_fp16(std::size_t n, const CodecConfig& c, cudaStream_t s) { return std::make_unique<CastCodec>(CastKind::fp16, n, c, false, s); }
std::unique_ptr<Codec> make_bf16(std::size_t n, const CodecConfig& c, cudaStream_t s) { return std::make_unique<CastCodec>(CastKind::bf16, n, c, false, s); }
std::unique_ptr<Codec> make_int8(std::size_t n, const CodecConfig& c, cudaStream_t s) { return std::make_unique<Int8Codec>(n, c, false, s); }
std::unique_ptr<Codec> make_sign(std::size_t n, const CodecConfig& c, cudaStream_t s) { return std::make_unique<SignCodec>(n, c, false, s); }
std::unique_ptr<Codec> make_majority_vote(std::size_t n, const CodecConfig& c, cudaStream_t s) { return std::make_unique<MajorityVoteCodec>(n, c, s); }
std::unique_ptr<Codec> make_randomk(std::size_t n, const CodecConfig& c, cudaStream_t s) { return std::make_unique<RandomKCodec>(n, c, false, s); }
std::unique_ptr<Codec> make_fp16_ef(std::size_t n, const CodecConfig& c, cudaStream_t s) { return std::make_unique<CastCodec>(CastKind::fp16, n, c, true, s); }
std::unique_ptr<Codec> make_bf16_ef(std::size_t n, const CodecConfig& c, cudaStream_t s) { return std::make_unique<CastCodec>(CastKind::bf16, n, c, true, s); }
std::unique_ptr<Codec> make_int8_ef(std::size_t n, const CodecConfig& c, cudaStream_t s) { return std::make_unique<Int8Codec>(n, c, true, s); }
std::unique_ptr<Codec> make_sign_ef(std::size_t n, const CodecConfig& c, cudaStream_t s) { return std::make_unique<SignCodec>(n, c, true, s); }
std::unique_ptr<Codec> make_randomk_ef(std::size_t n, const CodecConfig& c, cudaStream_t s) { return std::make_unique<RandomKCodec>(n, c, true, s); }

}  // namespace gw::kernels::cuda
