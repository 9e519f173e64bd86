// The CUDA Codec objects match the CPU Codec objects of the same name
// (decoded vectors and residuals, bit for bit) on an awkward size, with the
// decoders' plain and streaming stores.
#include "gradwire/kernels/codec.hpp"
#include "gradwire/kernels/codec_cuda.hpp"
#include "kernel_test_util.hpp"
#include "kernel_test_util_gpu.hpp"

namespace gw::kernels {
namespace {

TEST(CodecGpu, NoDeviceIsReportedWithAReason) {
  std::string why;
  const bool have = cuda_device_available(&why);
  EXPECT_FALSE(why.empty());
  int count = 0;
  const bool direct = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  EXPECT_EQ(have, direct);
}

TEST(CodecGpu, CudaCodecsMatchCpuCodecs) {
  GW_SKIP_WITHOUT_GPU();
  const std::size_t n = 100003;
  const auto x = test::random_gradient(n, 55);
  CodecConfig cfg;
  cfg.chunk = 256;
  cfg.ratio = 0.02;
  cfg.workers = 5;
  cudaStream_t stream{};
  GW_CUDA_OK(cudaStreamCreate(&stream));
  for (const bool streaming : {false, true}) {
    cfg.streaming_stores = streaming;
    for (const auto& name : cuda_codec_names()) {
      SCOPED_TRACE(name + (streaming ? " (streaming stores)" : ""));
      // PowerSGD (cuBLAS) states its own tolerance in its own test; every
      // other codec, Top-K included, matches its CPU twin bit for bit.
      if (name.rfind("powersgd", 0) == 0) continue;
      auto cpu = make_cpu_codec(name, n, cfg);
      auto gpu = make_cuda_codec(name, n, cfg, stream);
      EXPECT_EQ(gpu->wire_bytes(), cpu->wire_bytes());
      EXPECT_EQ(gpu->encode_traffic_bytes(), cpu->encode_traffic_bytes());
      cpu->set_input(x.data());
      gpu->set_input(x.data());
      cpu->encode();
      cpu->decode();
      gpu->encode();
      gpu->decode();
      gpu->synchronize();
      const auto yc = cpu->decoded();
      const auto yg = gpu->decoded();
      EXPECT_TRUE(test::same_bits(yg, yc));
      EXPECT_TRUE(test::same_bits(gpu->residual(), cpu->residual()));
    }
  }
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace gw::kernels
