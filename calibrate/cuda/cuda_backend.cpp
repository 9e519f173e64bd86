// CUDA backend of the calibrator: codec kernels (CUDA events, checked against
// their CPU twins), NCCL collectives (ncclCommInitAll, group calls, host wall
// time as nccl-tests), cuBLAS GEMM throughput and device copy bandwidth, and
// for the interference phase GEMM batches on a stream of their own.
// Host-only C++ over the CUDA runtime, cuBLAS and NCCL APIs.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <functional>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "nccl_check.hpp"
#include "gradwire/cuda/device_buffer.hpp"
#include "gradwire/cuda/event_timer.hpp"
#include "gradwire/calibrate/calibrate.hpp"
#include "gradwire/model/compressors.hpp"
#include "nccl_launch.hpp"
#include "gradwire/calibrate/random_input.hpp"
#include "gradwire/kernels/codec.hpp"
#include "gradwire/kernels/codec_cuda.hpp"

extern char** environ;

namespace gw::calibrate {
namespace {

using Clock = std::chrono::steady_clock;

std::string version_string(int v) {  // CUDA: 13000 -> "13.0"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string kernel_driver_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (std::getline(in, line)) {
    std::istringstream is(line);
    std::string w, prev;
    while (is >> w) {
      if (!w.empty() && std::isdigit(static_cast<unsigned char>(w[0])) && w.find('.') != std::string::npos &&
          prev != "gcc" && prev != "version") {
        return w;
      }
      prev = w;
    }
  }
  return {};
}

/// A device buffer of bytes (the one owning buffer, grown with ensure()).
using DeviceBuffer = gw::cuda::DeviceBuffer<std::byte>;

/// Maximum tolerated difference between a GPU codec and its CPU twin: bit for
/// bit (docs/kernels.md) except where floating-point reduction order differs.
/// Relative to max |x|; the compressor table's gpu_twin_tolerance (PowerSGD:
/// GEMM summation order).
double codec_tolerance(const std::string& name) {
  const Compressor* c = compressor_of_codec(name);
  return c == nullptr ? 0.0 : c->gpu_twin_tolerance;
}

/// cuBLAS types of one GEMM precision.
struct GemmTypes {
  cudaDataType_t type = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  std::size_t elem = 4;
};

/// The operands of one GEMM C[m x n] = A[m x k] B[k x n] on device 0.
struct GemmOperands {
  int m, n, k;
  GemmTypes t;
  DeviceBuffer a, b, c;
  /// Enqueues one GEMM on the handle's stream.
  void run(cublasHandle_t blas) {
    const float alpha = 1.0f, beta = 0.0f;
    GW_CHECK(cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a.get(), t.type, m, b.get(), t.type, k,
                          &beta, c.get(), t.type, m, t.compute, CUBLAS_GEMM_DEFAULT));
  }
};

/// GEMMs enqueued back to back on the backend's GEMM stream between two
/// events, on operands the backend keeps (one batch runs at a time).
class CudaGemmBatch final : public GemmBatch {
 public:
  CudaGemmBatch(GemmOperands& ops, cublasHandle_t blas, cudaStream_t stream, int count)
      : stream_(stream), timer_(stream) {
    timer_.start();
    for (int i = 0; i < count; ++i) ops.run(blas);
    timer_.stop();
  }
  ~CudaGemmBatch() override { cudaStreamSynchronize(stream_); }
  CudaGemmBatch(const CudaGemmBatch&) = delete;
  CudaGemmBatch& operator=(const CudaGemmBatch&) = delete;
  double wait() override { return 1e-3 * timer_.elapsed_ms(); }

 private:
  cudaStream_t stream_;
  gw::cuda::EventTimer timer_;
};

