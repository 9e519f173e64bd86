// Loading and writing calibration profiles (schema gradwire-profile/1, see
// docs/profiles.md).
#include "gradwire/model/profile.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>

#include "gradwire/model/compressors.hpp"
#include "gradwire/model/data_dir.hpp"
#include "gradwire/model/reference.hpp"
#include "gradwire/model/fit.hpp"
#include "gradwire/model/scenario.hpp"
#include "gradwire/model/transports.hpp"
#include "gradwire/core/suggest.hpp"
#include "gradwire/core/yaml_reader.hpp"

namespace gw {
namespace {

namespace fs = std::filesystem;

bool known_codec(const std::string& name) { return compressor_of_codec(name) != nullptr; }

const std::vector<std::string>& precisions() {
  static const std::vector<std::string> p = {"fp32", "tf32", "bf16", "fp16"};
  return p;
}

constexpr double kBig = 1e30;

// Plausible ranges (docs/profiles.md, docs/hardening.md): anything outside is
// a typo, a unit slip or a broken measurement, refused at its field.
constexpr double kMinFlops = 1e8;                // FLOP/s: 0.1 GFLOP/s (a slow CPU twin)
constexpr double kMaxFlops = 1e17;               // FLOP/s: 100 PFLOP/s
constexpr double kMinCopyBandwidth = 1e8;        // B/s
constexpr double kMaxCopyBandwidth = 1e14;       // B/s
constexpr double kMinMemory = 1073741824.0;      // B: 1 GiB
constexpr double kMaxMemory = 17592186044416.0;  // B: 16 TiB
constexpr double kMinPointSize = 1;              // elements, FLOPs or bytes
constexpr double kMaxPointSize = 1e18;
constexpr double kMinSeconds = 1e-9;  // a measured or fitted time: 1 ns ..
constexpr double kMaxSeconds = 3600;  // .. 1 h
constexpr int kMaxProfileGpus = 65536;

std::string num(double v);

double positive(const yaml::Node& n, double max) {
  const double v = n.as_double(-max, max);
  if (!(v > 0)) n.fail("must be positive, got " + n.raw().Scalar());
  return v;
}

// Positive, and within [min, max] (the plausible range).
double plausible(const yaml::Node& n, double min, double max) {
  const double v = positive(n, std::numeric_limits<double>::max());
  if (v < min || v > max) {
    std::ostringstream os;
    os << n.raw().Scalar() << " is out of the plausible range [" << min << ", " << max << "]";
    n.fail(os.str());
  }
  return v;
}

// [x, seconds, spread, repeats] rows; x strictly increasing.
std::vector<CurvePoint> read_points(const yaml::Node& n) {
  n.expect_seq();
  std::vector<CurvePoint> out;
  for (const auto& row : n.elements()) {
    row.expect_seq();
    if (row.size() != 4)
      row.fail("expected [size, seconds, spread, repeats] (4 numbers), got " + std::to_string(row.size()));
    auto e = row.elements();
    CurvePoint p;
    p.x = plausible(e[0], kMinPointSize, kMaxPointSize);
    p.seconds = plausible(e[1], kMinSeconds, kMaxSeconds);
    p.spread = e[2].as_double(0, 1e9);
    p.repeats = static_cast<int>(e[3].as_int(0, 1'000'000'000));
    if (!out.empty() && p.x <= out.back().x) {
      e[0].fail("sizes must increase strictly down the list (previous size " + num(out.back().x) + ")");
    }
    out.push_back(p);
  }
  return out;
}

// A codec's time must not fall as the size grows: fitted knots never (the
// prediction would make compressing more data cheaper), measured points not
// below kMaxMeasuredTimeDrop of an earlier time (noise, not physics).
void check_codec_times(const yaml::Node& list, const std::vector<CurvePoint>& pts, bool fitted) {
  const auto drop = first_time_drop(pts, fitted ? 1.0 : kMaxMeasuredTimeDrop);
  if (!drop) return;
  const CurvePoint& at = pts[drop->at];
  const CurvePoint& peak = pts[drop->peak];
  list.elements()[drop->at].elements()[1].fail(
      (fitted ? std::string("fitted codec times must not decrease with size: ")
              : std::string("measured codec time falls steeply with size: ")) +
      num(at.seconds) + " s at size " + num(at.x) + " after " + num(peak.seconds) + " s at size " + num(peak.x) +
      (fitted ? " (refit from the points: the fit is non-decreasing)" : " (not a plausible measurement)"));
}

void read_curve(const yaml::Node& n, std::vector<CurvePoint>& points, PiecewiseLogFit& fit) {
  n.allow_keys({"points", "knots", "max_rel_residual"});
  if (auto p = n.optional("points")) {
    points = read_points(*p);
    check_codec_times(*p, points, false);
  }
  if (auto k = n.optional("knots")) {
    fit.knots = read_points(*k);
    if (fit.knots.empty()) k->fail("knots must not be empty");
    check_codec_times(*k, fit.knots, true);
    if (auto r = n.optional("max_rel_residual")) fit.max_rel_residual = r->as_double(0, 1e9);
  } else {
    if (points.empty()) n.fail("needs measured points or fitted knots (neither is given)");
    if (n.has("max_rel_residual")) n.required("max_rel_residual").fail("max_rel_residual without knots");
    fit = fit::fit_piecewise_log(points);
  }
}

CodecCost read_codec(const yaml::Node& n) {
  n.allow_keys({"encode", "decode"});
  CodecCost c;
  read_curve(n.required("encode"), c.encode_points, c.encode);
  read_curve(n.required("decode"), c.decode_points, c.decode);
  return c;
}

CollectiveCost read_collective(const yaml::Node& n) {
  n.allow_keys({"op", "gpus", "nodes", "points", "alpha", "beta", "max_rel_residual"});
  CollectiveCost c;
  c.op = parse_collective_op(n.required("op").as_enum(collective_op_names()));
  c.gpus = static_cast<int>(n.required("gpus").as_int(2, kMaxProfileGpus));
  if (auto nodes = n.optional("nodes")) c.nodes = static_cast<int>(nodes->as_int(1, c.gpus));
  if (auto p = n.optional("points")) c.points = read_points(*p);
  const bool has_a = n.has("alpha"), has_b = n.has("beta");
  if (has_a != has_b) n.required(has_a ? "beta" : "alpha");  // throws "missing required field"
  if (has_a) {
    c.fit.alpha = n.required("alpha").as_double(0, kMaxCollectiveAlpha);
    c.fit.beta = plausible(n.required("beta"), kMinCollectiveBeta, kMaxCollectiveBeta);
    if (auto r = n.optional("max_rel_residual")) c.fit.max_rel_residual = r->as_double(0, 1e9);
  } else {
    if (c.points.size() < 2) n.fail("needs alpha and beta, or at least 2 measured points to fit them");
    try {
      c.fit = fit::fit_alpha_beta(c.points);
    } catch (const std::invalid_argument& e) {
      n.required("points").fail(e.what());
    }
  }
  return c;
}

std::vector<std::string> read_string_list(const yaml::Node& n) {
  n.expect_seq();
  std::vector<std::string> out;
  for (const auto& e : n.elements()) out.push_back(e.as_string());
  return out;
}

/// A string field: null reads as "" (an unknown version).
std::string text_of(const yaml::Node& n) {
  if (n.is_null()) return {};
  if (!n.is_scalar()) n.fail("expected a string");
  return n.raw().Scalar();
}

void read_schema(const yaml::Node& s) {
  std::string v = s.is_scalar() ? s.raw().Scalar() : std::string();
  if (v != "1" && v != "gradwire-profile/1") {
    s.fail("unsupported profile schema \"" + v + "\"; this gradwire reads schema 1 (gradwire-profile/1)");
  }
}

std::map<std::string, std::string> read_nccl_env(const yaml::Node& n) {
  n.expect_map();
  std::map<std::string, std::string> env;
  std::set<std::string> seen;
  for (const auto& k : n.keys()) {
    yaml::Node v = n.required(k);
    if (!seen.insert(k).second) v.fail("duplicate key");
    if (k.rfind("NCCL_", 0) != 0) v.fail("only NCCL_* variables belong here");
    if (!v.is_scalar()) v.fail("expected a string");
    env[k] = v.raw().Scalar();
  }
  return env;
}

void read_compute(const yaml::Node& compute, Profile& p) {
  compute.allow_keys({"fp32_flops", "tf32_flops", "bf16_flops", "fp16_flops", "copy_bandwidth", "gemm_points"});
  // fp32 is the one rate every profile has. tf32 and bf16 tensor cores start
  // with Ampere, so a profile of an older GPU (V100) leaves them out; a
  // CPU-mode calibration measures fp32 only. A scenario computing in a
  // precision the profile lacks is refused where its rate is looked up.
  compute.required("fp32_flops");
  for (const auto& prec : precisions())
    if (auto f = compute.optional(prec + "_flops")) p.gemm_flops[prec] = plausible(*f, kMinFlops, kMaxFlops);
  p.copy_bandwidth = plausible(compute.required("copy_bandwidth"), kMinCopyBandwidth, kMaxCopyBandwidth);
  if (auto g = compute.optional("gemm_points")) {
    g->allow_keys(precisions());
    for (const auto& prec : g->keys()) p.gemm_points[prec] = read_points(g->required(prec));
  }
}

// Codec keys: the compressor table's codecs, each also with the suffix _ef.
void read_codecs(const yaml::Node& codecs, Profile& p) {
  codecs.expect_map();
  std::set<std::string> seen;
  for (const auto& name : codecs.keys()) {
    yaml::Node c = codecs.required(name);
    if (!seen.insert(name).second) c.fail("duplicate codec");
    if (!known_codec(name)) {
      std::vector<std::string> known = compressor_codec_names();
      for (std::size_t i = 0, n = known.size(); i < n; ++i) known.push_back(known[i] + "_ef");
      c.fail("unknown codec \"" + name + "\" (known: " + join_names(compressor_codec_names()) +
             ", each also with suffix _ef)" + did_you_mean(name, known));
    }
    p.codecs[name] = read_codec(c);
  }
}

void read_collectives(const yaml::Node& cols, Profile& p) {
  cols.expect_seq();
  for (const auto& c : cols.elements()) {
    CollectiveCost cc = read_collective(c);
    if (p.collective(cc.op, cc.gpus, cc.nodes) != nullptr) {
      c.fail("a second " + to_string(cc.op) + " entry for " + std::to_string(cc.gpus) + " GPUs" +
             (cc.nodes > 1 ? " on " + std::to_string(cc.nodes) + " nodes" : std::string()));
    }
    p.collectives.push_back(std::move(cc));
  }
}

// `transports:` a map from a transport name to its measured figures.
std::map<std::string, TransportFigures> read_transports(const yaml::Node& n) {
  n.expect_map();
  std::vector<std::string> names;
  for (const auto& row : transports()) names.emplace_back(row.name);
  std::map<std::string, TransportFigures> out;
  for (const auto& k : n.keys()) {
    yaml::Node v = n.required(k);
    if (std::find(names.begin(), names.end(), k) == names.end()) {
      v.fail("not a transport (known: " + join_names(names) + ")");
    }
    v.allow_keys({"fraction", "latency", "per_connection"});
    TransportFigures f;
    if (auto x = v.optional("fraction")) f.fraction = x->as_double(0.01, 1.0);
    if (auto x = v.optional("latency")) f.latency = x->as_time(0, kMaxLinkLatency);
    if (auto x = v.optional("per_connection")) f.per_connection = x->as_bandwidth(kMinLinkBandwidth, kMaxLinkBandwidth);
    out[k] = f;
  }
  return out;
}

// `interference.codecs:` a map from a codec key (the compressor table's,
// without _ef: the kernels are the same) to its own figures.
std::map<std::string, CodecInterference> read_codec_interference(const yaml::Node& n) {
  n.expect_map();
  std::map<std::string, CodecInterference> out;
  const std::vector<std::string> names = compressor_codec_names();
  for (const auto& k : n.keys()) {
    yaml::Node v = n.required(k);
    if (std::find(names.begin(), names.end(), k) == names.end()) {
      v.fail("not a codec (known: " + join_names(names) + ")");
    }
    v.allow_keys({"compute_under_codec", "codec_under_compute"});
    CodecInterference f;
    if (auto x = v.optional("compute_under_codec")) f.compute_under_codec = x->as_double(0, kMaxInterference);
    if (auto x = v.optional("codec_under_compute")) f.codec_under_compute = x->as_double(0, kMaxInterference);
    out[k] = f;
  }
  return out;
}

// `interference:` measured slow-downs (fractions), each optional.
InterferenceFigures read_interference(const yaml::Node& n) {
  n.allow_keys({"compute_under_nccl", "compute_under_codec", "codec_under_compute", "codecs"});
  InterferenceFigures f;
  if (auto x = n.optional("compute_under_nccl")) f.compute_under_nccl = x->as_double(0, kMaxInterference);
  if (auto x = n.optional("compute_under_codec")) f.compute_under_codec = x->as_double(0, kMaxInterference);
  if (auto x = n.optional("codec_under_compute")) f.codec_under_compute = x->as_double(0, kMaxInterference);
  if (auto x = n.optional("codecs")) f.codecs = read_codec_interference(*x);
  return f;
}

/// One top-level key of a profile, in the order written (docs/profiles.md,
/// "Fields"): whether the loader needs it, how it is read (from its node,
/// when present) and written (its lines; profile_to_yaml). The loader's known
/// keys are the rows' (profile_rows, below the writers).
struct ProfileRow {
  const char* key;
  bool required;
  void (*read)(const yaml::Node& n, Profile& p);
  void (*write)(std::ostream& os, const ProfileRow& row, const Profile& p);
};
const std::vector<ProfileRow>& profile_rows();

Profile read_profile(const yaml::Document& doc) {
  const yaml::Node root = doc.root();
  std::vector<std::string> keys;
  for (const auto& row : profile_rows()) keys.emplace_back(row.key);
  root.allow_keys(keys);
  Profile p;
  p.path = doc.file();
  for (const auto& row : profile_rows()) {
    if (row.required) {
      row.read(root.required(row.key), p);
    } else if (auto n = root.optional(row.key)) {
      row.read(*n, p);
    }
  }
  if (p.source == "datasheet" && p.references.empty()) {
    throw InputError(doc.file(), root.line(), root.column(), "references",
                     "a datasheet profile must name its references (missing or empty)");
  }
  return p;
}

// ---- writing ----------------------------------------------------------------

std::string num(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          static const char* hex = "0123456789abcdef";
          out += "\\x";
          out += hex[c >> 4];
          out += hex[c & 15];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

void write_points(std::ostream& os, const std::string& indent, const std::string& key,
                  const std::vector<CurvePoint>& pts) {
  if (pts.empty()) return;
  os << indent << key << ":\n";
  for (const auto& p : pts) {
    os << indent << "  - [" << num(p.x) << ", " << num(p.seconds) << ", " << num(p.spread) << ", " << p.repeats
       << "]\n";
  }
}

void write_curve(std::ostream& os, const std::string& key, const std::vector<CurvePoint>& pts,
                 const PiecewiseLogFit& fit) {
  os << "    " << key << ":\n";
  write_points(os, "      ", "points", pts);
  write_points(os, "      ", "knots", fit.knots);
  if (!fit.knots.empty()) os << "      max_rel_residual: " << num(fit.max_rel_residual) << "\n";
}

std::vector<std::string> split_dirs(const char* env) {
  std::vector<std::string> out;
  if (env == nullptr) return out;
  std::string s(env);
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t end = s.find(':', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

double PiecewiseLogFit::evaluate(double x) const {
  if (knots.empty()) throw std::logic_error("PiecewiseLogFit::evaluate: the fit has no knots");
  if (x <= knots.front().x) return knots.front().seconds;
  const CurvePoint& last = knots.back();
  if (x >= last.x) {
    double slope = last.seconds / last.x;
    if (knots.size() >= 2) {
      const CurvePoint& prev = knots[knots.size() - 2];
      const double s = (last.seconds - prev.seconds) / (last.x - prev.x);
      if (s > 0) slope = s;
    }
    return last.seconds + (x - last.x) * slope;
  }
  auto hi = std::upper_bound(knots.begin(), knots.end(), x, [](double v, const CurvePoint& k) { return v < k.x; });
  const CurvePoint& b = *hi;
  const CurvePoint& a = *(hi - 1);
  const double f = std::log2(x / a.x) / std::log2(b.x / a.x);
  return a.seconds * std::pow(b.seconds / a.seconds, f);
}

double Profile::codec_time(const std::string& codec, bool encode, double elements) const {
  auto it = codecs.find(codec);
  if (it == codecs.end()) {
    std::string list;
    for (const auto& [k, v] : codecs) list += (list.empty() ? "" : ", ") + k;
    throw std::out_of_range("profile \"" + name + "\" has no cost for codec \"" + codec + "\" (it has: " + list + ")");
  }
  if (elements <= 0) return 0.0;
  return (encode ? it->second.encode : it->second.decode).evaluate(elements);
}

double Profile::flops(const std::string& precision) const {
  auto it = gemm_flops.find(precision);
  if (it == gemm_flops.end()) {
    throw std::out_of_range("profile \"" + name + "\" has no GEMM throughput for precision \"" + precision +
                            "\" (fp32, tf32, bf16, fp16)");
  }
  return it->second;
}

const CollectiveCost* Profile::collective(CollectiveOp op, int gpus) const { return collective(op, gpus, 1); }

const CollectiveCost* Profile::collective(CollectiveOp op, int gpus, int nodes) const {
  for (const auto& c : collectives) {
    if (c.op == op && c.gpus == gpus && c.nodes == nodes) return &c;
  }
  return nullptr;
}

Profile load_profile_file(const std::string& path) { return read_profile(yaml::load_file(path)); }

Profile parse_profile_text(const std::string& text, const std::string& name) {
  return read_profile(yaml::load_string(text, name));
}

// Looks like a calibration profile: its first lines name a profile schema
// (not a model or catalog one). Keeps "available:" lists to real profiles.
bool looks_like_profile(const fs::path& f) {
  const auto schema = declared_schema(f.string());
  return schema && schema->find("gradwire-model") == std::string::npos &&
         schema->find("gradwire-catalog") == std::string::npos;
}

std::vector<std::string> profile_search_dirs() {
  std::vector<std::string> dirs = split_dirs(std::getenv("GRADWIRE_PROFILES"));
  dirs.push_back(data_dir() + "/calibrate/profiles");
  return dirs;
}

std::vector<std::string> list_profiles() {
  std::set<std::string> available;
  for (const auto& d : profile_search_dirs()) {
    std::error_code ec;
    for (auto it = fs::directory_iterator(d, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
      if (it->path().extension() == ".yaml" && looks_like_profile(it->path())) {
        available.insert(it->path().stem().string());
      }
    }
  }
  return {available.begin(), available.end()};
}

std::optional<TimeDrop> first_time_drop(const std::vector<CurvePoint>& points, double keep) {
  std::size_t peak = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (i > 0 && points[i].seconds < keep * points[peak].seconds) return TimeDrop{peak, i};
    if (points[i].seconds > points[peak].seconds) peak = i;
  }
  return std::nullopt;
}

Profile load_profile(const std::string& name_or_path) {
  if (name_or_path.empty() || name_or_path.find_first_of(" \t\r\n") != std::string::npos ||
      std::any_of(name_or_path.begin(), name_or_path.end(), [](unsigned char c) { return c < 0x20 || c == 0x7F; })) {
    throw InputError(name_or_path, 0, 0, "",
                     "\"" + name_or_path + "\" is not a profile name or path (empty, blank or control characters)");
  }
  if (looks_like_path(name_or_path)) return load_profile_file(name_or_path);
  const std::vector<std::string> dirs = profile_search_dirs();
  for (const auto& d : dirs) {
    fs::path f = fs::path(d) / (name_or_path + ".yaml");
    std::error_code ec;
    if (fs::is_regular_file(f, ec)) {
      Profile p = load_profile_file(f.string());
      if (p.name != name_or_path) {
        std::cerr << "gradwire: warning: " << f.string() << " is named \"" << p.name << "\" inside, not \""
                  << name_or_path << "\"; using it (predictions will say \"" << p.name << "\")\n";
      }
      return p;
    }
  }
  std::string dl, al;
  for (const auto& d : dirs) dl += (dl.empty() ? "" : ", ") + d;
  const std::vector<std::string> available = list_profiles();
  for (const auto& a : available) al += (al.empty() ? "" : ", ") + a;
  throw InputError(name_or_path, 0, 0, "",
                   "no profile named \"" + name_or_path + "\" in " + dl + did_you_mean(name_or_path, available) +
                       " (available: " + (al.empty() ? "none" : al) + ")");
}

namespace {

// `interference:` with the figures that are set; nothing when none is.
void write_interference(std::ostream& os, const InterferenceFigures& f) {
  const std::pair<const char*, const std::optional<double>*> figures[] = {
      {"compute_under_nccl", &f.compute_under_nccl},
      {"compute_under_codec", &f.compute_under_codec},
      {"codec_under_compute", &f.codec_under_compute}};
  bool any = false;
  const auto open = [&] {
    if (!any) os << "interference:\n";
    any = true;
  };
  for (const auto& [key, value] : figures) {
    if (!value->has_value()) continue;
    open();
    os << "  " << key << ": " << num(**value) << "\n";
  }
  if (f.codecs.empty()) return;
  open();
  os << "  codecs:\n";
  for (const auto& [codec, c] : f.codecs) {
    os << "    " << codec << ": {";
    const char* sep = "";
    if (c.compute_under_codec) {
      os << "compute_under_codec: " << num(*c.compute_under_codec);
      sep = ", ";
    }
    if (c.codec_under_compute) os << sep << "codec_under_compute: " << num(*c.codec_under_compute);
    os << "}\n";
  }
}

// The values of the rows' readers and writers.

template <std::string Profile::*M>
void read_text(const yaml::Node& n, Profile& p) {
  p.*M = text_of(n);
}

template <std::string Profile::*M>
void read_name(const yaml::Node& n, Profile& p) {
  p.*M = n.as_name();
}

template <std::vector<std::string> Profile::*M>
void read_list(const yaml::Node& n, Profile& p) {
  p.*M = read_string_list(n);
}

template <std::string Profile::*M>
void write_text(std::ostream& os, const ProfileRow& row, const Profile& p) {
  os << row.key << ": " << quote(p.*M) << "\n";
}

template <std::vector<std::string> Profile::*M>
void write_list(std::ostream& os, const ProfileRow& row, const Profile& p) {
  os << row.key << ":" << ((p.*M).empty() ? " []" : "") << "\n";
  for (const auto& r : p.*M) os << "  - " << quote(r) << "\n";
}

void write_transports(std::ostream& os, const ProfileRow&, const Profile& p) {
  if (p.transports.empty()) return;
  os << "transports:\n";
  for (const auto& [name, f] : p.transports) {
    os << "  " << name << ":" << (f.fraction || f.latency || f.per_connection ? "" : " {}") << "\n";
    if (f.fraction) os << "    fraction: " << num(*f.fraction) << "\n";
    if (f.latency) os << "    latency: " << num(*f.latency) << "s\n";
    if (f.per_connection) os << "    per_connection: " << num(*f.per_connection) << "B/s\n";
  }
}

void write_compute(std::ostream& os, const ProfileRow&, const Profile& p) {
  os << "compute:\n";
  for (const auto& [prec, f] : p.gemm_flops) os << "  " << prec << "_flops: " << num(f) << "\n";
  os << "  copy_bandwidth: " << num(p.copy_bandwidth) << "\n";
  if (p.gemm_points.empty()) return;
  os << "  gemm_points:\n";
  for (const auto& [prec, pts] : p.gemm_points) {
    if (pts.empty()) {
      os << "    " << prec << ": []\n";
    } else {
      write_points(os, "    ", prec, pts);
    }
  }
}

void write_codecs(std::ostream& os, const ProfileRow&, const Profile& p) {
  os << "codecs:" << (p.codecs.empty() ? " {}" : "") << "\n";
  for (const auto& [name, c] : p.codecs) {
    os << "  " << name << ":\n";
    write_curve(os, "encode", c.encode_points, c.encode);
    write_curve(os, "decode", c.decode_points, c.decode);
  }
}

void write_collectives(std::ostream& os, const ProfileRow&, const Profile& p) {
  os << "collectives:" << (p.collectives.empty() ? " []" : "") << "\n";
  for (const auto& c : p.collectives) {
    os << "  - op: " << to_string(c.op) << "\n";
    os << "    gpus: " << c.gpus << "\n";
    if (c.nodes > 1) os << "    nodes: " << c.nodes << "\n";
    write_points(os, "    ", "points", c.points);
    os << "    alpha: " << num(c.fit.alpha) << "\n";
    os << "    beta: " << num(c.fit.beta) << "\n";
    os << "    max_rel_residual: " << num(c.fit.max_rel_residual) << "\n";
  }
}

const std::vector<ProfileRow>& profile_rows() {
  using P = Profile;
  static const std::vector<ProfileRow> rows{
      {"schema", true, [](const yaml::Node& n, P& p) { read_schema(n), p.schema_version = 1; },
       [](std::ostream& os, const ProfileRow&, const P&) { os << "schema: 1\n"; }},
      {"source", true,
       [](const yaml::Node& n, P& p) {
         p.source = n.as_enum({"measured", "datasheet"});
       },
       write_text<&P::source>},
      {"name", true, read_name<&P::name>, write_text<&P::name>},
      {"device", true, read_name<&P::device>, write_text<&P::device>},
      {"sm_count", false, [](const yaml::Node& n, P& p) { p.sm_count = static_cast<int>(n.as_int(0, 1'000'000)); },
       [](std::ostream& os, const ProfileRow&, const P& p) { os << "sm_count: " << p.sm_count << "\n"; }},
      {"memory", false, [](const yaml::Node& n, P& p) { p.memory_bytes = plausible(n, kMinMemory, kMaxMemory); },
       [](std::ostream& os, const ProfileRow&, const P& p) {
         if (p.memory_bytes > 0) os << "memory: " << num(p.memory_bytes) << "\n";  // 0: unknown, left out
       }},
      {"driver", false, read_text<&P::driver>, write_text<&P::driver>},
      {"cuda", false, read_text<&P::cuda>, write_text<&P::cuda>},
      {"nccl", false, read_text<&P::nccl>, write_text<&P::nccl>},
      {"date", false, read_text<&P::date>, write_text<&P::date>},
      {"host", false, read_text<&P::host>, write_text<&P::host>},
      {"command", false, read_text<&P::command>, write_text<&P::command>},
      {"references", false, read_list<&P::references>, write_list<&P::references>},
      {"notes", false, read_list<&P::notes>, write_list<&P::notes>},
      {"nccl_env", false, [](const yaml::Node& n, P& p) { p.nccl_env = read_nccl_env(n); },
       [](std::ostream& os, const ProfileRow&, const P& p) {
         if (!p.nccl_env.empty()) os << "nccl_env:\n";
         for (const auto& [k, v] : p.nccl_env) os << "  " << k << ": " << quote(v) << "\n";
       }},
      {"transports", false, [](const yaml::Node& n, P& p) { p.transports = read_transports(n); }, write_transports},
      {"interference", false, [](const yaml::Node& n, P& p) { p.interference = read_interference(n); },
       [](std::ostream& os, const ProfileRow&, const P& p) { write_interference(os, p.interference); }},
      {"compute", true, read_compute, write_compute},
      {"codecs", true, read_codecs, write_codecs},
      {"collectives", false, read_collectives, write_collectives},
  };
  return rows;
}

}  // namespace

std::vector<ProfileKey> profile_keys() {
  std::vector<ProfileKey> out;
  for (const auto& row : profile_rows()) out.push_back({row.key, row.required});
  return out;
}

std::string profile_to_yaml(const Profile& p) {
  std::ostringstream os;
  os << "# gradwire calibration profile (schema gradwire-profile/1, docs/profiles.md).\n";
  os << "# Units: seconds, bytes, bytes/s, FLOP/s; points are [size, seconds, spread, repeats].\n";
  for (const auto& row : profile_rows()) row.write(os, row, p);
  return os.str();
}

}  // namespace gw
