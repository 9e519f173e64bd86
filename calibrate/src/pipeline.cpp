// The calibration pipeline, independent of the backend, in its phases:
// settings, profile header, codec sweep, GEMM and copy bandwidth,
// collectives (each with its fits and notes). The codecs come from the
// compressor table, the collectives from the collective vocabulary.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "gradwire/calibrate/calibrate.hpp"
#include "gradwire/model/compressors.hpp"
#include "gradwire/model/fit.hpp"
#include "gradwire/model/model_desc.hpp"
#include "gradwire/core/units.hpp"

namespace gw::calibrate {
namespace {

using Clock = std::chrono::steady_clock;

const std::vector<std::string> kPrecisions = {"fp32", "tf32", "bf16", "fp16"};

std::string size_label(double x) {
  const double e = std::log2(x);
  std::ostringstream os;
  if (std::abs(e - std::round(e)) < 1e-9) {
    os << "2^" << static_cast<int>(std::round(e));
  } else {
    os << static_cast<long long>(x);
  }
  return os.str();
}

/// Progress on stderr: one rewritten line on a terminal, a line per phase otherwise.
class Progress {
 public:
  Progress() : tty_(::isatty(2) == 1), start_(Clock::now()) {}
  ~Progress() { done(); }
  void phase(const std::string& what) {
    done();
    std::fprintf(stderr, "[calibrate %6.1fs] %s\n", elapsed(), what.c_str());
  }
  void step(const std::string& what) {
    if (!tty_) return;
    std::fprintf(stderr, "\r\033[K[calibrate %6.1fs]   %s", elapsed(), what.c_str());
    std::fflush(stderr);
    dirty_ = true;
  }
  void done() {
    if (dirty_) std::fprintf(stderr, "\r\033[K");
    dirty_ = false;
  }
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

