// nccl-tests logs as they come (issue 29, item 6): appended runs split by
// their headers and never fused, the run of the op asked for taken, rows that
// cannot be measurements left out with a note naming their line, logs whose
// runs disagree refused; and `gradwire-calibrate --from-nccl-tests` on them:
// every refusal one FILE:LINE:COL line, exit 2, nothing written. The logs are
// tests/data/nccl-tests/good/ (usable) and bad/ (refused), made from the real
// logs beside them (tests/data/nccl-tests/README.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gradwire/core/error.hpp"
#include "gradwire/model/nccl_tests_log.hpp"
#include "gradwire/model/profile.hpp"
#include "run_util.hpp"

namespace fs = std::filesystem;
using namespace gw;

namespace {

const std::string kData = std::string(GW_SOURCE_DIR) + "/tests/data/nccl-tests/";

std::string data(const std::string& name) { return kData + name; }

std::vector<nccl_tests::Log> runs_of(const std::string& name) { return nccl_tests::load_runs(data(name)); }

/// The message of the InputError `f` throws ("" when none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

/// `text` without the lines numbered in `drop` (1-based).
std::string without_lines(const std::string& text, const std::set<int>& drop) {
  std::istringstream in(text);
  std::string out;
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    if (!drop.count(++n)) out += line + "\n";
  }
  return out;
}

/// 1-based column of the `index`-th whitespace-separated field of `line`.
int column_of_field(const std::string& line, int index) {
  int field = -1;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] != ' ' && (i == 0 || line[i - 1] == ' ') && ++field == index) return static_cast<int>(i) + 1;
  }
  return 0;
}

std::string line_of(const std::string& text, int number) {
  std::istringstream in(text);
  std::string line;
  for (int n = 0; n < number && std::getline(in, line); ++n) {
  }
  return line;
}

const char* kPick = "choose with --collectives OP";

test::RunResult calibrate(std::vector<std::string> args) {
  args.insert(args.begin(), GW_CALIBRATE_EXE);
  return test::run(args);
}

}  // namespace

// The log: an all_reduce run (16 ranks on 2 nodes) with an all_gather
// run (2 ranks on 1 node) appended was read as one "18 GPUs, 3 nodes" run.
TEST(NcclTestsRuns, AppendedRunsAreSplitByTheirHeaders) {
  const auto runs = runs_of("good/appended-ops.log");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].line, 1);
  EXPECT_EQ(runs[0].world_size(), 16);
  EXPECT_EQ(runs[0].nodes(), 2);
  EXPECT_EQ(runs[0].op, CollectiveOp::AllReduce);  // from its rows (count x 4 B = size, sum)
  EXPECT_EQ(runs[0].rows.size(), 31u);
  EXPECT_DOUBLE_EQ(*runs[0].avg_busbw, 70.742e9);
  EXPECT_EQ(runs[1].line, 57);  // its "# nThread" line
  EXPECT_EQ(runs[1].world_size(), 2);
  EXPECT_EQ(runs[1].nodes(), 1);
  EXPECT_FALSE(runs[1].op);  // allgather and alltoall rows look alike
  EXPECT_EQ(runs[1].rows.size(), 28u);
  EXPECT_EQ(runs[1].gpu(), "NVIDIA GeForce RTX 2080 Ti");
  EXPECT_EQ(runs[1].where(), data("good/appended-ops.log") + " (run 2 of 2, line 57)");
  // Readers of one run refuse it, naming both.
  const std::string one = error_of([] { nccl_tests::load_log(data("good/appended-ops.log")); });
  EXPECT_NE(
      one.find("appended-ops.log:57:1: a second run: the log holds 2 runs (line 1: all_reduce_perf, 16 ranks on 2 "
               "nodes; line 57: op not named, 2 ranks on 1 node); give one run per file"),
      std::string::npos)
      << one;
}

TEST(NcclTestsRuns, EachRunNamesItsOwnOp) {
  const auto runs = runs_of("good/appended-named-runs.log");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].op, CollectiveOp::AllReduce);
  EXPECT_EQ(runs[1].op, CollectiveOp::AllGather);
  EXPECT_EQ(runs[1].line, 42);  // its "# Collective test starting" line
  // Each as its own file would give: the same rows.
  const auto ar = nccl_tests::load_log(data("rtx2080ti-1x2-all_reduce_perf.log"));
  const auto ag = nccl_tests::load_log(data("rtx2080ti-1x2-all_gather_perf.log"));
  ASSERT_EQ(runs[0].rows.size(), ar.rows.size());
  ASSERT_EQ(runs[1].rows.size(), ag.rows.size());
  for (std::size_t i = 0; i < ag.rows.size(); ++i) EXPECT_EQ(runs[1].rows[i].in_place.time, ag.rows[i].in_place.time);
  // Both fitted, each on its own key.
  const auto fits = nccl_tests::collective_fits(nccl_tests::select_runs(runs, {}, kPick));
  ASSERT_EQ(fits.size(), 2u);
  const auto alone = nccl_tests::collective_fits({ar, ag});
  EXPECT_EQ(fits, alone);
}

