#include "gradwire/model/compression.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "gradwire/model/collective_algorithms.hpp"
#include "gradwire/model/compressors.hpp"

namespace gw {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

/// Whether `c` runs the row's PyTorch plan: implementation "pytorch" on a row
/// that has one (other rows run their gradwire plan whatever is asked).
bool runs_pytorch_plan(const CompressionSpec& c, const Compressor& row) {
  return c.implementation == "pytorch" && row.plan_pytorch;
}

}  // namespace

std::string to_string(CommOp op) { return op == CommOp::AllReduce ? "all-reduce" : "all-gather"; }

std::string to_string(CommStep::Kind kind) {
  switch (kind) {
    case CommStep::Kind::Encode:
      return "encode";
    case CommStep::Kind::Decode:
      return "decode";
    case CommStep::Kind::Collective:
      break;
  }
  return "collective";
}

std::int64_t sparse_k(std::int64_t n, double ratio) {
  if (n <= 0) return 0;
  const auto k = static_cast<std::int64_t>(std::ceil(ratio * static_cast<double>(n)));
  return std::clamp<std::int64_t>(k, 1, n);
}

double int8_wire_bytes(std::int64_t n, std::int64_t chunk) {
  return static_cast<double>(n) + 4.0 * static_cast<double>(ceil_div(n, chunk));
}

double bitpacked_sign_wire_bytes(std::int64_t n, std::int64_t chunk) {
  return static_cast<double>(ceil_div(n, 8)) + 4.0 * static_cast<double>(ceil_div(n, chunk));
}

PowerSgdShape powersgd_shape(const TensorDesc& tensor, int rank, double min_compression_rate) {
  PowerSgdShape s;
  if (tensor.shape.size() < 2) return s;  // biases, norms, scalars: uncompressed
  const std::int64_t m = tensor.shape[0];
  const std::int64_t n = m > 0 ? tensor.numel / m : 0;  // (out, in*kh*kw)
  const int r = static_cast<int>(std::min<std::int64_t>({static_cast<std::int64_t>(rank), m, n}));
  if (r <= 0) return s;
  if (static_cast<double>(m + n) * r * min_compression_rate >= static_cast<double>(m) * static_cast<double>(n))
    return s;  // not worth compressing (torch's test)
  s.compressed = true;
  s.m = m;
  s.n = n;
  s.rank = r;
  return s;
}

std::string resolve_allreduce_algorithm(const std::string& requested, const ClusterSpec& cluster) {
  (void)cluster;  // auto: NCCL's choice per bucket size (closed_form.hpp choose_collective)
  const std::vector<std::string> names = scenario_algorithm_names();
  if (std::find(names.begin(), names.end(), requested) != names.end()) return requested;
  std::string expected;
  for (std::size_t i = 0; i < names.size(); ++i)
    expected += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  throw std::invalid_argument("unknown all-reduce algorithm '" + requested + "' (expected " + expected + ")");
}

double sent_bytes_per_gpu(CommOp op, const std::string& algorithm, double bytes, const ClusterSpec& cluster) {
  const double n = cluster.world_size();
  if (n <= 1) return 0;
  if (op == CommOp::AllGather) return (n - 1) / n * bytes;
  if (algorithm == "hierarchical") {
    const double g = cluster.gpus_per_node, m = cluster.nodes;
    return 2 * (g - 1) / g * bytes + 2 * (m - 1) / m * bytes / g;
  }
  return 2 * (n - 1) / n * bytes;  // ring; the double binary tree moves the same on average
}

std::string gradwire_codec_of(const CompressionSpec& c) {
  const Compressor& row = compressor(c.kind);
  return runs_pytorch_plan(c, row) || row.codecs.empty() ? std::string() : row.codecs.front();
}

BucketComm plan_bucket_comm(const CompressionSpec& c, const ModelDesc& model, const Bucket& bucket, double e,
                            const ClusterSpec& cluster, const std::string& ar_algorithm, const CodecTimeFn& codec_time,
                            const HookCosts& hook) {
  const Compressor& row = compressor(c.kind);
  if (c.implementation != "pytorch" && c.implementation != "gradwire")
    throw std::invalid_argument("unknown compression implementation '" + c.implementation +
                                "' (expected pytorch or gradwire)");
  const bool pytorch = runs_pytorch_plan(c, row);
  if (pytorch && !(hook.copy_bandwidth > 0))
    throw std::invalid_argument(
        "compression.implementation pytorch needs the profile's copy bandwidth (the hooks' "
        "kernels are costed from it)");
  BucketPlanner b(c, model, bucket, e, cluster, ar_algorithm, codec_time,
                  row.codecs.empty() ? std::string() : row.codecs.front(), hook);
  if (row.error_feedback && c.error_feedback) b.out().error_feedback_bytes = b.dn * e;
  (pytorch ? row.plan_pytorch : row.plan)(b);
  return std::move(b.out());
}

}  // namespace gw
