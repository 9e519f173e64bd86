// The compressor table (gradwire/model/compressors.hpp): one row per compressor.
// Each row's wire plan is the formula documented in docs/model.md.
#include "gradwire/model/compressors.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "gradwire/model/scenario.hpp"

namespace gw {
namespace {

// The calibrator measures the majority-vote decode with this many voters
// (gw::kernels::CodecConfig::workers' default); the decode is rescaled from it
// by the bytes it reads (N messages plus the dense output).
constexpr double kMajorityVoteCalibratedWorkers = 8;

std::string percent(double ratio) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", ratio * 100);
  return buf;
}

CommStep codec_step(CommStep::Kind kind, std::string label, double seconds) {
  CommStep s;
  s.kind = kind;
  s.label = std::move(label);
  s.seconds = seconds;
  return s;
}

CommStep collective_step(CommOp op, std::string label, const std::string& algorithm, double bytes,
                         double contributed) {
  CommStep s;
  s.kind = CommStep::Kind::Collective;
  s.label = std::move(label);
  s.op = op;
  s.algorithm = algorithm;
  s.bytes = bytes;
  s.contributed = contributed;
  return s;
}

void add(BucketComm& c, CommStep s) {
  if (s.kind == CommStep::Kind::Encode) c.encode += s.seconds;
  if (s.kind == CommStep::Kind::Decode) c.decode += s.seconds;
  if (s.kind == CommStep::Kind::Collective) c.contributed += s.contributed;
  c.steps.push_back(std::move(s));
}

// ---- the wire plans ---------------------------------------------------------

void plan_none(BucketPlanner& b) { b.all_reduce("all-reduce", b.dn * b.e); }

// fp16 / bf16: all-reduce of 2n bytes (PyTorch fp16/bf16_compress_hook).
void plan_half(BucketPlanner& b) {
  b.encode(b.codec_time(true, b.dn));
  b.all_reduce("all-reduce " + b.spec.kind, 2 * b.dn);
  b.decode(b.codec_time(false, b.dn));
}

void plan_int8(BucketPlanner& b) {
  b.encode(b.codec_time(true, b.dn));
  b.all_reduce("all-reduce int8", int8_wire_bytes(b.n, b.spec.chunk));
  b.decode(b.codec_time(false, b.dn));
}

void plan_sign(BucketPlanner& b) {
  b.encode(b.codec_time(true, b.dn));
  b.all_gather("all-gather signs", bitpacked_sign_wire_bytes(b.n, b.spec.chunk));
  // Every worker's signs are unpacked and added into the dense result.
  b.decode(b.workers * b.codec_time(false, b.dn));
}

void plan_majority_vote(BucketPlanner& b) {
  const double w = bitpacked_sign_wire_bytes(b.n, b.spec.chunk);
  b.encode(b.codec_time(true, b.dn));
  b.all_gather("all-gather signs", w);
  const double scale = (b.workers * w + 4 * b.dn) / (kMajorityVoteCalibratedWorkers * w + 4 * b.dn);
  b.decode(b.codec_time(false, b.dn) * scale, "majority decode");
}

void plan_topk(BucketPlanner& b) {
  const double k = static_cast<double>(sparse_k(b.n, b.spec.ratio));
  b.encode(b.codec_time(true, b.dn));
  b.all_gather("all-gather values+indices", k * (b.e + 4));
  // Decode: one dense zero-fill and N scatter-adds of k (value, index)
  // pairs, rescaled from the measured one-message decode by bytes touched.
  const double scale = (4 * b.dn + b.workers * 12 * k) / (4 * b.dn + 12 * k);
  b.decode(b.codec_time(false, b.dn) * scale, "decode (sum of N sparse)");
}

void plan_randomk(BucketPlanner& b) {
  const double k = static_cast<double>(sparse_k(b.n, b.spec.ratio));
  b.encode(b.codec_time(true, b.dn));
  b.all_reduce("all-reduce values", k * b.e);
  b.decode(b.codec_time(false, b.dn));
}

void plan_powersgd(BucketPlanner& b) {
  double p_elems = 0, q_elems = 0, matrix_elems = 0, plain_elems = 0;
  for (std::size_t j = b.bucket.first_tensor; j <= b.bucket.last_tensor; ++j) {
    const auto s = powersgd_shape(b.model.tensors[j], b.spec.rank, b.spec.min_compression_rate);
    if (!s.compressed) {
      plain_elems += static_cast<double>(b.model.tensors[j].numel);
      continue;
    }
    p_elems += static_cast<double>(s.m) * s.rank;
    q_elems += static_cast<double>(s.n) * s.rank;
    matrix_elems += static_cast<double>(s.m) * static_cast<double>(s.n);
  }
  b.out().state_bytes = (p_elems + q_elems) * b.e;
  if (plain_elems > 0) b.all_reduce("all-reduce uncompressed", plain_elems * b.e);
  if (matrix_elems > 0) {
    // P = M Q and Q = M^T P cost the same (2 m n r FLOPs each): the measured
    // encode is split evenly between the two phases.
    const double enc = b.codec_time(true, matrix_elems);
    b.encode(enc / 2, "encode P = MQ");
    b.all_reduce("all-reduce P", p_elems * b.e);
    b.encode(enc / 2, "orthogonalize, Q = M^T P");
    b.all_reduce("all-reduce Q", q_elems * b.e);
    b.decode(b.codec_time(false, matrix_elems), "decode M = P Q^T");
  }
}

std::string label_kind(const CompressionSpec& c) { return c.kind; }

// ---- the table -----------------------------------------------------------------

using P = CompressorParam;

std::deque<Compressor> builtin_rows() {
  const auto fixed = [](const char* text) { return [text](const CompressionSpec&) { return std::string(text); }; };
  return {
      {"none", CommOp::AllReduce, {}, false, {}, 0, fixed("uncompressed"), plan_none},
      {"fp16", CommOp::AllReduce, {"fp16"}, false, {}, 0, label_kind, plan_half},
      {"bf16", CommOp::AllReduce, {"bf16"}, false, {}, 0, label_kind, plan_half},
      {"int8", CommOp::AllReduce, {"int8"}, true, {P::Chunk}, 0, label_kind, plan_int8},
      {"sign", CommOp::AllGather, {"sign"}, true, {P::Chunk}, 0, fixed("signSGD"), plan_sign},
      {"majority_vote", CommOp::AllGather, {"majority_vote"}, true, {P::Chunk}, 0, fixed("majority vote"),
       plan_majority_vote},
      {"topk", CommOp::AllGather, {"topk"}, true, {P::Ratio}, 0,
       [](const CompressionSpec& c) { return "Top-K " + percent(c.ratio) + "%"; }, plan_topk},
      {"randomk", CommOp::AllReduce, {"randomk"}, true, {P::Ratio}, 0,
       [](const CompressionSpec& c) { return "Random-K " + percent(c.ratio) + "%"; }, plan_randomk},
      // GPU kernel vs CPU twin: 1e-3 of max |x| (GEMM summation order differs).
      {"powersgd", CommOp::AllReduce, {"powersgd"}, true, {P::Rank, P::MinCompressionRate}, 1e-3,
       [](const CompressionSpec& c) { return "PowerSGD rank " + std::to_string(c.rank); }, plan_powersgd},
  };
}

struct Table {
  std::deque<Compressor> rows = builtin_rows();
  std::vector<std::string> names;
  Table() { refresh(); }
  void refresh() {
    names.clear();
    for (const auto& r : rows) names.push_back(r.name);
  }
};

Table& table() {
  static Table t;
  return t;
}

}  // namespace