TEST(NcclTestsRuns, TheRunOfTheOpAskedForIsTaken) {
  const auto runs = runs_of("good/appended-ops.log");
  // Nothing asked: the unnamed run is refused, naming the runs and the option.
  const std::string none = error_of([&] { nccl_tests::select_runs(runs, {}, kPick); });
  EXPECT_NE(none.find("appended-ops.log:57:1: the run does not say which collective it measured; the log holds 2 runs "
                      "(line 1: all_reduce_perf, 16 ranks on 2 nodes; line 57: op not named, 2 ranks on 1 node): "
                      "choose with --collectives OP"),
            std::string::npos)
      << none;
  // allreduce: the first run; the second's rows (redop none) are not an allreduce's.
  std::vector<std::string> left_out;
  const auto ar = nccl_tests::select_runs(runs, {CollectiveOp::AllReduce}, kPick, &left_out);
  ASSERT_EQ(ar.size(), 1u);
  EXPECT_EQ(ar[0].line, 1);
  EXPECT_EQ(ar[0].world_size(), 16);
  EXPECT_EQ(left_out,
            std::vector<std::string>{data("good/appended-ops.log") +
                                     ":57:1: run left out: op not named, 2 ranks on 1 node, not the collective "
                                     "asked for; using the run at line 1: all_reduce_perf, 16 ranks on 2 nodes"});
  // Every run taken: none left out.
  (void)nccl_tests::select_runs(runs_of("good/appended-named-runs.log"), {}, kPick, &left_out);
  EXPECT_TRUE(left_out.empty());
  // allgather: the unnamed run, whose rows agree (count x 4 B x 2 ranks = size).
  const auto ag = nccl_tests::select_runs(runs, {CollectiveOp::AllGather}, kPick);
  ASSERT_EQ(ag.size(), 1u);
  EXPECT_EQ(ag[0].line, 57);
  EXPECT_EQ(ag[0].op, CollectiveOp::AllGather);
  EXPECT_EQ(ag[0].binary, "all_gather_perf");
  // Two ops asked for: the unnamed run could be either; refused.
  EXPECT_NE(error_of([&] {
              nccl_tests::select_runs(runs, {CollectiveOp::AllGather, CollectiveOp::AllToAll}, kPick);
            }).find(":57:1: the run does not say"),
            std::string::npos);
  // An op no run measured.
  const std::string bcast = error_of([&] { nccl_tests::select_runs(runs, {CollectiveOp::Broadcast}, kPick); });
  EXPECT_NE(bcast.find("appended-ops.log:1:1: no run of the collectives asked for; the log holds 2 runs"),
            std::string::npos)
      << bcast;
}

TEST(NcclTestsRuns, AFileNameNamesOnlyTheRunsWhoseRowsAgree) {
  // Saved as all_reduce_perf.log, the appended all_gather run is still not an all-reduce.
  const std::string text = test::read_text(data("good/appended-ops.log"));
  const auto runs = nccl_tests::parse_runs(text, "all_reduce_perf.log");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].op, CollectiveOp::AllReduce);
  EXPECT_FALSE(runs[1].op);
  EXPECT_TRUE(nccl_tests::rows_agree(runs[1], CollectiveOp::AllGather));
  EXPECT_TRUE(nccl_tests::rows_agree(runs[1], CollectiveOp::AllToAll));
  EXPECT_FALSE(nccl_tests::rows_agree(runs[1], CollectiveOp::AllReduce));
  EXPECT_FALSE(nccl_tests::rows_agree(runs[1], CollectiveOp::Broadcast));      // per-rank size: count x 4 B != size
  EXPECT_FALSE(nccl_tests::rows_agree(runs[0], CollectiveOp::ReduceScatter));  // count x 4 B x 16 != size
}

TEST(NcclTestsRuns, RunsOfOneOpOnDifferentRankCountsAreRefused) {
  const auto runs = runs_of("bad/runs-disagree.log");
  ASSERT_EQ(runs.size(), 2u);
  const std::string e = error_of([&] { nccl_tests::select_runs(runs, {}, kPick); });
  EXPECT_NE(
      e.find("runs-disagree.log:57:1: the runs disagree: all_reduce_perf, 2 ranks on 1 node, but the run at line 1 "
             "measured the same collective as all_reduce_perf, 16 ranks on 2 nodes"),
      std::string::npos)
      << e;
}

