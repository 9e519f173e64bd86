// The compressor table: every gradient compressor gradwire models, one row
// each, and the one place its facts are written down. Plain C++, no SimGrid.
//
// A row gives the compressor's name (the scenario's `compression.kind`), its
// collective pattern (all-reduce or all-gather), the profile codec keys it is
// timed by, whether it keeps an error-feedback residual, the parameters it
// accepts (their ranges are in compressor_params()), its planner label and
// its wire plan (codec steps and the bytes of each collective for one
// bucket). The scenario parser, the profile loader, plan_bucket_comm, the
// planner labels and the calibrator all read this table; docs/model.md
// documents each formula.
//
// Adding a compressor outside kernels/: a row in compressors.cpp, its line in
// docs/model.md, its codec entries in the profiles (profiles/
// make_datasheet_profiles.py) and a test. tests/model/test_compressors.cpp
// registers a throwaway row at run time and runs it through the parser, the
// wire plan and the label.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gradwire/model/compression.hpp"

namespace gw {

/// The parameters of `compression:` besides kind. Every kind accepts
/// error_feedback; the others only the kinds whose row lists them.
enum class CompressorParam { Ratio, Rank, Chunk, ErrorFeedback, MinCompressionRate };

/// A parameter's scenario key, type and accepted range (inclusive).
struct CompressorParamInfo {
  CompressorParam id;
  std::string key;  ///< scenario key: ratio, rank, chunk, error_feedback, min_compression_rate
  enum Type { Number, Integer, Boolean } type = Number;
  double min = 0, max = 0;  ///< Number and Integer
  bool every_kind = false;  ///< accepted by every compressor (error_feedback)
};
/// Every parameter, in the schema's order (docs/scenarios.md); the parser
/// reads the numbers first, then the booleans.
const std::vector<CompressorParamInfo>& compressor_params();
/// Sets the parameter's field of `spec` (CompressionSpec::ratio, rank, ...;
/// a boolean is true when value != 0).
void set_compressor_param(CompressionSpec& spec, CompressorParam p, double value);

/// What a compressor's wire plan sees of one bucket, and the steps it adds.
class BucketPlanner {
 public:
  BucketPlanner(const CompressionSpec& spec, const ModelDesc& model, const Bucket& bucket, double element_bytes,
                const ClusterSpec& cluster, std::string allreduce_algorithm, CodecTimeFn codec_time, std::string codec,
                HookCosts hook = {});

  const CompressionSpec& spec;
  const ModelDesc& model;
  const Bucket& bucket;
  const std::int64_t n;  ///< elements of the bucket
  const double dn;       ///< n as a double
  const double e;        ///< gradient bytes per element
  const double workers;  ///< world size N

  const HookCosts hook;  ///< the pytorch implementation's device costs

  /// Measured time of this compressor's codec (the row's first codec key).
  double codec_time(bool encode, double elements) const;
  /// `launches` kernels moving `bytes` (read + written) through device memory:
  /// launches x hook.launch + bytes / hook.copy_bandwidth.
  double kernels(double launches, double bytes) const;
  /// One matrix product (rows x inner) (inner x cols) at the gradient
  /// precision: hook.launch + max(2 rows inner cols / hook.gemm_flops,
  /// e (rows inner + inner cols + rows cols) / hook.copy_bandwidth).
  double gemm(double rows, double inner, double cols) const;
  void all_reduce(const std::string& label, double bytes);
  /// An all-gather of `per_worker` bytes from each of the N workers.
  void all_gather(const std::string& label, double per_worker);
  void encode(double seconds, const std::string& label = "encode");
  void decode(double seconds, const std::string& label = "decode");
  BucketComm& out() { return out_; }

 private:
  std::string algorithm_;
  CodecTimeFn codec_time_;
  std::string codec_;
  BucketComm out_;
};

/// One row of the table.
struct Compressor {
  std::string name;                    ///< scenario `kind`
  CommOp pattern = CommOp::AllReduce;  ///< its main collective
  /// Profile codec keys (each may also appear with the suffix _ef); empty
  /// for `none`. The first is the codec the wire plan times.
  std::vector<std::string> codecs;
  /// Lossy: with error_feedback (default on) a residual of the bucket
  /// (n e bytes per GPU) is kept and counted in memory.
  bool error_feedback = false;
  std::vector<CompressorParam> params;  ///< accepted parameters (besides the every_kind ones)
  /// Largest relative difference tolerated between its GPU kernel and CPU
  /// twin when the calibrator checks them (0: bit for bit).
  double gpu_twin_tolerance = 0;
  std::function<std::string(const CompressionSpec&)> label;  ///< planner label
  std::function<void(BucketPlanner&)> plan;                  ///< wire plan of one bucket (gradwire's kernels)
  /// Wire plan as PyTorch users run it (its DDP hook, or the common open
  /// implementation; compression.implementation: pytorch), costed by
  /// BucketPlanner::kernels and gemm. Empty: the same as `plan`.
  std::function<void(BucketPlanner&)> plan_pytorch = {};
};

/// Every compressor, in the order scenarios list them. A deque: rows (and
/// pointers to them) stay put when register_compressor adds one.
const std::deque<Compressor>& compressors();
/// The row named `kind`, or nullptr.
const Compressor* find_compressor(std::string_view kind);
/// The row named `kind`; throws std::invalid_argument ("unknown compression").
const Compressor& compressor(std::string_view kind);
/// Adds a row (tests and experiments). Throws std::invalid_argument when the
/// name is taken. Not thread-safe: call before any lookup runs concurrently.
void register_compressor(Compressor row);

/// Every profile codec key of the table (without _ef), in table order.
std::vector<std::string> compressor_codec_names();
/// The row whose codec `codec` is (an optional _ef suffix ignored), or nullptr.
const Compressor* compressor_of_codec(std::string_view codec);
/// The names of the compressors accepting parameter p, in table order.
std::vector<std::string> compressors_with_param(CompressorParam p);

/// The planner's words for a compression ("uncompressed", "PowerSGD rank 4",
/// "Top-K 1%", ...). Throws std::invalid_argument for an unknown kind.
std::string compressor_label(const CompressionSpec& spec);

/// Comma-joined list ("a, b, c").
std::string join_names(const std::vector<std::string>& names, std::string_view sep = ", ");

}  // namespace gw
