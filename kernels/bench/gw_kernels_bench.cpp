// gw_kernels_bench: median time of every CUDA codec's encode and decode per
// size (CUDA events, after warm-up), the bytes each moves, and the achieved
// bandwidth as a fraction of a device-to-device copy of the same size timed
// in the same run. One record type feeds both the table (stdout) and the
// JSON lines (--json). Optional --baselines FILE (JSON lines from
// torch_baselines.py) adds "baseline median / our median" ratios.
//
// Each decoder is also compared with a same-traffic reference kernel
// (traffic_reference.hpp): pure data movement with the decoder's ratio of
// writes to reads, timed in the same run and checked for its output. The
// references are printed first; a decoder's "of_ref" is its bandwidth over
// the better of the reference's plain- and streaming-store forms. Decoders
// that take a store hint are timed twice: "decode" (plain stores) and
// "decode.cs" (streaming stores; --no-streaming-decode leaves it out).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gradwire/cuda/check.hpp"
#include "gradwire/cuda/device_buffer.hpp"
#include "gradwire/cuda/event_timer.hpp"
#include "reference_choice.hpp"
#include "traffic_reference.hpp"
#include "gradwire/core/atomic_file.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/core/options.hpp"
#include "gradwire/kernels/codec_cuda.hpp"
#include "gradwire/kernels/counter_rng.hpp"

namespace {

using gw::cuda::EventTimer;
using gw::kernels::Codec;
using gw::kernels::CodecConfig;

struct Options {
  std::vector<std::size_t> sizes = {std::size_t{1} << 20, std::size_t{1} << 26};
  std::vector<std::string> codecs;  // empty = all registered
  int runs = 25;
  int warmup = 3;
  std::string json_path;
  std::string baselines_path;
  bool streaming_decode = true;  // also time the decoders with streaming stores ("decode.cs")
  CodecConfig cfg;
};

/// Codecs whose CUDA decoder takes the store hint (CodecConfig::streaming_stores).
bool honors_store_hint(const std::string& name) {
  for (const char* p : {"fp16", "bf16", "int8", "sign", "majority_vote", "randomk"}) {
    if (name.rfind(p, 0) == 0) return true;
  }
  return false;
}

struct Record {
  std::string kernel, op;
  std::size_t n = 0;
  int runs = 0;
  double median_ms = 0, traffic_bytes = 0, copy_gbps = 0;
  std::size_t wire_bytes = 0;
  std::string ref;         // same-traffic reference ("" = none)
  double ref_gbps = 0;     // its bandwidth
  double baseline_ms = 0;  // 0 = none
  std::string baseline;

