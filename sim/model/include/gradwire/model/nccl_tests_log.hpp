// nccl-tests output, read and written (plain C++, no SimGrid).
//
// The layout is the one nccl-tests' src/common.cu prints for every *_perf
// binary:
//
//   # nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 ...
//   #
//   # Using devices
//   #  Rank  0 Group  0 Pid  28307 on      gpu59 device  0 [0x16] NVIDIA GeForce RTX 4090
//   #
//   #                                    out-of-place                       in-place
//   #       size         count      type   redop    root     time   algbw   busbw #wrong     time ...
//   #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us) ...
//              8             2     float     sum      -1    42.56    0.00    0.00      0    41.20 ...
//   # Out of bounds values : 0 OK
//   # Avg bus bandwidth    : 45.7896
//
// One "#  Rank" line per rank (in multi-process runs rank 0 prints every
// process's lines); older releases print no Group and no root column and an
// "error" column (1e-07) instead of #wrong. The reader is strict: a row
// that does not parse, or a line that is neither a comment, a row, NCCL's own
// output ("NCCL version ...", "host:pid:tid [dev] NCCL INFO ...") nor blank,
// is a gw::InputError naming file:line:column.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gradwire/model/collectives.hpp"
#include "gradwire/model/profile.hpp"

namespace gw::nccl_tests {

/// One group of a row (out-of-place or in-place).
struct Result {
  double time = 0;     ///< seconds (the log prints us)
  double algbw = 0;    ///< bytes/s (the log prints GB/s)
  double busbw = 0;    ///< bytes/s
  std::string wrong;   ///< the #wrong (or old "error") column as printed: "0", "N/A", "1e-07"
};

struct Row {
  double bytes = 0;    ///< the size column
  double count = 0;    ///< elements (per rank for allgather, reducescatter, alltoall)
  std::string type;    ///< float, half, ...
  std::string redop;   ///< sum, none, ... ("" in old layouts without it)
  std::optional<int> root;
  Result out_of_place, in_place;
  int line = 0;        ///< where it was read
};

struct RankLine {
  int rank = 0;
  std::string host;
  int device = 0;
  std::string gpu;     ///< device name ("NVIDIA H100 80GB HBM3")
};

struct Log {
  std::string file;
  std::string binary;                ///< "all_reduce_perf" when known, else ""
  std::optional<CollectiveOp> op;    ///< the op, when the binary is one gradwire simulates
  int threads = 1, gpus_per_thread = 1;   ///< "# nThread T nGpus G"
  int iters = 0;                     ///< timed iterations per size (0: not printed)
  std::vector<RankLine> ranks;
  std::vector<Row> rows;
  std::optional<double> avg_busbw;   ///< bytes/s, the footer's figure

  /// Ranks of the run: its "# Rank" lines, else nThread x nGpus.
  int world_size() const;
  /// Machines the ranks ran on (distinct hosts; 1 without rank lines).
  int nodes() const;
  /// The GPU name of rank 0 ("" without rank lines).
  std::string gpu() const;
};

/// Parses a log. `file` names it in errors and is used to recognise the
/// binary from a name such as "all_gather_perf.log" when the log does not
/// print it ("# Collective test starting: ..."). When neither says, the op is
/// inferred from the rows where they tell (redop sum + root -1 + count =
/// size/4: allreduce; a root >= 0 with no redop: broadcast); allgather and
/// alltoall look alike, so such a log leaves `op` empty. Throws gw::InputError.
Log parse_log(std::string_view text, const std::string& file);
/// Reads and parses a file (InputError when it cannot be read).
Log load_log(const std::string& path);

/// A profile's collective fits from logs (`gradwire calibrate
/// --from-nccl-tests`): one CollectiveCost per (op, ranks, nodes) of the logs,
/// its points the sizes above 0 B with out-of-place and in-place time as two
/// samples (fit::summarize: median and spread), fitted with
/// fit::fit_alpha_beta (max_rel_residual kept). Logs of the same (op, ranks,
/// nodes) are pooled (fit::normalize_points: median per size). Throws
/// gw::InputError naming the log when its op is unknown or not one gradwire
/// simulates, it ran on one rank, or its times cannot be fitted.
std::vector<CollectiveCost> collective_fits(const std::vector<Log>& logs);
/// Puts `fits` into `profile`, replacing its entries of the same (op, gpus,
/// nodes), with a note per fit naming its logs.
void add_collective_fits(Profile& profile, const std::vector<CollectiveCost>& fits, const std::vector<Log>& logs);

/// nccl-tests' own size grammar (-b/-e): a number with an optional K, M or G
/// suffix, powers of 1024 ("8", "128K", "8G", "1.5M"). nullopt if malformed.
std::optional<double> parse_size(std::string_view text);

/// The writer: the same layout as nccl-tests (column widths of its
/// src/common.cu), so that scripts that parse nccl-tests parse this.
struct Header {
  int ranks = 0;
  std::vector<RankLine> devices;     ///< one "#  Rank" line each
  double min_bytes = 0, max_bytes = 0;
  std::string step;                  ///< "2(factor)" or "1048576(bytes)"
};
/// The header lines up to and including the column units.
std::string format_header(const Header& h);
/// One row; both groups carry the same result (a simulation has no in-place
/// difference); #wrong is "N/A" (nothing was checked, as nccl-tests -c 0).
std::string format_row(double bytes, double count, const std::string& redop, int root, const Result& r);
/// The footer: out-of-bounds line and the average bus bandwidth (bytes/s).
std::string format_footer(double avg_busbw);
/// nccl-tests' time field: %7.0f from 10 ms, %7.1f from 100 us, else %7.2f.
std::string format_time_us(double seconds);

}  // namespace gw::nccl_tests
