// CPU backend: times the kernels' CPU twins, a simple blocked fp32 GEMM and
// memcpy, so that CI exercises the whole calibrator without a GPU; for the
// interference phase, GEMMs on a thread of their own beside the caller.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <stdexcept>
#include <thread>

#include "gradwire/calibrate/calibrate.hpp"
#include "gradwire/calibrate/random_input.hpp"
#include "gradwire/kernels/codec.hpp"

namespace gw::calibrate {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      auto pos = line.find(':');
      if (pos != std::string::npos) return "CPU " + line.substr(line.find_first_not_of(' ', pos + 1));
    }
  }
  return "CPU (host)";
}

double host_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit) {
    if (key == "MemTotal:") return kb * 1024;
  }
  return 0;
}

// Prevents the optimizer from dropping a computed result (atomic: the
// interference phase runs a GEMM thread beside the caller's codec).
std::atomic<float> g_sink{0};

/// A simple blocked fp32 GEMM C[m x n] = A[m x k] B[k x n] on the host.
class CpuGemm {
 public:
  CpuGemm(int m, int n, int k)
      : M_(static_cast<std::size_t>(m)),
        N_(static_cast<std::size_t>(n)),
        K_(static_cast<std::size_t>(k)),
        a_(random_gradient(M_ * K_, 1)),
        b_(random_gradient(K_ * N_, 2)),
        c_(M_ * N_) {}
  void run() {
    std::fill(c_.begin(), c_.end(), 0.0f);
    constexpr std::size_t kb = 64;
    for (std::size_t k0 = 0; k0 < K_; k0 += kb) {
      const std::size_t k1 = std::min(K_, k0 + kb);
      for (std::size_t i = 0; i < M_; ++i) {
        float* ci = &c_[i * N_];
        for (std::size_t kk = k0; kk < k1; ++kk) {
          const float aik = a_[i * K_ + kk];
          const float* bk = &b_[kk * N_];
          for (std::size_t j = 0; j < N_; ++j) ci[j] += aik * bk[j];
        }
      }
    }
    g_sink = c_[M_ * N_ / 2];
  }

 private:
  std::size_t M_, N_, K_;
  std::vector<float> a_, b_, c_;
};

/// GEMMs on a thread of their own; the thread times the whole batch.
class CpuGemmBatch final : public GemmBatch {
 public:
  CpuGemmBatch(int m, int n, int k, int count) : gemm_(m, n, k) {
    thread_ = std::thread([this, count] {
      const auto t0 = Clock::now();
      for (int i = 0; i < count; ++i) gemm_.run();
      seconds_ = seconds_since(t0);
    });
  }
  ~CpuGemmBatch() override {
    if (thread_.joinable()) thread_.join();
  }
  CpuGemmBatch(const CpuGemmBatch&) = delete;
  CpuGemmBatch& operator=(const CpuGemmBatch&) = delete;
  double wait() override {
    if (thread_.joinable()) thread_.join();
    return seconds_;
  }

 private:
  CpuGemm gemm_;
  std::thread thread_;
  double seconds_ = 0;
};

class CpuBackend final : public Backend {
 public:
  DeviceInfo info() override {
    DeviceInfo d;
    d.device = cpu_model();
    d.sm_count = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    d.memory_bytes = host_memory_bytes();
    d.visible_gpus = 0;
    return d;
  }

  std::vector<std::string> codec_names() override { return gw::kernels::codec_names(); }

  void verify_codec(const std::string& name, std::size_t n) override {
    auto c = gw::kernels::make_cpu_codec(name, n, cfg_);
    auto x = random_gradient(n, 7);
    c->set_input(x.data());
    c->encode();
    c->decode();
    auto y = c->decoded();
    if (y.size() != n) throw std::runtime_error("codec " + name + ": decoded size differs from the input size");
    for (float v : y) {
      if (!std::isfinite(v)) throw std::runtime_error("codec " + name + ": decoded a non-finite value");
    }
  }

  void time_codec(const std::string& name, std::size_t n, int warmup, int repeats, std::vector<double>& enc,
                  std::vector<double>& dec, const std::function<void()>& ready) override {
    auto c = gw::kernels::make_cpu_codec(name, n, cfg_);
    auto x = random_gradient(n, n);
    c->set_input(x.data());
    for (int i = 0; i < warmup; ++i) {
      c->encode();
      c->decode();
    }
    enc.clear();
    dec.clear();
    if (ready) ready();
    for (int i = 0; i < repeats; ++i) {
      auto t0 = Clock::now();
      c->encode();
      enc.push_back(seconds_since(t0));
      t0 = Clock::now();
      c->decode();
      dec.push_back(seconds_since(t0));
    }
  }

  std::vector<double> time_gemm(const std::string& precision, int m, int n, int k, int warmup, int repeats) override {
    if (precision != "fp32") throw std::runtime_error("the CPU backend has only an fp32 GEMM");
    CpuGemm gemm(m, n, k);
    for (int i = 0; i < warmup; ++i) gemm.run();
    std::vector<double> out;
    for (int i = 0; i < repeats; ++i) {
      auto t0 = Clock::now();
      gemm.run();
      out.push_back(seconds_since(t0));
    }
    return out;
  }

  std::unique_ptr<GemmBatch> start_gemm_batch(const std::string& precision, int m, int n, int k, int count) override {
    if (precision != "fp32") throw std::runtime_error("the CPU backend has only an fp32 GEMM");
    return std::make_unique<CpuGemmBatch>(m, n, k, count);
  }

  std::vector<double> time_copy(double bytes, int warmup, int repeats) override {
    const auto n = static_cast<std::size_t>(bytes);
    std::vector<char> src(n, 1), dst(n, 0);
    for (int i = 0; i < warmup; ++i) std::memcpy(dst.data(), src.data(), n);
    std::vector<double> out;
    for (int i = 0; i < repeats; ++i) {
      src[static_cast<std::size_t>(i) % n] = static_cast<char>(i);
      auto t0 = Clock::now();
      std::memcpy(dst.data(), src.data(), n);
      out.push_back(seconds_since(t0));
      g_sink = static_cast<float>(dst[static_cast<std::size_t>(i) % n]);
    }
    return out;
  }

  int collective_gpus() override { return 0; }

  std::vector<double> time_collective(CollectiveOp, int, double, int, int) override {
    throw std::runtime_error("the CPU backend measures no collectives");
  }

 private:
  gw::kernels::CodecConfig cfg_{};
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace gw::calibrate
