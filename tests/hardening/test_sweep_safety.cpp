// Sweeps, results files, merge and plan against misuse (docs/hardening.md,
// "Sweeps and results files"), through the real binary: two writers of one
// results file, duplicate and conflicting records, error records after a
// killed worker, a model or base scenario changed between runs, invalid
// UTF-8, outputs naming inputs, devices and FIFOs as inputs, tampered
// records, CRLF, bad plan constraints, progress of a long `check`, and the
// results-file corpus (tests/hardening/corpus/results/).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "run_util.hpp"

namespace fs = std::filesystem;
using gw::test::looks_like_crash;
using gw::test::run;

namespace {

const std::string kBin = GW_GRADWIRE_BIN;
const fs::path kData = fs::path(GW_HARDENING_DIR) / "data";
const fs::path kCorpus = fs::path(GW_HARDENING_DIR) / "corpus" / "results";
const fs::path kSource = GW_SOURCE_ROOT;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream is(text);
  for (std::string l; std::getline(is, l);) out.push_back(l);
  return out;
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
}

/// A copy of tests/hardening/data/NAME in `dir` whose base is the bundled
/// default scenario by absolute path.
fs::path sweep_copy(const fs::path& dir, const std::string& name) {
  std::string text = gw::test::read_text(kData / name);
  const std::string rel = "../../../scenarios/default.yaml";
  text.replace(text.find(rel), rel.size(), (kSource / "scenarios" / "default.yaml").string());
  write(dir / name, text);
  return dir / name;
}