const std::vector<CompressorParamInfo>& compressor_params() {
  using I = CompressorParamInfo;
  static const std::vector<CompressorParamInfo> params{
      {P::Ratio, "ratio", I::Number, kMinCompressionRatio, 1, false},
      {P::Rank, "rank", I::Integer, 1, 4096, false},
      {P::Chunk, "chunk", I::Integer, 1, static_cast<double>(1ll << 30), false},
      {P::ErrorFeedback, "error_feedback", I::Boolean, 0, 1, true},
      {P::MinCompressionRate, "min_compression_rate", I::Number, 1.0, 1e6, false},
  };
  return params;
}

void set_compressor_param(CompressionSpec& spec, CompressorParam p, double value) {
  switch (p) {
    case P::Ratio: spec.ratio = value; return;
    case P::Rank: spec.rank = static_cast<int>(value); return;
    case P::Chunk: spec.chunk = static_cast<std::int64_t>(value); return;
    case P::ErrorFeedback: spec.error_feedback = value != 0; return;
    case P::MinCompressionRate: spec.min_compression_rate = value; return;
  }
}

BucketPlanner::BucketPlanner(const CompressionSpec& s, const ModelDesc& m, const Bucket& bk, double element_bytes,
                             const ClusterSpec& cluster, std::string allreduce_algorithm, CodecTimeFn codec_time,
                             std::string codec)
    : spec(s),
      model(m),
      bucket(bk),
      n(bk.elements),
      dn(static_cast<double>(bk.elements)),
      e(element_bytes),
      workers(cluster.world_size()),
      algorithm_(std::move(allreduce_algorithm)),
      codec_time_(std::move(codec_time)),
      codec_(std::move(codec)) {}

