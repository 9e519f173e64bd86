// Benchmark of the Top-K and PowerSGD kernels against their baselines on one GPU:
//   * Top-K at k = 1% of 2^26 fp32 (default): radix select vs the full
//     cub::DeviceRadixSort path, and vs torch.topk(x.abs(), k) when
//     --baselines gives torch_baselines.py's output;
//   * PowerSGD rank 4 over ResNet-50's conv/fc weight shapes: the four steps
//     (P = M Q, Gram-Schmidt, Q = M^T P, P Q^T) for every tensor, vs the
//     same steps in PyTorch.
// Timing: CUDA events on one stream, median of --runs (>= 20) after warm-up.
// Prints a table with ratios (baseline median / ours, > 1 = we are faster)
// and, with --json FILE, one JSON line per measurement.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gradwire/cuda/check.hpp"
#include "gradwire/cuda/device_buffer.hpp"
#include "gradwire/cuda/event_timer.hpp"
#include "gradwire/core/atomic_file.hpp"
#include "gradwire/core/options.hpp"
#include "gradwire/kernels/powersgd.hpp"
#include "gradwire/kernels/powersgd_cuda.hpp"
#include "gradwire/kernels/topk.hpp"
#include "gradwire/kernels/topk_cuda.hpp"

namespace {

using namespace gw::kernels;
using gw::cuda::DeviceBuffer;

struct Options {
  std::size_t n = std::size_t{1} << 26;
  double ratio = 0.01;
  int rank = 4;
  int runs = 25;
  int warmup = 3;
  std::string json_path, baselines_path;
};

/// Parses the command line; nullopt when --help was given (and printed).
std::optional<Options> parse(int argc, char** argv) {
  namespace po = boost::program_options;
  Options o;
  po::options_description d("usage: gw_topk_powersgd_bench [options]");
  d.add_options()("help,h", "this help")("n", po::value(&o.n)->default_value(o.n), "Top-K elements")(
      "ratio", po::value(&o.ratio)->default_value(o.ratio), "Top-K: fraction kept, in (0, 1]")(
      "rank", po::value(&o.rank)->default_value(o.rank), "PowerSGD rank")(
      "runs", po::value(&o.runs)->default_value(o.runs), "timed runs per kernel (>= 20)")(
      "warmup", po::value(&o.warmup)->default_value(o.warmup), "untimed runs before them (>= 1)")(
      "json", po::value(&o.json_path), "also write JSON lines to this file")(
      "baselines", po::value(&o.baselines_path), "JSON lines of torch_baselines.py, for ratios")(
      "torch-baselines", po::value(&o.baselines_path), "the same as --baselines");
  if (!gw::parse_options(argc, argv, d)) return std::nullopt;
  if (o.runs < 20) throw std::invalid_argument("--runs must be at least 20");
  if (o.warmup < 1) throw std::invalid_argument("--warmup must be at least 1");
  if (!(o.ratio > 0.0 && o.ratio <= 1.0)) throw std::invalid_argument("--ratio must be in (0, 1]");
  if (o.rank < 1) throw std::invalid_argument("--rank must be at least 1");
  return o;
}

/// (kernel, op, n) -> list of (baseline name, median ms), from JSON lines.
using Baselines =
    std::map<std::tuple<std::string, std::string, std::size_t>, std::vector<std::pair<std::string, double>>>;

Baselines load_baselines(const std::string& path) {
  Baselines out;
  if (path.empty()) return out;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read baselines " + path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto j = nlohmann::json::parse(line);
    out[{j.at("kernel").get<std::string>(), j.at("op").get<std::string>(), j.at("n").get<std::size_t>()}].emplace_back(
        j.value("baseline", std::string("baseline")), j.at("median_ms").get<double>());
  }
  return out;
}

/// The benchmark's fixed warm-up and run counts around the shared event timer.
class Timer {
 public:
  Timer(cudaStream_t s, int warmup, int runs) : timer_(s), warmup_(warmup), runs_(runs) {}
  template <class F>
  double median_ms(F&& f) {
    return timer_.median_ms(warmup_, runs_, std::forward<F>(f));
  }

 private:
  gw::cuda::EventTimer timer_;
  int warmup_, runs_;
};

