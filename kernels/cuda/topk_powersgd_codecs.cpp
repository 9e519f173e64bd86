// K2's CUDA codecs behind the uniform Codec interface. Every buffer and
// workspace (and the cuBLAS handle) is created in the constructor;
// encode()/decode() only enqueue on the codec's stream.
#include "topk_powersgd_codecs.hpp"

#include <string>
#include <vector>

#include "../cpu/topk_powersgd_codecs.hpp"
#include "cuda_check.hpp"
#include "gradwire/kernels/powersgd_cuda.hpp"
#include "gradwire/kernels/topk_cuda.hpp"

namespace gw::kernels::cuda {
namespace {

using detail::DeviceBuffer;

class K2CudaCodec : public Codec {
 public:
  K2CudaCodec(std::string name, std::size_t n, K2CodecSizes sizes, cudaStream_t s)
      : name_(std::move(name)), n_(n), sizes_(sizes), stream_(s), x_(n), y_(n) {}
  std::string name() const override { return name_; }
  std::size_t elements() const override { return n_; }
  void set_input(const float* host_values) override {
    GW_CUDA_CHECK(cudaMemcpyAsync(x_.get(), host_values, n_ * sizeof(float),
                                  cudaMemcpyHostToDevice, stream_));
    GW_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void synchronize() override { GW_CUDA_CHECK(cudaStreamSynchronize(stream_)); }
  std::size_t wire_bytes() const override { return sizes_.wire; }
  double encode_traffic_bytes() const override { return sizes_.encode; }
  double decode_traffic_bytes() const override { return sizes_.decode; }
  std::vector<float> decoded() override { return to_host(y_); }

 protected:
  std::vector<float> to_host(const DeviceBuffer<float>& b) {
    std::vector<float> h(b.size());
    GW_CUDA_CHECK(cudaMemcpyAsync(h.data(), b.get(), b.bytes(), cudaMemcpyDeviceToHost, stream_));
    GW_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return h;
  }
  std::string name_;
  std::size_t n_;
  K2CodecSizes sizes_;
  cudaStream_t stream_;
  DeviceBuffer<float> x_, y_;
};

class TopkCodec final : public K2CudaCodec {
 public:
  TopkCodec(std::size_t n, const CodecConfig& cfg, bool ef, cudaStream_t s)
      : K2CudaCodec(ef ? "topk_ef" : "topk", n,
                    topk_codec_sizes(n, sparse_count(n, cfg.ratio), ef), s),
        k_(sparse_count(n, cfg.ratio)), ef_(ef), v_(k_), i_(k_), r_(ef ? n : 0),
        ws_((topk_check_sizes(n, k_), topk_workspace_bytes(n))) {}
  void encode() override {
    GW_CUDA_CHECK(ef_ ? topk_encode_ef_cuda(x_.get(), n_, k_, v_.get(), i_.get(), r_.get(),
                                            ws_.get(), ws_.bytes(), stream_)
                      : topk_encode_cuda(x_.get(), n_, k_, v_.get(), i_.get(), ws_.get(),
                                         ws_.bytes(), stream_));
  }
  void decode() override {
    GW_CUDA_CHECK(topk_decode_cuda(v_.get(), i_.get(), k_, n_, y_.get(), stream_));
  }
  std::vector<float> residual() override { return ef_ ? to_host(r_) : std::vector<float>{}; }

 private:
  std::size_t k_;
  bool ef_;
  DeviceBuffer<float> v_;
  DeviceBuffer<std::int32_t> i_;
  DeviceBuffer<float> r_;
  DeviceBuffer<unsigned char> ws_;
};

class PowerSgdCodec final : public K2CudaCodec {
 public:
  PowerSgdCodec(std::size_t n, const CodecConfig& cfg, std::pair<std::size_t, std::size_t> shape,
                cudaStream_t s)
      : K2CudaCodec("powersgd", n,
                    powersgd_codec_sizes(shape.first, shape.second,
                                         powersgd_effective_rank(static_cast<std::int64_t>(shape.first),
                                                                 static_cast<std::int64_t>(shape.second),
                                                                 cfg.rank)),
                    s),
        m_(static_cast<std::int64_t>(shape.first)), c_(static_cast<std::int64_t>(shape.second)),
        r_(checked_rank(m_, c_, cfg.rank)),
        p_(static_cast<std::size_t>(m_ * r_)), q_(static_cast<std::size_t>(c_ * r_)),
        ws_(powersgd_workspace_bytes(m_, r_)) {
    std::vector<float> q(q_.size());
    powersgd_init_q(q.data(), c_, r_, cfg.seed);
    GW_CUDA_CHECK(cudaMemcpyAsync(q_.get(), q.data(), q_.bytes(), cudaMemcpyHostToDevice, stream_));
    GW_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void encode() override {
    GW_CUDA_CHECK(powersgd_compute_p_cuda(blas_, x_.get(), m_, c_, q_.get(), r_, p_.get(), stream_));
    GW_CUDA_CHECK(powersgd_orthogonalize_p_cuda(p_.get(), m_, r_, 0.0f, ws_.get(), ws_.bytes(),
                                                stream_));
    GW_CUDA_CHECK(powersgd_compute_q_cuda(blas_, x_.get(), m_, c_, p_.get(), r_, q_.get(), stream_));
  }
  void decode() override {
    GW_CUDA_CHECK(powersgd_decompress_cuda(blas_, p_.get(), q_.get(), m_, c_, r_, y_.get(), stream_));
  }

 private:
  static int checked_rank(std::int64_t m, std::int64_t n, int rank) {
    if (rank < 1) throw std::invalid_argument("powersgd: rank must be at least 1");
    const int r = powersgd_effective_rank(m, n, rank);
    powersgd_check_sizes(m, n, r);
    return r;
  }
  std::int64_t m_, c_;
  int r_;
  DeviceBuffer<float> p_, q_;
  DeviceBuffer<unsigned char> ws_;
  PowerSgdBlas blas_;
};

}  // namespace

std::unique_ptr<Codec> make_topk(std::size_t n, const CodecConfig& c, cudaStream_t s) {
  return std::make_unique<TopkCodec>(n, c, false, s);
}
std::unique_ptr<Codec> make_topk_ef(std::size_t n, const CodecConfig& c, cudaStream_t s) {
  return std::make_unique<TopkCodec>(n, c, true, s);
}
std::unique_ptr<Codec> make_powersgd(std::size_t n, const CodecConfig& c, cudaStream_t s) {
  return std::make_unique<PowerSgdCodec>(n, c, powersgd_matrix_shape(n, c.rows, c.cols), s);
}

}  // namespace gw::kernels::cuda
