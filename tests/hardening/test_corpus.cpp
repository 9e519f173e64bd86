// The malformed-input corpus, through the real CLI. Every file of
// tests/hardening/corpus/<kind>/ names its expected error in a first line
// "# expect: LINE COL KEY | MESSAGE" (or, for empty and binary files, in a
// sidecar FILE.expect holding that line): `gradwire check --kind KIND FILE`
// must exit 2 and print "FILE:LINE:COL: KEY: ...MESSAGE...", the same with
// the kind auto-detected, and nothing that looks like a crash. The older
// corpora (tests/scenarios/bad, tests/models/bad, tests/calibrate/bad,
// tests/plan/bad-catalogs) go through the same command: exit 2, a
// "FILE:LINE:" position, no crash. A few files also go through `simulate`
// and `sweep` themselves.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "run_util.hpp"

namespace fs = std::filesystem;
using gw::test::looks_like_crash;
using gw::test::run;

namespace {

const std::string kBin = GW_GRADWIRE_BIN;
const fs::path kCorpus = fs::path(GW_HARDENING_DIR) / "corpus";
const fs::path kSource = GW_SOURCE_ROOT;

gw::test::RunOptions limit(double seconds) {
  gw::test::RunOptions o;
  o.timeout_s = seconds;
  return o;
}

struct Expectation {
  std::string elsewhere;  ///< "@NAME": the error is in the referenced file NAME
  int line = 0;
  int column = 0;
  std::string key;
  std::string message;
};

bool parse_expectation(const std::string& first, Expectation& e) {
  const std::string tag = "# expect: ";
  if (first.rfind(tag, 0) != 0) return false;
  std::istringstream is(first.substr(tag.size()));
  std::string bar;
  if (is >> std::ws && is.peek() == '@') {
    is.get();
    is >> e.elsewhere;
  }
  is >> e.line >> e.column >> e.key >> bar;
  if (bar != "|") return false;
  std::getline(is, e.message);
  const auto start = e.message.find_first_not_of(' ');
  e.message = start == std::string::npos ? std::string() : e.message.substr(start);
  if (e.key == "-") e.key.clear();
  return !e.message.empty();
}

struct Case {
  std::string kind;
  fs::path file;
};

std::vector<Case> corpus() {
  std::vector<Case> out;
  for (const char* kind : {"scenario", "model", "profile", "catalog", "sweep"}) {
    for (const auto& entry : fs::directory_iterator(kCorpus / kind)) {
      if (entry.path().extension() != ".expect") out.push_back({kind, entry.path()});
    }
  }
  std::sort(out.begin(), out.end(), [](const Case& a, const Case& b) { return a.file < b.file; });
  return out;
}

Expectation expectation_of(const fs::path& file) {
  fs::path sidecar = file;
  sidecar += ".expect";
  const bool has_sidecar = fs::exists(sidecar);
  std::string text = gw::test::read_text(has_sidecar ? sidecar : file);
  Expectation e;
  EXPECT_TRUE(parse_expectation(text.substr(0, text.find('\n')), e))
      << file << ": no \"# expect: LINE COL KEY | MESSAGE\" " << (has_sidecar ? "in its .expect file" : "first line");
  return e;
}

std::string position(const fs::path& file, const Expectation& e) {
  // An error in a referenced file names that file (by whatever relative path
  // it was reached): match its name.
  std::string where = e.elsewhere.empty() ? file.string() + ":" : "/" + e.elsewhere + ":";
  if (e.line > 0) where += std::to_string(e.line) + ":";
  if (e.column > 0) where += std::to_string(e.column) + ":";
  return where;
}

void expect_refusal(const gw::test::RunResult& r, const fs::path& file, const Expectation& e, const std::string& what) {
  EXPECT_EQ(r.exit_code, 2) << what << "\n" << r.all();
  EXPECT_FALSE(looks_like_crash(r.all())) << what << "\n" << r.all();
  EXPECT_NE(r.err.find(position(file, e)), std::string::npos) << what << ": want " << position(file, e) << "\n"
                                                              << r.err;
  if (!e.key.empty()) {
    EXPECT_NE(r.err.find(" " + e.key + ": "), std::string::npos) << what << "\n" << r.err;
  }
  EXPECT_NE(r.err.find(e.message), std::string::npos) << what << ": want \"" << e.message << "\"\n" << r.err;
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.kind << " " << c.file.filename().string(); }

class Corpus : public ::testing::TestWithParam<Case> {};

TEST_P(Corpus, CheckWithKindExitsTwoNamingFileLineAndField) {
  const Case& c = GetParam();
  const Expectation e = expectation_of(c.file);
  expect_refusal(run({kBin, "check", "--kind", c.kind, c.file.string()}, limit(60)), c.file, e,
                 "check --kind " + c.kind);
}

TEST_P(Corpus, CheckWithAutoDetectedKindGivesTheSameError) {
  const Case& c = GetParam();
  const Expectation e = expectation_of(c.file);
  expect_refusal(run({kBin, "check", c.file.string()}, limit(60)), c.file, e, "check (auto)");
}

INSTANTIATE_TEST_SUITE_P(Hardening, Corpus, ::testing::ValuesIn(corpus()),
                         [](const ::testing::TestParamInfo<Case>& param_info) {
                           std::string n = param_info.param.kind + "_" + param_info.param.file.filename().string();
                           for (char& ch : n) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });

TEST(CorpusSize, AtLeastFiftyBrokenInputsOverAllKinds) {
  std::size_t total = corpus().size();
  for (const char* dir : {"tests/scenarios/bad", "tests/models/bad", "tests/calibrate/bad", "tests/plan/bad-catalogs"})
    for (const auto& entry : fs::directory_iterator(kSource / dir)) {
      if (entry.path().extension() == ".yaml") ++total;
    }
  EXPECT_GE(corpus().size(), 50u);
  EXPECT_GE(total, 100u);
  for (const char* kind : {"scenario", "model", "profile", "catalog", "sweep"}) {
    std::size_t n = 0;
    for (const auto& c : corpus()) n += c.kind == kind;
    EXPECT_GE(n, 7u) << kind;
  }
}

// Issue 29, item 7: a hostile name (a line feed that forges an output line,
// a carriage return, an escape that clears the terminal, NEL, CSI, U+2028)
// is refused, and the refusal itself is one line without control characters:
// the value it quotes is spelled out ("\\n", "\\x1B").
TEST(CorpusCatalog, ARefusedHostileNameIsOneLineWithoutControlCharacters) {
  std::size_t n = 0;
  for (const auto& entry : fs::directory_iterator(kCorpus / "catalog")) {
    const std::string name = entry.path().filename().string();
    bool hostile = false;
    for (const char* prefix : {"name_", "cloud_", "region_", "gpu_", "source_", "note_"})
      hostile = hostile || name.rfind(prefix, 0) == 0;
    if (!hostile) continue;
    ++n;
    const auto r = run({kBin, "check", "--kind", "catalog", entry.path().string()}, limit(60));
    EXPECT_EQ(r.exit_code, 2) << name << "\n" << r.all();
    EXPECT_EQ(r.out, "") << name;
    ASSERT_FALSE(r.err.empty()) << name;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << name << ": " << r.err;
    for (std::size_t i = 0; i + 1 < r.err.size(); ++i) {
      const auto c = static_cast<unsigned char>(r.err[i]);
      EXPECT_FALSE(c < 0x20 || c == 0x7F) << name << ": byte " << i << " of " << r.err;
      EXPECT_FALSE(c == 0xC2 && static_cast<unsigned char>(r.err[i + 1]) <= 0x9F &&
                   static_cast<unsigned char>(r.err[i + 1]) >= 0x80)
          << name << ": byte " << i << " of " << r.err;
    }
    EXPECT_EQ(r.err.find("\nrecommendation: "), std::string::npos) << name;
  }
  EXPECT_GE(n, 10u);
}

// The corpora other areas own: each through `gradwire check --kind`.
struct OldCorpus {
  const char* dir;
  const char* kind;
};

void PrintTo(const OldCorpus& c, std::ostream* os) { *os << c.dir; }

class OlderCorpora : public ::testing::TestWithParam<OldCorpus> {};

TEST_P(OlderCorpora, EveryFileExitsTwoWithAPositionAndNoCrash) {
  const auto& oc = GetParam();
  std::size_t n = 0;
  for (const auto& entry : fs::directory_iterator(kSource / oc.dir)) {
    if (entry.path().extension() != ".yaml") continue;
    ++n;
    const std::string f = entry.path().string();
    const auto r = run({kBin, "check", "--kind", oc.kind, f}, limit(60));
    EXPECT_EQ(r.exit_code, 2) << f << "\n" << r.all();
    EXPECT_EQ(r.err.rfind(f + ":", 0), 0u) << r.err;
    EXPECT_FALSE(looks_like_crash(r.all())) << f << "\n" << r.all();
  }
  EXPECT_GT(n, 5u);
}

INSTANTIATE_TEST_SUITE_P(
    Areas, OlderCorpora,
    ::testing::Values(OldCorpus{"tests/scenarios/bad", "scenario"}, OldCorpus{"tests/models/bad", "model"},
                      OldCorpus{"tests/calibrate/bad", "profile"}, OldCorpus{"tests/plan/bad-catalogs", "catalog"}),
    [](const ::testing::TestParamInfo<OldCorpus>& param_info) { return std::string(param_info.param.kind); });

TEST(CheckCli, BundledFilesAreValidAndKindsAreDetected) {
  const auto r =
      run({kBin, "check", (kSource / "scenarios/default.yaml").string(), (kSource / "models/resnet50.yaml").string(),
           (kSource / "calibrate/profiles/h100.yaml").string(), (kSource / "catalog/instances.yaml").string(),
           (kSource / "tests/calibrate/good_base.yaml").string()},
          limit(60));
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.out.find("default.yaml: ok (scenario, 32 GPUs, model resnet50, profile"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("resnet50.yaml: ok (model resnet50,"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("h100.yaml: ok (profile"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("instances.yaml: ok (catalog of"), std::string::npos) << r.out;
}

TEST(CheckCli, OneBadFileAmongGoodOnesFailsTheRunButAllAreChecked) {
  const fs::path bad = kCorpus / "scenario/missing_model.yaml";
  const auto r = run({kBin, "check", bad.string(), (kSource / "scenarios/default.yaml").string()}, limit(60));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("default.yaml: ok"), std::string::npos) << r.all();
  EXPECT_NE(r.err.find(bad.string() + ":"), std::string::npos) << r.all();
}

TEST(CheckCli, UnknownKindAndMissingFileAreUsageErrors) {
  auto r = run({kBin, "check", "--kind", "spreadsheet", "x.yaml"}, limit(60));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--kind must be"), std::string::npos) << r.err;
  r = run({kBin, "check", "--kind", "model", "/nonexistent/dir/m.yaml"}, limit(60));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/nonexistent/dir/m.yaml: "), std::string::npos) << r.err;
  EXPECT_FALSE(looks_like_crash(r.all()));
}

// The same refusals from the commands that do the work.
TEST(Commands, SimulateReportsAMissingModelAtItsField) {
  const fs::path f = kCorpus / "scenario/missing_model.yaml";
  expect_refusal(run({kBin, "simulate", f.string()}, limit(120)), f, expectation_of(f), "simulate");
}

TEST(Commands, SimulateReportsAMissingProfileAtItsField) {
  const fs::path f = kCorpus / "scenario/missing_gpu_profile.yaml";
  expect_refusal(run({kBin, "simulate", "--format", "json", f.string()}, limit(120)), f, expectation_of(f), "simulate");
}

TEST(Commands, SimulateRefusesBinaryGarbageAndEmptyFiles) {
  for (const char* name : {"scenario/garbage.bin", "scenario/empty.yaml", "scenario/nan_latency.yaml"}) {
    const fs::path f = kCorpus / name;
    expect_refusal(run({kBin, "simulate", f.string()}, limit(120)), f, expectation_of(f), "simulate");
  }
}

TEST(Commands, SweepRefusesBeforeRunningAnything) {
  const fs::path dir = gw::test::scratch_dir("corpus-sweep");
  for (const char* name : {"sweep/missing_base.yaml", "sweep/axis_bad_value.yaml", "sweep/axis_missing_model.yaml",
                           "sweep/billion_points.yaml", "sweep/garbage.bin"}) {
    const fs::path f = kCorpus / name;
    const fs::path out = dir / (f.stem().string() + ".jsonl");
    const auto r = run({kBin, "sweep", "-j", "2", "--progress", "none", "--out", out.string(), f.string()}, limit(120));
    expect_refusal(r, f, expectation_of(f), "sweep");
    EXPECT_FALSE(fs::exists(out)) << name << ": a refused sweep must not create its results file";
  }
}

}  // namespace