struct Reporter {
  const Baselines& baselines;
  int runs;
  std::string json;
  void row(const std::string& kernel, const std::string& op, std::size_t n, double ms, const std::string& note = "") {
    nlohmann::json j = {{"kernel", kernel}, {"op", op}, {"n", n}, {"runs", runs}, {"median_ms", ms}};
    if (!note.empty()) j["note"] = note;
    std::printf("%-9s %-26s %11zu %12.2f  %s\n", kernel.c_str(), op.c_str(), n, ms * 1e3, note.c_str());
    if (const auto it = baselines.find({kernel, op, n}); it != baselines.end()) {
      nlohmann::json ratios = nlohmann::json::array();
      for (const auto& [name, base_ms] : it->second) {
        std::printf("%-9s %-26s %11s %12.2f  %s: ratio %.2fx (baseline / ours)\n", "", "", "", base_ms * 1e3,
                    name.c_str(), base_ms / ms);
        ratios.push_back({{"baseline", name}, {"baseline_ms", base_ms}, {"ratio", base_ms / ms}});
      }
      j["baselines"] = ratios;
    }
    std::fflush(stdout);
    json += j.dump() + "\n";
  }
};

void bench_topk(const Options& o, cudaStream_t stream, Timer& timer, Reporter& rep) {
  const std::size_t n = o.n;
  const std::size_t k =
      std::clamp<std::size_t>(static_cast<std::size_t>(std::ceil(o.ratio * static_cast<double>(n))), 1, n);
  std::vector<float> host(n);
  std::mt19937 gen(12345);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (auto& v : host) v = normal(gen);
  const std::size_t ws_bytes = topk_workspace_bytes(n);
  const std::size_t sort_bytes = topk_sort_workspace_bytes(n, k);
  DeviceBuffer<float> x_buf(n), y_buf(n), values_buf(k);
  DeviceBuffer<std::int32_t> indices_buf(k);
  DeviceBuffer<unsigned char> ws_buf(ws_bytes), sort_ws_buf(sort_bytes);
  float *x = x_buf.get(), *y = y_buf.get(), *values = values_buf.get();
  std::int32_t* indices = indices_buf.get();
  void *ws = ws_buf.get(), *sort_ws = sort_ws_buf.get();
  GW_CHECK(cudaMemcpy(x, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  std::printf("top-k: n = %zu, k = %zu; workspace %zu B (radix select), %zu B (radix sort)\n", n, k, ws_bytes,
              sort_bytes);

  const double copy_ms =
      timer.median_ms([&] { GW_CHECK(cudaMemcpyAsync(y, x, n * sizeof(float), cudaMemcpyDeviceToDevice, stream)); });
  rep.row("copy", "d2d", n, copy_ms, "reference: one read + one write of x");
  const double select_ms =
      timer.median_ms([&] { GW_CHECK(topk_encode_cuda(x, n, k, values, indices, ws, ws_bytes, stream)); });
  char note[96];
  std::snprintf(note, sizeof note, "%.0f GB/s counting its 2 full reads of x",
                2.0 * 4.0 * static_cast<double>(n) / (select_ms * 1e6));
  rep.row("topk", "encode", n, select_ms, note);
  const double sort_ms =
      timer.median_ms([&] { GW_CHECK(topk_sort_encode_cuda(x, n, k, values, indices, sort_ws, sort_bytes, stream)); });
  rep.row("topk", "encode_radix_sort", n, sort_ms);
  std::printf("%-9s %-26s radix sort / radix select = %.2fx\n", "topk", "", sort_ms / select_ms);
  const double decode_ms = timer.median_ms([&] { GW_CHECK(topk_decode_cuda(values, indices, k, n, y, stream)); });
  rep.row("topk", "decode", n, decode_ms);
}

/// ResNet-50 conv/fc weights as (out, in*kh*kw) matrices, in model order.
std::vector<std::pair<int, int>> resnet50_shapes() {
  std::vector<std::pair<int, int>> s = {{64, 3 * 7 * 7}};
  const int blocks[4] = {3, 4, 6, 3};
  int in = 64;
  for (int stage = 0; stage < 4; ++stage) {
    const int w = 64 << stage;
    for (int b = 0; b < blocks[stage]; ++b) {
      s.push_back({w, in});                  // 1x1 reduce
      s.push_back({w, w * 9});               // 3x3
      s.push_back({4 * w, w});               // 1x1 expand
      if (b == 0) s.push_back({4 * w, in});  // downsample 1x1
      in = 4 * w;
    }
  }
  s.push_back({1000, 2048});  // fc
  return s;
}

void bench_powersgd(const Options& o, cudaStream_t stream, Timer& timer, Reporter& rep) {
  const auto shapes = resnet50_shapes();
  struct T {
    std::int64_t m, n;
    int r;
    DeviceBuffer<float> M, P, Q, out;
    DeviceBuffer<unsigned char> ws;  ///< none (null) when the step needs no workspace
    std::size_t ws_bytes;
  };
  std::vector<T> ts;
  std::size_t total = 0;
  std::mt19937 gen(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const auto& [m, n] : shapes) {
    T t{m, n, powersgd_effective_rank(m, n, o.rank), {}, {}, {}, {}, {}, 0};
    const auto mn = static_cast<std::size_t>(m) * static_cast<std::size_t>(n);
    total += mn;
    std::vector<float> h(mn);
    for (auto& v : h) v = normal(gen);
    std::vector<float> q(static_cast<std::size_t>(n) * static_cast<std::size_t>(t.r));
    powersgd_init_q(q.data(), n, t.r, 99);
    t.M = DeviceBuffer<float>(mn);
    t.out = DeviceBuffer<float>(mn);
    t.P = DeviceBuffer<float>(static_cast<std::size_t>(m) * t.r);
    t.Q = DeviceBuffer<float>(q.size());
    t.ws_bytes = powersgd_workspace_bytes(m, t.r);
    if (t.ws_bytes > 0) t.ws = DeviceBuffer<unsigned char>(t.ws_bytes);
    GW_CHECK(cudaMemcpy(t.M.get(), h.data(), mn * sizeof(float), cudaMemcpyHostToDevice));
    GW_CHECK(cudaMemcpy(t.Q.get(), q.data(), q.size() * sizeof(float), cudaMemcpyHostToDevice));
    ts.push_back(std::move(t));
  }
  std::printf("powersgd: rank %d over %zu ResNet-50 weight tensors, %zu elements\n", o.rank, ts.size(), total);
  PowerSgdBlas blas;
  auto step_p = [&] {
    for (auto& t : ts) GW_CHECK(powersgd_compute_p_cuda(blas, t.M.get(), t.m, t.n, t.Q.get(), t.r, t.P.get(), stream));
  };
  auto step_o = [&] {
    for (auto& t : ts) {
      GW_CHECK(powersgd_orthogonalize_p_cuda(t.P.get(), t.m, t.r, 0.0f, t.ws.get(), t.ws_bytes, stream));
    }
  };
  auto step_q = [&] {
    for (auto& t : ts) GW_CHECK(powersgd_compute_q_cuda(blas, t.M.get(), t.m, t.n, t.P.get(), t.r, t.Q.get(), stream));
  };
  auto step_d = [&] {
    for (auto& t : ts) {
      GW_CHECK(powersgd_decompress_cuda(blas, t.P.get(), t.Q.get(), t.m, t.n, t.r, t.out.get(), stream));
    }
  };
  const std::string tag = "resnet50_r" + std::to_string(o.rank);
  rep.row("powersgd", tag + "_steps", total, timer.median_ms([&] {
    step_p();
    step_o();
    step_q();
    step_d();
  }),
          "all four steps, every tensor");
  rep.row("powersgd", tag + "_compute_p", total, timer.median_ms(step_p));
  rep.row("powersgd", tag + "_orthogonalize", total, timer.median_ms(step_o));
  rep.row("powersgd", tag + "_compute_q", total, timer.median_ms(step_q));
  rep.row("powersgd", tag + "_decompress", total, timer.median_ms(step_d));
}

int run(const Options& o) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::cerr << "gw_topk_powersgd_bench: no usable GPU\n";
    return 1;
  }
  cudaDeviceProp prop{};
  GW_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s (sm_%d%d, %d SMs)\n", prop.name, prop.major, prop.minor, prop.multiProcessorCount);
  const Baselines baselines = load_baselines(o.baselines_path);
  cudaStream_t stream{};
  GW_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  Reporter rep{baselines, o.runs, {}};
  std::printf("%-9s %-26s %11s %12s\n", "kernel", "op", "n", "median(us)");
  {
    Timer timer(stream, o.warmup, o.runs);
    bench_topk(o, stream, timer, rep);
    bench_powersgd(o, stream, timer, rep);
  }
  cudaStreamDestroy(stream);
  if (!o.json_path.empty()) gw::write_file_atomic(o.json_path, rep.json);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    const auto parsed = parse(argc, argv);
    if (!parsed) return 0;
    o = *parsed;
  } catch (const std::exception& e) {
    std::cerr << "gw_topk_powersgd_bench: " << e.what() << " (--help lists the options)\n";
    return 2;
  }
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::cerr << "gw_topk_powersgd_bench: " << e.what() << "\n";
    return 1;
  }
}
