// The sign codecs (CPU) behind the uniform Codec interface: sign (and sign_ef), 1 bit per value
// and a per-chunk scale; majority_vote, the vote over the sign messages of
// several workers.
#include "codec_factories.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "codec_base.hpp"
#include "gradwire/kernels/sign.hpp"
#include "gradwire/kernels/traffic.hpp"

namespace gw::kernels::cpu {

namespace {

using detail::CpuCodecBase;

class SignCodec final : public CpuCodecBase {
 public:
  SignCodec(std::size_t n, const CodecConfig& cfg, bool ef)
      : CpuCodecBase(ef ? "sign_ef" : "sign", n, ef, traffic::sign(n, cfg.chunk, ef)),
        chunk_(cfg.chunk),
        w_(sign_word_count(n)),
        s_(sign_scale_count(n, cfg.chunk)) {
    check_chunk(cfg.chunk);
  }
  void encode() override {
    if (ef_)
      sign_encode_ef_cpu(x_.data(), n_, chunk_, w_.data(), s_.data(), r_.data());
    else
      sign_encode_cpu(x_.data(), n_, chunk_, w_.data(), s_.data());
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
      : CpuCodecBase("majority_vote", n, false, traffic::majority_vote(n, cfg.chunk, cfg.workers)),
        chunk_(cfg.chunk),
        workers_(cfg.workers),
        seed_(cfg.seed) {
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
  void decode() override { majority_vote_decode_cpu(w_.data(), s_.data(), workers_, n_, chunk_, y_.data()); }

 private:
  std::size_t chunk_;
  int workers_;
  std::uint64_t seed_;
  std::size_t nw_ = 0, nc_ = 0;
  std::vector<std::uint32_t> w_;
  std::vector<float> s_;
};

}  // namespace

std::unique_ptr<Codec> make_sign(std::size_t n, const CodecConfig& c) {
  return std::make_unique<SignCodec>(n, c, false);
}
std::unique_ptr<Codec> make_majority_vote(std::size_t n, const CodecConfig& c) {
  return std::make_unique<MajorityVoteCodec>(n, c);
}
std::unique_ptr<Codec> make_sign_ef(std::size_t n, const CodecConfig& c) {
  return std::make_unique<SignCodec>(n, c, true);
}

}  // namespace gw::kernels::cpu
