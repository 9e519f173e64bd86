// Factories of K2's CUDA codecs "topk", "topk_ef", "powersgd" (registered in
// registry.cu); same semantics as the CPU codecs in kernels/cpu/topk_powersgd_codecs.hpp.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>

#include "gradwire/kernels/codec.hpp"

namespace gw::kernels::cuda {

std::unique_ptr<Codec> make_topk(std::size_t n, const CodecConfig& cfg, cudaStream_t s);
std::unique_ptr<Codec> make_topk_ef(std::size_t n, const CodecConfig& cfg, cudaStream_t s);
std::unique_ptr<Codec> make_powersgd(std::size_t n, const CodecConfig& cfg, cudaStream_t s);

}  // namespace gw::kernels::cuda
