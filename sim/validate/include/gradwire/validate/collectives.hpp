// Validation of the collectives against published nccl-tests tables.
//
// A case (validation/collectives/*.yaml) is one published table: the cluster
// as published (a scenario file), the op, the algorithm gradwire simulates,
// the published bus bandwidth per size, its source and confidence, and the
// mechanism gradwire lacks when the case needs one. Nothing is fitted per
// case: the cluster holds datasheet values, the rest is the model's.
//
//   error = predicted busbw / published busbw - 1 at each size
//
// summarised per case as the median |error| below and from 1 MiB, and the
// worst. Points the source rounds to 0.00 GB/s are shown, not scored.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gradwire/validate/case_header.hpp"

namespace gw::validate {

struct PublishedPoint {
  double bytes = 0;            ///< nccl-tests size (per-rank buffer for all-reduce, total for all-gather)
  double busbw = 0;            ///< bytes/s, as published (converted from the case's unit)
  std::optional<double> time;  ///< seconds, when the source gives it
};

/// A case: its header (case_header.hpp: file, name, devset, source,
/// confidence, gap) and the table.
struct CollectiveCase : CaseHeader {
  std::string cluster_file;         ///< scenario whose cluster is simulated
  std::string op;                   ///< allreduce, allgather, ...
  std::string algorithm;            ///< what gradwire simulates (auto: NCCL's rule per size)
  std::string protocol = "auto";    ///< LL, LL128, Simple or auto (the case's optional `protocol`)
  std::string published_algorithm;  ///< what the source ran, when it says ("" if not)
  std::vector<PublishedPoint> points;
};

/// Loads a case strictly (unknown keys, bad values: gw::InputError at the field).
CollectiveCase load_collective_case(const std::string& path);
/// Every *.yaml case in `dir`, in file-name order (case_files: gw::InputError
/// when `dir` is no folder of cases).
std::vector<CollectiveCase> load_collective_cases(const std::string& dir);

struct PointResult {
  PublishedPoint published;
  double predicted_time = 0;    ///< s
  double predicted_busbw = 0;   ///< bytes/s
  std::optional<double> error;  ///< predicted/published - 1; none when the source rounds to 0
  std::string pair;             ///< the algorithm/protocol simulated at this size ("nvls/Simple")
};

struct CaseResult {
  CollectiveCase c;
  int gpus = 0;
  std::vector<PointResult> points;
  std::optional<double> median_small;  ///< median |error| below 1 MiB
  std::optional<double> median_large;  ///< median |error| from 1 MiB
  std::optional<double> worst;         ///< largest |error|
  double worst_bytes = 0;
};

/// Issue 13's targets: median |error| <= 25% below 1 MiB and <= 10% from 1 MiB.
constexpr double kTargetSmall = 0.25;
constexpr double kTargetLarge = 0.10;
constexpr double kLargeFrom = 1024.0 * 1024.0;

/// Simulates the case's collective at each published size on its cluster.
CaseResult run_case(const CollectiveCase& c);
/// Scores a case from predicted times (one per published point).
CaseResult score_case(const CollectiveCase& c, int gpus, const std::vector<double>& predicted_times);

/// The report: a table per case and a summary, as Markdown (docs/validation.md).
std::string render_markdown(const std::vector<CaseResult>& results);
/// The summary alone, as aligned text (the terminal): a line a case, then
/// summary_line.
std::string render_summary(const std::vector<CaseResult>& results);
/// One line over all cases: how many, how many within and outside target,
/// and the median |error| of every scored point below and from 1 MiB.
std::string summary_line(const std::vector<CaseResult>& results);
/// As JSON: validation_json.hpp.

}  // namespace gw::validate