  double gbps() const { return median_ms > 0 ? traffic_bytes / (median_ms * 1e6) : 0; }
  double fraction() const { return copy_gbps > 0 ? gbps() / copy_gbps : 0; }
  double fraction_of_ref() const { return ref_gbps > 0 ? gbps() / ref_gbps : 0; }
  nlohmann::json json() const {
    nlohmann::json j = {{"kernel", kernel},
                        {"op", op},
                        {"n", n},
                        {"runs", runs},
                        {"median_ms", median_ms},
                        {"traffic_bytes", traffic_bytes},
                        {"wire_bytes", wire_bytes},
                        {"gbps", gbps()},
                        {"copy_gbps", copy_gbps},
                        {"fraction_of_copy", fraction()}};
    if (ref_gbps > 0) {
      j["reference"] = ref;
      j["reference_gbps"] = ref_gbps;
      j["fraction_of_reference"] = fraction_of_ref();
    }
    if (baseline_ms > 0) {
      j["baseline"] = baseline;
      j["baseline_ms"] = baseline_ms;
      j["ratio"] = baseline_ms / median_ms;
    }
    return j;
  }
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

std::size_t parse_size(const std::string& s) {
  // "N", "2^K" or "2^K+M"
  const auto caret = s.find('^');
  if (caret == std::string::npos) return std::stoull(s);
  const auto plus = s.find('+', caret);
  const auto exp = std::stoul(s.substr(caret + 1, plus == std::string::npos ? std::string::npos : plus - caret - 1));
  std::size_t v = std::size_t{1} << exp;
  if (plus != std::string::npos) v += std::stoull(s.substr(plus + 1));
  return v;
}

/// Parses the command line; nullopt when --help was given (and printed).
std::optional<Options> parse(int argc, char** argv) {
  namespace po = boost::program_options;
  Options o;
  std::string sizes = "2^20,2^26", codecs;
  po::options_description d("usage: gw_kernels_bench [options]");
  d.add_options()("help,h", "this help")("sizes", po::value(&sizes)->default_value(sizes),
                                         "element counts, comma-separated: N, 2^K or 2^K+M")(
      "codecs", po::value(&codecs), "codecs to time, comma-separated (default: every registered one)")(
      "runs", po::value(&o.runs)->default_value(o.runs), "timed runs per kernel and size (>= 20)")(
      "warmup", po::value(&o.warmup)->default_value(o.warmup), "untimed runs before them (>= 1)")(
      "chunk", po::value(&o.cfg.chunk)->default_value(o.cfg.chunk), "int8/sign: elements per scale")(
      "ratio", po::value(&o.cfg.ratio)->default_value(o.cfg.ratio), "Top-K/Random-K: fraction kept")(
      "workers", po::value(&o.cfg.workers)->default_value(o.cfg.workers), "majority vote: workers")(
      "json", po::value(&o.json_path), "also write JSON lines to this file")(
      "baselines", po::value(&o.baselines_path), "JSON lines of torch_baselines.py, for ratios")(
      "no-streaming-decode", "do not time the decoders again with streaming stores");
  const auto vm = gw::parse_options(argc, argv, d);
  if (!vm) return std::nullopt;
  o.streaming_decode = vm->count("no-streaming-decode") == 0;
  o.sizes.clear();
  for (const auto& v : split(sizes)) o.sizes.push_back(parse_size(v));
  if (o.sizes.empty()) throw std::invalid_argument("--sizes names no size");
  o.codecs = split(codecs);
  if (o.runs < 20) throw std::invalid_argument("--runs must be at least 20");
  if (o.warmup < 1) throw std::invalid_argument("--warmup must be at least 1");
  return o;
}

/// (kernel, op, n) -> (baseline name, median ms).
using Baselines = std::map<std::tuple<std::string, std::string, std::size_t>, std::pair<std::string, double>>;

/// The baselines from JSON lines; bad lines are reported and skipped.
Baselines load_baselines(const std::string& path) {
  Baselines out;
  if (path.empty()) return out;
  std::ifstream in(path);
  if (!in) {
    std::cerr << "warning: cannot read baselines " << path << "\n";
    return out;
  }
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      const auto j = nlohmann::json::parse(line);
      out[{j.at("kernel").get<std::string>(), j.at("op").get<std::string>(), j.at("n").get<std::size_t>()}] = {
          j.value("baseline", std::string("baseline")), j.at("median_ms").get<double>()};
    } catch (const std::exception& e) {
      std::cerr << "warning: " << path << ":" << lineno << ": skipped (" << e.what() << ")\n";
    }
  }
  return out;
}

void print_header() {
  std::printf("%-14s %-6s %11s %5s %11s %13s %11s %10s %10s %8s %-10s %7s %10s\n", "kernel", "op", "n", "runs",
              "median(us)", "traffic(B)", "wire(B)", "bw(GB/s)", "copy(GB/s)", "of_copy", "ref", "of_ref",
              "baseline/us");
}

void print_row(const Record& r) {
  char ratio[32] = "-", of_ref[32] = "-";
  if (r.baseline_ms > 0) std::snprintf(ratio, sizeof ratio, "%.2fx", r.baseline_ms / r.median_ms);
  if (r.ref_gbps > 0) std::snprintf(of_ref, sizeof of_ref, "%.1f%%", 100 * r.fraction_of_ref());
  std::printf("%-14s %-6s %11zu %5d %11.2f %13.0f %11zu %10.1f %10.1f %7.1f%% %-10s %7s %10s\n", r.kernel.c_str(),
              r.op.c_str(), r.n, r.runs, r.median_ms * 1e3, r.traffic_bytes, r.wire_bytes, r.gbps(), r.copy_gbps,
              100 * r.fraction(), r.ref.empty() ? "-" : r.ref.c_str(), of_ref, ratio);
  std::fflush(stdout);
}

/// Bandwidths of the same-traffic references at one size: write-only and
/// expand by 2^S, each the better of plain and streaming stores.
struct References {
  double write_gbps = 0;
  double expand_gbps[gw::kernels::bench::kMaxExpandShift + 1] = {};

  /// The reference for a kernel that reads `read` bytes and writes `write`.
  std::pair<std::string, double> for_traffic(double read, double write) const {
    const auto c = gw::kernels::bench::same_traffic_reference(read, write, gw::kernels::bench::kMaxExpandShift);
    return {c.name, c.shift < 0 ? write_gbps : expand_gbps[c.shift]};
  }
};

