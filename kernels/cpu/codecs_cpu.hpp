// Factories of K1's CPU codecs (registered in registry.cpp).
#pragma once

#include <memory>

#include "gradwire/kernels/codec.hpp"

namespace gw::kernels::cpu {

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

}  // namespace gw::kernels::cpu
