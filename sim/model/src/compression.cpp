#include "gradwire/compression.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gw {
namespace {

// The calibrator measures the majority-vote decode with this many voters
// (gw::kernels::CodecConfig::workers' default); the decode is rescaled from it
// by the bytes it reads (N messages plus the dense output).
constexpr double kMajorityVoteCalibratedWorkers = 8;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

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

}  // namespace

std::string to_string(CommOp op) { return op == CommOp::AllReduce ? "all-reduce" : "all-gather"; }

std::string to_string(CommStep::Kind kind) {
  switch (kind) {
    case CommStep::Kind::Encode: return "encode";
    case CommStep::Kind::Decode: return "decode";
    case CommStep::Kind::Collective: break;
  }
  return "collective";
}

const std::vector<std::string>& compressor_names() {
  static const std::vector<std::string> names{"none", "fp16", "bf16", "int8", "sign",
                                              "majority_vote", "topk", "randomk", "powersgd"};
  return names;
}

std::int64_t sparse_k(std::int64_t n, double ratio) {
  if (n <= 0) return 0;
  const auto k = static_cast<std::int64_t>(std::ceil(ratio * static_cast<double>(n)));
  return std::clamp<std::int64_t>(k, 1, n);
}

double int8_wire_bytes(std::int64_t n, std::int64_t chunk) {
  return static_cast<double>(n) + 4.0 * static_cast<double>(ceil_div(n, chunk));
}

double sign_wire_bytes(std::int64_t n, std::int64_t chunk) {
  return static_cast<double>(ceil_div(n, 8)) + 4.0 * static_cast<double>(ceil_div(n, chunk));
}

PowerSgdShape powersgd_shape(const TensorDesc& tensor, int rank, double min_compression_rate) {
  PowerSgdShape s;
  if (tensor.shape.size() < 2) return s;  // biases, norms, scalars: uncompressed
  const std::int64_t m = tensor.shape[0];
  const std::int64_t n = m > 0 ? tensor.numel / m : 0;  // (out, in*kh*kw)
  const int r = static_cast<int>(std::min<std::int64_t>({static_cast<std::int64_t>(rank), m, n}));
  if (r <= 0) return s;
  if (static_cast<double>(m + n) * r * min_compression_rate >=
      static_cast<double>(m) * static_cast<double>(n))
    return s;  // not worth compressing (torch's test)
  s.compressed = true;
  s.m = m;
  s.n = n;
  s.rank = r;
  return s;
}

std::string resolve_allreduce_algorithm(const std::string& requested, const ClusterSpec& cluster) {
  if (requested == "auto")
    return cluster.nodes > 1 && cluster.gpus_per_node > 1 ? "hierarchical" : "ring";
  if (requested == "ring" || requested == "tree" || requested == "hierarchical") return requested;
  throw std::invalid_argument("unknown all-reduce algorithm '" + requested +
                              "' (expected auto, ring, tree or hierarchical)");
}

double sent_bytes_per_gpu(CommOp op, const std::string& algorithm, double bytes,
                          const ClusterSpec& cluster) {
  const double n = cluster.world_size();
  if (n <= 1) return 0;
  if (op == CommOp::AllGather) return (n - 1) / n * bytes;
  if (algorithm == "hierarchical") {
    const double g = cluster.gpus_per_node, m = cluster.nodes;
    return 2 * (g - 1) / g * bytes + 2 * (m - 1) / m * bytes / g;
  }
  return 2 * (n - 1) / n * bytes;  // ring; the double binary tree moves the same on average
}