 private:
  bool tty_;
  bool dirty_ = false;
  Clock::time_point start_;
};

CurvePoint point(double x, const std::vector<double>& samples) {
  auto s = fit::summarize(samples);
  // A timer can read 0 for a sub-resolution CPU call; keep times positive.
  return {x, std::max(s.median, 1e-9), s.spread, s.repeats};
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string slug(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "device" : out;
}

struct GemmShape {
  int m, n, k;
  std::string from;
};

/// Layer shapes of the model zoo as GEMMs (N = output features / channels,
/// K = input features x kernel area, M = tokens or output pixels of a batch).
std::vector<GemmShape> zoo_shapes(int m, int max_shapes, std::string* source) {
  std::vector<GemmShape> shapes;
  std::set<std::pair<std::int64_t, std::int64_t>> seen;
  try {
    for (const char* model : {"bert-base", "gpt2", "resnet50", "llama2-7b"}) {
      ModelDesc d = load_model(model);
      for (const auto& t : d.tensors) {
        if (t.shape.size() < 2) continue;
        std::int64_t n = t.shape[0], k = 1;
        for (std::size_t i = 1; i < t.shape.size(); ++i) k *= t.shape[i];
        if (n < 64 || k < 64 || n > 16384 || k > 16384) continue;  // skip embeddings / tiny layers
        if (seen.insert({n, k}).second) {
          shapes.push_back({m, static_cast<int>(n), static_cast<int>(k), std::string(model) + ":" + t.name});
        }
      }
    }
    *source = "layer shapes of the model zoo (bert-base, gpt2, resnet50, llama2-7b), M = " + std::to_string(m);
  } catch (const std::exception& e) {
    shapes.clear();
    *source = std::string("representative shapes (model zoo not readable: ") + e.what() + ")";
  }
  if (shapes.empty()) {
    for (int s : {1024, 2048, 4096}) shapes.push_back({m, s, s, "representative"});
    shapes.push_back({m, 4 * 1024, 1024, "representative"});
    if (source->empty()) *source = "representative shapes";
  }
  // Keep a spread: sort by FLOPs and take evenly spaced shapes.
  std::sort(shapes.begin(), shapes.end(), [](const GemmShape& a, const GemmShape& b) {
    return static_cast<double>(a.n) * a.k < static_cast<double>(b.n) * b.k;
  });
  if (static_cast<int>(shapes.size()) > max_shapes) {
    std::vector<GemmShape> pick;
    for (int i = 0; i < max_shapes; ++i) {
      pick.push_back(
          shapes[static_cast<std::size_t>(i) * (shapes.size() - 1) / static_cast<std::size_t>(max_shapes - 1)]);
    }
    shapes = pick;
  }
  return shapes;
}

/// The settings of one run: explicit options or the device's defaults.
struct Settings {
  bool gpu = false;
  double budget = 0;  ///< s
  int repeats = 0;
  int warmup = 0;
  std::vector<double> sizes;      ///< codec sizes, elements
  std::vector<double> col_sizes;  ///< collective sizes, bytes
};

Settings settings(const Options& opt) {
  Settings s;
  s.gpu = opt.device == "cuda";
  const bool gpu = s.gpu;
  // CPU: a few seconds of codecs; an MPI job's collectives (--mpi) get 10 s more.
  const double cpu_budget = (opt.quick ? 5.0 : 15.0) + (opt.mpi ? 10.0 : 0.0);
  s.budget = opt.max_seconds > 0 ? opt.max_seconds : (gpu ? (opt.quick ? 30.0 : 110.0) : cpu_budget);
  s.repeats = opt.repeats > 0 ? opt.repeats : (opt.quick ? (gpu ? 5 : 3) : (gpu ? 20 : 5));
  s.warmup = opt.warmup >= 0 ? opt.warmup : (opt.quick ? 1 : (gpu ? 5 : 1));
  s.sizes = opt.sizes;
  if (s.sizes.empty()) {
    // 2^10 .. 2^28 elements on a GPU, 2^10 .. 2^18 on the CPU (x4 steps when quick).
    s.sizes =
        codec_sizes(gpu ? (opt.quick ? "4KiB:64MiB:4" : "4KiB:1GiB") : (opt.quick ? "4KiB:256KiB:4" : "4KiB:1MiB"));
  }
  s.col_sizes = opt.collective_sizes;
  if (s.col_sizes.empty()) {
    // NCCL: 2^12 .. 2^28 B in x16 steps when quick, else 2^10 .. 2^30 in x4
    // steps; MPI on host buffers (--mpi --device cpu): up to 4 MiB / 64 MiB.
    s.col_sizes = collective_byte_sizes(gpu ? (opt.quick ? "4KiB:256MiB:16" : "1KiB:1GiB:4")
                                            : (opt.quick ? "4KiB:4MiB:4" : "1KiB:64MiB:4"));
  }
  return s;
}

/// The profile's facts about the device and the run, before any measurement.
Profile profile_header(const Options& opt, Backend& backend, const Settings& s, const DeviceInfo& info) {
  Profile p;
  p.source = "measured";
  p.device = info.device;
  p.sm_count = info.sm_count;
  p.memory_bytes = info.memory_bytes;
  p.driver = info.driver;
  p.cuda = info.cuda;
  p.nccl = info.nccl;
  p.date = utc_now();
  {
    char host[256] = {0};
    if (::gethostname(host, sizeof host - 1) == 0) p.host = host;
  }
  p.command = opt.command;
  p.name = !opt.name.empty() ? opt.name : slug(info.device) + "-measured-" + p.date.substr(0, 10);
  p.references = {"measured with gradwire calibrate (docs/calibrate.md)"};
  p.nccl_env = backend.nccl_env();
  if (!s.gpu) {
    p.notes.push_back(
        std::string("CPU mode (--device cpu): codec costs are the CPU twins timed on the host (std::chrono), "
                    "not GPU kernels; GEMM throughput is a simple blocked fp32 CPU GEMM; copy bandwidth is "
                    "memcpy; ") +
        (opt.mpi ? "collectives are the MPI library's own between the ranks' processes (--mpi), not NCCL. "
                 : "no collectives. ") +
        "For exercising the tool, not for predictions.");
  }
  std::ostringstream cfg;
  cfg << "settings: repeats " << s.repeats << ", warm-up " << s.warmup << ", budget " << s.budget << " s, codec sizes "
      << size_label(s.sizes.front()) << ".." << size_label(s.sizes.back()) << " (" << s.sizes.size() << " sizes)";
  p.notes.push_back(cfg.str());
  return p;
}

// ---- shares of the budget ------------------------------------------------------
// Codecs first, then GEMM and copy, then interference (when asked), then the
// collectives until 97%: GPU 55% / 15% / 10%, CPU 60% / 20% / 15%.
constexpr double kCpuCodecShare = 0.60;
double interference_share(const Settings& s) { return s.gpu ? 0.10 : 0.15; }

// ---- 1. codecs ----------------------------------------------------------------

/// The codecs to measure: those asked for, or every codec of the compressor
/// table the backend has (a note for each it lacks).
std::vector<std::string> choose_codecs(const Options& opt, Backend& backend, Profile& p) {
  const std::vector<std::string> available = backend.codec_names();
  const auto has = [&](const std::string& c) {
    return std::find(available.begin(), available.end(), c) != available.end();
  };
  std::vector<std::string> codecs;
  if (opt.codecs.empty()) {
    for (const auto& c : compressor_codec_names()) {
      if (has(c)) {
        codecs.push_back(c);
      } else {
        p.notes.push_back("codec " + c + " not measured: this build's kernels do not provide it");
      }
    }
    return codecs;
  }
  for (const auto& c : opt.codecs) {
    if (!has(c)) throw std::invalid_argument("codec \"" + c + "\" is not available on this backend");
    codecs.push_back(c);
  }
  return codecs;
}

std::string held_out_note(const std::string& name, const CodecCost& cost) {
  std::ostringstream os;
  os.precision(3);
  const auto enc = fit::held_out_rel_errors(cost.encode_points);
  const auto dec = fit::held_out_rel_errors(cost.decode_points);
  const auto worst = [](const std::vector<double>& v) {
    return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end());
  };
  os << "codec " << name << ": held-out (leave-one-out) prediction error, median / max: encode "
     << 100 * fit::median(enc) << "% / " << 100 * worst(enc) << "%, decode " << 100 * fit::median(dec) << "% / "
     << 100 * worst(dec) << "%";
  return os.str();
}

/// Times that fall by more than half as the size grows are noise (a timer
/// interrupted at the smaller size), and the profile loader refuses them
/// (first_time_drop, kMaxMeasuredTimeDrop). Re-times both sizes of the first
/// such drop, in encode or decode, up to kRetimeRounds times, keeping per
/// size and direction the attempt with the lower median (noise only adds
/// time); a drop that remains is an error: the machine is too noisy for a
/// profile, and nothing is written.
constexpr int kRetimeRounds = 4;

void retime_noisy_points(const std::string& name, const Settings& s, Backend& backend, Progress& progress,
                         CodecCost& cost, Profile& p) {
  struct Drop {
    TimeDrop where;
    bool encode = true;
  };
  const auto drop_in = [&]() -> std::optional<Drop> {
    if (auto d = first_time_drop(cost.encode_points, kMaxMeasuredTimeDrop)) return Drop{*d, true};
    if (auto d = first_time_drop(cost.decode_points, kMaxMeasuredTimeDrop)) return Drop{*d, false};
    return std::nullopt;
  };
  std::set<double> retimed;
  for (int round = 0; round < kRetimeRounds; ++round) {
    const auto drop = drop_in();
    if (!drop) break;
    for (std::size_t i : {drop->where.peak, drop->where.at}) {
      const double n = cost.encode_points[i].x;
      progress.step(name + " " + size_label(n) + ": timed again (its time fell by more than half with size)");
      std::vector<double> enc, dec;
      backend.time_codec(name, static_cast<std::size_t>(n), s.warmup, s.repeats, enc, dec, {});
      const CurvePoint e = point(n, enc), d = point(n, dec);
      if (e.seconds < cost.encode_points[i].seconds) cost.encode_points[i] = e;
      if (d.seconds < cost.decode_points[i].seconds) cost.decode_points[i] = d;
      retimed.insert(n);
    }
  }
  if (const auto drop = drop_in()) {
    const auto& pts = drop->encode ? cost.encode_points : cost.decode_points;
    const CurvePoint& at = pts[drop->where.at];
    const CurvePoint& peak = pts[drop->where.peak];
    std::ostringstream os;
    os << "codec " << name << (drop->encode ? " encode" : " decode")
       << ": the time still falls by more than half with size after " << kRetimeRounds << " rounds of timing again ("
       << at.seconds << " s at " << size_label(at.x) << " after " << peak.seconds << " s at " << size_label(peak.x)
       << "): this machine is too noisy for a profile; run again on an idle machine or with more --repeats";
    throw std::runtime_error(os.str());
  }
  if (!retimed.empty()) {
    std::string sizes;
    for (double n : retimed) sizes += (sizes.empty() ? "" : ", ") + size_label(n);
    p.notes.push_back("codec " + name + ": timed again at " + sizes +
                      " (a time fell by more than half as the size grew: noise); each point keeps its faster attempt");
  }
}

/// One codec over the sizes until its share of the budget ends at `share_end`.
CodecCost measure_codec(const std::string& name, const Settings& s, double share_end, Backend& backend,
                        Progress& progress, Profile& p) {
  progress.step(name + ": checking against the CPU twin");
  backend.verify_codec(name, std::min<std::size_t>(static_cast<std::size_t>(s.sizes.back()), (1u << 16) + 7));
  CodecCost cost;
  double last_cost = 0;
  for (double n : s.sizes) {
    // Predict this size's cost from the previous one (time grows with size at worst linearly).
    const double prev_n = cost.encode_points.empty() ? n : cost.encode_points.back().x;
    const double predicted = last_cost * n / prev_n;
    if (!cost.encode_points.empty() && progress.elapsed() + predicted > share_end) {
      p.notes.push_back("codec " + name + ": sizes from " + size_label(n) + " not measured (time budget)");
      break;
    }
    progress.step(name + " " + size_label(n));
    const double t0 = progress.elapsed();
    std::vector<double> enc, dec;
    backend.time_codec(name, static_cast<std::size_t>(n), s.warmup, s.repeats, enc, dec, {});
    cost.encode_points.push_back(point(n, enc));
    cost.decode_points.push_back(point(n, dec));
    last_cost = progress.elapsed() - t0;
  }
  retime_noisy_points(name, s, backend, progress, cost, p);
  cost.encode = fit::fit_piecewise_log(cost.encode_points);
  cost.decode = fit::fit_piecewise_log(cost.decode_points);
  if (cost.encode_points.size() >= 3) p.notes.push_back(held_out_note(name, cost));
  return cost;
}

void measure_codecs(const Options& opt, const Settings& s, const DeviceInfo& info, Backend& backend, Progress& progress,
                    Profile& p) {
  const double codec_budget = s.budget * (s.gpu ? 0.55 : kCpuCodecShare);
  const std::vector<std::string> codecs = choose_codecs(opt, backend, p);
  progress.phase("codecs: " + std::to_string(codecs.size()) + " x " + std::to_string(s.sizes.size()) + " sizes on " +
                 info.device);
  const double codec_start = progress.elapsed();
  for (std::size_t ci = 0; ci < codecs.size(); ++ci) {
    const double share_end =
        codec_start + codec_budget * static_cast<double>(ci + 1) / static_cast<double>(codecs.size());
    p.codecs[codecs[ci]] = measure_codec(codecs[ci], s, share_end, backend, progress, p);
  }
}

// ---- 2. GEMM and copy bandwidth -------------------------------------------------

/// One precision over the shapes until `gemm_end`; false (and a note) when
/// the backend cannot run it.
bool measure_gemm(const std::string& prec, const std::vector<GemmShape>& shapes, double gemm_end, const Settings& s,
                  Backend& backend, Progress& progress, Profile& p) {
  double flops_total = 0, time_total = 0;
  std::vector<CurvePoint> pts;
  try {
    for (const auto& sh : shapes) {
      if (progress.elapsed() > gemm_end && !pts.empty()) break;
      progress.step("gemm " + prec + " " + std::to_string(sh.m) + "x" + std::to_string(sh.n) + "x" +
                    std::to_string(sh.k));
      const double flops = 2.0 * sh.m * sh.n * sh.k;
      auto samples = backend.time_gemm(prec, sh.m, sh.n, sh.k, s.warmup, std::max(3, s.repeats / 2));
      CurvePoint cp = point(flops, samples);
      flops_total += flops;
      time_total += cp.seconds;
      pts.push_back(cp);
    }
  } catch (const std::runtime_error& e) {
    p.notes.push_back("gemm " + prec + " not measured (" + e.what() + "): the profile has no " + prec +
                      " rate, so a scenario computing in " + prec + " with it is refused");
    return false;
  }
  if (pts.empty()) return false;
  p.gemm_flops[prec] = flops_total / time_total;
  p.gemm_points[prec] = fit::normalize_points(pts);
  return true;
}

void measure_compute(const Options& opt, const Settings& s, Backend& backend, Progress& progress, Profile& p) {
  progress.phase("compute: GEMM throughput and copy bandwidth");
  const double compute_budget = s.budget * (s.gpu ? 0.15 : 0.2);
  std::string shape_source;
  std::vector<GemmShape> shapes;
  if (s.gpu) {
    shapes = zoo_shapes(opt.quick ? 2048 : 4096, opt.quick ? 3 : 6, &shape_source);
  } else {
    shapes = {{64, 128, 128, "cpu"}, {64, 256, 256, "cpu"}, {128, 256, 384, "cpu"}};
    shape_source = "small CPU shapes";
  }
  const double gemm_end = progress.elapsed() + compute_budget * 0.7;
  for (const auto& prec : kPrecisions) measure_gemm(prec, shapes, gemm_end, s, backend, progress, p);
  if (!p.gemm_flops.count("fp32")) throw std::runtime_error("fp32 GEMM could not be measured");
  p.notes.push_back("gemm: achieved FLOP/s = total FLOPs / total median time over " + std::to_string(shapes.size()) +
                    " " + shape_source);
  const double copy_bytes = s.gpu ? (opt.quick ? 64.0 : 256.0) * 1048576 : 16.0 * 1048576;
  progress.step("device copy");
  auto samples = backend.time_copy(copy_bytes, s.warmup, std::max(3, s.repeats / 2));
  p.copy_bandwidth = 2 * copy_bytes / fit::summarize(samples).median;
}

// ---- 3. interference --------------------------------------------------------------
// A GEMM stream beside NCCL's all-reduce and beside each codec, and each codec
// beside a GEMM stream (docs/calibrate.md, "Interference"; the figures'
// use: docs/model.md, section 7). Every figure is the median over rounds of
// (time beside / time alone) - 1, alone and beside measured in turn within a
// round so that a drifting clock or temperature moves both.

/// What the phase runs: the GEMM, its batch, the codec and collective sizes.
struct InterferenceSetup {
  std::string precision;
  GemmShape shape;
  int count = 0;      ///< GEMMs per batch
  double target = 0;  ///< s, the batch's intended length
  std::size_t codec_elements = 0;
  double collective_bytes = 0;  ///< all-reduce size (nccl-tests "size")
  int rounds = 0;
  int codec_repeats = 0;  ///< codec calls per timed loop alone
};

/// How many times longer the work it keeps busy runs than the batch (or the
/// loop) it is measured beside, so that the measured work never runs alone.
constexpr double kCover = 1.5;

/// Calls of `each` seconds that outlast `span` kCover times (at most 10^6).
int calls_to_cover(double span, double each) {
  return static_cast<int>(std::min(1e6, std::ceil(kCover * span / std::max(each, 1e-9)) + 1));
}

/// The slow-down a figure records: ratio - 1, kept in the loader's 0 .. 10.
/// Below 0 (faster beside: the noise of this machine) is recorded as 0 and
/// above 10 as 10, each with a note naming the measured value.
double slow_down(const std::string& what, double ratio, Profile& p) {
  const double f = ratio - 1;
  std::ostringstream os;
  os.precision(3);
  if (f < 0) {
    os << "interference " << what << ": measured " << 100 * f
       << "% (faster beside than alone: this machine's noise), recorded as 0";
    p.notes.push_back(os.str());
    return 0;
  }
  if (f > kMaxInterference) {
    os << "interference " << what << ": measured " << 100 * f << "%, recorded as the loader's largest, "
       << kMaxInterference;
    p.notes.push_back(os.str());
    return kMaxInterference;
  }
  return f;
}

double batch_alone(Backend& backend, const InterferenceSetup& u) {
  return backend.start_gemm_batch(u.precision, u.shape.m, u.shape.n, u.shape.k, u.count)->wait();
}

std::vector<double> per_call(const std::vector<double>& enc, const std::vector<double>& dec) {
  std::vector<double> out(enc.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = enc[i] + dec[i];
  return out;
}

/// One round beside one codec: {GEMM beside / alone, codec beside / alone}.
std::pair<double, double> codec_round(const std::string& codec, const InterferenceSetup& u, const Settings& s,
                                      Backend& backend) {
  std::vector<double> enc, dec;
  // The codec alone, and how long its timed loop takes on the clock.
  Clock::time_point loop_start;
  backend.time_codec(codec, u.codec_elements, s.warmup, u.codec_repeats, enc, dec, [&] { loop_start = Clock::now(); });
  const double codec_alone = fit::median(per_call(enc, dec));
  // The loop's length: its clock time, which includes each call's launch and
  // wait, and at least the calls' own times.
  double loop = std::chrono::duration<double>(Clock::now() - loop_start).count();
  loop = std::max(loop, codec_alone * u.codec_repeats);
  const double gemm_alone = batch_alone(backend, u);
  // The GEMM batch beside a codec loop that outlasts it.
  const int loop_calls = calls_to_cover(gemm_alone, loop / u.codec_repeats);
  std::unique_ptr<GemmBatch> batch;
  const auto start_batch = [&](int count) {
    return [&, count] { batch = backend.start_gemm_batch(u.precision, u.shape.m, u.shape.n, u.shape.k, count); };
  };
  const auto started = [&] {
    if (!batch) throw std::logic_error("the backend's time_codec did not call its ready hook");
    return std::exchange(batch, nullptr);
  };
  backend.time_codec(codec, u.codec_elements, s.warmup, loop_calls, enc, dec, start_batch(u.count));
  const double gemm_beside = started()->wait();
  // The codec loop beside a GEMM batch that outlasts it.
  const int long_count = calls_to_cover(loop, gemm_alone / u.count);
  backend.time_codec(codec, u.codec_elements, s.warmup, u.codec_repeats, enc, dec, start_batch(long_count));
  started()->wait();
  return {gemm_beside / gemm_alone, fit::median(per_call(enc, dec)) / codec_alone};
}

/// One round beside NCCL's all-reduce over `gpus`: GEMM beside / alone.
double collective_round(int gpus, const InterferenceSetup& u, const Settings& s, Backend& backend) {
  const double one = fit::median(
      backend.time_collective(CollectiveOp::AllReduce, gpus, u.collective_bytes, s.warmup, std::max(3, s.repeats / 4)));
  const double gemm_alone = batch_alone(backend, u);
  const int calls = calls_to_cover(gemm_alone, one);
  auto batch = backend.start_gemm_batch(u.precision, u.shape.m, u.shape.n, u.shape.k, u.count);
  backend.time_collective(CollectiveOp::AllReduce, gpus, u.collective_bytes, 0, calls);
  return batch->wait() / gemm_alone;
}

/// The GEMM and the batch length: the shape and precision a backward runs
/// (bf16 where the profile has it on a GPU), enough GEMMs for `target`.
InterferenceSetup interference_setup(const Settings& s, Backend& backend, const Profile& p) {
  InterferenceSetup u;
  u.precision = s.gpu && p.gemm_flops.count("bf16") ? "bf16" : "fp32";
  u.shape = s.gpu ? GemmShape{4096, 4096, 4096, "square"} : GemmShape{128, 256, 384, "cpu"};
  u.target = s.gpu ? 0.05 : 0.02;
  u.codec_elements = s.gpu ? (1u << 23) : (1u << 16);
  u.collective_bytes = s.gpu ? 64.0 * 1048576 : 4.0 * 1048576;
  u.rounds = 3;
  u.codec_repeats = s.gpu ? 20 : 10;
  backend.start_gemm_batch(u.precision, u.shape.m, u.shape.n, u.shape.k, 1)->wait();  // warm-up
  const double one = backend.start_gemm_batch(u.precision, u.shape.m, u.shape.n, u.shape.k, 1)->wait();
  u.count = std::clamp(static_cast<int>(std::ceil(u.target / std::max(one, 1e-9))), 2, 100000);
  return u;
}

std::string interference_what(const InterferenceSetup& u, int gpus, bool gpu) {
  std::ostringstream os;
  os << "interference: " << u.precision << " GEMM " << u.shape.m << "x" << u.shape.n << "x" << u.shape.k
     << " in batches of " << u.count << " (about " << static_cast<int>(1000 * u.target + 0.5) << " ms) on "
     << (gpu ? "a stream" : "a thread") << " of their own, beside each codec's encode and decode at "
     << size_label(static_cast<double>(u.codec_elements)) << " elements";
  if (gpus >= 2)
    os << " and beside " << units::format_size(u.collective_bytes) << " all-reduces on " << gpus
       << (gpu ? " GPUs" : " ranks");
  os << "; each figure is the median over " << u.rounds << " rounds of (time beside / time alone) - 1";
  return os.str();
}

void measure_interference(const Settings& s, Backend& backend, Progress& progress, Profile& p) {
  const double end = progress.elapsed() + s.budget * interference_share(s);
  InterferenceSetup u;
  try {
    u = interference_setup(s, backend, p);
  } catch (const std::runtime_error& e) {
    p.notes.push_back(std::string("interference not measured: ") + e.what());
    return;
  }
  const std::vector<int> counts = backend.collective_gpu_counts();
  const int gpus = counts.empty() ? 0 : counts.back();
  progress.phase("interference: a GEMM stream beside NCCL and the codecs");
  p.notes.push_back(interference_what(u, gpus, s.gpu));
  InterferenceFigures f;
  if (gpus >= 2) {
    std::vector<double> ratios;
    for (int r = 0; r < u.rounds; ++r) {
      progress.step("GEMM beside all-reduce, round " + std::to_string(r + 1));
      ratios.push_back(collective_round(gpus, u, s, backend));
    }
    f.compute_under_nccl = slow_down("GEMM beside all-reduce", fit::median(ratios), p);
  } else {
    p.notes.push_back(std::string("interference: compute_under_nccl not measured (no collectives: ") +
                      (s.gpu ? "one GPU visible, or one rank" : "CPU mode without --mpi, or one rank") + ")");
  }
  std::vector<double> compute_fs, codec_fs;
  for (const std::string& codec : compressor_codec_names()) {
    if (!p.codecs.count(codec)) continue;                   // not measured above: nothing to run beside
    if (!compute_fs.empty() && progress.elapsed() > end) {  // at least one codec, as the codec phase
      p.notes.push_back("interference beside " + codec + " not measured (time budget)");
      continue;
    }
    std::vector<double> gemm_ratios, codec_ratios;
    for (int r = 0; r < u.rounds; ++r) {
      progress.step("GEMM beside " + codec + ", round " + std::to_string(r + 1));
      const auto [g, c] = codec_round(codec, u, s, backend);
      gemm_ratios.push_back(g);
      codec_ratios.push_back(c);
    }
    CodecInterference& ci = f.codecs[codec];
    ci.compute_under_codec = slow_down("GEMM beside " + codec, fit::median(gemm_ratios), p);
    ci.codec_under_compute = slow_down(codec + " beside GEMM", fit::median(codec_ratios), p);
    compute_fs.push_back(*ci.compute_under_codec);
    codec_fs.push_back(*ci.codec_under_compute);
    std::ostringstream os;
    os.precision(3);
    os << "interference beside " << codec << ": GEMM +" << 100 * *ci.compute_under_codec << "%, " << codec << " +"
       << 100 * *ci.codec_under_compute << "%";
    p.notes.push_back(os.str());
  }
  if (!compute_fs.empty()) {
    f.compute_under_codec = fit::median(compute_fs);
    f.codec_under_compute = fit::median(codec_fs);
  }
  p.interference = f;
}

// ---- 4. collectives -------------------------------------------------------------

std::string where(Backend& backend, int g, const Settings& s) {
  const int nodes = backend.collective_nodes(g);
  return std::to_string(g) + (s.gpu ? " GPUs" : " ranks") +
         (nodes > 1 ? " on " + std::to_string(nodes) + " nodes" : std::string());
}

/// One op at g GPUs over the sizes (bytes) until `col_end`; adds the fit
/// and its note to the profile, or a note saying why there is none.
void measure_collective(CollectiveOp op, int g, const std::vector<double>& col_sizes, double col_end, const Settings& s,
                        Backend& backend, Progress& progress, Profile& p) {
  const std::string name = to_string(op);
  CollectiveCost cc;
  cc.op = op;
  cc.gpus = g;
  cc.nodes = backend.collective_nodes(g);
  // MPI's own collectives on the CPU (--mpi --device cpu) cost micro- to
  // milliseconds at these sizes: more repeats, so that the median is not one
  // scheduler time slice when the ranks outnumber the cores.
  const int col_repeats = s.gpu ? std::max(3, s.repeats / 2) : std::max(15, 3 * s.repeats);
  for (double bytes : col_sizes) {
    if (progress.elapsed() > col_end) break;
    // Whole fp32 elements per rank.
    const double unit = kElementBytes * g;
    const double b = std::max(unit, std::floor(bytes / unit) * unit);
    progress.step(name + " " + where(backend, g, s) + " " + size_label(bytes) + " B");
    cc.points.push_back(point(b, backend.time_collective(op, g, b, s.warmup, col_repeats)));
  }
  if (cc.points.size() < 2) {
    p.notes.push_back(name + " on " + where(backend, g, s) + " not measured (time budget)");
    return;
  }
  if (cc.points.size() < col_sizes.size()) {
    p.notes.push_back(name + " on " + where(backend, g, s) + ": " + std::to_string(cc.points.size()) + " of " +
                      std::to_string(col_sizes.size()) + " sizes measured (time budget; --max-seconds gives more)");
  }
  cc.points = fit::normalize_points(cc.points);
  try {
    cc.fit = fit::fit_alpha_beta(cc.points);
  } catch (const std::invalid_argument& e) {
    p.notes.push_back(name + " on " + where(backend, g, s) + ": no alpha-beta fit (" + e.what() + ")");
    return;
  }
  // A fit the loader would refuse (times that barely grow give an absurd
  // bandwidth) is left out with a note; the rest of the profile stands.
  if (!(cc.fit.alpha <= kMaxCollectiveAlpha && cc.fit.beta >= kMinCollectiveBeta &&
        cc.fit.beta <= kMaxCollectiveBeta)) {
    std::ostringstream why;
    why << name << " on " << where(backend, g, s) << ": no alpha-beta fit (alpha " << cc.fit.alpha << " s, beta "
        << cc.fit.beta << " B/s: outside the plausible range, alpha <= " << kMaxCollectiveAlpha << " s, beta in ["
        << kMinCollectiveBeta << ", " << kMaxCollectiveBeta << "] B/s)";
    p.notes.push_back(why.str());
    return;
  }
  const auto& last = cc.points.back();
  std::ostringstream os;
  os.precision(4);
  os << name << " " << where(backend, g, s) << ": largest size algbw " << last.x / last.seconds / 1e9 << " GB/s, busbw "
     << last.x / last.seconds * bus_bandwidth_factor(op, g) / 1e9 << " GB/s";
  p.notes.push_back(os.str());
  p.collectives.push_back(std::move(cc));
}

// One process: every GPU count from 2 to all visible GPUs on this node; an
// MPI run (--mpi): all ranks' GPUs, possibly across nodes.
void measure_collectives(const Options& opt, const Settings& s, Backend& backend, Progress& progress, Profile& p) {
  const std::vector<int> gpu_counts = backend.collective_gpu_counts();
  if (gpu_counts.empty()) {
    if (opt.mpi) return;  // an MPI job of 1 rank: the run's own notes say so
    const int gpus_max = backend.collective_gpus();
    p.notes.push_back(s.gpu ? "multi-GPU collectives not measured: " + std::to_string(gpus_max) + " GPU visible"
                            : "collectives not measured: CPU mode has no NCCL (--mpi under mpirun times MPI's own)");
    return;
  }
  std::vector<CollectiveOp> ops = opt.collectives;
  if (ops.empty()) {
    for (const auto& c : collective_ops()) ops.push_back(c.op);
  }
  const std::vector<double>& col_sizes = s.col_sizes;
  progress.phase("collectives: " + std::to_string(ops.size()) + " ops on " +
                 (gpu_counts.size() == 1
                      ? where(backend, gpu_counts.front(), s)
                      : std::to_string(gpu_counts.front()) + ".." + where(backend, gpu_counts.back(), s)));
  const double col_end = s.budget * 0.97;
  for (int g : gpu_counts) {
    for (CollectiveOp op : ops) measure_collective(op, g, col_sizes, col_end, s, backend, progress, p);
  }
}

}  // namespace

std::unique_ptr<GemmBatch> Backend::start_gemm_batch(const std::string&, int, int, int, int) {
  throw std::runtime_error("this backend cannot run a GEMM beside other work");
}

std::vector<double> codec_sizes(const std::string& bytes_spec) {
  std::string why;
  const auto bytes = units::parse_size_range(bytes_spec, &why);
  if (!bytes) throw std::invalid_argument("--sizes: " + why);
  std::vector<double> elements;
  for (double b : *bytes) {
    const double n = b / kElementBytes;
    if (n != std::floor(n)) {
      throw std::invalid_argument("--sizes: " + units::format_size(b) + " (" +
                                  std::to_string(static_cast<long long>(b)) +
                                  " B) is not a whole number of 4-byte fp32 elements");
    }
    if (n > 1e12) throw std::invalid_argument("--sizes: more than 10^12 elements (" + units::format_size(b) + ")");
    elements.push_back(n);
  }
  return elements;
}

std::vector<double> collective_byte_sizes(const std::string& bytes_spec) {
  std::string why;
  const auto bytes = units::parse_size_range(bytes_spec, &why);
  if (!bytes) throw std::invalid_argument("--collective-sizes: " + why);
  if (bytes->front() < kElementBytes) {
    throw std::invalid_argument("--collective-sizes: " + units::format_size(bytes->front()) +
                                " is less than one 4-byte fp32 element");
  }
  return *bytes;
}

Profile run_calibration(const Options& opt, Backend& backend) {
  Progress progress;
  const Settings s = settings(opt);
  const DeviceInfo info = backend.info();
  Profile p = profile_header(opt, backend, s, info);
  measure_codecs(opt, s, info, backend, progress, p);
  measure_compute(opt, s, backend, progress, p);
  if (opt.interference) {
    measure_interference(s, backend, progress, p);
  } else {
    p.notes.push_back("interference not measured (--no-interference)");
  }
  measure_collectives(opt, s, backend, progress, p);
  for (auto& n : backend.run_notes()) p.notes.push_back(std::move(n));
  progress.phase("done in " + std::to_string(static_cast<int>(progress.elapsed() + 0.5)) + " s");
  return p;
}

}  // namespace gw::calibrate
