// K1's CPU codecs behind the uniform Codec interface.
#include "codecs_cpu.hpp"

#include "codec_base.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "gradwire/kernels/cast.hpp"
#include "gradwire/kernels/int8.hpp"
#include "gradwire/kernels/randomk.hpp"
#include "gradwire/kernels/sign.hpp"
#include "gradwire/kernels/traffic.hpp"

namespace gw::kernels::cpu {

namespace {

using detail::CpuCodecBase;

class CastCodec final : public CpuCodecBase {
 public:
  CastCodec(CastKind kind, std::size_t n, const CodecConfig& cfg, bool ef)
      : CpuCodecBase(std::string(kind == CastKind::fp16 ? "fp16" : "bf16") + (ef ? "_ef" : ""), n,
                     ef, traffic::cast(n, ef)),
        kind_(kind), prescale_(cfg.prescale), msg_(n) {}
  void encode() override {
    if (ef_) cast_encode_ef_cpu(kind_, x_.data(), n_, prescale_, msg_.data(), r_.data());
    else cast_encode_cpu(kind_, x_.data(), n_, prescale_, msg_.data());
  }
  void decode() override { cast_decode_cpu(kind_, msg_.data(), n_, y_.data()); }

 private:
  CastKind kind_;
  float prescale_;
  std::vector<std::uint16_t> msg_;
};

class Int8Codec final : public CpuCodecBase {
 public:
  Int8Codec(std::size_t n, const CodecConfig& cfg, bool ef)
      : CpuCodecBase(ef ? "int8_ef" : "int8", n, ef, traffic::int8(n, cfg.chunk, ef)),
        p_{cfg.chunk, cfg.stochastic_rounding, cfg.seed}, q_(n), s_(int8_scale_count(n, cfg.chunk)) {
    check_chunk(cfg.chunk);
  }
  void encode() override {
    if (ef_) int8_encode_ef_cpu(x_.data(), n_, p_, q_.data(), s_.data(), r_.data());
    else int8_encode_cpu(x_.data(), n_, p_, q_.data(), s_.data());
  }
  void decode() override { int8_decode_cpu(q_.data(), s_.data(), n_, p_.chunk, y_.data()); }

 private:
  Int8Params p_;
  std::vector<std::int8_t> q_;
  std::vector<float> s_;
};

class SignCodec final : public CpuCodecBase {
 public:
  SignCodec(std::size_t n, const CodecConfig& cfg, bool ef)
      : CpuCodecBase(ef ? "sign_ef" : "sign", n, ef, traffic::sign(n, cfg.chunk, ef)),
        chunk_(cfg.chunk), w_(sign_word_count(n)), s_(sign_scale_count(n, cfg.chunk)) {
    check_chunk(cfg.chunk);
  }
  void encode() override {
    if (ef_) sign_encode_ef_cpu(x_.data(), n_, chunk_, w_.data(), s_.data(), r_.data());
    else sign_encode_cpu(x_.data(), n_, chunk_, w_.data(), s_.data());
  }
  void decode() override { sign_decode_cpu(w_.data(), s_.data(), n_, chunk_, y_.data()); }

 private:
  std::size_t chunk_;
  std::vector<std::uint32_t> w_;
  std::vector<float> s_;
};

/// Worker 0 is this codec's input; workers 1.. are synthetic peers encoded at set_input.
class MajorityVoteCodec final : public CpuCodecBase {
 public:
  MajorityVoteCodec(std::size_t n, const CodecConfig& cfg)
      : CpuCodecBase("majority_vote", n, false,
                     traffic::majority_vote(n, cfg.chunk, cfg.workers)),
        chunk_(cfg.chunk), workers_(cfg.workers), seed_(cfg.seed) {
    check_chunk(cfg.chunk);
    if (workers_ < 1) throw std::invalid_argument("majority_vote: workers must be >= 1");
    nw_ = sign_word_count(n);
    nc_ = sign_scale_count(n, chunk_);
    w_.resize(nw_ * static_cast<std::size_t>(workers_));
    s_.resize(nc_ * static_cast<std::size_t>(workers_));
  }
  void set_input(const float* host_values) override {
    CpuCodecBase::set_input(host_values);
    std::vector<float> peer(n_);
    for (int p = 1; p < workers_; ++p) {
      const auto pu = static_cast<std::size_t>(p);
      majority_vote_peer_input(x_.data(), n_, seed_, p, peer.data());
      sign_encode_cpu(peer.data(), n_, chunk_, w_.data() + pu * nw_, s_.data() + pu * nc_);
    }
  }
  void encode() override { sign_encode_cpu(x_.data(), n_, chunk_, w_.data(), s_.data()); }
  void decode() override {
    majority_vote_decode_cpu(w_.data(), s_.data(), workers_, n_, chunk_, y_.data());
  }

 private:
  std::size_t chunk_;
  int workers_;
  std::uint64_t seed_;
  std::size_t nw_ = 0, nc_ = 0;
  std::vector<std::uint32_t> w_;
  std::vector<float> s_;
};

class RandomKCodec final : public CpuCodecBase {
 public:
  RandomKCodec(std::size_t n, const CodecConfig& cfg, bool ef)
      : CpuCodecBase(ef ? "randomk_ef" : "randomk", n, ef,
                     traffic::randomk(n, sparse_count(n, cfg.ratio), ef)),
        p_{sparse_count(n, cfg.ratio), cfg.seed, cfg.step}, v_(p_.k) {}
  void encode() override {
    if (ef_) randomk_encode_ef_cpu(x_.data(), n_, p_, v_.data(), r_.data());
    else randomk_encode_cpu(x_.data(), n_, p_, v_.data());
  }
  void decode() override { randomk_decode_cpu(v_.data(), n_, p_, y_.data()); }

 private:
  RandomKParams p_;
  std::vector<float> v_;
};

}  // namespace

std::unique_ptr<Codec> make_fp16(std::size_t n, const CodecConfig& c) { return std::make_unique<CastCodec>(CastKind::fp16, n, c, false); }
std::unique_ptr<Codec> make_bf16(std::size_t n, const CodecConfig& c) { return std::make_unique<CastCodec>(CastKind::bf16, n, c, false); }
std::unique_ptr<Codec> make_int8(std::size_t n, const CodecConfig& c) { return std::make_unique<Int8Codec>(n, c, false); }
std::unique_ptr<Codec> make_sign(std::size_t n, const CodecConfig& c) { return std::make_unique<SignCodec>(n, c, false); }
std::unique_ptr<Codec> make_majority_vote(std::size_t n, const CodecConfig& c) { return std::make_unique<MajorityVoteCodec>(n, c); }
std::unique_ptr<Codec> make_randomk(std::size_t n, const CodecConfig& c) { return std::make_unique<RandomKCodec>(n, c, false); }
std::unique_ptr<Codec> make_fp16_ef(std::size_t n, const CodecConfig& c) { return std::make_unique<CastCodec>(CastKind::fp16, n, c, true); }
std::unique_ptr<Codec> make_bf16_ef(std::size_t n, const CodecConfig& c) { return std::make_unique<CastCodec>(CastKind::bf16, n, c, true); }
std::unique_ptr<Codec> make_int8_ef(std::size_t n, const CodecConfig& c) { return std::make_unique<Int8Codec>(n, c, true); }
std::unique_ptr<Codec> make_sign_ef(std::size_t n, const CodecConfig& c) { return std::make_unique<SignCodec>(n, c, true); }
std::unique_ptr<Codec> make_randomk_ef(std::size_t n, const CodecConfig& c) { return std::make_unique<RandomKCodec>(n, c, true); }

}  // namespace gw::kernels::cpu
