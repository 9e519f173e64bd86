// The cast codec (CPU) behind the uniform Codec interface: fp16 and bf16 (and their _ef
// variants): a cast to 16 bits, optionally prescaled.
#include "codec_factories.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "codec_base.hpp"
#include "gradwire/kernels/cast.hpp"
#include "gradwire/kernels/traffic.hpp"

namespace gw::kernels::cpu {

namespace {

using detail::CpuCodecBase;

class CastCodec final : public CpuCodecBase {
 public:
  CastCodec(CastKind kind, std::size_t n, const CodecConfig& cfg, bool ef)
      : CpuCodecBase(std::string(kind == CastKind::fp16 ? "fp16" : "bf16") + (ef ? "_ef" : ""), n, ef,
                     traffic::cast(n, ef)),
        kind_(kind),
        prescale_(cfg.prescale),
        msg_(n) {}
  void encode() override {
    if (ef_)
      cast_encode_ef_cpu(kind_, x_.data(), n_, prescale_, msg_.data(), r_.data());
    else
      cast_encode_cpu(kind_, x_.data(), n_, prescale_, msg_.data());
  }
  void decode() override { cast_decode_cpu(kind_, msg_.data(), n_, y_.data()); }

 private:
  CastKind kind_;
  float prescale_;
  std::vector<std::uint16_t> msg_;
};

}  // namespace

std::unique_ptr<Codec> make_fp16(std::size_t n, const CodecConfig& c) {
  return std::make_unique<CastCodec>(CastKind::fp16, n, c, false);
}
std::unique_ptr<Codec> make_bf16(std::size_t n, const CodecConfig& c) {
  return std::make_unique<CastCodec>(CastKind::bf16, n, c, false);
}
std::unique_ptr<Codec> make_fp16_ef(std::size_t n, const CodecConfig& c) {
  return std::make_unique<CastCodec>(CastKind::fp16, n, c, true);
}
std::unique_ptr<Codec> make_bf16_ef(std::size_t n, const CodecConfig& c) {
  return std::make_unique<CastCodec>(CastKind::bf16, n, c, true);
}

}  // namespace gw::kernels::cpu
