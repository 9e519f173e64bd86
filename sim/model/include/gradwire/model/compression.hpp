// What one DDP bucket puts on the wire under each gradient compressor: the
// ordered steps of its communication (codec work and dependent collectives),
// the bytes of each collective and the compressor's memory. Plain C++, no
// SimGrid. Every formula is documented, with its source, in docs/model.md;
// each compressor's row (its wire plans) is in gradwire/model/compressors.hpp.
// The sizes below are the gradwire implementation's (the project's kernels);
// compression.implementation: pytorch (the default) runs each row's
// plan_pytorch (docs/model.md, "Compression as PyTorch runs it").
//
//   none          all-reduce of n e bytes (e = gradient bytes per element)
//   fp16 / bf16   all-reduce of 2n bytes (PyTorch fp16/bf16_compress_hook)
//   int8          all-reduce of n + 4 ceil(n/chunk) bytes (idealised: see docs)
//   sign          all-gather, ceil(n/8) + 4 ceil(n/chunk) bytes per worker
//   majority_vote all-gather of the same sign bits and scales, majority decode
//   topk          all-gather, k (e + 4) bytes per worker, k = clamp(ceil(ratio n), 1, n)
//   randomk       all-reduce of k e bytes (indices from a shared seed)
//   powersgd      per matrix m x n (conv weights as out x in*kh*kw), rank
//                 r' = min(r, m, n): all-reduce P (m r' elements), then Q
//                 (n r' elements); 1-D tensors and matrices with
//                 (m + n) r' min_compression_rate >= m n go uncompressed in
//                 a separate all-reduce.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gradwire/model/buckets.hpp"
#include "gradwire/model/model_desc.hpp"
#include "gradwire/model/scenario.hpp"

