// Issue 29, items 8, 13 and 16, through the real binary: a killed `report`
// leaves no temporary folder; the file size limit (ulimit -f) is an error in
// words with no partial file; errors name the file they are in (the catalog)
// and list only what was asked for (models); "did you mean" for commands;
// warnings when a profile or measured compute of another device drives a
// GPU prediction; `plan` says what it reads; a deadline in days.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "run_util.hpp"

namespace fs = std::filesystem;
using gw::test::looks_like_crash;
using gw::test::run;

namespace {

const std::string kBin = GW_GRADWIRE_BIN;
const fs::path kSource = GW_SOURCE_ROOT;
const fs::path kData = fs::path(GW_HARDENING_DIR) / "data";

std::string default_scenario() { return (kSource / "scenarios/default.yaml").string(); }

/// Entries of `dir` whose name holds ".tmp" (temporary files and folders).
std::vector<std::string> temporaries(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(".tmp") != std::string::npos) out.push_back(e.path().string());
  return out;
}

std::size_t lines_in(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

/// A results file of the hardening's small sweep (8 points), made once per
/// test process, in a folder of its own: ctest runs several of these tests
/// at once, and a shared folder let one process's sweep remove another's.
const fs::path& small_results() {
  static const fs::path out = [] {
    const fs::path dir = gw::test::temp_scratch("gw-ux-results", "sweep");
    const fs::path r = dir / "small.jsonl";
    const auto s = run(
        {kBin, "sweep", "-j", "2", "--progress", "none", "--out", r.string(), (kData / "small.sweep.yaml").string()},
        gw::test::within(600));
    EXPECT_EQ(s.exit_code, 0) << s.all();
    return r;
  }();
  return out;
}

}  // namespace

// --- Item 8: signals, limits and where errors are ------------------------------------------

/// `report` with a gnuplot that never finishes, signalled (to its process, or
/// to the group as a terminal's ^C) once its temporary folder exists.
void interrupt_report(int sig, bool group) {
  const fs::path dir = gw::test::scratch_dir("ux-report-signal-" + std::to_string(sig) + (group ? "-group" : ""));
  const fs::path gnuplot = dir / "slow-gnuplot.sh";
  gw::test::write_text(gnuplot, "#!/bin/sh\nexec sleep 60\n");
  fs::permissions(gnuplot, fs::perms::owner_all);
  gw::test::RunOptions o = gw::test::within(120);
  o.while_running = [&](pid_t pid) {
    if (temporaries(dir).empty()) return false;
    ::kill(group ? -pid : pid, sig);
    return true;
  };
  const auto r = run(
      {kBin, "report", small_results().string(), "--out", (dir / "rep").string(), "--gnuplot", gnuplot.string()}, o);
  ASSERT_FALSE(r.timed_out) << r.all();
  EXPECT_EQ(r.signal, sig) << "ended as the signal would end it\n" << r.all();
  EXPECT_FALSE(looks_like_crash(r.all())) << r.all();
  EXPECT_TRUE(temporaries(dir).empty()) << temporaries(dir).front();
  EXPECT_FALSE(fs::exists(dir / "rep"));
}

TEST(UxSignals, SigtermToAReportLeavesNoTemporaryFolder) { interrupt_report(SIGTERM, false); }
TEST(UxSignals, SighupToAReportLeavesNoTemporaryFolder) { interrupt_report(SIGHUP, false); }
TEST(UxSignals, SigintToTheGroupOfAReportLeavesNoTemporaryFolder) { interrupt_report(SIGINT, true); }

TEST(UxLimits, FileSizeLimitIsAnErrorInWordsWithNoPartialFile) {
  // ulimit -f 2 (1 KiB in dash's 512-byte blocks, 2 KiB in bash's): the
  // trace (tens of KB) cannot be written. Before: SIGXFSZ, "File size limit
  // exceeded (core dumped)", and a partial temporary file.
  const fs::path dir = gw::test::scratch_dir("ux-fsize-trace");
  const fs::path trace = dir / "t.json";
  const auto r = run({"/bin/sh", "-c", "ulimit -f 2 && exec \"$0\" simulate \"$1\" --trace \"$2\"", kBin,
                      default_scenario(), trace.string()},
                     gw::test::within(120));
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_EQ(r.signal, 0) << r.all();
  EXPECT_NE(r.err.find("the file size limit, ulimit -f, is reached"), std::string::npos) << r.err;
  EXPECT_EQ(lines_in(r.err), 1u) << r.err;
  EXPECT_FALSE(looks_like_crash(r.all())) << r.all();
  EXPECT_FALSE(fs::exists(trace));
  EXPECT_TRUE(temporaries(dir).empty());
}

