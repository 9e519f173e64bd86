// The int8 codec (CPU) behind the uniform Codec interface: int8 (and int8_ef), per-chunk
// absmax scales.
#include "codec_factories.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "codec_base.hpp"
#include "gradwire/kernels/int8.hpp"
#include "gradwire/kernels/traffic.hpp"

namespace gw::kernels::cpu {

namespace {

using detail::CpuCodecBase;

class Int8Codec final : public CpuCodecBase {
 public:
  Int8Codec(std::size_t n, const CodecConfig& cfg, bool ef)
      : CpuCodecBase(ef ? "int8_ef" : "int8", n, ef, traffic::int8(n, cfg.chunk, ef)),
        p_{cfg.chunk, cfg.stochastic_rounding, cfg.seed},
        q_(n),
        s_(int8_scale_count(n, cfg.chunk)) {
    check_chunk(cfg.chunk);
  }
  void encode() override {
    if (ef_)
      int8_encode_ef_cpu(x_.data(), n_, p_, q_.data(), s_.data(), r_.data());
    else
      int8_encode_cpu(x_.data(), n_, p_, q_.data(), s_.data());
  }
  void decode() override { int8_decode_cpu(q_.data(), s_.data(), n_, p_.chunk, y_.data()); }

 private:
  Int8Params p_;
  std::vector<std::int8_t> q_;
  std::vector<float> s_;
};

}  // namespace

std::unique_ptr<Codec> make_int8(std::size_t n, const CodecConfig& c) {
  return std::make_unique<Int8Codec>(n, c, false);
}
std::unique_ptr<Codec> make_int8_ef(std::size_t n, const CodecConfig& c) {
  return std::make_unique<Int8Codec>(n, c, true);
}

}  // namespace gw::kernels::cpu