gw::test::RunResult sweep(const fs::path& file, const fs::path& out, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args{kBin, "sweep", "-j", "2", "--progress", "none", "--out", out.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back(file.string());
  gw::test::RunOptions o;
  o.timeout_s = 120;
  return run(args, o);
}

/// The child processes of `pid` (its sweep workers).
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  std::ifstream f("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  for (pid_t c; f >> c;) out.push_back(c);
  return out;
}

void expect_clean_refusal(const gw::test::RunResult& r, const std::string& what) {
  EXPECT_EQ(r.exit_code, 2) << what << "\n" << r.all();
  EXPECT_FALSE(r.timed_out) << what;
  EXPECT_FALSE(looks_like_crash(r.all())) << what << "\n" << r.all();
  EXPECT_EQ(r.err.find("json.exception"), std::string::npos) << what << "\n" << r.err;
}

// --- 1. One writer per results file ----------------------------------------------

TEST(SweepSafety, ASecondSweepOrMergeOfTheSameResultsFileIsRefusedNamingTheHolder) {
  const fs::path dir = gw::test::scratch_dir("safety-lock");
  const fs::path slow = sweep_copy(dir, "slow.sweep.yaml");
  const fs::path small = sweep_copy(dir, "small.sweep.yaml");
  const fs::path out = dir / "slow.jsonl";
  ASSERT_EQ(sweep(small, dir / "small.jsonl").exit_code, 0);
  gw::test::RunResult second, merge;
  pid_t holder = 0;
  gw::test::RunOptions o;
  o.timeout_s = 300;
  o.while_running = [&](pid_t pid) {
    // Once the first sweep has written a record, start a second on the same
    // file, and a merge into it; then stop the first.
    if (!fs::exists(out) || gw::test::read_text(out).find('\n') == std::string::npos) return false;
    holder = pid;
    second = sweep(slow, out);
    merge = run({kBin, "merge", out.string(), (dir / "small.jsonl").string()});
    ::kill(-pid, SIGINT);
    return true;
  };
  const auto first = run({kBin, "sweep", "-j", "1", "--progress", "none", "--out", out.string(), slow.string()}, o);
  ASSERT_NE(holder, 0) << first.all();
  EXPECT_EQ(first.exit_code, 130) << first.all();
  expect_clean_refusal(second, "second sweep");
  EXPECT_NE(second.err.find(out.string()), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("PID " + std::to_string(holder)), std::string::npos) << second.err;
  expect_clean_refusal(merge, "merge into a file a sweep is writing");
  EXPECT_NE(merge.err.find("PID " + std::to_string(holder)), std::string::npos) << merge.err;
  // Whole, distinct records of the first sweep only; a rerun completes it.
  std::set<std::size_t> seen;
  for (const auto& l : lines_of(gw::test::read_text(out)))
    EXPECT_TRUE(seen.insert(nlohmann::json::parse(l).at("index").get<std::size_t>()).second) << l;
  const auto again = sweep(slow, out);
  EXPECT_EQ(again.exit_code, 0) << again.all();
  EXPECT_EQ(lines_of(gw::test::read_text(out)).size(), 24u);
  EXPECT_FALSE(fs::exists(dir / "slow.jsonl.lock")) << "the lock file is removed when the sweep ends";
}

// --- 2. Duplicate and conflicting records on resume ----------------------------------

/// small.sweep.yaml swept into DIR/r.jsonl in a new scratch directory `name`.
struct SmallSweep {
  fs::path dir, file, out;
  std::string text;  ///< the results file (8 records)
};
SmallSweep small_sweep(const std::string& name) {
  SmallSweep s;
  s.dir = gw::test::scratch_dir(name);
  s.file = sweep_copy(s.dir, "small.sweep.yaml");
  s.out = s.dir / "r.jsonl";
  const auto r = sweep(s.file, s.out);
  EXPECT_EQ(r.exit_code, 0) << r.all();
  s.text = gw::test::read_text(s.out);
  EXPECT_EQ(lines_of(s.text).size(), 8u);
  return s;
}

TEST(SweepSafety, ResumeRefusesAConflictingRecordAtItsLineAndKeepsOneOfDuplicates) {
  const SmallSweep small = small_sweep("safety-duplicates");
  const fs::path& file = small.file;
  const fs::path& out = small.out;
  const std::string& good = small.text;
  const auto lines = lines_of(good);
  ASSERT_EQ(lines.size(), 8u);

  // The same record twice (two runs that both finished it): kept once.
  write(out, good + lines[2] + "\n");
  auto r = sweep(file, out);
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.err.find("1 record repeats an earlier record of its point"), std::string::npos) << r.err;
  EXPECT_EQ(gw::test::read_text(out), good) << "a duplicate record must not survive a resume";

  // Another record of point 2: refused at its line, file untouched.
  auto j = nlohmann::ordered_json::parse(lines[2]);
  j["iteration_s"] = j["iteration_s"].get<double>() * 2;
  const std::string conflicting = good + j.dump() + "\n";
  write(out, conflicting);
  r = sweep(file, out);
  expect_clean_refusal(r, "conflicting record");
  EXPECT_NE(r.err.find(out.string() + ":9:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("point 2"), std::string::npos) << r.err;
  EXPECT_EQ(gw::test::read_text(out), conflicting);
}

// Issue 29, item 5: plan and report counted a doubled file's records twice
// ("16 points" for 8) and took any record of a point; now every reader of
// results follows merge's rule (PointRecords): an identical duplicate is
// counted once with a note, another record of a point is refused.
TEST(SweepSafety, PlanReportAndMergeCountADuplicatedRecordOnceWithANote) {
  const SmallSweep small = small_sweep("safety-duplicated-file");
  const fs::path& dir = small.dir;
  const fs::path& good = small.out;
  const std::string& text = small.text;
  ASSERT_EQ(lines_of(text).size(), 8u);
  std::string copies;
  for (int i = 0; i < 50; ++i) copies += text;  // 400 records of 8 points
  const fs::path doubled = dir / "copies.jsonl";
  write(doubled, copies);
  const std::string note = "392 records repeat an earlier record of its point";

  const auto plan = run({kBin, "plan", doubled.string()});
  EXPECT_NE(plan.out.find(" (8 points, "), std::string::npos) << plan.all();
  std::string once = run({kBin, "plan", good.string()}).out;
  once.replace(once.find(good.string()), good.string().size(), doubled.string());
  EXPECT_EQ(plan.out, once) << "the same plan as the file without its duplicates";
  EXPECT_NE(plan.err.find(note), std::string::npos) << plan.err;
  const auto json = run({kBin, "plan", "--format", "json", doubled.string()});
  EXPECT_EQ(nlohmann::json::parse(json.out).at("records"), 8) << json.out;

  const auto report = run({kBin, "report", doubled.string(), "-o", (dir / "rep").string()});
  EXPECT_EQ(report.exit_code, 0) << report.all();
  EXPECT_NE(report.out.find("(8 points,"), std::string::npos) << report.out;
  EXPECT_NE(report.err.find(note), std::string::npos) << report.err;
  EXPECT_NE(gw::test::read_text(dir / "rep" / "index.html").find(note), std::string::npos);

  const auto merge = run({kBin, "merge", (dir / "m.jsonl").string(), doubled.string()});
  EXPECT_EQ(merge.exit_code, 0) << merge.all();
  EXPECT_NE(merge.err.find("8 of 8 points"), std::string::npos) << merge.err;
  EXPECT_NE(merge.err.find("392 records repeat"), std::string::npos) << merge.err;
  EXPECT_EQ(gw::test::read_text(dir / "m.jsonl"), text);
}

// --- 3. Error records are retried ------------------------------------------------------

TEST(SweepSafety, APointWhoseWorkerWasKilledIsRunAgainOnResume) {
  const fs::path dir = gw::test::scratch_dir("safety-sigkill");
  const fs::path slow = sweep_copy(dir, "slow.sweep.yaml");
  const fs::path out = dir / "slow.jsonl";
  bool killed = false;
  gw::test::RunOptions o;
  o.timeout_s = 300;
  o.while_running = [&](pid_t pid) {
    const auto kids = children_of(pid);
    if (kids.empty()) return false;
    ::kill(kids.front(), SIGKILL);
    killed = true;
    return true;
  };
  const auto first = run({kBin, "sweep", "-j", "1", "--progress", "none", "--out", out.string(), slow.string()}, o);
  ASSERT_TRUE(killed) << first.all();
  EXPECT_EQ(first.exit_code, 1) << first.all();
  EXPECT_NE(first.err.find("1 point ended in an error"), std::string::npos) << first.err;
  std::size_t errors = 0;
  for (const auto& l : lines_of(gw::test::read_text(out))) errors += nlohmann::json::parse(l).at("status") == "error";
  EXPECT_EQ(errors, 1u);

  const auto again = sweep(slow, out);
  EXPECT_EQ(again.exit_code, 0) << again.all();
  EXPECT_NE(again.err.find("1 run now"), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("1 retried"), std::string::npos) << again.err;
  const auto lines = lines_of(gw::test::read_text(out));
  ASSERT_EQ(lines.size(), 24u);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto j = nlohmann::json::parse(lines[i]);
    EXPECT_EQ(j.at("index").get<std::size_t>(), i);
    EXPECT_EQ(j.at("status"), "ok") << lines[i];
  }
}

TEST(SweepSafety, ErrorRecordsThatRemainMakeTheSweepExitOneEveryTime) {
  const fs::path dir = gw::test::scratch_dir("safety-errors-left");
  // A profile without codecs: the PowerSGD point on gradwire's kernels fails (an error record).
  std::string profile;
  bool skip = false;
  for (const auto& l : lines_of(gw::test::read_text(kSource / "calibrate" / "profiles" / "a100-80gb.yaml"))) {
    if (l.rfind("codecs:", 0) == 0) {
      profile += "codecs: {}\n";
      skip = true;
      continue;
    }
    if (skip && !l.empty() && l[0] != ' ') skip = false;
    if (!skip) profile += l + "\n";
  }
  write(dir / "nocodecs.yaml", profile);
  write(dir / "err.sweep.yaml",
        "base: " + (kSource / "scenarios" / "default.yaml").string() + "\naxes:\n  profile: [" +
            (dir / "nocodecs.yaml").string() +
            "]\n  workload.compression: [{kind: none}, {kind: powersgd, rank: 4, implementation: gradwire}]\n");
  const fs::path out = dir / "err.jsonl";
  for (int run_no = 0; run_no < 2; ++run_no) {
    const auto r = sweep(dir / "err.sweep.yaml", out);
    EXPECT_EQ(r.exit_code, 1) << "run " << run_no << "\n" << r.all();
    EXPECT_NE(r.err.find("1 point ended in an error"), std::string::npos) << r.err;
    EXPECT_FALSE(looks_like_crash(r.all()));
    const auto lines = lines_of(gw::test::read_text(out));
    ASSERT_EQ(lines.size(), 2u) << "run " << run_no;
    EXPECT_EQ(nlohmann::json::parse(lines[1]).at("status"), "error");
  }
}

// --- 4. The identity covers every file read ----------------------------------------------

TEST(SweepSafety, ResumeAfterAModelOrTheBaseScenarioChangedIsRefusedNamingTheFile) {
  const fs::path dir = gw::test::scratch_dir("safety-identity");
  fs::copy_file(kSource / "models" / "resnet50.yaml", dir / "model.yaml");
  std::string base = gw::test::read_text(kSource / "scenarios" / "default.yaml");
  base.replace(base.find("model: resnet50"), 15, "model: " + (dir / "model.yaml").string());
  write(dir / "base.yaml", base);
  write(dir / "id.sweep.yaml", "base: base.yaml\naxes:\n  cluster.nodes: [1, 2]\n");
  const fs::path out = dir / "id.jsonl";
  ASSERT_EQ(sweep(dir / "id.sweep.yaml", out).exit_code, 0);
  const std::string before = gw::test::read_text(out);

  // The model's figures change (a comment is enough to count as a change).
  write(dir / "model.yaml", gw::test::read_text(dir / "model.yaml") + "# edited\n");
  auto r = sweep(dir / "id.sweep.yaml", out);
  expect_clean_refusal(r, "model changed");
  EXPECT_NE(r.err.find((dir / "model.yaml").string()), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(out.string() + ":1:"), std::string::npos) << r.err;
  EXPECT_EQ(gw::test::read_text(out), before);

  // Undone: resumes again. Then the base scenario changes.
  fs::copy_file(kSource / "models" / "resnet50.yaml", dir / "model.yaml", fs::copy_options::overwrite_existing);
  EXPECT_EQ(sweep(dir / "id.sweep.yaml", out).exit_code, 0);
  write(dir / "base.yaml", base + "# edited\n");
  r = sweep(dir / "id.sweep.yaml", out);
  expect_clean_refusal(r, "base changed");
  EXPECT_NE(r.err.find((dir / "base.yaml").string()), std::string::npos) << r.err;
}

// --- 5. Invalid UTF-8 ---------------------------------------------------------------------

TEST(SweepSafety, InvalidUtf8InAStringFieldGivesOneCleanOutcome) {
  const fs::path dir = gw::test::scratch_dir("safety-utf8");
  write(dir / "u.sweep.yaml",
        "base: " + (kSource / "scenarios" / "default.yaml").string() + "\naxes:\n  name: [fine, \"bad\xff\xfe\"]\n");
  const fs::path out = dir / "u.jsonl";
  for (int run_no = 0; run_no < 2; ++run_no) {
    const auto r = sweep(dir / "u.sweep.yaml", out);
    // Refused at load (exit 2) or written with U+FFFD (exit 0); never a raw
    // JSON library error, never a worker unwinding into the parent.
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 2) << r.all();
    EXPECT_FALSE(looks_like_crash(r.all())) << r.all();
    EXPECT_EQ(r.err.find("json.exception"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("type_error"), std::string::npos) << r.err;
    std::set<std::string> seen;
    for (const auto& l : lines_of(r.err)) EXPECT_TRUE(seen.insert(l).second) << "printed twice: " << l;
    if (fs::exists(out)) {
      for (const auto& l : lines_of(gw::test::read_text(out))) EXPECT_TRUE(nlohmann::json::accept(l)) << l;
    }
  }
}

// --- 6. An output that is an input ----------------------------------------------------------

TEST(SweepSafety, OutputsNamingAnInputOrAnotherFileAreRefused) {
  const fs::path dir = gw::test::scratch_dir("safety-out-in");
  const fs::path file = sweep_copy(dir, "small.sweep.yaml");
  const std::string sweep_text = gw::test::read_text(file);
  ASSERT_EQ(sweep(file, dir / "s0.jsonl", {"--shard", "0/2"}).exit_code, 0);
  ASSERT_EQ(sweep(file, dir / "s1.jsonl", {"--shard", "1/2"}).exit_code, 0);
  const std::string s0 = gw::test::read_text(dir / "s0.jsonl");

  // sweep --out naming the sweep file or its base scenario.
  auto r = sweep(file, file);
  expect_clean_refusal(r, "sweep --out SWEEP");
  EXPECT_EQ(gw::test::read_text(file), sweep_text);
  const fs::path base_copy = dir / "base.yaml";
  fs::copy_file(kSource / "scenarios" / "default.yaml", base_copy);
  write(dir / "b.sweep.yaml", "base: base.yaml\naxes:\n  cluster.nodes: [1, 2]\n");
  r = sweep(dir / "b.sweep.yaml", base_copy);
  expect_clean_refusal(r, "sweep --out BASE");
  EXPECT_EQ(gw::test::read_text(base_copy), gw::test::read_text(kSource / "scenarios" / "default.yaml"));

  // merge with OUT forgotten: shard 0 would be overwritten by shard 1.
  r = run({kBin, "merge", (dir / "s0.jsonl").string(), (dir / "s1.jsonl").string()});
  expect_clean_refusal(r, "merge s0 s1");
  EXPECT_EQ(gw::test::read_text(dir / "s0.jsonl"), s0);
  // merge OUT naming one of the shards.
  r = run({kBin, "merge", (dir / "s0.jsonl").string(), (dir / "s0.jsonl").string(), (dir / "s1.jsonl").string()});
  expect_clean_refusal(r, "merge s0 s0 s1");
  EXPECT_EQ(gw::test::read_text(dir / "s0.jsonl"), s0);
  // merge over a file that is not a results file.
  r = run({kBin, "merge", file.string(), (dir / "s0.jsonl").string()});
  expect_clean_refusal(r, "merge sweep.yaml s0");
  EXPECT_EQ(gw::test::read_text(file), sweep_text);
  // A proper merge, and merging again over its own output, work.
  EXPECT_EQ(run({kBin, "merge", (dir / "all.jsonl").string(), (dir / "s0.jsonl").string(), (dir / "s1.jsonl").string()})
                .exit_code,
            0);
  EXPECT_EQ(run({kBin, "merge", (dir / "all.jsonl").string(), (dir / "s0.jsonl").string(), (dir / "s1.jsonl").string()})
                .exit_code,
            0);
  EXPECT_EQ(lines_of(gw::test::read_text(dir / "all.jsonl")).size(), 8u);
}

// --- 7. Devices and FIFOs as inputs ------------------------------------------------------

TEST(SweepSafety, DevicesFifosAndDirectoriesAsInputsOrOutputsAreRefusedAtOnce) {
  const fs::path dir = gw::test::scratch_dir("safety-special");
  const fs::path fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const fs::path file = sweep_copy(dir, "small.sweep.yaml");
  ASSERT_EQ(sweep(file, dir / "r.jsonl").exit_code, 0);
  gw::test::RunOptions o;
  o.timeout_s = 30;
#ifndef GW_SANITIZED
  o.address_space = 2ull << 30;
#endif
  const std::string m = (dir / "m.jsonl").string();
  for (const std::string& in : std::vector<std::string>{"/dev/zero", fifo.string()}) {
    for (const auto& args : std::vector<std::vector<std::string>>{{kBin, "sweep", "--progress", "none", "--out", m, in},
                                                                  {kBin, "check", "--kind", "sweep", in},
                                                                  {kBin, "plan", in},
                                                                  {kBin, "plan", file.string(), in},
                                                                  {kBin, "merge", m, in},
                                                                  {kBin, "report", in, "-o", (dir / "rep").string()}}) {
      const auto r = run(args, o);
      std::string what;
      for (const auto& a : args) what += a + " ";
      expect_clean_refusal(r, what);
      EXPECT_LT(r.seconds, 20) << what;
      EXPECT_NE(r.err.find(in), std::string::npos) << what << "\n" << r.err;
      EXPECT_FALSE(fs::exists(m)) << what;
    }
  }
  // Outputs that are not regular files.
  for (const std::string& bad : std::vector<std::string>{"/dev/full", fifo.string(), dir.string()}) {
    auto r = run({kBin, "sweep", "--progress", "none", "--out", bad, file.string()}, o);
    expect_clean_refusal(r, "sweep --out " + bad);
    r = run({kBin, "merge", bad, (dir / "r.jsonl").string()}, o);
    expect_clean_refusal(r, "merge " + bad);
  }
}

// --- 8. Tampered records, CRLF ---------------------------------------------------------------

TEST(SweepSafety, TamperedRecordsAreRefusedAtTheirLineByPlanReportMergeAndSweep) {
  const fs::path dir = gw::test::scratch_dir("safety-tampered");
  // An instance and a training target: records with costs.
  write(dir / "c.sweep.yaml",
        "base:\n  cluster: {instance: p4d.24xlarge, nodes: 2}\n"
        "  workload: {model: resnet50, micro_batch: 32}\n"
        "  training: {samples: 1000000}\n"
        "axes:\n  cluster.nodes: [1, 2, 4]\n");
  const fs::path out = dir / "c.jsonl";
  ASSERT_EQ(sweep(dir / "c.sweep.yaml", out).exit_code, 0);
  const auto lines = lines_of(gw::test::read_text(out));
  ASSERT_EQ(lines.size(), 3u);
  ASSERT_EQ(run({kBin, "plan", out.string()}).exit_code, 0);

  struct Tamper {
    std::string name, key;
    std::function<void(nlohmann::ordered_json&)> change;
  };
  const std::vector<Tamper> tampers{
      {"negative cost", "cost.on_demand_usd", [](auto& j) { j["cost"]["on_demand_usd"] = -1000.0; }},
      {"nodes as text", "nodes", [](auto& j) { j["nodes"] = "two"; }},
      {"unknown status", "status", [](auto& j) { j["status"] = "great"; }},
      {"index beyond of", "index", [](auto& j) { j["index"] = 7; }},
      {"hours missing", "training.hours", [](auto& j) { j["training"].erase("hours"); }},
  };
  for (const auto& t : tampers) {
    auto j = nlohmann::ordered_json::parse(lines[1]);
    t.change(j);
    const fs::path bad = dir / "bad.jsonl";
    write(bad, lines[0] + "\n" + j.dump() + "\n" + lines[2] + "\n");
    const std::string where = bad.string() + ":2:1: " + t.key + ": ";
    for (const auto& args :
         std::vector<std::vector<std::string>>{{kBin, "plan", bad.string()},
                                               {kBin, "report", bad.string(), "-o", (dir / "rep").string()},
                                               {kBin, "merge", (dir / "m.jsonl").string(), bad.string()}}) {
      const auto r = run(args);
      expect_clean_refusal(r, t.name + ": " + args[1]);
      EXPECT_NE(r.err.find(where), std::string::npos) << t.name << ": " << args[1] << ": want " << where << "\n"
                                                      << r.err;
      EXPECT_EQ(r.out.find("recommendation"), std::string::npos) << r.out;
    }
    EXPECT_FALSE(fs::exists(dir / "m.jsonl"));
    EXPECT_FALSE(fs::exists(dir / "rep"));
    fs::copy_file(bad, out, fs::copy_options::overwrite_existing);
    const auto r = sweep(dir / "c.sweep.yaml", out);
    expect_clean_refusal(r, t.name + ": sweep resume");
    EXPECT_NE(r.err.find(out.string() + ":2:1: " + t.key + ": "), std::string::npos) << r.err;
  }
}

TEST(SweepSafety, CrlfRecordsAreReadWithoutTheCarriageReturn) {
  const fs::path dir = gw::test::scratch_dir("safety-crlf");
  const fs::path file = sweep_copy(dir, "small.sweep.yaml");
  const fs::path out = dir / "r.jsonl";
  ASSERT_EQ(sweep(file, out).exit_code, 0);
  const std::string good = gw::test::read_text(out);
  auto lines = lines_of(good);
  // The first five records, with CRLF line ends: the resume completes it.
  std::string crlf;
  for (std::size_t i = 0; i < 5; ++i) crlf += lines[i] + "\r\n";
  write(out, crlf);
  const auto r = sweep(file, out);
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(gw::test::read_text(out), good) << "the canonical file holds no CR";
  // merge and plan read CRLF files too; merge writes no CR.
  write(dir / "crlf.jsonl", crlf);
  EXPECT_EQ(run({kBin, "merge", (dir / "m.jsonl").string(), (dir / "crlf.jsonl").string()}).exit_code, 0);
  EXPECT_EQ(gw::test::read_text(dir / "m.jsonl").find('\r'), std::string::npos);
}

// --- 9. Plan's constraints --------------------------------------------------------------------

TEST(SweepSafety, PlanRefusesNonFiniteOrNonPositiveConstraintsAndMissingFiles) {
  const fs::path dir = gw::test::scratch_dir("safety-plan");
  write(dir / "c.sweep.yaml",
        "base:\n  cluster: {instance: p4d.24xlarge, nodes: 2}\n"
        "  workload: {model: resnet50, micro_batch: 32}\n"
        "  training: {samples: 1000000}\n"
        "axes:\n  cluster.nodes: [1, 2]\n");
  const fs::path out = dir / "c.jsonl";
  ASSERT_EQ(sweep(dir / "c.sweep.yaml", out).exit_code, 0);
  for (const auto& [opt, value] : std::vector<std::pair<std::string, std::string>>{{"--budget", "nan"},
                                                                                   {"--budget", "inf"},
                                                                                   {"--budget", "-5"},
                                                                                   {"--budget", "0"},
                                                                                   {"--deadline", "nan"},
                                                                                   {"--deadline", "-inf"},
                                                                                   {"--deadline", "0"},
                                                                                   {"--deadline", "-1"}}) {
    const auto r = run({kBin, "plan", out.string(), opt, value});
    expect_clean_refusal(r, opt + " " + value);
    EXPECT_NE(r.err.find(opt), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("recommendation"), std::string::npos) << r.out;
  }
  write(dir / "p.yaml", "results: c.jsonl\nbudget: 0\n");
  auto r = run({kBin, "plan", (dir / "p.yaml").string()});
  expect_clean_refusal(r, "plan file budget 0");
  EXPECT_NE(r.err.find("p.yaml:2:"), std::string::npos) << r.err;
  r = run({kBin, "plan", (dir / "missing.jsonl").string()});
  expect_clean_refusal(r, "plan missing.jsonl");
  EXPECT_NE(r.err.find("missing.jsonl"), std::string::npos) << r.err;
}

// --- 10. A long check says how far it is ----------------------------------------------------

TEST(SweepSafety, CheckOfALargeSweepReportsProgress) {
  const fs::path dir = gw::test::scratch_dir("safety-check-progress");
  std::string axes = "axes:\n  workload.micro_batch: [";
  for (int i = 1; i <= 100; ++i) axes += (i > 1 ? ", " : "") + std::to_string(i);
  axes += "]\n  workload.accumulation: [";
  for (int i = 1; i <= 200; ++i) axes += (i > 1 ? ", " : "") + std::to_string(i);
  axes += "]\n";
  write(dir / "big.sweep.yaml", "base: " + (kSource / "scenarios" / "default.yaml").string() + "\n" + axes);
  gw::test::RunOptions o;
  o.timeout_s = 300;
  const auto r = run({kBin, "check", (dir / "big.sweep.yaml").string()}, o);
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.out.find("sweep of 20000 points"), std::string::npos) << r.out;
  // 20,000 points take several seconds: progress lines on stderr (every 2 s).
  if (r.seconds > 3) {
    EXPECT_NE(r.err.find("validated "), std::string::npos) << r.seconds << " s\n" << r.err;
    EXPECT_NE(r.err.find(" of 20000 points"), std::string::npos) << r.err;
  }
}

