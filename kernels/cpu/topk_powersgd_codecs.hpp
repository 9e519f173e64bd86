// Factories of K2's CPU codecs "topk", "topk_ef", "powersgd" (registered in
// registry.cpp) and their sizes, shared with the CUDA codecs.
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
std::unique_ptr<Codec> make_topk(std::size_t n, const CodecConfig& cfg);
std::unique_ptr<Codec> make_topk_ef(std::size_t n, const CodecConfig& cfg);
std::unique_ptr<Codec> make_powersgd(std::size_t n, const CodecConfig& cfg);
}  // namespace cpu

}  // namespace gw::kernels
