// The powersgd codec (CUDA) behind the uniform Codec interface; same semantics
// as the CPU codec in kernels/cpu/powersgd_codec.cpp.
// Every buffer and workspace (and the cuBLAS handle) is created in the
// constructor; encode()/decode() only enqueue on the codec's stream.
#include "codec_factories.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "../cpu/codec_factories.hpp"
#include "codec_base.hpp"
#include "gradwire/cuda/check.hpp"
#include "gradwire/cuda/device_buffer.hpp"
#include "gradwire/kernels/powersgd_cuda.hpp"

namespace gw::kernels::cuda {
namespace {

using ::gw::cuda::DeviceBuffer;

using detail::CudaCodecBase;

class PowerSgdCodec final : public CudaCodecBase {
 public:
  PowerSgdCodec(std::size_t n, const CodecConfig& cfg, std::pair<std::size_t, std::size_t> shape, cudaStream_t s)
      : CudaCodecBase("powersgd", n, false,
                      powersgd_codec_sizes(shape.first, shape.second,
                                           powersgd_effective_rank(static_cast<std::int64_t>(shape.first),
                                                                   static_cast<std::int64_t>(shape.second), cfg.rank)),
                      s),
        m_(static_cast<std::int64_t>(shape.first)),
        c_(static_cast<std::int64_t>(shape.second)),
        rank_(checked_rank(m_, c_, cfg.rank)),
        p_(static_cast<std::size_t>(m_ * rank_)),
        q_(static_cast<std::size_t>(c_ * rank_)),
        ws_(powersgd_workspace_bytes(m_, rank_)) {
    std::vector<float> q(q_.size());
    powersgd_init_q(q.data(), c_, rank_, cfg.seed);
    GW_CHECK(cudaMemcpyAsync(q_.get(), q.data(), q_.bytes(), cudaMemcpyHostToDevice, stream_));
    GW_CHECK(cudaStreamSynchronize(stream_));
  }
  void encode() override {
    GW_CHECK(powersgd_compute_p_cuda(blas_, x_.get(), m_, c_, q_.get(), rank_, p_.get(), stream_));
    GW_CHECK(powersgd_orthogonalize_p_cuda(p_.get(), m_, rank_, 0.0f, ws_.get(), ws_.bytes(), stream_));
    GW_CHECK(powersgd_compute_q_cuda(blas_, x_.get(), m_, c_, p_.get(), rank_, q_.get(), stream_));
  }
  void decode() override {
    GW_CHECK(powersgd_decompress_cuda(blas_, p_.get(), q_.get(), m_, c_, rank_, y_.get(), stream_));
  }

 private:
  static int checked_rank(std::int64_t m, std::int64_t n, int rank) {
    if (rank < 1) throw std::invalid_argument("powersgd: rank must be at least 1");
    const int r = powersgd_effective_rank(m, n, rank);
    powersgd_check_sizes(m, n, r);
    return r;
  }
  std::int64_t m_, c_;
  int rank_;
  DeviceBuffer<float> p_, q_;
  DeviceBuffer<unsigned char> ws_;
  PowerSgdBlas blas_;
};

}  // namespace

std::unique_ptr<Codec> make_powersgd(std::size_t n, const CodecConfig& c, cudaStream_t s) {
  return std::make_unique<PowerSgdCodec>(n, c, powersgd_matrix_shape(n, c.rows, c.cols), s);
}

}  // namespace gw::kernels::cuda