struct Comms {
  std::vector<ncclComm_t> comms;
  std::vector<cudaStream_t> streams;
  std::vector<DeviceBuffer> send, recv;
};

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int devices) : devices_(devices) {
    GW_CHECK(cudaSetDevice(0));
    GW_CHECK(cudaGetDeviceProperties(&prop_, 0));
    GW_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    GW_CHECK(cublasCreate(&blas_));
    GW_CHECK(cublasSetStream(blas_, stream_));
    // The interference phase's GEMMs: a stream and handle of their own, beside the codecs' stream_.
    GW_CHECK(cudaStreamCreateWithFlags(&gemm_stream_, cudaStreamNonBlocking));
    GW_CHECK(cublasCreate(&gemm_blas_));
    GW_CHECK(cublasSetStream(gemm_blas_, gemm_stream_));
  }
  ~CudaBackend() override {
    for (auto& [g, c] : comms_) {
      for (std::size_t r = 0; r < c.comms.size(); ++r) {
        ncclCommDestroy(c.comms[r]);
        cudaSetDevice(static_cast<int>(r));
        cudaStreamDestroy(c.streams[r]);
      }
    }
    cudaSetDevice(0);
    cublasDestroy(gemm_blas_);
    cudaStreamDestroy(gemm_stream_);
    cublasDestroy(blas_);
    cudaStreamDestroy(stream_);
  }
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  DeviceInfo info() override {
    DeviceInfo d;
    d.device = prop_.name;
    d.sm_count = prop_.multiProcessorCount;
    d.memory_bytes = static_cast<double>(prop_.totalGlobalMem);
    d.l2_bytes = static_cast<double>(prop_.l2CacheSize);
    int drv = 0, rt = 0, nccl = 0;
    GW_CHECK(cudaDriverGetVersion(&drv));
    GW_CHECK(cudaRuntimeGetVersion(&rt));
    GW_CHECK(ncclGetVersion(&nccl));
    const std::string kmod = kernel_driver_version();
    d.driver = (kmod.empty() ? std::string() : kmod + " ") + "(CUDA driver API " + version_string(drv) + ")";
    d.cuda = version_string(rt);
    d.nccl = std::to_string(nccl / 10000) + "." + std::to_string((nccl / 100) % 100) + "." + std::to_string(nccl % 100);
    d.visible_gpus = devices_;
    return d;
  }

  std::vector<std::string> codec_names() override { return gw::kernels::cuda_codec_names(); }

  void verify_codec(const std::string& name, std::size_t n) override {
    GW_CHECK(cudaSetDevice(0));
    auto gpu = gw::kernels::make_cuda_codec(name, n, cfg_, stream_);
    auto cpu = gw::kernels::make_cpu_codec(name, n, cfg_);
    auto x = random_gradient(n, 99);
    gpu->set_input(x.data());
    cpu->set_input(x.data());
    gpu->encode();
    gpu->decode();
    gpu->synchronize();
    cpu->encode();
    cpu->decode();
    const auto g = gpu->decoded();
    const auto c = cpu->decoded();
    if (g.size() != c.size()) throw std::runtime_error("codec " + name + ": GPU and CPU decoded sizes differ");
    double scale = 0;
    for (float v : x) scale = std::max(scale, static_cast<double>(std::abs(v)));
    const double tol = codec_tolerance(name) * scale;
    std::size_t bad = 0, first = 0;
    for (std::size_t i = 0; i < g.size(); ++i) {
      const bool same = (std::isnan(g[i]) && std::isnan(c[i])) || std::abs(static_cast<double>(g[i]) - c[i]) <= tol;
      if (!same && bad++ == 0) first = i;
    }
    if (bad > 0) {
      std::ostringstream os;
      os << "codec " << name << ": the CUDA kernel disagrees with its CPU twin at n = " << n << " in " << bad
         << " elements (first at " << first << ": GPU " << g[first] << ", CPU " << c[first]
         << "); refusing to time a wrong kernel";
      throw std::runtime_error(os.str());
    }
  }

  void time_codec(const std::string& name, std::size_t n, int warmup, int repeats, std::vector<double>& enc,
                  std::vector<double>& dec, const std::function<void()>& ready) override {
    GW_CHECK(cudaSetDevice(0));
    const std::vector<float>& input = host_input(n);
    // Rotate over several instances whose buffers together exceed the L2
    // cache, so that each timed call starts with cold data as in training.
    std::vector<std::unique_ptr<gw::kernels::Codec>> inst;
    inst.push_back(gw::kernels::make_cuda_codec(name, n, cfg_, stream_));
    const double footprint = std::max(1.0, inst[0]->encode_traffic_bytes() + inst[0]->decode_traffic_bytes());
    std::size_t free_b = 0, total_b = 0;
    GW_CHECK(cudaMemGetInfo(&free_b, &total_b));
    std::size_t want = static_cast<std::size_t>(std::ceil(3.0 * prop_.l2CacheSize / footprint));
    want = std::clamp<std::size_t>(want, 1, 16);
    want = std::min<std::size_t>(
        want, std::max<std::size_t>(1, static_cast<std::size_t>(0.25 * static_cast<double>(free_b) / (2 * footprint))));
    while (inst.size() < want) inst.push_back(gw::kernels::make_cuda_codec(name, n, cfg_, stream_));
    for (auto& c : inst) c->set_input(input.data());
    for (int w = 0; w < std::max(1, warmup); ++w) {
      for (auto& c : inst) {
        c->encode();
        c->decode();
      }
    }
    GW_CHECK(cudaStreamSynchronize(stream_));
    gw::cuda::EventTimer enc_timer(stream_), dec_timer(stream_);
    enc.clear();
    dec.clear();
    if (ready) ready();
    for (int r = 0; r < repeats; ++r) {
      auto& c = inst[static_cast<std::size_t>(r) % inst.size()];
      enc_timer.start();
      c->encode();
      enc_timer.stop();
      dec_timer.start();
      c->decode();
      dec_timer.stop();
      enc.push_back(1e-3 * enc_timer.elapsed_ms());
      dec.push_back(1e-3 * dec_timer.elapsed_ms());
    }
  }

  std::vector<double> time_gemm(const std::string& precision, int m, int n, int k, int warmup, int repeats) override {
    auto ops = operands(precision, m, n, k);
    for (int i = 0; i < std::max(1, warmup); ++i) ops->run(blas_);
    gw::cuda::EventTimer timer(stream_);
    std::vector<double> out;
    for (int r = 0; r < repeats; ++r) {
      timer.start();
      ops->run(blas_);
      timer.stop();
      out.push_back(1e-3 * timer.elapsed_ms());
    }
    return out;
  }

  std::unique_ptr<GemmBatch> start_gemm_batch(const std::string& precision, int m, int n, int k, int count) override {
    // The operands are made once per shape and precision (16 M random
    // numbers take most of a second on the host) and reused by every batch.
    const GemmTypes t = gemm_types(precision);
    if (!batch_ops_ || batch_ops_->m != m || batch_ops_->n != n || batch_ops_->k != k || batch_ops_->t.type != t.type ||
        batch_ops_->t.compute != t.compute) {
      GW_CHECK(cudaStreamSynchronize(gemm_stream_));
      batch_ops_ = operands(precision, m, n, k);
    }
    return std::make_unique<CudaGemmBatch>(*batch_ops_, gemm_blas_, gemm_stream_, count);
  }

  std::vector<double> time_copy(double bytes, int warmup, int repeats) override {
    GW_CHECK(cudaSetDevice(0));
    const auto nb = static_cast<std::size_t>(bytes);
    DeviceBuffer src, dst;
    src.ensure(0, nb);
    dst.ensure(0, nb);
    GW_CHECK(cudaMemsetAsync(src.get(), 1, nb, stream_));
    for (int i = 0; i < std::max(1, warmup); ++i)
      GW_CHECK(cudaMemcpyAsync(dst.get(), src.get(), nb, cudaMemcpyDeviceToDevice, stream_));
    gw::cuda::EventTimer timer(stream_);
    std::vector<double> out;
    for (int r = 0; r < repeats; ++r) {
      timer.start();
      GW_CHECK(cudaMemcpyAsync(dst.get(), src.get(), nb, cudaMemcpyDeviceToDevice, stream_));
      timer.stop();
      out.push_back(1e-3 * timer.elapsed_ms());
    }
    return out;
  }

  int collective_gpus() override { return devices_; }

  std::vector<double> time_collective(CollectiveOp op, int gpus, double bytes, int warmup, int repeats) override {
    Comms& cm = comms(gpus);
    const auto total = static_cast<std::size_t>(bytes);
    const std::size_t count = total / 4;  // fp32 elements of the "size"
    for (int r = 0; r < gpus; ++r) {
      cm.send[static_cast<std::size_t>(r)].ensure(r, std::max<std::size_t>(total, 4));
      cm.recv[static_cast<std::size_t>(r)].ensure(r, std::max<std::size_t>(total, 4));
    }
    auto launch = [&] {
      GW_CHECK(ncclGroupStart());
      for (int r = 0; r < gpus; ++r) {
        const auto ri = static_cast<std::size_t>(r);
        detail::launch_nccl(op, cm.send[ri].get(), cm.recv[ri].get(), count, gpus, cm.comms[ri], cm.streams[ri]);
      }
      GW_CHECK(ncclGroupEnd());
    };
    auto sync = [&] {
      for (int r = 0; r < gpus; ++r) {
        GW_CHECK(cudaSetDevice(r));
        GW_CHECK(cudaStreamSynchronize(cm.streams[static_cast<std::size_t>(r)]));
      }
    };
    for (int i = 0; i < std::max(1, warmup); ++i) launch();
    sync();
    std::vector<double> out;
    for (int i = 0; i < repeats; ++i) {
      const auto t0 = Clock::now();
      launch();
      sync();
      out.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    GW_CHECK(cudaSetDevice(0));
    return out;
  }

  std::map<std::string, std::string> nccl_env() override {
    std::map<std::string, std::string> out;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
      std::string kv(*e);
      if (kv.rfind("NCCL_", 0) != 0) continue;
      auto eq = kv.find('=');
      if (eq != std::string::npos) out[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    return out;
  }

 private:
  Comms& comms(int gpus) {
    auto it = comms_.find(gpus);
    if (it != comms_.end()) return it->second;
    Comms& c = comms_[gpus];
    c.comms.resize(static_cast<std::size_t>(gpus));
    c.streams.resize(static_cast<std::size_t>(gpus));
    c.send = std::vector<DeviceBuffer>(static_cast<std::size_t>(gpus));
    c.recv = std::vector<DeviceBuffer>(static_cast<std::size_t>(gpus));
    std::vector<int> devs(static_cast<std::size_t>(gpus));
    for (int r = 0; r < gpus; ++r) devs[static_cast<std::size_t>(r)] = r;
    GW_CHECK(ncclCommInitAll(c.comms.data(), gpus, devs.data()));
    for (int r = 0; r < gpus; ++r) {
      GW_CHECK(cudaSetDevice(r));
      GW_CHECK(cudaStreamCreateWithFlags(&c.streams[static_cast<std::size_t>(r)], cudaStreamNonBlocking));
    }
    GW_CHECK(cudaSetDevice(0));
    return c;
  }

  /// The host input of a codec at n elements: seeded normal numbers (at most
  /// 2^24 distinct, repeated beyond), kept for the next call at the same n
  /// (the interference phase times one size many times).
  const std::vector<float>& host_input(std::size_t n) {
    if (input_.size() != n) {
      input_.clear();
      input_.shrink_to_fit();
      const auto x = random_gradient(std::min<std::size_t>(n, 1u << 24), n);
      input_.resize(n);
      for (std::size_t i = 0; i < n; ++i) input_[i] = x[i % x.size()];
    }
    return input_;
  }

  /// The types of `precision`, refusing what this GPU cannot run as asked.
  GemmTypes gemm_types(const std::string& precision) const {
    GemmTypes t;
    // TF32 and BF16 tensor cores start with compute capability 8.0 (Ampere).
    // cuBLAS runs a TF32 request as plain fp32 on older GPUs, so timing it
    // would record a rate the GPU does not have: refuse it instead.
    if ((precision == "tf32" || precision == "bf16") && prop_.major < 8)
      throw std::runtime_error(precision + " needs compute capability 8.0; " + prop_.name + " is " +
                               std::to_string(prop_.major) + "." + std::to_string(prop_.minor));
    if (precision == "tf32") {
      t.compute = CUBLAS_COMPUTE_32F_FAST_TF32;
    } else if (precision == "bf16") {
      t.type = CUDA_R_16BF;
      t.elem = 2;
    } else if (precision == "fp16") {
      t.type = CUDA_R_16F;
      t.elem = 2;
    } else if (precision != "fp32") {
      throw std::runtime_error("unknown precision " + precision);
    }
    return t;
  }

  /// Random operands of one GEMM on device 0, uploaded (synchronously).
  std::unique_ptr<GemmOperands> operands(const std::string& precision, int m, int n, int k) {
    GW_CHECK(cudaSetDevice(0));
    auto ops = std::make_unique<GemmOperands>();
    ops->m = m;
    ops->n = n;
    ops->k = k;
    ops->t = gemm_types(precision);
    const auto M = static_cast<std::size_t>(m), N = static_cast<std::size_t>(n), K = static_cast<std::size_t>(k);
    ops->a.ensure(0, M * K * ops->t.elem);
    ops->b.ensure(0, K * N * ops->t.elem);
    ops->c.ensure(0, M * N * ops->t.elem);
    upload_random(ops->a, M * K, ops->t.type, 1);
    upload_random(ops->b, K * N, ops->t.type, 2);
    return ops;
  }

  void upload_random(DeviceBuffer& buf, std::size_t count, cudaDataType_t type, std::uint64_t seed) {
    auto v = random_gradient(count, seed);
    if (type == CUDA_R_32F) {
      GW_CHECK(cudaMemcpy(buf.get(), v.data(), count * 4, cudaMemcpyHostToDevice));
    } else if (type == CUDA_R_16BF) {
      std::vector<__nv_bfloat16> h(count);
      for (std::size_t i = 0; i < count; ++i) h[i] = __float2bfloat16(v[i]);
      GW_CHECK(cudaMemcpy(buf.get(), h.data(), count * 2, cudaMemcpyHostToDevice));
    } else {
      std::vector<__half> h(count);
      for (std::size_t i = 0; i < count; ++i) h[i] = __float2half(v[i]);
      GW_CHECK(cudaMemcpy(buf.get(), h.data(), count * 2, cudaMemcpyHostToDevice));
    }
  }

  int devices_;
  cudaDeviceProp prop_{};
  cudaStream_t stream_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  cudaStream_t gemm_stream_ = nullptr;  ///< interference: GEMMs beside stream_ and NCCL's streams
  cublasHandle_t gemm_blas_ = nullptr;
  std::unique_ptr<GemmOperands> batch_ops_;  ///< the GEMM batches' operands (start_gemm_batch)
  std::vector<float> input_;                 ///< host_input's last
  gw::kernels::CodecConfig cfg_{};
  std::map<int, Comms> comms_;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(std::string* why) {
  if (!gw::kernels::cuda_device_available(why)) return nullptr;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) {
    if (why) *why = "no CUDA device";
    return nullptr;
  }
  return std::make_unique<CudaBackend>(count);
}

}  // namespace gw::calibrate