// --- 11. The results-file corpus -------------------------------------------------------------

struct Expect {
  int line = 0;
  std::string key, message;
};

Expect expectation(const fs::path& file) {
  // FILE.expect: "# expect: LINE COL KEY | MESSAGE" (docs/hardening.md).
  const std::string text = gw::test::read_text(fs::path(file.string() + ".expect"));
  Expect e;
  std::istringstream is(text.substr(std::string("# expect: ").size()));
  int col = 0;
  std::string bar;
  is >> e.line >> col >> e.key >> bar;
  std::getline(is, e.message);
  e.message = e.message.substr(e.message.find_first_not_of(' '));
  if (e.key == "-") e.key.clear();
  return e;
}

TEST(SweepSafety, ResultsCorpusIsRefusedByPlanReportAndMergeAtFileLine) {
  const fs::path dir = gw::test::scratch_dir("safety-corpus");
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(kCorpus))
    if (e.path().extension() == ".jsonl") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 10u);
  for (const auto& f : files) {
    const Expect e = expectation(f);
    const std::string where = f.string() + ":" + std::to_string(e.line) + ":";
    for (const auto& args :
         std::vector<std::vector<std::string>>{{kBin, "plan", f.string()},
                                               {kBin, "report", f.string(), "-o", (dir / "rep").string()},
                                               {kBin, "merge", (dir / "m.jsonl").string(), f.string()}}) {
      const auto r = run(args);
      const std::string what = f.filename().string() + " through " + args[1];
      expect_clean_refusal(r, what);
      EXPECT_NE(r.err.find(where), std::string::npos) << what << ": want " << where << "\n" << r.err;
      if (!e.key.empty()) {
        EXPECT_NE(r.err.find(" " + e.key + ": "), std::string::npos) << what << "\n" << r.err;
      }
      EXPECT_NE(r.err.find(e.message), std::string::npos) << what << ": want \"" << e.message << "\"\n" << r.err;
      EXPECT_FALSE(fs::exists(dir / "m.jsonl")) << what;
      EXPECT_FALSE(fs::exists(dir / "rep")) << what;
    }
  }
}

}  // namespace