double BucketPlanner::codec_time(bool encode, double elements) const { return codec_time_(codec_, encode, elements); }

void BucketPlanner::all_reduce(const std::string& label, double bytes) {
  add(out_, collective_step(CommOp::AllReduce, label, algorithm_, bytes, bytes));
}

void BucketPlanner::all_gather(const std::string& label, double per_worker) {
  add(out_, collective_step(CommOp::AllGather, label, "ring", per_worker * workers, per_worker));
}

void BucketPlanner::encode(double seconds, const std::string& label) {
  add(out_, codec_step(CommStep::Kind::Encode, label, seconds));
}

void BucketPlanner::decode(double seconds, const std::string& label) {
  add(out_, codec_step(CommStep::Kind::Decode, label, seconds));
}

const std::deque<Compressor>& compressors() { return table().rows; }

const Compressor* find_compressor(std::string_view kind) {
  for (const auto& r : table().rows) {
    if (r.name == kind) return &r;
  }
  return nullptr;
}

const Compressor& compressor(std::string_view kind) {
  const Compressor* c = find_compressor(kind);
  if (c == nullptr) throw std::invalid_argument("unknown compression '" + std::string(kind) + "'");
  return *c;
}

void register_compressor(Compressor row) {
  if (row.name.empty() || find_compressor(row.name) != nullptr) {
    throw std::invalid_argument("register_compressor: the name '" + row.name + "' is empty or taken");
  }
  if (!row.plan || !row.label) throw std::invalid_argument("register_compressor: '" + row.name + "' needs a plan and a label");
  table().rows.push_back(std::move(row));
  table().refresh();
}

const std::vector<std::string>& compressor_names() { return table().names; }

std::vector<std::string> compressor_codec_names() {
  std::vector<std::string> out;
  for (const auto& r : table().rows) out.insert(out.end(), r.codecs.begin(), r.codecs.end());
  return out;
}

const Compressor* compressor_of_codec(std::string_view codec) {
  std::string_view base = codec;
  if (base.size() > 3 && base.substr(base.size() - 3) == "_ef") base.remove_suffix(3);
  for (const auto& r : table().rows) {
    if (std::find(r.codecs.begin(), r.codecs.end(), base) != r.codecs.end()) return &r;
  }
  return nullptr;
}

std::vector<std::string> compressors_with_param(CompressorParam p) {
  bool every_kind = false;
  for (const auto& info : compressor_params()) every_kind = every_kind || (info.id == p && info.every_kind);
  std::vector<std::string> out;
  for (const auto& r : table().rows) {
    if (every_kind || std::find(r.params.begin(), r.params.end(), p) != r.params.end()) out.push_back(r.name);
  }
  return out;
}

std::string compressor_label(const CompressionSpec& spec) { return compressor(spec.kind).label(spec); }

std::string join_names(const std::vector<std::string>& names, std::string_view sep) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : std::string(sep)) + n;
  return out;
}

}  // namespace gw