// Rows that cannot be measurements: each left out with a note at its line
// and column, and the fit is exactly the fit of the log without those lines.
TEST(NcclTestsRuns, RowsThatCannotBeRealAreLeftOutWithANote) {
  struct Case {
    const char* file;
    std::vector<int> lines;   ///< rows left out
    std::vector<int> fields;  ///< the field each note points at (0-based)
    const char* why;
  };
  const std::vector<Case> cases = {
      {"good/wrong-rows.log", {23, 27}, {12, 8}, "#wrong is 3 (nccl-tests found wrong results"},
      {"good/zero-time-rows.log", {19, 30}, {5, 9}, "a time of 0.00 us for 4096 B cannot be measured"},
      {"good/too-fast-row.log", {37}, {5}, "1073741824 B in 1.00 us is 1.07e+15 B/s, faster than any link"},
      {"good/huge-time-row.log", {36}, {5}, "a time of 1e+308 us (or its bandwidths) is out of range"},
  };
  const auto real = nccl_tests::collective_fits({nccl_tests::load_log(data("rtx2080ti-1x2-all_reduce_perf.log"))});
  ASSERT_EQ(real.size(), 1u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file);
    const std::string text = test::read_text(data(c.file));
    const auto runs = nccl_tests::parse_runs(text, c.file);
    ASSERT_EQ(runs.size(), 1u);
    const auto& log = runs[0];
    ASSERT_EQ(log.notes.size(), c.lines.size());
    for (std::size_t i = 0; i < c.lines.size(); ++i) {
      EXPECT_EQ(log.notes[i].line, c.lines[i]);
      EXPECT_EQ(log.notes[i].column, column_of_field(line_of(text, c.lines[i]), c.fields[i]));
      EXPECT_EQ(log.notes[i].text.rfind("row skipped: ", 0), 0u) << log.notes[i].text;
    }
    const std::string first = nccl_tests::format_note(log, log.notes[0]);
    EXPECT_NE(first.find(std::string(c.file) + ":" + std::to_string(c.lines[0]) + ":"), std::string::npos) << first;
    EXPECT_NE(first.find(c.why), std::string::npos) << first;
    EXPECT_EQ(log.rows.size(), 28u - c.lines.size());
    const auto without = nccl_tests::parse_runs(without_lines(text, {c.lines.begin(), c.lines.end()}), c.file);
    EXPECT_TRUE(without[0].notes.empty());
    const auto fit = nccl_tests::collective_fits(runs);
    ASSERT_EQ(fit.size(), 1u);
    EXPECT_EQ(fit, nccl_tests::collective_fits(without));
    // Within a few percent of the real log's fit (one or two of its 28 sizes fewer).
    EXPECT_NEAR(fit[0].fit.beta / real[0].fit.beta, 1.0, 0.05);
    EXPECT_NEAR(fit[0].fit.alpha / real[0].fit.alpha, 1.0, 0.05);
  }
  // The real log's rows are all kept.
  EXPECT_TRUE(nccl_tests::load_log(data("rtx2080ti-1x2-all_reduce_perf.log")).notes.empty());
  EXPECT_TRUE(nccl_tests::load_log(data("a3mega-2x8-h100-all_reduce_perf.log")).notes.empty());
  // An old layout's "error" column (a largest difference, not a count) is no #wrong.
  const auto old = nccl_tests::parse_log(
      "           4             1     float     sum    47.54    0.00    0.00  0e+00    "
      "49.35    0.00    0.00  4e-07\n",
      "old.log");
  EXPECT_EQ(old.rows.size(), 1u);
}

TEST(NcclTestsRuns, LogsThatCannotBeUsedAreRefusedAtTheirLine) {
  EXPECT_NE(
      error_of([] {
        runs_of("bad/row-after-footer.log");
      }).find("row-after-footer.log:41:3: a result row after the run's footer (line 38) and no header of its own"),
      std::string::npos);
  const std::string wrong = error_of([] { nccl_tests::select_runs(runs_of("bad/all-rows-wrong.log"), {}, kPick); });
  EXPECT_NE(wrong.find("all-rows-wrong.log:1:1: no usable rows: every row of the run was left out ("),
            std::string::npos)
      << wrong;
  EXPECT_NE(wrong.find("all-rows-wrong.log:10:"), std::string::npos) << wrong;
  // nccl-tests built without MPI under `mpirun -np 2`: two one-rank runs, never one 2-rank run.
  const auto procs = runs_of("bad/one-rank-processes.log");
  ASSERT_EQ(procs.size(), 2u);
  EXPECT_EQ(procs[0].world_size(), 1);
  EXPECT_EQ(procs[1].world_size(), 1);
  const std::string one = error_of([&] { nccl_tests::collective_fits(nccl_tests::select_runs(procs, {}, kPick)); });
  EXPECT_NE(one.find("one-rank-processes.log:1:1: the run has one rank"), std::string::npos) << one;
  // A header without rows before a run: left out, with a note on the next run.
  const auto runs = nccl_tests::parse_runs(
      "# nThread 1 nGpus 2 minBytes 8\n#  Rank  0 Group  0 Pid 1 on a device  0 [0x00] G\n"
      "# nThread 1 nGpus 2 minBytes 8\n"
      "           8             2     float     sum      -1    12.25    0.00    0.00      0    12.00    0.00    0.00   "
      "   0\n",
      "x.log");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].line, 3);
  EXPECT_EQ(runs[0].world_size(), 2);  // nThread x nGpus: the first header's Rank line is not its
  ASSERT_EQ(runs[0].notes.size(), 1u);
  EXPECT_EQ(runs[0].notes[0].line, 1);
}

