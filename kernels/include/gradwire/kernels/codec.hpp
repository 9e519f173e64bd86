// Uniform runner interface over every gradient compressor, used by the
// benchmark, the calibrator and the kernel tests. Host-only: no CUDA header
// is included.
//
// Each codec exists twice: a CPU twin (make_cpu_codec, always built) and a
// CUDA implementation (make_cuda_codec in codec_cuda.hpp, only when CUDA is
// built). Both expose the same names and the same message format, so a GPU
// result can be checked against its CPU twin. See docs/kernels.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gw::kernels {

/// Parameters shared by all codecs; each codec reads the fields it needs.
struct CodecConfig {
  std::size_t chunk = 1024;          ///< int8/sign: elements per scale (positive multiple of 32)
  double ratio = 0.01;               ///< topk/randomk: K = clamp(ceil(ratio * n), 1, n)
  int rank = 4;                      ///< powersgd: approximation rank
  int workers = 8;                   ///< majority_vote: number of workers voting
  std::uint64_t seed = 1234;         ///< randomk indices, stochastic rounding, synthetic peers,
                                     ///< powersgd's initial Q
  std::uint64_t step = 0;            ///< randomk: training step (indices change every step)
  bool stochastic_rounding = false;  ///< int8: stochastic instead of nearest rounding
  float prescale = 1.0f;             ///< fp16/bf16: multiply by this before the cast (e.g. 1/N)
  std::size_t rows = 0, cols = 0;    ///< powersgd matrix shape; 0 = choose a square-ish shape for n
  bool streaming_stores = false;     ///< CUDA cast/int8/sign/majority/Random-K decoders: streaming
                                     ///< stores (StoreHint::streaming); same values, a tuning knob
};

/// One compressor on one backend, owning its message and output buffers
/// (allocated at construction). The CUDA codecs never allocate in
/// encode/decode; the CPU twins of Top-K and PowerSGD use temporary host
/// scratch there.
class Codec {
 public:
  virtual ~Codec() = default;
  virtual std::string name() const = 0;
  virtual std::size_t elements() const = 0;
  /// Sets the n input values (host memory; copied to the device on GPU).
  virtual void set_input(const float* host_values) = 0;
  /// GPU: enqueue on the codec's stream and return; CPU: run to completion.
  virtual void encode() = 0;
  virtual void decode() = 0;
  virtual void synchronize() = 0;
  /// Bytes of one encoded message as it travels (payload + scales).
  virtual std::size_t wire_bytes() const = 0;
  /// Minimal device-memory bytes read + written by one encode / decode.
  virtual double encode_traffic_bytes() const = 0;
  virtual double decode_traffic_bytes() const = 0;
  /// The decode result, copied to the host (synchronizes).
  virtual std::vector<float> decoded() = 0;
  /// Error-feedback variants ("<name>_ef"): the residual x - decode(encode(x))
  /// written by the last encode(), on the host. Empty for the other codecs.
  virtual std::vector<float> residual() { return {}; }
};

/// Factory signature of one CPU codec (registered in kernels/cpu/registry.cpp).
using CpuCodecFactory = std::unique_ptr<Codec> (*)(std::size_t n, const CodecConfig& cfg);

/// Names of every codec registered for the CPU backend, in registry order:
/// "fp16","bf16","int8","sign","majority_vote","randomk","topk","powersgd",
/// then the error-feedback variants "<name>_ef" of fp16, bf16, int8, sign,
/// randomk and topk, whose encode() is the fused encode + residual update.
std::vector<std::string> codec_names();

/// Makes a CPU codec; throws std::invalid_argument for an unknown name or a
/// bad configuration.
std::unique_ptr<Codec> make_cpu_codec(const std::string& name, std::size_t n, const CodecConfig& cfg);

/// K = clamp(ceil(ratio * n), 1, n) for n > 0 (0 for n == 0); shared by topk and randomk.
std::size_t sparse_count(std::size_t n, double ratio);

}  // namespace gw::kernels