TEST(UxLimits, FileSizeLimitDuringASweepKeepsWholeRecordsOnly) {
  // 4 KiB or less: a few records of the 8 fit, then an append fails part way.
  const fs::path dir = gw::test::scratch_dir("ux-fsize-sweep");
  const fs::path out = dir / "r.jsonl";
  const auto r = run({"/bin/sh", "-c", "ulimit -f 8 && exec \"$0\" sweep -j 1 --progress none --out \"$1\" \"$2\"",
                      kBin, out.string(), (kData / "small.sweep.yaml").string()},
                     gw::test::within(600));
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_EQ(r.signal, 0) << r.all();
  EXPECT_NE(r.err.find("ulimit -f"), std::string::npos) << r.err;
  EXPECT_FALSE(looks_like_crash(r.all())) << r.all();
  EXPECT_TRUE(temporaries(dir).empty());
  if (fs::exists(out)) {
    const std::string text = gw::test::read_text(out);
    EXPECT_TRUE(text.empty() || text.back() == '\n') << "a partial record was left";
  }
}

namespace {
/// A catalog of the user's (GRADWIRE_CATALOG) with one instance, mybox, of
/// `gpu` at `on_demand` USD per hour (its gpu on line 8, its price on 13).
void write_user_catalog(const fs::path& file, const std::string& gpu, const std::string& on_demand) {
  gw::test::write_text(
      file,
      "schema: gradwire-catalog/2\ncurrency: USD\ninstances:\n  - name: mybox\n    as_of: 2025-01-01\n    cloud: "
      "onprem\n"
      "    region: here\n    gpu: " +
          gpu +
          "\n    gpus: 8\n    gpu_memory: 80GB\n"
          "    intra_node: {bandwidth: 450GB/s, latency: 1us}\n    nics: {count: 8, bandwidth: 400Gbps, latency: 5us}\n"
          "    price: {on_demand: " +
          on_demand + "}\n    source: me\n");
}
}  // namespace

TEST(UxErrors, CatalogErrorsOfASweepNameTheCatalog) {
  // A bad GRADWIRE_CATALOG was reported at the sweep file's base line, as if
  // the sweep were wrong.
  const fs::path dir = gw::test::scratch_dir("ux-catalog-error");
  write_user_catalog(dir / "mine.yaml", "h100", "-3");
  gw::test::write_text(
      dir / "s.sweep.yaml",
      "name: s\nbase:\n  name: x\n  cluster: {instance: p4d.24xlarge, nodes: 1}\n  workload:\n    model: resnet50\n"
      "    micro_batch: 64\naxes:\n  cluster.nodes: [1, 2]\n");
  gw::test::RunOptions o = gw::test::within(60);
  o.env = {"GRADWIRE_CATALOG=" + (dir / "mine.yaml").string()};
  const std::string sweep = (dir / "s.sweep.yaml").string();
  for (const auto& args : {std::vector<std::string>{kBin, "check", sweep},
                           std::vector<std::string>{kBin, "sweep", sweep, "--out", (dir / "r.jsonl").string()}}) {
    const auto r = run(args, o);
    EXPECT_EQ(r.exit_code, 2) << args[1] << ": " << r.all();
    EXPECT_EQ(r.err.find(sweep + ":"), std::string::npos) << args[1] << ": " << r.err;
    EXPECT_NE(r.err.find((dir / "mine.yaml").string() + ":13:"), std::string::npos) << args[1] << ": " << r.err;
    EXPECT_NE(r.err.find("instances[0].price.on_demand"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("(sweep point 0:"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir / "r.jsonl"));
}

TEST(UxErrors, AFailedModelLookupListsOnlyModels) {
  // The scenario's own folder is searched for models: its other scenarios
  // were listed as "available" models.
  const fs::path dir = gw::test::scratch_dir("ux-model-lookup");
  std::string text = gw::test::read_text(default_scenario());
  text.replace(text.find("model: resnet50"), 15, "model: resnet-5O");
  gw::test::write_text(dir / "a.yaml", text);
  gw::test::write_text(dir / "other-scenario.yaml", gw::test::read_text(default_scenario()));
  fs::copy_file(kSource / "models/mlp-tiny.yaml", dir / "my-model.yaml");
  const auto r = run({kBin, "check", (dir / "a.yaml").string()}, gw::test::within(60));
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_NE(r.err.find("no model named \"resnet-5O\""), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("my-model"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("resnet50"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("other-scenario"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("available: a,"), std::string::npos) << r.err;
}

// --- Warnings: another device's figures drive a GPU prediction -------------------------------

TEST(UxWarnings, AProfileOfAnotherGpuIsSaid) {
  // default.yaml: cluster.gpu a100-80gb.
  auto r = run({kBin, "simulate", default_scenario(), "--profile", "h100"}, gw::test::within(120));
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.err.find("gradwire simulate: warning: profile \"h100\" is of another GPU"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("than cluster.gpu a100-80gb"), std::string::npos) << r.err;
  EXPECT_EQ(lines_in(r.err), 1u) << r.err;
  r = run({kBin, "check", default_scenario()}, gw::test::within(60));
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << "its own GPU's profile: " << r.err;
}

TEST(UxWarnings, ACpuProfileAndCpuMeasuredComputeAreSaid) {
  const fs::path dir = gw::test::scratch_dir("ux-cpu-profile");
  std::string profile = gw::test::read_text(kSource / "calibrate/profiles/a100-80gb.yaml");
  const auto at = profile.find("device: ");
  profile.replace(at, profile.find('\n', at) - at, "device: \"CPU Some Xeon\"");
  gw::test::write_text(dir / "cpu.yaml", profile);
  auto r = run({kBin, "simulate", default_scenario(), "--profile", (dir / "cpu.yaml").string()}, gw::test::within(120));
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.err.find("was measured on a CPU (CPU Some Xeon)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not a a100-80gb's"), std::string::npos) << r.err;
  // Measured compute without a CUDA version was timed on the CPU
  // (bridge/gradwire_torch/measure.py writes one only for --device cuda).
  r = run({kBin, "check", (kSource / "tests/replay/data/tiny-measured.yaml").string()}, gw::test::within(60));
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.err.find("tiny-convnet-measured.yaml was timed on a CPU"), std::string::npos) << r.err;
}

// --- Item 13: did you mean --------------------------------------------------------------------

TEST(UxSuggest, MistypedCommandsAreNamed) {
  auto r = run({kBin, "simulat"}, gw::test::within(30));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("gradwire: unknown command \"simulat\"; did you mean \"simulate\"?"), std::string::npos)
      << r.err;
  r = run({kBin, "help", "swep"}, gw::test::within(30));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown command \"swep\"; did you mean \"sweep\"?"), std::string::npos) << r.err;
  r = run({kBin, "frobnicate"}, gw::test::within(30));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.find("did you mean"), std::string::npos) << r.err;
}

