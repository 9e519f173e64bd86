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
//
// Logs as people keep them: several runs appended to one file (a header per
// run, "# Collective test starting: ...", "# nThread ...", "#  Rank ...", the
// column header), each read as a run of its own, never fused; rows that
// cannot be measurements (a non-zero #wrong count, a 0 us time, a time over
// an hour, a size moved faster than kMaxCollectiveBeta) are left out, each
// with a note naming its line.
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
  double time = 0;    ///< seconds (the log prints us)
  double algbw = 0;   ///< bytes/s (the log prints GB/s)
  double busbw = 0;   ///< bytes/s
  std::string wrong;  ///< the #wrong (or old "error") column as printed: "0", "N/A", "1e-07"
};

struct Row {
  double bytes = 0;   ///< the size column
  double count = 0;   ///< elements (per rank for allgather, reducescatter, alltoall)
  std::string type;   ///< float, half, ...
  std::string redop;  ///< sum, none, ... ("" in old layouts without it)
  std::optional<int> root;
  Result out_of_place, in_place;
  int line = 0;  ///< where it was read
};

struct RankLine {
  int rank = 0;
  std::string host;
  int device = 0;
  std::string gpu;  ///< device name ("NVIDIA H100 80GB HBM3")
};

/// Something the reader left out, at file:line:column.
struct Note {
  int line = 0, column = 0;
  std::string text;  ///< "row skipped: ..."
};

/// One run: a header and its rows.
struct Log {
  std::string file;
  int line = 0;                          ///< where the run starts (its first header line or row)
  int run = 1, runs = 1;                 ///< this run's number in the file, and the file's runs
  std::string binary;                    ///< "all_reduce_perf" when known, else ""
  std::optional<CollectiveOp> op;        ///< the op, when the binary is one gradwire simulates
  int threads = 1, gpus_per_thread = 1;  ///< "# nThread T nGpus G"
  int iters = 0;                         ///< timed iterations per size (0: not printed)
  std::vector<RankLine> ranks;
  std::vector<Row> rows;
  std::optional<double> avg_busbw;  ///< bytes/s, the footer's figure
  std::vector<Note> notes;          ///< rows left out as not real measurements

  /// Ranks of the run: its "# Rank" lines, else nThread x nGpus.
  int world_size() const;
  /// Machines the ranks ran on (distinct hosts; 1 without rank lines).
  int nodes() const;
  /// The GPU name of rank 0 ("" without rank lines).
  std::string gpu() const;
  /// "all_reduce_perf, 16 ranks on 2 nodes" ("op not named" without one).
  std::string describe() const;
  /// "FILE" for the only run of a file, "FILE (run 2 of 3, line 45)" else.
  std::string where() const;
};

/// A note as a line: "FILE:LINE:COL: row skipped: ...".
std::string format_note(const Log& log, const Note& note);

/// Parses every run of a log. A run starts at a header line ("# Collective
/// test starting", "# nThread", "# Using devices", "#  Rank", the column
/// header) after the previous run's rows, or at a second "Collective test
/// starting" or "nThread" line; a run without rows is left out with a note on
/// the next run. `file` names it in errors and is used to recognise the
/// binary from a name such as "all_gather_perf.log" for the runs that do not
/// print it ("# Collective test starting: ..."), where their rows agree with
/// that op (its redop and size convention). When neither says, the op is
/// inferred from the rows where they tell (redop sum + root -1 + count =
/// size/4: allreduce; a root >= 0 with no redop: broadcast); allgather and
/// alltoall look alike, so such a run leaves `op` empty. A row after a run's
/// footer with no header of its own, or a file without rows, is an error.
/// Throws gw::InputError.
std::vector<Log> parse_runs(std::string_view text, const std::string& file);
/// Reads and parses a file (InputError when it cannot be read).
std::vector<Log> load_runs(const std::string& path);
/// The only run of a log: parse_runs, and an InputError naming the runs
/// found when there are several (split the file).
Log parse_log(std::string_view text, const std::string& file);
Log load_log(const std::string& path);

/// Whether `log`'s rows could be `op`'s: nccl-tests' redop for it ("none" or
/// a reduction) and its size convention (count x type size, x ranks for a
/// total). Rows without a redop column or with an unknown type pass.
bool rows_agree(const Log& log, CollectiveOp op);

/// The runs of one file to fit (`gradwire calibrate --from-nccl-tests`):
/// with `ops` empty every run, each of a known op; else the runs of `ops`
/// (a run whose op is not named is taken as the one op of `ops` when its
/// rows agree). Throws gw::InputError naming the runs found and how to pick
/// (`pick`, e.g. "--collectives OP") when a run's op is not known or no run
/// is left, and when two runs of one op ran on different rank or node counts.
/// `left_out` (when given) gets one line per run not taken ("FILE:LINE:1:
/// run left out: ..., not the collective asked for; using the run at line
/// N: ..."), for the command to print as a note.
std::vector<Log> select_runs(std::vector<Log> runs, const std::vector<CollectiveOp>& ops, const std::string& pick,
                             std::vector<std::string>* left_out = nullptr);

/// A profile's collective fits from logs (`gradwire calibrate
/// --from-nccl-tests`): one CollectiveCost per (op, ranks, nodes) of the runs
/// (select_runs picks them), its points the sizes above 0 B with out-of-place
/// and in-place time as two samples (fit::summarize: median and spread),
/// fitted with fit::fit_alpha_beta (max_rel_residual kept). Runs of the same
/// (op, ranks, nodes) are pooled (fit::normalize_points: median per size).
/// Throws gw::InputError naming the run's file and line when its op is
/// unknown or not one gradwire simulates, it ran on one rank, or its times
/// cannot be fitted.
std::vector<CollectiveCost> collective_fits(const std::vector<Log>& logs);
/// Puts `fits` into `profile`, replacing its entries of the same (op, gpus,
/// nodes), with a note per fit naming its runs (and how many rows each left out).
void add_collective_fits(Profile& profile, const std::vector<CollectiveCost>& fits, const std::vector<Log>& logs);

/// nccl-tests' own size grammar (-b/-e): a number with an optional K, M or G
/// suffix, powers of 1024 ("8", "128K", "8G", "1.5M"). nullopt if malformed.
std::optional<double> parse_size(std::string_view text);

/// The writer: the same layout as nccl-tests (column widths of its
/// src/common.cu), so that scripts that parse nccl-tests parse this.
struct Header {
  int ranks = 0;
  std::vector<RankLine> devices;  ///< one "#  Rank" line each
  double min_bytes = 0, max_bytes = 0;
  std::string step;  ///< "2(factor)" or "1048576(bytes)"
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
