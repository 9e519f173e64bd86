// Factories of the CUDA codecs (registered in registry.cpp), one source file
// per codec as on the CPU side: cast_codec.cpp (fp16, bf16), int8_codec.cpp,
// sign_codec.cpp (sign, majority_vote), randomk_codec.cpp, topk_codec.cpp,
// powersgd_codec.cpp. Same semantics as the CPU codecs.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>

#include "gradwire/kernels/codec.hpp"

namespace gw::kernels::cuda {

std::unique_ptr<Codec> make_fp16(std::size_t n, const CodecConfig& cfg, cudaStream_t s);
std::unique_ptr<Codec> make_bf16(std::size_t n, const CodecConfig& cfg, cudaStream_t s);
std::unique_ptr<Codec> make_int8(std::size_t n, const CodecConfig& cfg, cudaStream_t s);
std::unique_ptr<Codec> make_sign(std::size_t n, const CodecConfig& cfg, cudaStream_t s);
std::unique_ptr<Codec> make_majority_vote(std::size_t n, const CodecConfig& cfg, cudaStream_t s);
std::unique_ptr<Codec> make_randomk(std::size_t n, const CodecConfig& cfg, cudaStream_t s);
std::unique_ptr<Codec> make_fp16_ef(std::size_t n, const CodecConfig& cfg, cudaStream_t s);
std::unique_ptr<Codec> make_bf16_ef(std::size_t n, const CodecConfig& cfg, cudaStream_t s);
std::unique_ptr<Codec> make_int8_ef(std::size_t n, const CodecConfig& cfg, cudaStream_t s);
std::unique_ptr<Codec> make_sign_ef(std::size_t n, const CodecConfig& cfg, cudaStream_t s);
std::unique_ptr<Codec> make_randomk_ef(std::size_t n, const CodecConfig& cfg, cudaStream_t s);
std::unique_ptr<Codec> make_topk(std::size_t n, const CodecConfig& cfg, cudaStream_t s);
std::unique_ptr<Codec> make_topk_ef(std::size_t n, const CodecConfig& cfg, cudaStream_t s);
std::unique_ptr<Codec> make_powersgd(std::size_t n, const CodecConfig& cfg, cudaStream_t s);

}  // namespace gw::kernels::cuda
