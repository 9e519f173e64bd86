// The powersgd codec (CPU) behind the uniform Codec interface.
//   powersgd       : the n values as a rows x cols matrix (row-major), rank
//                    min(cfg.rank, rows, cols); encode = P = M Q,
//                    orthogonalize P, Q = M^T P for one worker (no
//                    all-reduce); decode = P Q^T. Q starts from
//                    powersgd_init_q(seed) and is kept across encode() calls
//                    (warm start).
#include "codec_factories.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "codec_base.hpp"
#include "gradwire/kernels/powersgd.hpp"

namespace gw::kernels {

traffic::Sizes powersgd_codec_sizes(std::size_t m, std::size_t n, int r) {
  const double mn = static_cast<double>(m) * static_cast<double>(n);
  const double pq = 4.0 * static_cast<double>((m + n) * static_cast<std::size_t>(r));
  // encode: M read twice (P = M Q, Q = M^T P) plus P and Q; decode: write M, read P and Q
  return {powersgd_wire_bytes(static_cast<std::int64_t>(m), static_cast<std::int64_t>(n), r), 8 * mn + 2 * pq,
          4 * mn + pq};
}

namespace cpu {
namespace {

using detail::CpuCodecBase;

class PowerSgdCodec final : public CpuCodecBase {
 public:
  PowerSgdCodec(std::size_t n, const CodecConfig& cfg, std::pair<std::size_t, std::size_t> shape)
      : CpuCodecBase("powersgd", n, false,
                     powersgd_codec_sizes(shape.first, shape.second,
                                          powersgd_effective_rank(static_cast<std::int64_t>(shape.first),
                                                                  static_cast<std::int64_t>(shape.second), cfg.rank))),
        m_(static_cast<std::int64_t>(shape.first)),
        c_(static_cast<std::int64_t>(shape.second)),
        rank_(powersgd_effective_rank(m_, c_, cfg.rank)) {
    if (cfg.rank < 1) throw std::invalid_argument("powersgd: rank must be at least 1");
    powersgd_check_sizes(m_, c_, rank_);
    p_.resize(static_cast<std::size_t>(m_ * rank_));
    q_.resize(static_cast<std::size_t>(c_ * rank_));
    powersgd_init_q(q_.data(), c_, rank_, cfg.seed);
  }
  void encode() override {
    powersgd_compute_p_cpu(x_.data(), m_, c_, q_.data(), rank_, p_.data());
    powersgd_orthogonalize_cpu(p_.data(), m_, rank_);
    powersgd_compute_q_cpu(x_.data(), m_, c_, p_.data(), rank_, q_.data());
  }
  void decode() override { powersgd_decompress_cpu(p_.data(), q_.data(), m_, c_, rank_, y_.data()); }

 private:
  std::int64_t m_, c_;
  int rank_;
  std::vector<float> p_, q_;
};

}  // namespace

std::unique_ptr<Codec> make_powersgd(std::size_t n, const CodecConfig& c) {
  return std::make_unique<PowerSgdCodec>(n, c, powersgd_matrix_shape(n, c.rows, c.cols));
}

}  // namespace cpu
}  // namespace gw::kernels
