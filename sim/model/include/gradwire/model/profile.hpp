// A calibration profile: measured (or datasheet-derived) costs of one GPU type.
// Written by `gradwire calibrate`, read by the simulator. Plain C++.
// The schema (gradwire-profile/1) is documented in docs/profiles.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gradwire/model/collectives.hpp"
#include "gradwire/model/interference.hpp"

namespace gw {

/// A point of a measured curve: x (elements or bytes) and the median time (s),
/// with the spread of the repeats.
struct CurvePoint {
  double x = 0;
  double seconds = 0;
  double spread = 0;  ///< (max - min) / median of the repeats, 0 if unknown
  int repeats = 0;
  bool operator==(const CurvePoint&) const = default;
};

/// Measured codec times may wobble with noise at launch-bound sizes, but not
/// fall below this fraction of an earlier (smaller) size's time: the profile
/// loader refuses such a point (not a plausible measurement), and the
/// calibrator re-times the two sizes before it writes one (docs/calibrate.md).
inline constexpr double kMaxMeasuredTimeDrop = 0.5;

/// The plausible range of a collective's alpha-beta fit: the loader refuses a
/// latency above kMaxCollectiveAlpha seconds or a bandwidth outside
/// [kMinCollectiveBeta, kMaxCollectiveBeta] B/s, and the calibrator leaves
/// such a fit out (with a note) rather than write it.
inline constexpr double kMaxCollectiveAlpha = 1.0;
inline constexpr double kMinCollectiveBeta = 1e6;
inline constexpr double kMaxCollectiveBeta = 1e14;

/// Where a codec's times first fall with size: point `at` is below `keep` x
/// the time of point `peak`, the slowest earlier (smaller) point.
struct TimeDrop {
  std::size_t peak = 0;
  std::size_t at = 0;
};
/// The first point whose time is below `keep` x the largest earlier time, if
/// any (points sorted by size): `keep` = kMaxMeasuredTimeDrop for measured
/// points, 1 for fitted knots (never decreasing).
std::optional<TimeDrop> first_time_drop(const std::vector<CurvePoint>& points, double keep);

/// Piecewise-linear model in log size through fitted knots: between two knots
/// log(time) is linear in log2(x) (exact for both a constant latency and a
/// time proportional to x); linear extrapolation in x (time per element of
/// the last segment) beyond the largest knot, constant below the smallest.
/// evaluate() throws std::logic_error when there are no knots.
struct PiecewiseLogFit {
  std::vector<CurvePoint> knots;  ///< sorted by x
  double max_rel_residual = 0;    ///< largest |pred - meas| / meas over the points
  double evaluate(double x) const;
  bool operator==(const PiecewiseLogFit&) const = default;
};

/// Alpha-beta model: time = alpha + bytes / beta.
struct AlphaBetaFit {
  double alpha = 0;  ///< latency, s
  double beta = 0;   ///< bandwidth, bytes/s (algorithm bandwidth)
  double max_rel_residual = 0;
  double evaluate(double bytes) const { return alpha + bytes / beta; }
  bool operator==(const AlphaBetaFit&) const = default;
};

struct CodecCost {
  std::vector<CurvePoint> encode_points, decode_points;
  PiecewiseLogFit encode, decode;  ///< time against elements
  bool operator==(const CodecCost&) const = default;
};

struct CollectiveCost {
  CollectiveOp op = CollectiveOp::AllReduce;
  int gpus = 0;
  /// Machines the GPUs span: 1 (one process on one node, ncclCommInitAll) or
  /// more (an MPI run across nodes, gradwire-calibrate --mpi). Written to the
  /// profile only when > 1; absent means 1.
  int nodes = 1;
  std::vector<CurvePoint> points;  ///< x = bytes (nccl-tests "size")
  AlphaBetaFit fit;
  bool operator==(const CollectiveCost&) const = default;
};

/// Measured figures of one transport (a name of gradwire/model/transports.hpp)
/// that replace the table's for clusters run with this profile
/// (resolve_cluster): each optional.
struct TransportFigures {
  std::optional<double> fraction;        ///< achievable fraction of the line rate
  std::optional<double> latency;         ///< s, one way, per link
  std::optional<double> per_connection;  ///< B/s one connection reaches
  bool operator==(const TransportFigures&) const = default;
};

struct Profile {
  int schema_version = 1;
  std::string source;  ///< "measured" or "datasheet"
  std::string name;    ///< e.g. "h200" or "h200-measured-2026-11-30"
  std::string device;  ///< e.g. "NVIDIA H200"
  int sm_count = 0;
  double memory_bytes = 0;
  std::string driver, cuda, nccl;  ///< versions (empty for datasheet profiles)
  std::string date, host, command;
  std::vector<std::string> references;  ///< datasheet sources
  /// Achieved dense matrix throughput, FLOP/s, by precision: fp32, tf32, bf16, fp16.
  std::map<std::string, double> gemm_flops;
  /// Raw GEMM points per precision (x = FLOPs of one GEMM), when measured.
  std::map<std::string, std::vector<CurvePoint>> gemm_points;
  double copy_bandwidth = 0;  ///< device-to-device copy, bytes read+written per s
  /// Codec costs by codec name: a codec key of the compressor table
  /// (gradwire/model/compressors.hpp), optionally with the suffix _ef.
  std::map<std::string, CodecCost> codecs;
  std::vector<CollectiveCost> collectives;
  std::string path;  ///< where it was loaded from
  /// What was not measured and why, derivation notes (e.g. "multi-GPU
  /// collectives not measured: 1 GPU visible").
  std::vector<std::string> notes;
  /// NCCL_* environment variables in effect during a measured calibration.
  std::map<std::string, std::string> nccl_env;
  /// Measured transport figures by transport name (docs/profiles.md).
  std::map<std::string, TransportFigures> transports;
  /// Measured slow-downs under concurrency (`interference:`, docs/profiles.md).
  InterferenceFigures interference;