namespace gw {

enum class CommOp { AllReduce, AllGather };
std::string to_string(CommOp op);

/// Encode/decode seconds of `codec` on `elements` fp32 elements (usually
/// Profile::codec_time).
using CodecTimeFn = std::function<double(const std::string& codec, bool encode, double elements)>;

/// What the `pytorch` implementation's kernels cost on one GPU
/// (compression.implementation: pytorch; docs/model.md, "Compression as
/// PyTorch runs it"): each kernel takes `launch` plus the bytes it reads and
/// writes over `copy_bandwidth`; a matrix product takes `launch` plus the
/// larger of its FLOPs over `gemm_flops` and its bytes over `copy_bandwidth`.
struct HookCosts {
  double copy_bandwidth = 0;  ///< device memory bytes read + written per second
  double gemm_flops = 0;      ///< GEMM rate at the gradient precision (FLOP/s)
  double launch = 0;          ///< one kernel launch (s)
};

/// One step of a bucket's work on the communication stream. Steps run one
/// after another: each collective depends on the codec work before it.
struct CommStep {
  enum class Kind { Encode, Collective, Decode };
  Kind kind = Kind::Collective;
  std::string label;              ///< "encode", "all-reduce P", ...
  double seconds = 0;             ///< codec steps: their duration
  CommOp op = CommOp::AllReduce;  ///< collective steps
  std::string algorithm;          ///< collective steps: ring, tree or hierarchical
  /// Collective size as nccl-tests counts it: the per-rank buffer of an
  /// all-reduce, the gathered total of an all-gather.
  double bytes = 0;
  /// Bytes this GPU contributes: = bytes for an all-reduce, bytes / N for an all-gather.
  double contributed = 0;
  /// Collective steps: the time of the profile's fit measured on this very
  /// cluster (its op, GPU and node counts, two nodes or more: docs/model.md,
  /// "Collectives measured on the cluster"), which the replay and the closed
  /// form take in place of the network model's; 0: the network model's.
  double measured_seconds = 0;
};
std::string to_string(CommStep::Kind kind);

struct BucketComm {
  std::vector<CommStep> steps;
  double encode = 0;                ///< sum of the encode steps (s)
  double decode = 0;                ///< sum of the decode steps (s)
  double contributed = 0;           ///< bytes one GPU contributes to the bucket's collectives
  double error_feedback_bytes = 0;  ///< residual kept per GPU (bytes)
  double state_bytes = 0;           ///< other compressor state per GPU (PowerSGD P and Q)
  double wire_bytes_per_gpu = 0;    ///< bytes one GPU sends (set by plan_iteration)
  /// Where a PyTorch DDP comm hook's steps run (docs/model.md, "Where the
  /// hooks' kernels run"): the first `on_compute_stream` steps (the hook's
  /// body before its first collective) on the backward's stream, serialised
  /// with the backward; the last `on_side_stream` (its `then` callback after
  /// the last collective) on a stream of their own, beside the next buckets'
  /// collectives; the rest on the comm stream. 0 and 0: every step on the
  /// comm stream (the gradwire plans, GRACE's open implementations).
  std::size_t on_compute_stream = 0;
  std::size_t on_side_stream = 0;
  /// The hook's last callback blocks the host (the autograd thread) until
  /// the device has finished the bucket's steps (docs/model.md, "The
  /// PowerSGD hook blocks the backward"): the backward's next tensor starts
  /// after the bucket's end, and the next bucket after it. Set by
  /// plan_powersgd_hook (its `decompress` calls torch.cuda.synchronize).
  bool blocks_host = false;
};

/// The compressor names gradwire models: the names of the compressor table
/// (gradwire/model/compressors.hpp), in its order.
const std::vector<std::string>& compressor_names();

/// Elements kept by Top-K / Random-K: clamp(ceil(ratio n), 1, n).
std::int64_t sparse_k(std::int64_t n, double ratio);
/// Wire bytes of one worker's message for a bucket of n elements.
/// int8: n bytes plus a 4-byte scale per chunk (as gw::kernels::int8_wire_bytes).
double int8_wire_bytes(std::int64_t n, std::int64_t chunk);
/// Sign message with the signs packed 8 to a byte: ceil(n/8) + 4 ceil(n/chunk)
/// bytes (the idealised message the model sends). The kernels pack the signs
/// into 32-bit words, 4 ceil(n/32) + 4 ceil(n/chunk) bytes
/// (gw::kernels::sign_wire_bytes): up to 3 bytes more per message.
double bitpacked_sign_wire_bytes(std::int64_t n, std::int64_t chunk);

/// PowerSGD's view of one tensor: a matrix (m x n) or not compressed.
struct PowerSgdShape {
  bool compressed = false;
  std::int64_t m = 0, n = 0;  ///< rows, columns (compressed only)
  int rank = 0;               ///< effective rank min(r, m, n)
};
PowerSgdShape powersgd_shape(const TensorDesc& tensor, int rank, double min_compression_rate);

/// The all-reduce algorithm to use: auto (NCCL's rule per bucket size,
/// closed_form.hpp choose_collective), ring, tree or hierarchical, returned
/// as given. Throws std::invalid_argument for an unknown name.
std::string resolve_allreduce_algorithm(const std::string& requested, const ClusterSpec& cluster);

/// Bytes one GPU sends for one collective (average over GPUs):
///   all-reduce ring or tree: 2 (N-1)/N S; hierarchical (g GPUs per node, M
///   nodes): 2 (g-1)/g S + 2 (M-1)/M S/g; all-gather ring: (N-1)/N T.
double sent_bytes_per_gpu(CommOp op, const std::string& algorithm, double bytes, const ClusterSpec& cluster);

/// The profile codec key of the gradwire kernels this compression runs: the
/// row's first codec, or "" when it runs none (`none`) or runs PyTorch's
/// hooks instead (implementation "pytorch" on a row that has a pytorch
/// plan, as plan_bucket_comm decides). Throws std::invalid_argument for an
/// unknown compressor.
std::string gradwire_codec_of(const CompressionSpec& compression);

/// The communication of one bucket. `element_bytes` is the gradient size per
/// element; world_size N matters for the all-gathered compressors. With
/// compression.implementation "pytorch" the row's pytorch plan runs, costed
/// by `hook` (rows without one run their gradwire plan); with "gradwire" the
/// row's plan, costed by codec_time. Throws std::invalid_argument for an
/// unknown compressor or implementation, for a pytorch plan without a copy
/// bandwidth, and whatever codec_time throws for a codec the profile lacks.
BucketComm plan_bucket_comm(const CompressionSpec& compression, const ModelDesc& model, const Bucket& bucket,
                            double element_bytes, const ClusterSpec& cluster, const std::string& allreduce_algorithm,
                            const CodecTimeFn& codec_time, const HookCosts& hook = {});

}  // namespace gw