/// Times the reference kernels over n floats' worth of 16-byte units (and
/// cudaMemsetAsync), checks each one's output, prints them and appends JSON.
References measure_references(std::size_t n, const std::vector<float>& host, const Options& o, cudaStream_t stream,
                              EventTimer& timer, double copy_gbps, std::string& json) {
  namespace gb = gw::kernels::bench;
  References refs;
  const std::size_t units = n / 4;  // 16-byte units
  if (units == 0) return refs;
  const std::size_t bytes = units * 16;
  const gw::cuda::DeviceBuffer<unsigned char> in_buf(bytes), out_buf(bytes);
  void* in = in_buf.get();
  void* out = out_buf.get();
  GW_CHECK(cudaMemcpy(in, host.data(), bytes, cudaMemcpyHostToDevice));
  std::vector<std::uint32_t> in_h(bytes / 4), out_h(bytes / 4);
  std::memcpy(in_h.data(), host.data(), bytes);
  auto fetch = [&] {
    GW_CHECK(cudaStreamSynchronize(stream));
    GW_CHECK(cudaMemcpy(out_h.data(), out, bytes, cudaMemcpyDeviceToHost));
  };
  auto emit = [&](const std::string& name, double read, double write, double ms) {
    Record r;
    r.kernel = "reference";
    r.op = name;
    r.n = n;
    r.runs = o.runs;
    r.median_ms = ms;
    r.traffic_bytes = read + write;
    r.copy_gbps = copy_gbps;
    print_row(r);
    json += r.json().dump() + "\n";
    return r.gbps();
  };
  const double w = static_cast<double>(bytes);
  {
    const double ms = timer.median_ms(o.warmup, o.runs, [&] { GW_CHECK(cudaMemsetAsync(out, 0x5a, bytes, stream)); });
    fetch();
    for (const auto v : out_h) {
      if (v != 0x5a5a5a5aU) throw std::runtime_error("reference memset: wrong output");
    }
    refs.write_gbps = std::max(refs.write_gbps, emit("memset", 0, w, ms));
  }
  for (const bool cs : {false, true}) {
    const double ms = timer.median_ms(o.warmup, o.runs, [&] { GW_CHECK(gb::write_reference(out, units, cs, stream)); });
    fetch();
    for (std::size_t i = 0; i < out_h.size(); ++i) {
      if (out_h[i] != static_cast<std::uint32_t>(i / 4)) throw std::runtime_error("reference write: wrong output");
    }
    refs.write_gbps = std::max(refs.write_gbps, emit(cs ? "write.cs" : "write", 0, w, ms));
  }
  for (int s = 0; s <= gb::kMaxExpandShift; ++s) {
    for (const bool cs : {false, true}) {
      const double ms =
          timer.median_ms(o.warmup, o.runs, [&] { GW_CHECK(gb::expand_reference(in, out, units, s, cs, stream)); });
      fetch();
      for (std::size_t i = 0; i < out_h.size(); ++i) {
        if (out_h[i] != in_h[4 * ((i / 4) >> s) + i % 4]) {
          throw std::runtime_error("reference expand" + std::to_string(s) + ": wrong output");
        }
      }
      const double read = static_cast<double>(((units + (std::size_t{1} << s) - 1) >> s) * 16);
      const std::string name = "expand" + std::to_string(s) + (cs ? ".cs" : "");
      refs.expand_gbps[s] = std::max(refs.expand_gbps[s], emit(name, read, w, ms));
    }
  }
  return refs;
}

