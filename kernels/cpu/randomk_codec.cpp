// The randomk codec (CPU) behind the uniform Codec interface: randomk (and randomk_ef), K values
// at seeded random positions.
#include "codec_factories.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "codec_base.hpp"
#include "gradwire/kernels/randomk.hpp"
#include "gradwire/kernels/traffic.hpp"

namespace gw::kernels::cpu {

namespace {

using detail::CpuCodecBase;

class RandomKCodec final : public CpuCodecBase {
 public:
  RandomKCodec(std::size_t n, const CodecConfig& cfg, bool ef)
      : CpuCodecBase(ef ? "randomk_ef" : "randomk", n, ef, traffic::randomk(n, sparse_count(n, cfg.ratio), ef)),
        p_{sparse_count(n, cfg.ratio), cfg.seed, cfg.step},
        v_(p_.k) {}
  void encode() override {
    if (ef_)
      randomk_encode_ef_cpu(x_.data(), n_, p_, v_.data(), r_.data());
    else
      randomk_encode_cpu(x_.data(), n_, p_, v_.data());
  }
  void decode() override { randomk_decode_cpu(v_.data(), n_, p_, y_.data()); }

 private:
  RandomKParams p_;
  std::vector<float> v_;
};

}  // namespace

std::unique_ptr<Codec> make_randomk(std::size_t n, const CodecConfig& c) {
  return std::make_unique<RandomKCodec>(n, c, false);
}
std::unique_ptr<Codec> make_randomk_ef(std::size_t n, const CodecConfig& c) {
  return std::make_unique<RandomKCodec>(n, c, true);
}

}  // namespace gw::kernels::cpu