TEST(UxSuggest, MistypedProfileNamesAreNamed) {
  const auto r = run({kBin, "simulate", default_scenario(), "--profile", "h10O"}, gw::test::within(60));
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_NE(r.err.find("did you mean \"h100\"?"), std::string::npos) << r.err;
}

TEST(UxSuggest, AMistypedGpuInTheUsersCatalogIsNamed) {
  // The catalog's own gpu field listed the classes but suggested none, where
  // cluster.gpu did; one reader of fixed names (as_enum) now suggests for all.
  const fs::path dir = gw::test::scratch_dir("ux-catalog-gpu");
  write_user_catalog(dir / "mine.yaml", "h10O", "3");
  gw::test::write_text(dir / "s.yaml",
                       "cluster: {instance: mybox, nodes: 2}\nworkload: {model: resnet50, micro_batch: 64}\n");
  gw::test::RunOptions o = gw::test::within(60);
  o.env = {"GRADWIRE_CATALOG=" + (dir / "mine.yaml").string()};
  const auto r = run({kBin, "simulate", (dir / "s.yaml").string()}, o);
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_NE(r.err.find((dir / "mine.yaml").string() + ":8:10: instances[0].gpu: \"h10O\" is not one of: "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("; did you mean \"h100\"?"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

// --- Item 16: plan's input, days, durations in words -----------------------------------------

TEST(UxPlan, AScenarioGivenToPlanSaysWhatPlanReads) {
  const auto r = run({kBin, "plan", default_scenario()}, gw::test::within(60));
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_EQ(r.err.rfind("gradwire plan: " + default_scenario() + ":", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("is a scenario; plan reads sweep results (.jsonl from gradwire sweep)"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "");
}

TEST(UxPlan, ADeadlineInDaysIsThatManyHours) {
  const auto days = run({kBin, "plan", small_results().string(), "--deadline", "2d"}, gw::test::within(60));
  const auto hours = run({kBin, "plan", small_results().string(), "--deadline", "48h"}, gw::test::within(60));
  EXPECT_EQ(days.exit_code, hours.exit_code) << days.all();
  EXPECT_EQ(days.out, hours.out);
  EXPECT_NE(days.out.find("finishes within 48:00:00"), std::string::npos) << days.out;
  const fs::path dir = gw::test::scratch_dir("ux-plan-days");
  gw::test::write_text(dir / "p.yaml", "results: " + small_results().string() + "\ndeadline: 2d\n");
  const auto file = run({kBin, "plan", (dir / "p.yaml").string()}, gw::test::within(60));
  EXPECT_EQ(file.out, hours.out);
}

TEST(UxDurations, TimeToTrainReadsInWordsBesideHoursMinutesSeconds) {
  const fs::path dir = gw::test::scratch_dir("ux-words");
  std::string text = gw::test::read_text(default_scenario());
  text += "training: {samples: 1200000000}\n";
  gw::test::write_text(dir / "s.yaml", text);
  const auto r = run({kBin, "simulate", (dir / "s.yaml").string()}, gw::test::within(120));
  ASSERT_EQ(r.exit_code, 0) << r.all();
  const auto at = r.out.find("time-to-train: ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
  // "... = H:MM:SS (h:mm:ss, D d H h; ..." or "H h M min" below a day.
  const auto open = line.find("(h:mm:ss, ");
  ASSERT_NE(open, std::string::npos) << line;
  const std::string words = line.substr(open + 10, line.find(';', open) - open - 10);
  EXPECT_TRUE(words.find(" d") != std::string::npos || words.find(" h") != std::string::npos) << line;
}
