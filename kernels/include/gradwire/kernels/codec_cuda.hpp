// CUDA backend of the uniform runner interface (see codec.hpp).
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "gradwire/kernels/codec.hpp"

namespace gw::kernels {

/// True when a CUDA device can be used. Any error from cudaGetDeviceCount (for
/// example cudaErrorInsufficientDriver on a machine without a driver) or a
/// count of 0 means "no GPU"; `why` (if given) receives the reason.
bool cuda_device_available(std::string* why = nullptr);

/// Factory signature of one CUDA codec (registered in kernels/cuda/registry.cpp).
using CudaCodecFactory = std::unique_ptr<Codec> (*)(std::size_t n, const CodecConfig& cfg, cudaStream_t stream);

/// Names registered for the CUDA backend (same order and spelling as codec_names()).
std::vector<std::string> cuda_codec_names();

/// Makes a CUDA codec whose encode()/decode() enqueue on `stream`. All device
/// buffers and workspaces are allocated here, never in encode()/decode().
/// Throws std::invalid_argument for an unknown name, std::runtime_error on a
/// CUDA error.
std::unique_ptr<Codec> make_cuda_codec(const std::string& name, std::size_t n, const CodecConfig& cfg,
                                       cudaStream_t stream);

}  // namespace gw::kernels
