// The CUDA codec table: name -> factory, in the same order and spelling as
// kernels/cpu/registry.cpp. To add a codec, include its factory declaration
// (codec_factories.hpp) and add one line.
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "codec_factories.hpp"
#include "gradwire/kernels/codec_cuda.hpp"

namespace gw::kernels {

namespace {
const std::vector<std::pair<std::string, CudaCodecFactory>>& cuda_table() {
  static const std::vector<std::pair<std::string, CudaCodecFactory>> table = {
      {"fp16", &cuda::make_fp16},
      {"bf16", &cuda::make_bf16},
      {"int8", &cuda::make_int8},
      {"sign", &cuda::make_sign},
      {"majority_vote", &cuda::make_majority_vote},
      {"randomk", &cuda::make_randomk},
      {"topk", &cuda::make_topk},
      {"powersgd", &cuda::make_powersgd},
      {"fp16_ef", &cuda::make_fp16_ef},
      {"bf16_ef", &cuda::make_bf16_ef},
      {"int8_ef", &cuda::make_int8_ef},
      {"sign_ef", &cuda::make_sign_ef},
      {"randomk_ef", &cuda::make_randomk_ef},
      {"topk_ef", &cuda::make_topk_ef},
  };
  return table;
}
}  // namespace

std::vector<std::string> cuda_codec_names() {
  std::vector<std::string> names;
  for (const auto& entry : cuda_table()) names.push_back(entry.first);
  return names;
}

std::unique_ptr<Codec> make_cuda_codec(const std::string& name, std::size_t n, const CodecConfig& cfg,
                                       cudaStream_t stream) {
  for (const auto& entry : cuda_table()) {
    if (entry.first == name) return entry.second(n, cfg, stream);
  }
  throw std::invalid_argument("unknown CUDA codec '" + name + "'");
}

}  // namespace gw::kernels
