// K2's CPU codecs behind the uniform Codec interface.
//   topk / topk_ef : K = sparse_count(n, ratio); message = K values + K int32
//                    indices (indices ascending); decode scatters into zeros.
//   powersgd       : the n values as a rows x cols matrix (row-major), rank
//                    min(cfg.rank, rows, cols); encode = P = M Q,
//                    orthogonalize P, Q = M^T P for one worker (no
//                    all-reduce); decode = P Q^T. Q starts from
//                    powersgd_init_q(seed) and is kept across encode() calls
//                    (warm start).
#include "topk_powersgd_codecs.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "gradwire/kernels/powersgd.hpp"
#include "gradwire/kernels/topk.hpp"

namespace gw::kernels {

K2CodecSizes topk_codec_sizes(std::size_t n, std::size_t k, bool ef) {
  const double d = static_cast<double>(n), kk = static_cast<double>(k);
  // encode: read x, write K values + K indices (+ write the residual)
  // decode: read the message, write y
  return {topk_wire_bytes(k), 4 * d + 8 * kk + (ef ? 4 * d : 0), 8 * kk + 4 * d};
}

K2CodecSizes powersgd_codec_sizes(std::size_t m, std::size_t n, int r) {
  const double mn = static_cast<double>(m) * static_cast<double>(n);
  const double pq = 4.0 * static_cast<double>((m + n) * static_cast<std::size_t>(r));
  // encode: M read twice (P = M Q, Q = M^T P) plus P and Q; decode: write M, read P and Q
  return {powersgd_wire_bytes(static_cast<std::int64_t>(m), static_cast<std::int64_t>(n), r),
          8 * mn + 2 * pq, 4 * mn + pq};
}

namespace cpu {
namespace {

class K2CpuCodec : public Codec {
 public:
  K2CpuCodec(std::string name, std::size_t n, K2CodecSizes sizes)
      : name_(std::move(name)), n_(n), sizes_(sizes), x_(n), y_(n) {}
  std::string name() const override { return name_; }
  std::size_t elements() const override { return n_; }
  void set_input(const float* host_values) override {
    std::copy(host_values, host_values + n_, x_.begin());
  }
  void synchronize() override {}
  std::size_t wire_bytes() const override { return sizes_.wire; }
  double encode_traffic_bytes() const override { return sizes_.encode; }
  double decode_traffic_bytes() const override { return sizes_.decode; }
  std::vector<float> decoded() override { return y_; }

 protected:
  std::string name_;
  std::size_t n_;
  K2CodecSizes sizes_;
  std::vector<float> x_, y_;
};

class TopkCodec final : public K2CpuCodec {
 public:
  TopkCodec(std::size_t n, const CodecConfig& cfg, bool ef)
      : K2CpuCodec(ef ? "topk_ef" : "topk", n, topk_codec_sizes(n, sparse_count(n, cfg.ratio), ef)),
        k_(sparse_count(n, cfg.ratio)), ef_(ef), v_(k_), i_(k_), r_(ef ? n : 0) {
    topk_check_sizes(n, k_);
  }
  void encode() override {
    if (ef_) topk_encode_ef_cpu(x_.data(), n_, k_, v_.data(), i_.data(), r_.data());
    else topk_encode_cpu(x_.data(), n_, k_, v_.data(), i_.data());
  }
  void decode() override { topk_decode_cpu(v_.data(), i_.data(), k_, n_, y_.data()); }
  std::vector<float> residual() override { return r_; }

 private:
  std::size_t k_;
  bool ef_;
  std::vector<float> v_;
  std::vector<std::int32_t> i_;
  std::vector<float> r_;
};

class PowerSgdCodec final : public K2CpuCodec {
 public:
  PowerSgdCodec(std::size_t n, const CodecConfig& cfg, std::pair<std::size_t, std::size_t> shape)
      : K2CpuCodec("powersgd", n,
                   powersgd_codec_sizes(shape.first, shape.second,
                                        powersgd_effective_rank(static_cast<std::int64_t>(shape.first),
                                                                static_cast<std::int64_t>(shape.second),
                                                                cfg.rank))),
        m_(static_cast<std::int64_t>(shape.first)), c_(static_cast<std::int64_t>(shape.second)),
        r_(powersgd_effective_rank(m_, c_, cfg.rank)) {
    if (cfg.rank < 1) throw std::invalid_argument("powersgd: rank must be at least 1");
    powersgd_check_sizes(m_, c_, r_);
    p_.resize(static_cast<std::size_t>(m_ * r_));
    q_.resize(static_cast<std::size_t>(c_ * r_));
    powersgd_init_q(q_.data(), c_, r_, cfg.seed);
  }
  void encode() override {
    powersgd_compute_p_cpu(x_.data(), m_, c_, q_.data(), r_, p_.data());
    powersgd_orthogonalize_cpu(p_.data(), m_, r_);
    powersgd_compute_q_cpu(x_.data(), m_, c_, p_.data(), r_, q_.data());
  }
  void decode() override { powersgd_decompress_cpu(p_.data(), q_.data(), m_, c_, r_, y_.data()); }

 private:
  std::int64_t m_, c_;
  int r_;
  std::vector<float> p_, q_;
};

}  // namespace

std::unique_ptr<Codec> make_topk(std::size_t n, const CodecConfig& c) {
  return std::make_unique<TopkCodec>(n, c, false);
}
std::unique_ptr<Codec> make_topk_ef(std::size_t n, const CodecConfig& c) {
  return std::make_unique<TopkCodec>(n, c, true);
}
std::unique_ptr<Codec> make_powersgd(std::size_t n, const CodecConfig& c) {
  return std::make_unique<PowerSgdCodec>(n, c, powersgd_matrix_shape(n, c.rows, c.cols));
}

}  // namespace cpu
}  // namespace gw::kernels
