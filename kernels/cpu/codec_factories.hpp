// Factories of the CPU codecs (registered in registry.cpp), one source file
// per codec: cast_codec.cpp (fp16, bf16), int8_codec.cpp, sign_codec.cpp
// (sign, majority_vote), randomk_codec.cpp, topk_codec.cpp, powersgd_codec.cpp.
// Also the topk and powersgd traffic figures, shared with the CUDA codecs.
#pragma once

#include <cstddef>
#include <memory>

#include "gradwire/kernels/codec.hpp"
#include "gradwire/kernels/traffic.hpp"

namespace gw::kernels {

/// Traffic and wire sizes shared by the CPU and CUDA codecs.
traffic::Sizes topk_codec_sizes(std::size_t n, std::size_t k, bool ef);
traffic::Sizes powersgd_codec_sizes(std::size_t m, std::size_t n, int r);

namespace cpu {

std::unique_ptr<Codec> make_fp16(std::size_t n, const CodecConfig& cfg);
std::unique_ptr<Codec> make_bf16(std::size_t n, const CodecConfig& cfg);
std::unique_ptr<Codec> make_int8(std::size_t n, const CodecConfig& cfg);
std::unique_ptr<Codec> make_sign(std::size_t n, const CodecConfig& cfg);
std::unique_ptr<Codec> make_majority_vote(std::size_t n, const CodecConfig& cfg);
std::unique_ptr<Codec> make_randomk(std::size_t n, const CodecConfig& cfg);
std::unique_ptr<Codec> make_fp16_ef(std::size_t n, const CodecConfig& cfg);
std::unique_ptr<Codec> make_bf16_ef(std::size_t n, const CodecConfig& cfg);
std::unique_ptr<Codec> make_int8_ef(std::size_t n, const CodecConfig& cfg);
std::unique_ptr<Codec> make_sign_ef(std::size_t n, const CodecConfig& cfg);
std::unique_ptr<Codec> make_randomk_ef(std::size_t n, const CodecConfig& cfg);
std::unique_ptr<Codec> make_topk(std::size_t n, const CodecConfig& cfg);
std::unique_ptr<Codec> make_topk_ef(std::size_t n, const CodecConfig& cfg);
std::unique_ptr<Codec> make_powersgd(std::size_t n, const CodecConfig& cfg);

}  // namespace cpu
}  // namespace gw::kernels