  bool operator==(const Profile&) const = default;

  /// Encode/decode time of `codec` for `elements` fp32 elements. Throws
  /// std::out_of_range naming the codec when the profile lacks it.
  double codec_time(const std::string& codec, bool encode, double elements) const;
  /// Achieved FLOP/s for a precision (fp32, tf32, bf16, fp16).
  double flops(const std::string& precision) const;
  /// The collective fit for op at `gpus` GPUs on one node, if measured.
  const CollectiveCost* collective(CollectiveOp op, int gpus) const;
  /// The collective fit for op at `gpus` GPUs spanning `nodes` nodes, if measured.
  const CollectiveCost* collective(CollectiveOp op, int gpus, int nodes) const;
};

/// Loads a profile by name (calibrate/profiles/<name>.yaml, or any directory in
/// env GRADWIRE_PROFILES) or by path. Throws gw::InputError (unknown schema
/// version, missing field, ... with file, line and key).
Profile load_profile(const std::string& name_or_path);
/// Where load_profile looks for a profile given by name, in order: each
/// directory of $GRADWIRE_PROFILES (colon-separated), then the bundled
/// calibrate/profiles/ (data_dir()).
std::vector<std::string> profile_search_dirs();
/// The names of the profiles found there (files whose schema line names a
/// profile), sorted, without duplicates.
std::vector<std::string> list_profiles();
Profile load_profile_file(const std::string& path);
/// Reads profile YAML `text` as load_profile_file reads a file; `name` stands
/// for the file in errors (e.g. a profile about to be written, checked first).
Profile parse_profile_text(const std::string& text, const std::string& name);
/// Serializes a profile to YAML text (schema gradwire-profile/1).
std::string profile_to_yaml(const Profile& p);

/// A top-level key of a profile and whether the loader needs it.
struct ProfileKey {
  const char* key;
  bool required;
};
/// The keys of profile.cpp's field table, in the order profile_to_yaml
/// writes them: one row each drives the loader's known keys, its reading
/// and the writing (docs/profiles.md, "Fields", lists the same keys).
std::vector<ProfileKey> profile_keys();

}  // namespace gw
