// The topk codec (CPU) behind the uniform Codec interface.
//   topk / topk_ef : K = sparse_count(n, ratio); message = K values + K int32
//                    indices (indices ascending); decode scatters into zeros.
#include "codec_factories.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "codec_base.hpp"
#include "gradwire/kernels/topk.hpp"

namespace gw::kernels {

traffic::Sizes topk_codec_sizes(std::size_t n, std::size_t k, bool ef) {
  const double d = static_cast<double>(n), kk = static_cast<double>(k);
  // encode: read x, write K values + K indices (+ write the residual)
  // decode: read the message, write y
  return {topk_wire_bytes(k), 4 * d + 8 * kk + (ef ? 4 * d : 0), 8 * kk + 4 * d};
}

namespace cpu {
namespace {

using detail::CpuCodecBase;

class TopkCodec final : public CpuCodecBase {
 public:
  TopkCodec(std::size_t n, const CodecConfig& cfg, bool ef)
      : CpuCodecBase(ef ? "topk_ef" : "topk", n, ef, topk_codec_sizes(n, sparse_count(n, cfg.ratio), ef)),
        k_(sparse_count(n, cfg.ratio)),
        v_(k_),
        i_(k_) {
    topk_check_sizes(n, k_);
  }
  void encode() override {
    if (ef_)
      topk_encode_ef_cpu(x_.data(), n_, k_, v_.data(), i_.data(), r_.data());
    else
      topk_encode_cpu(x_.data(), n_, k_, v_.data(), i_.data());
  }
  void decode() override { topk_decode_cpu(v_.data(), i_.data(), k_, n_, y_.data()); }

 private:
  std::size_t k_;
  std::vector<float> v_;
  std::vector<std::int32_t> i_;
};

}  // namespace

std::unique_ptr<Codec> make_topk(std::size_t n, const CodecConfig& c) {
  return std::make_unique<TopkCodec>(n, c, false);
}
std::unique_ptr<Codec> make_topk_ef(std::size_t n, const CodecConfig& c) {
  return std::make_unique<TopkCodec>(n, c, true);
}

}  // namespace cpu
}  // namespace gw::kernels
