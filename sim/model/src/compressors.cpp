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

CommStep collective_step(CommOp op, std::string label, const std::string& algorithm, double bytes, double contributed) {
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

// ---- the pytorch implementation: DDP's hooks and the open implementations ------
// Each kernel the code launches is counted (BucketPlanner::kernels: a launch
// plus its bytes read and written at the copy bandwidth; gemm for matrix
// products). docs/model.md, "Compression as PyTorch runs it", gives each
// plan with its source.

// Where DDP runs a comm hook's kernels (docs/model.md, "Where the hooks'
// kernels run"): Reducer::all_reduce_bucket calls the hook on the autograd
// thread, whose current stream is the backward's (torch/csrc/distributed/
// c10d/reducer.cpp), so the steps before the first collective run there; the
// collectives on ProcessGroupNCCL's stream; a CUDA future's `then` callback
// on a stream taken from the pool (ivalue::Future::invokeCallback,
// aten/src/ATen/core/ivalue_inl.h), so the steps after the last collective
// run beside the next buckets' collectives. Steps between two collectives
// stay on the comm stream: the next collective waits for them.
void place_on_hook_streams(BucketComm& c) {
  std::size_t first = c.steps.size(), last = 0;
  for (std::size_t i = 0; i < c.steps.size(); ++i) {
    if (c.steps[i].kind != CommStep::Kind::Collective) continue;
    first = std::min(first, i);
    last = i;
  }
  if (first == c.steps.size()) return;  // no collective: nothing to place
  c.on_compute_stream = first;
  c.on_side_stream = c.steps.size() - last - 1;
}

// fp16_compress_hook / bf16_compress_hook (torch/distributed/algorithms/
// ddp_comm_hooks/default_hooks.py, _compress_hook, pytorch/pytorch@38dfbe6):
// cast to half (read e, write 2 bytes per element) and divide by N in half
// (read 2, write 2) before the all-reduce of the half buffer; the `then`
// callback copies it back into the bucket (read 2, write e).
void plan_half_hook(BucketPlanner& b) {
  b.encode(b.kernels(2, (b.e + 2 + 4) * b.dn), "cast to " + b.spec.kind + ", divide");
  b.all_reduce("all-reduce " + b.spec.kind, 2 * b.dn);
  b.decode(b.kernels(1, (2 + b.e) * b.dn), "copy back");
  place_on_hook_streams(b.out());
}

// The hook's _orthogonalize (Gram-Schmidt) of an m x r matrix, column by
// column: a norm, an epsilon add and a division of the column (3 kernels,
// 3 m elements moved), then, while k = r - 1 - i columns follow, a product
// with them, a column sum, a product and a subtraction (4 kernels,
// m (2 + 7k) elements moved).
double gram_schmidt(const BucketPlanner& b, double m, int r) {
  double launches = 0, elements = 0;
  for (int i = 0; i < r; ++i) {
    const double k = r - 1 - i;
    launches += 3;
    elements += 3 * m;
    if (k > 0) {
      launches += 4;
      elements += m * (2 + 7 * k);
    }
  }
  return b.kernels(launches, elements * b.e);
}

struct HookMatrix {
  double m = 0, n = 0;
  int r = 0;
};

// The bucket's tensors as powerSGD_hook splits them: the matrices it
// compresses and the elements and tensor count it all-reduces uncompressed.
struct HookSplit {
  std::vector<HookMatrix> matrices;
  double p_elems = 0, q_elems = 0, plain_elems = 0, plain_tensors = 0;
};

HookSplit powersgd_split(const BucketPlanner& b) {
  HookSplit h;
  for (std::size_t j = b.bucket.first_tensor; j <= b.bucket.last_tensor; ++j) {
    const auto s = powersgd_shape(b.model.tensors[j], b.spec.rank, b.spec.min_compression_rate);
    if (!s.compressed) {
      h.plain_elems += static_cast<double>(b.model.tensors[j].numel);
      h.plain_tensors += 1;
      continue;
    }
    h.matrices.push_back({static_cast<double>(s.m), static_cast<double>(s.n), s.rank});
    h.p_elems += static_cast<double>(s.m) * s.rank;
    h.q_elems += static_cast<double>(s.n) * s.rank;
  }
  return h;
}

// powerSGD_hook (ddp_comm_hooks/powerSGD_hook.py) after start_powerSGD_iter,
// warm start on, per bucket: add the residual and clone the bucket (error
// feedback), gather the uncompressed tensors (torch.cat), orthogonalize each
// warm-started Q and compute P = M Q; all-reduce the uncompressed buffer,
// divide it and copy each tensor back; all-reduce P; orthogonalize each P,
// Q = M^T P; all-reduce Q; divide Q, M = P Q^T, residual = clone - result.
void plan_powersgd_hook(BucketPlanner& b) {
  const HookSplit h = powersgd_split(b);
  b.out().state_bytes = (h.p_elems + h.q_elems) * b.e;
  const bool ef = b.spec.error_feedback;
  double first = ef ? b.kernels(2, 5 * b.e * b.dn) : 0.0;
  if (h.plain_elems > 0) first += b.kernels(1, 2 * b.e * h.plain_elems);
  double second = 0, third = ef ? b.kernels(1, 3 * b.e * b.dn) : 0.0;
  for (const auto& x : h.matrices) {
    first += gram_schmidt(b, x.n, x.r) + b.gemm(x.m, x.n, x.r);
    second += gram_schmidt(b, x.m, x.r) + b.gemm(x.n, x.m, x.r);
    third += b.gemm(x.m, x.r, x.n);
  }
  if (!h.matrices.empty()) third += b.kernels(1, 2 * b.e * h.q_elems);
  if (first > 0) b.encode(first, "error feedback, orthogonalize Q, P = MQ");
  if (h.plain_elems > 0) {
    b.all_reduce("all-reduce uncompressed", h.plain_elems * b.e);
    b.decode(b.kernels(1 + h.plain_tensors, 4 * b.e * h.plain_elems), "divide, copy back uncompressed");
  }
  if (!h.matrices.empty()) {
    b.all_reduce("all-reduce P", h.p_elems * b.e);
    b.encode(second, "orthogonalize P, Q = M^T P");
    b.all_reduce("all-reduce Q", h.q_elems * b.e);
  }
  if (third > 0) b.decode(third, "M = P Q^T, error feedback");
  place_on_hook_streams(b.out());
  // The hook's last callback (`decompress`) calls torch.cuda.synchronize(
  // device). ProcessGroupNCCL marks a collective's future completed when it
  // is enqueued, and `then` on a completed future runs the callback inline,
  // so the chain runs on the autograd thread inside the hook call and the
  // synchronize holds it until the bucket's last step has run on the GPU
  // (docs/model.md, "The PowerSGD hook blocks the backward").
  b.out().blocks_host = true;
}

// The all-gather communicator of GRACE (sands-lab/grace, grace_dl/torch/
// communicator/allgather.py): each of the N gathered messages is
// decompressed to a dense tensor (`per_worker` seconds each) and Python's
// sum() adds them, 0 + t0 then N - 1 additions: N kernels moving
// (3N - 1) e n bytes.
double gathered_dense_sum(const BucketPlanner& b, double per_worker) {
  return b.workers * per_worker + b.kernels(b.workers, (3 * b.workers - 1) * b.e * b.dn);
}

// Passes over the input of torch.topk's radix select (aten/src/ATen/native/
// cuda/SortingRadixSelect.cuh): 2-bit digits over 32-bit keys, 16 counting
// passes, then gatherTopK's two passes that write the selection.
constexpr double kTorchTopkPasses = 18;

// GRACE's TopKCompressor (grace_dl/torch/compressor/topk.py) with its
// residual memory and the all-gather communicator: torch.topk(|x|, k) with
// int64 indices, values gathered by index; values and indices all-gathered
// separately; each worker's pair decompressed into zeros by scatter_.
void plan_topk_open(BucketPlanner& b) {
  const double k = static_cast<double>(sparse_k(b.n, b.spec.ratio));
  const double n = b.dn, e = b.e;
  const bool ef = b.spec.error_feedback;
  double enc = ef ? b.kernels(1, 3 * e * n) : 0.0;               // x += residual
  enc += b.kernels(1, 2 * e * n);                                // |x|
  enc += b.kernels(1, kTorchTopkPasses * e * n + k * (e + 8));   // torch.topk
  enc += b.kernels(1, k * (2 * e + 8));                          // x[indices]
  const double scatter = b.kernels(2, e * n + k * (2 * e + 8));  // zeros, scatter_
  if (ef) enc += scatter + b.kernels(1, 3 * e * n);              // own decompression, residual = x - it
  b.encode(enc, "torch.topk(|x|), gather values");
  b.all_gather("all-gather values", k * e);
  b.all_gather("all-gather indices (int64)", 8 * k);
  b.decode(gathered_dense_sum(b, scatter) + b.kernels(1, 2 * e * n), "decompress N, sum, divide");
}

// GRACE's EFSignSGDCompressor (grace_dl/torch/compressor/efsignsgd.py) with
// the residual memory: x >= 0, |x|, its mean and a cast to uint8 (one byte
// per sign); signs and means all-gathered; each message decompressed (to
// float, x 2, - 1, x mean) and summed, then divided by the learning rate.
void plan_sign_open(BucketPlanner& b) {
  const double n = b.dn, e = b.e;
  const bool ef = b.spec.error_feedback;
  const double decompress = b.kernels(4, (1 + 7 * e) * n);
  double enc = ef ? b.kernels(1, 3 * e * n) : 0.0;
  enc += b.kernels(4, (e + 1) * n + 2 * e * n + e * n + 2 * n);
  if (ef) enc += decompress + b.kernels(1, 3 * e * n);
  b.encode(enc, "signs (uint8), mean");
  b.all_gather("all-gather signs (uint8)", n);
  b.all_gather("all-gather means", e);
  b.decode(gathered_dense_sum(b, decompress) + b.kernels(1, 2 * e * n), "decompress N, sum");
}

// GRACE's SignumCompressor (grace_dl/torch/compressor/signum.py): momentum
// (1 - beta) x + beta m (3 kernels), x >= 0 cast to uint8; the signs
// all-gathered; each decompressed (to float, x 2, - 1), summed, and the
// majority taken (>= 0, x 2, - 1).
void plan_majority_vote_open(BucketPlanner& b) {
  const double n = b.dn, e = b.e;
  b.encode(b.kernels(3, 7 * e * n) + b.kernels(2, (e + 1) * n + 2 * n), "momentum, signs (uint8)");
  b.all_gather("all-gather signs (uint8)", n);
  const double decompress = b.kernels(3, (1 + 5 * e) * n);
  b.decode(gathered_dense_sum(b, decompress) + b.kernels(3, (2 + 4 * e) * n), "decompress N, sum, majority");
}

// int8 with stock NCCL: int8 messages with per-chunk scales cannot be summed
// by NCCL, so open implementations all-gather them (GRACE's all-gather
// communicator with a quantizer written in PyTorch ops): |x|, per-chunk
// amax, x / scale, round, cast to int8; values and scales all-gathered; each
// message dequantized (to float, x scale), summed and divided by N.
void plan_int8_open(BucketPlanner& b) {
  const double n = b.dn, e = b.e;
  const bool ef = b.spec.error_feedback;
  const double dequantize = b.kernels(2, (1 + 3 * e) * n);
  double enc = ef ? b.kernels(1, 3 * e * n) : 0.0;
  enc += b.kernels(5, (7 * e + 1) * n);
  if (ef) enc += dequantize + b.kernels(1, 3 * e * n);
  b.encode(enc, "quantize (PyTorch ops)");
  b.all_gather("all-gather int8 values", n);
  b.all_gather("all-gather scales", 4.0 * static_cast<double>((b.n + b.spec.chunk - 1) / b.spec.chunk));
  b.decode(gathered_dense_sum(b, dequantize) + b.kernels(1, 2 * e * n), "dequantize N, sum, divide");
}

std::string label_kind(const CompressionSpec& c) { return c.kind; }

// ---- the table -----------------------------------------------------------------

using P = CompressorParam;

std::deque<Compressor> builtin_rows() {
  const auto fixed = [](const char* text) { return [text](const CompressionSpec&) { return std::string(text); }; };
  return {
      {"none", CommOp::AllReduce, {}, false, {}, 0, fixed("uncompressed"), plan_none, {}},
      {"fp16", CommOp::AllReduce, {"fp16"}, false, {}, 0, label_kind, plan_half, plan_half_hook},
      {"bf16", CommOp::AllReduce, {"bf16"}, false, {}, 0, label_kind, plan_half, plan_half_hook},
      {"int8", CommOp::AllReduce, {"int8"}, true, {P::Chunk}, 0, label_kind, plan_int8, plan_int8_open},
      {"sign", CommOp::AllGather, {"sign"}, true, {P::Chunk}, 0, fixed("signSGD"), plan_sign, plan_sign_open},
      {"majority_vote",
       CommOp::AllGather,
       {"majority_vote"},
       true,
       {P::Chunk},
       0,
       fixed("majority vote"),
       plan_majority_vote,
       plan_majority_vote_open},
      {"topk",
       CommOp::AllGather,
       {"topk"},
       true,
       {P::Ratio},
       0,
       [](const CompressionSpec& c) { return "Top-K " + percent(c.ratio) + "%"; },
       plan_topk,
       plan_topk_open},
      // No PyTorch hook and no common open implementation modelled: gradwire's plan under both.
      {"randomk",
       CommOp::AllReduce,
       {"randomk"},
       true,
       {P::Ratio},
       0,
       [](const CompressionSpec& c) { return "Random-K " + percent(c.ratio) + "%"; },
       plan_randomk,
       {}},
      // GPU kernel vs CPU twin: 1e-3 of max |x| (GEMM summation order differs).
      {"powersgd",
       CommOp::AllReduce,
       {"powersgd"},
       true,
       {P::Rank, P::MinCompressionRate},
       1e-3,
       [](const CompressionSpec& c) { return "PowerSGD rank " + std::to_string(c.rank); },
       plan_powersgd,
       plan_powersgd_hook},
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
    case P::Ratio:
      spec.ratio = value;
      return;
    case P::Rank:
      spec.rank = static_cast<int>(value);
      return;
    case P::Chunk:
      spec.chunk = static_cast<std::int64_t>(value);
      return;
    case P::ErrorFeedback:
      spec.error_feedback = value != 0;
      return;
    case P::MinCompressionRate:
      spec.min_compression_rate = value;
      return;
  }
}

BucketPlanner::BucketPlanner(const CompressionSpec& s, const ModelDesc& m, const Bucket& bk, double element_bytes,
                             const ClusterSpec& cluster, std::string allreduce_algorithm, CodecTimeFn codec_time,
                             std::string codec, HookCosts hook_costs)
    : spec(s),
      model(m),
      bucket(bk),
      n(bk.elements),
      dn(static_cast<double>(bk.elements)),
      e(element_bytes),
      workers(cluster.world_size()),
      hook(hook_costs),
      algorithm_(std::move(allreduce_algorithm)),
      codec_time_(std::move(codec_time)),
      codec_(std::move(codec)) {}

double BucketPlanner::codec_time(bool encode, double elements) const { return codec_time_(codec_, encode, elements); }

double BucketPlanner::kernels(double launches, double bytes) const {
  return launches * hook.launch + bytes / hook.copy_bandwidth;
}

double BucketPlanner::gemm(double rows, double inner, double cols) const {
  const double flops = 2 * rows * inner * cols;
  const double bytes = e * (rows * inner + inner * cols + rows * cols);
  const double compute = hook.gemm_flops > 0 ? flops / hook.gemm_flops : 0.0;
  return hook.launch + std::max(compute, bytes / hook.copy_bandwidth);
}

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
  if (!row.plan || !row.label)
    throw std::invalid_argument("register_compressor: '" + row.name + "' needs a plan and a label");
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