// The command: every refusal is one line naming FILE:LINE:COL, exit 2, and
// no profile.
TEST(CalibrateFromNcclTestsRuns, RefusalsAreOneLineExitTwoAndWriteNothing) {
  const fs::path dir = test::temp_scratch("gw-nccl-runs", "refused");
  const std::string out = (dir / "p.yaml").string();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"good/appended-ops.log", ":57:1: the run does not say which collective it measured"},
      {"bad/runs-disagree.log", ":57:1: the runs disagree"},
      {"bad/row-after-footer.log", ":41:3: a result row after the run's footer"},
      {"bad/all-rows-wrong.log", ":1:1: no usable rows"},
      {"bad/one-rank-processes.log", ":1:1: the run has one rank"},
  };
  for (const auto& [file, why] : cases) {
    SCOPED_TRACE(file);
    const auto r = calibrate({"--from-nccl-tests", data(file), "--profile", "h100", "--out", out});
    EXPECT_EQ(r.exit_code, 2) << r.all();
    EXPECT_EQ(r.err.find("gradwire calibrate: " + data(file) + why), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(out));
  }
  EXPECT_TRUE(fs::is_empty(dir));  // nor a temporary file
}

TEST(CalibrateFromNcclTestsRuns, CollectivesPicksTheRunAndNotesNameSkippedRows) {
  const fs::path dir = test::temp_scratch("gw-nccl-runs", "picked");
  const std::string out = (dir / "p.yaml").string();
  auto r = calibrate({"--from-nccl-tests", data("good/appended-ops.log"), "--profile", "h100", "--collectives",
                      "allgather", "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  // The run not taken is said, with the one taken (it was dropped silently).
  EXPECT_NE(r.err.find("gradwire calibrate: note: " + data("good/appended-ops.log") +
                       ":1:1: run left out: all_reduce_perf, 16 ranks on 2 nodes, not the collective asked for; using "
                       "the run at line 57: all_gather_perf, 2 ranks on 1 node\n"),
            std::string::npos)
      << r.err;
  Profile p = load_profile_file(out);
  const CollectiveCost* ag = p.collective(CollectiveOp::AllGather, 2);
  ASSERT_NE(ag, nullptr);
  EXPECT_EQ(ag->points.size(), 26u);  // the 28 rows but the two of 0 B
  EXPECT_EQ(p.collective(CollectiveOp::AllReduce, 16, 2), nullptr);
  EXPECT_EQ(p.collective(CollectiveOp::AllGather, 18, 3), nullptr);
  bool noted = false;
  for (const auto& n : p.notes)
    noted = noted || n.find("fitted from nccl-tests logs " + data("good/appended-ops.log") +
                            " (run 2 of 2, line 57)") != std::string::npos;
  EXPECT_TRUE(noted);
  fs::remove(out);

  r = calibrate({"--from-nccl-tests", data("good/wrong-rows.log"), data("good/too-fast-row.log"), "--profile", "h100",
                 "--collectives", "allreduce", "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.err.find("gradwire calibrate: note: " + data("good/wrong-rows.log") + ":23:"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("gradwire calibrate: note: " + data("good/wrong-rows.log") + ":27:"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("gradwire calibrate: note: " + data("good/too-fast-row.log") + ":37:"), std::string::npos)
      << r.err;
  p = load_profile_file(out);
  const CollectiveCost* ar = p.collective(CollectiveOp::AllReduce, 2);
  ASSERT_NE(ar, nullptr);
  EXPECT_EQ(ar->points.size(), 28u);          // every size of the two logs together
  EXPECT_NEAR(ar->fit.beta / 1e9, 3.9, 0.1);  // the log's algbw is 4.00 GB/s from 64 MiB
  noted = false;
  for (const auto& n : p.notes)
    noted = noted || n.find("with 2 row(s) left out as not real measurements") != std::string::npos;
  EXPECT_TRUE(noted);
}
