// The CPU codec table: name -> factory. To add a codec, include its factory
// declaration (codec_factories.hpp) and add one line.
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "codec_factories.hpp"
#include "gradwire/kernels/codec.hpp"

namespace gw::kernels {

namespace {
const std::vector<std::pair<std::string, CpuCodecFactory>>& cpu_table() {
  static const std::vector<std::pair<std::string, CpuCodecFactory>> table = {
      {"fp16", &cpu::make_fp16},
      {"bf16", &cpu::make_bf16},
      {"int8", &cpu::make_int8},
      {"sign", &cpu::make_sign},
      {"majority_vote", &cpu::make_majority_vote},
      {"randomk", &cpu::make_randomk},
      {"topk", &cpu::make_topk},
      {"powersgd", &cpu::make_powersgd},
      {"fp16_ef", &cpu::make_fp16_ef},
      {"bf16_ef", &cpu::make_bf16_ef},
      {"int8_ef", &cpu::make_int8_ef},
      {"sign_ef", &cpu::make_sign_ef},
      {"randomk_ef", &cpu::make_randomk_ef},
      {"topk_ef", &cpu::make_topk_ef},
  };
  return table;
}
}  // namespace

std::vector<std::string> codec_names() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : cpu_table()) names.push_back(name);
  return names;
}

std::unique_ptr<Codec> make_cpu_codec(const std::string& name, std::size_t n, const CodecConfig& cfg) {
  for (const auto& [entry, factory] : cpu_table()) {
    if (entry == name) return factory(n, cfg);
  }
  throw std::invalid_argument("unknown codec '" + name + "'");
}

}  // namespace gw::kernels
