// The sign codecs (CUDA) behind the uniform Codec interface: sign (and sign_ef), 1 bit per value
// and a per-chunk scale; majority_vote, the vote over the sign messages of
// several workers.
// Host code only: all buffers are allocated in the constructor;
// encode()/decode() only enqueue.
#include "codec_factories.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "codec_base.hpp"
#include "gradwire/cuda/check.hpp"
#include "gradwire/cuda/device_buffer.hpp"
#include "gradwire/kernels/sign_cuda.hpp"
#include "gradwire/kernels/traffic.hpp"

namespace gw::kernels::cuda {

namespace {

using detail::CudaCodecBase;
using detail::store_hint;
using ::gw::cuda::DeviceBuffer;

class SignCodec final : public CudaCodecBase {
 public:
  SignCodec(std::size_t n, const CodecConfig& cfg, bool ef, cudaStream_t s)
      : CudaCodecBase(ef ? "sign_ef" : "sign", n, ef, traffic::sign(n, cfg.chunk, ef), s, store_hint(cfg)),
        chunk_(cfg.chunk),
        w_(sign_word_count(n)),
        s_((check_chunk(cfg.chunk), sign_scale_count(n, cfg.chunk))) {}
  void encode() override {
    GW_CHECK(ef_ ? sign_encode_ef_cuda(x_.get(), n_, chunk_, w_.get(), s_.get(), r_.get(), stream_)
                 : sign_encode_cuda(x_.get(), n_, chunk_, w_.get(), s_.get(), stream_));
  }
  void decode() override { GW_CHECK(sign_decode_cuda(w_.get(), s_.get(), n_, chunk_, y_.get(), stream_, hint_)); }

 private:
  std::size_t chunk_;
  DeviceBuffer<std::uint32_t> w_;
  DeviceBuffer<float> s_;
};

/// Worker 0 is this codec's input; the synthetic peers 1.. are encoded on the
/// host by the CPU twin at set_input and uploaded (identical messages).
class MajorityVoteCodec final : public CudaCodecBase {
 public:
  MajorityVoteCodec(std::size_t n, const CodecConfig& cfg, cudaStream_t s)
      : CudaCodecBase("majority_vote", n, false, traffic::majority_vote(n, cfg.chunk, cfg.workers), s, store_hint(cfg)),
        chunk_(cfg.chunk),
        workers_(cfg.workers),
        seed_(cfg.seed),
        nw_(sign_word_count(n)),
        nc_((check_chunk(cfg.chunk), sign_scale_count(n, cfg.chunk))),
        w_(nw_ * static_cast<std::size_t>(cfg.workers < 1 ? 1 : cfg.workers)),
        s_(nc_ * static_cast<std::size_t>(cfg.workers < 1 ? 1 : cfg.workers)) {
    if (workers_ < 1) throw std::invalid_argument("majority_vote: workers must be >= 1");
  }
  void set_input(const float* host_values) override {
    CudaCodecBase::set_input(host_values);
    std::vector<float> peer(n_);
    std::vector<std::uint32_t> words(nw_);
    std::vector<float> scales(nc_);
    for (int p = 1; p < workers_; ++p) {
      const auto pu = static_cast<std::size_t>(p);
      majority_vote_peer_input(host_values, n_, seed_, p, peer.data());
      sign_encode_cpu(peer.data(), n_, chunk_, words.data(), scales.data());
      GW_CHECK(cudaMemcpyAsync(w_.get() + pu * nw_, words.data(), nw_ * 4, cudaMemcpyHostToDevice, stream_));
      GW_CHECK(cudaMemcpyAsync(s_.get() + pu * nc_, scales.data(), nc_ * 4, cudaMemcpyHostToDevice, stream_));
      GW_CHECK(cudaStreamSynchronize(stream_));
    }
  }
  void encode() override { GW_CHECK(sign_encode_cuda(x_.get(), n_, chunk_, w_.get(), s_.get(), stream_)); }
  void decode() override {
    GW_CHECK(majority_vote_decode_cuda(w_.get(), s_.get(), workers_, n_, chunk_, y_.get(), stream_, hint_));
  }

 private:
  std::size_t chunk_;
  int workers_;
  std::uint64_t seed_;
  std::size_t nw_, nc_;
  DeviceBuffer<std::uint32_t> w_;
  DeviceBuffer<float> s_;
};

}  // namespace

std::unique_ptr<Codec> make_sign(std::size_t n, const CodecConfig& c, cudaStream_t s) {
  return std::make_unique<SignCodec>(n, c, false, s);
}
std::unique_ptr<Codec> make_majority_vote(std::size_t n, const CodecConfig& c, cudaStream_t s) {
  return std::make_unique<MajorityVoteCodec>(n, c, s);
}
std::unique_ptr<Codec> make_sign_ef(std::size_t n, const CodecConfig& c, cudaStream_t s) {
  return std::make_unique<SignCodec>(n, c, true, s);
}

}  // namespace gw::kernels::cuda