BucketComm plan_bucket_comm(const CompressionSpec& c, const ModelDesc& model, const Bucket& bucket,
                            double e, const ClusterSpec& cluster, const std::string& ar_algorithm,
                            const CodecTimeFn& codec_time) {
  BucketComm out;
  const std::int64_t n = bucket.elements;
  const double dn = static_cast<double>(n);
  const double workers = cluster.world_size();
  const std::string& kind = c.kind;
  const bool lossy = kind != "none" && kind != "fp16" && kind != "bf16";
  if (lossy && c.error_feedback) out.error_feedback_bytes = dn * e;
  const auto all_reduce = [&](const std::string& label, double bytes) {
    add(out, collective_step(CommOp::AllReduce, label, ar_algorithm, bytes, bytes));
  };
  const auto all_gather = [&](const std::string& label, double per_worker) {
    add(out, collective_step(CommOp::AllGather, label, "ring", per_worker * workers, per_worker));
  };
  const auto encode = [&](double seconds, const std::string& label = "encode") {
    add(out, codec_step(CommStep::Kind::Encode, label, seconds));
  };
  const auto decode = [&](double seconds, const std::string& label = "decode") {
    add(out, codec_step(CommStep::Kind::Decode, label, seconds));
  };

  if (kind == "none") {
    all_reduce("all-reduce", dn * e);
  } else if (kind == "fp16" || kind == "bf16") {
    encode(codec_time(kind, true, dn));
    all_reduce("all-reduce " + kind, 2 * dn);
    decode(codec_time(kind, false, dn));
  } else if (kind == "int8") {
    encode(codec_time(kind, true, dn));
    all_reduce("all-reduce int8", int8_wire_bytes(n, c.chunk));
    decode(codec_time(kind, false, dn));
  } else if (kind == "sign") {
    encode(codec_time(kind, true, dn));
    all_gather("all-gather signs", sign_wire_bytes(n, c.chunk));
    // Every worker's signs are unpacked and added into the dense result.
    decode(workers * codec_time(kind, false, dn));
  } else if (kind == "majority_vote") {
    const double w = sign_wire_bytes(n, c.chunk);
    encode(codec_time(kind, true, dn));
    all_gather("all-gather signs", w);
    const double scale = (workers * w + 4 * dn) / (kMajorityVoteCalibratedWorkers * w + 4 * dn);
    decode(codec_time(kind, false, dn) * scale, "majority decode");
  } else if (kind == "topk") {
    const double k = static_cast<double>(sparse_k(n, c.ratio));
    encode(codec_time(kind, true, dn));
    all_gather("all-gather values+indices", k * (e + 4));
    // Decode: one dense zero-fill and N scatter-adds of k (value, index)
    // pairs, rescaled from the measured one-message decode by bytes touched.
    const double scale = (4 * dn + workers * 12 * k) / (4 * dn + 12 * k);
    decode(codec_time(kind, false, dn) * scale, "decode (sum of N sparse)");
  } else if (kind == "randomk") {
    const double k = static_cast<double>(sparse_k(n, c.ratio));
    encode(codec_time(kind, true, dn));
    all_reduce("all-reduce values", k * e);
    decode(codec_time(kind, false, dn));
  } else if (kind == "powersgd") {
    double p_elems = 0, q_elems = 0, matrix_elems = 0, plain_elems = 0;
    for (std::size_t j = bucket.first_tensor; j <= bucket.last_tensor; ++j) {
      const auto s = powersgd_shape(model.tensors[j], c.rank, c.min_compression_rate);
      if (!s.compressed) {
        plain_elems += static_cast<double>(model.tensors[j].numel);
        continue;
      }
      p_elems += static_cast<double>(s.m) * s.rank;
      q_elems += static_cast<double>(s.n) * s.rank;
      matrix_elems += static_cast<double>(s.m) * static_cast<double>(s.n);
    }
    out.state_bytes = (p_elems + q_elems) * e;
    if (plain_elems > 0) all_reduce("all-reduce uncompressed", plain_elems * e);
    if (matrix_elems > 0) {
      // P = M Q and Q = M^T P cost the same (2 m n r FLOPs each): the measured
      // encode is split evenly between the two phases.
      const double enc = codec_time(kind, true, matrix_elems);
      encode(enc / 2, "encode P = MQ");
      all_reduce("all-reduce P", p_elems * e);
      encode(enc / 2, "orthogonalize, Q = M^T P");
      all_reduce("all-reduce Q", q_elems * e);
      decode(codec_time(kind, false, matrix_elems), "decode M = P Q^T");
    }
  } else {
    throw std::invalid_argument("unknown compression '" + kind + "'");
  }
  return out;
}

}  // namespace gw