/// Times one codec's encode and decode (and decode.cs when its decoder takes
/// the store hint) at n elements: prints each row and appends its JSON line.
void time_codec(const std::string& name, std::size_t n, const std::vector<float>& host, const Options& o,
                cudaStream_t stream, EventTimer& timer, double copy_gbps, const References& refs,
                const Baselines& baselines, std::string& json) {
  auto codec = gw::kernels::make_cuda_codec(name, n, o.cfg, stream);
  codec->set_input(host.data());
  // The same decoder with streaming stores, on a message of its own.
  std::unique_ptr<Codec> cs_codec;
  if (o.streaming_decode && honors_store_hint(name)) {
    CodecConfig cfg = o.cfg;
    cfg.streaming_stores = true;
    cs_codec = gw::kernels::make_cuda_codec(name, n, cfg, stream);
    cs_codec->set_input(host.data());
    cs_codec->encode();
  }
  for (const std::string op : {"encode", "decode", "decode.cs"}) {
    if (op == "decode.cs" && !cs_codec) continue;
    Codec& c = op == "decode.cs" ? *cs_codec : *codec;
    Record r;
    r.kernel = name;
    r.op = op;
    r.n = n;
    r.runs = o.runs;
    r.copy_gbps = copy_gbps;
    r.wire_bytes = c.wire_bytes();
    if (op == "encode") {
      r.traffic_bytes = c.encode_traffic_bytes();
      r.median_ms = timer.median_ms(o.warmup, o.runs, [&] { c.encode(); });
    } else {
      r.traffic_bytes = c.decode_traffic_bytes();
      r.median_ms = timer.median_ms(o.warmup, o.runs, [&] { c.decode(); });
      // Every decoder writes the n dense floats and reads the rest.
      const double write = 4.0 * static_cast<double>(n);
      std::tie(r.ref, r.ref_gbps) = refs.for_traffic(r.traffic_bytes - write, write);
    }
    if (auto it = baselines.find({name, op, n}); it != baselines.end()) {
      r.baseline = it->second.first;
      r.baseline_ms = it->second.second;
    }
    print_row(r);
    json += r.json().dump() + "\n";
  }
}

int run(const Options& o) {
  std::string why;
  if (!gw::kernels::cuda_device_available(&why)) {
    std::cerr << "gw_kernels_bench: no usable GPU: " << why << "\n";
    return gw::kExitFailure;
  }
  cudaDeviceProp prop{};
  GW_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s (sm_%d%d, %d SMs)\n", prop.name, prop.major, prop.minor, prop.multiProcessorCount);
  const auto baselines = load_baselines(o.baselines_path);
  const auto names = o.codecs.empty() ? gw::kernels::cuda_codec_names() : o.codecs;
  cudaStream_t stream{};
  GW_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  EventTimer timer(stream);
  std::string json;
  print_header();
  int failures = 0;
  for (const std::size_t n : o.sizes) {
    std::vector<float> host(n);
    const std::uint64_t key = gw::kernels::stream_key(o.cfg.seed, 0xbe7c);
    for (std::size_t i = 0; i < n; ++i) host[i] = 2.0f * gw::kernels::uniform01(key, i) - 1.0f;
    // Device-to-device copy of the same n floats: reads and writes 4n bytes.
    double copy_gbps = 0;
    {
      const gw::cuda::DeviceBuffer<float> a(n), b(n);
      const double ms = timer.median_ms(o.warmup, o.runs, [&] {
        GW_CHECK(cudaMemcpyAsync(b.get(), a.get(), n * 4, cudaMemcpyDeviceToDevice, stream));
      });
      copy_gbps = 8.0 * static_cast<double>(n) / (ms * 1e6);
    }
    References refs;
    try {
      refs = measure_references(n, host, o, stream, timer, copy_gbps, json);
    } catch (const std::exception& e) {
      // The codecs are still timed; their rows then name no reference.
      ++failures;
      std::fprintf(stderr, "gw_kernels_bench: reference kernels n=%zu failed: %s\n", n, e.what());
      json += nlohmann::json{{"kernel", "reference"}, {"n", n}, {"error", e.what()}}.dump() + "\n";
      cudaGetLastError();
      refs = References{};
    }
    for (const auto& name : names) {
      try {
        time_codec(name, n, host, o, stream, timer, copy_gbps, refs, baselines, json);
      } catch (const std::exception& e) {
        ++failures;
        std::fprintf(stderr, "gw_kernels_bench: %s n=%zu failed: %s\n", name.c_str(), n, e.what());
        nlohmann::json j = {{"kernel", name}, {"n", n}, {"error", e.what()}};
        json += j.dump() + "\n";
        cudaGetLastError();
      }
    }
  }
  cudaStreamDestroy(stream);
  if (!o.json_path.empty()) gw::write_file_atomic(o.json_path, json);
  return failures == 0 ? gw::kExitOk : gw::kExitFailure;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    const auto parsed = parse(argc, argv);
    if (!parsed) return gw::kExitOk;
    o = *parsed;
  } catch (const std::exception& e) {
    std::cerr << "gw_kernels_bench: " << e.what() << " (--help lists the options)\n";
    return gw::kExitInput;
  }
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::cerr << "gw_kernels_bench: " << e.what() << "\n";
    return gw::kExitFailure;
  }
}
