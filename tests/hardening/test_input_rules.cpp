// Input rules of hardening round 2 (issue 11, docs/hardening.md "Input rules
// and limits"), through the real binary: numbers that would be narrowed are
// refused at their field, integers are plain decimal, one YAML document per
// file, UTF-8 only, no tags, plausible physical quantities, and clear
// messages for odd paths and names. Every refusal is one line
// "FILE:LINE:COL: KEY: reason" with exit 2 and no crash.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
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

gw::test::RunOptions limit(double seconds) {
  gw::test::RunOptions o;
  o.timeout_s = seconds;
  return o;
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
}

std::string default_scenario() { return (kSource / "scenarios/default.yaml").string(); }

std::vector<nlohmann::json> records(const fs::path& results) {
  std::vector<nlohmann::json> out;
  std::istringstream in(gw::test::read_text(results));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  }
  return out;
}

void expect_refused(const gw::test::RunResult& r, const std::string& position, const std::string& message) {
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_NE(r.err.find(position), std::string::npos) << "want " << position << " in:\n" << r.err;
  EXPECT_NE(r.err.find(message), std::string::npos) << "want " << message << " in:\n" << r.err;
  EXPECT_FALSE(looks_like_crash(r.all())) << r.all();
}

}  // namespace

// Item 1. On f2c0d4f global_batch was accepted up to 2^40 and the micro-batch
// derived from it went through an unchecked static_cast<int>: 137438955520
// (2^37 + 2^31 + 2^30) ran as an "ok" point with a wrong micro-batch, 2^36 as
// a negative one. Now the field is refused at its position, before any point
// runs, and no results file is created.
TEST(InputRules, GlobalBatchThatWouldWrapIsRefusedAtTheField) {
  const auto dir = gw::test::scratch_dir("input_rules_global_batch");
  for (const char* gb : {"137438955520", "68719476736", "2147483648"}) {
    const fs::path sweep = dir / "wrap.yaml";
    write(sweep, "base: " + default_scenario() +
                     "\nevaluator: closed-form\naxes:\n  workload.accumulation: [1]\nglobal_batch: " + gb + "\n");
    const fs::path out = dir / "wrap.jsonl";
    const auto r =
        run({kBin, "sweep", "-j", "1", "--progress", "none", "--out", out.string(), sweep.string()}, limit(60));
    expect_refused(r, sweep.string() + ":5:15: global_batch: ", "out of range [1, 2147483647]");
    EXPECT_FALSE(fs::exists(out)) << gb;
  }
}

// Item 1, the derived value. A global batch that fits an int can still give
// a micro-batch above the 2^20 a scenario accepts; on f2c0d4f that point was
// evaluated with micro_batch 2^21 as if the scenario allowed it.
TEST(InputRules, DerivedMicroBatchAboveTheScenarioLimitIsInvalid) {
  const auto dir = gw::test::scratch_dir("input_rules_micro_batch");
  const fs::path sweep = dir / "big.yaml";
  write(sweep, "base: " + default_scenario() +
                   "\nevaluator: closed-form\naxes:\n  workload.accumulation: [1, 64]\nglobal_batch: 67108864\n");
  const fs::path out = dir / "big.jsonl";
  const auto r =
      run({kBin, "sweep", "-j", "1", "--progress", "none", "--out", out.string(), sweep.string()}, limit(60));
  ASSERT_EQ(r.exit_code, 0) << r.all();
  const auto recs = records(out);
  ASSERT_EQ(recs.size(), 2u);
  // 2^26 / (32 GPUs x 1) = 2^21: above the limit.
  EXPECT_EQ(recs[0]["status"], "invalid") << recs[0].dump();
  EXPECT_NE(recs[0].dump().find("micro-batch of 2097152"), std::string::npos) << recs[0].dump();
  // 2^26 / (32 x 64) = 32768: a normal point.
  EXPECT_NE(recs[1]["status"], "invalid") << recs[1].dump();
  EXPECT_EQ(recs[1]["micro_batch"], 32768) << recs[1].dump();
}

// Item 2. On f2c0d4f `sm_count: +_` reached std::stoll("+"), which threw
// std::invalid_argument: the user saw "stoll" with no file, line or key, and
// exit 1. Through a sweep axis the same value went the same way.
TEST(InputRules, IntegerSpellingsAreRefusedAtTheFieldEverywhere) {
  const auto dir = gw::test::scratch_dir("input_rules_integers");
  std::string profile =
      gw::test::read_text(fs::path(GW_HARDENING_DIR) / "corpus/profile/sm_count_sign_underscore.yaml");
  const fs::path p = dir / "p.yaml";
  write(p, profile);
  auto r = run({kBin, "check", "--kind", "profile", p.string()}, limit(30));
  expect_refused(r, p.string() + ":6:11: sm_count: ", "expected an integer, got \"+_\"");
  EXPECT_EQ(r.err.find("stoll"), std::string::npos) << r.err;

  for (const char* v : {"+_", "_", "1_0", "0x10", "0o17", "1e3", "010", "4.0"}) {
    const fs::path s = dir / "s.yaml";
    std::string text = gw::test::read_text(default_scenario());
    const auto at = text.find("micro_batch: 64");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 15, std::string("micro_batch: ") + v);
    write(s, text);
    r = run({kBin, "simulate", s.string()}, limit(60));
    expect_refused(
        r, s.string() + ":14:16: workload.micro_batch: ", std::string("expected an integer, got \"") + v + "\"");
  }

  const fs::path sweep = dir / "axis.yaml";
  write(sweep, "base: " + default_scenario() + "\naxes:\n  workload.accumulation: [1, +_]\n");
  r = run({kBin, "sweep", "-j", "1", "--progress", "none", "--out", (dir / "axis.jsonl").string(), sweep.string()},
          limit(60));
  expect_refused(r, sweep.string() + ":3:30: workload.accumulation: ", "expected an integer, got \"+_\"");
  EXPECT_FALSE(fs::exists(dir / "axis.jsonl"));
}

// Items 3 and 4 through `simulate`: on f2c0d4f a second document (even
// garbage) and invalid UTF-8 in a string were accepted without a word.
TEST(InputRules, SecondDocumentAndInvalidUtf8AreRefusedBySimulate) {
  const auto dir = gw::test::scratch_dir("input_rules_documents");
  const std::string text = gw::test::read_text(default_scenario());
  const int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  const fs::path two = dir / "two.yaml";
  write(two, text + "---\ncluster: {nodes: [\x01\n");
  auto r = run({kBin, "simulate", two.string()}, limit(60));
  expect_refused(r, two.string() + ":" + std::to_string(lines + 1) + ":1: ", "a second YAML document");

  std::string bad = text;
  const auto at = bad.find("name: resnet50-4x8-a100");
  ASSERT_NE(at, std::string::npos);
  bad.replace(at, 23, "name: resnet50-\xC3\x28x8");
  const fs::path u = dir / "utf8.yaml";
  write(u, bad);
  r = run({kBin, "simulate", u.string()}, limit(60));
  expect_refused(r, u.string() + ":4:16: ", "invalid UTF-8 (byte 0xC3)");
}

// Item 6. On f2c0d4f `calibrate --name` wrote a newline into the profile's
// name (and every prediction printed it); a profile found by name whose
// `name:` differed was used without a word; "available:" listed any .yaml in
// the profile directories, directories and non-profiles included.
TEST(InputRules, CalibrateRefusesControlCharactersInTheName) {
  const auto dir = gw::test::scratch_dir("input_rules_calibrate_name");
  for (const std::string& name : {std::string("evil\nname: x"), std::string("a\x1b[2Jb"), std::string()}) {
    const fs::path out = dir / "p.yaml";
    const auto r =
        run({kBin, "calibrate", "--device", "cpu", "--quick", "--out", out.string(), "--name", name}, limit(60));
    EXPECT_EQ(r.exit_code, 2) << r.all();
    EXPECT_NE(r.err.find("--name"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out));
  }
}

TEST(InputRules, ProfileLookupWarnsOnAForeignNameAndListsOnlyProfiles) {
  const auto dir = gw::test::scratch_dir("input_rules_profile_lookup");
  fs::copy_file(kSource / "calibrate/profiles/h100.yaml", dir / "myh100.yaml");
  write(dir / "notes.yaml", "a: 1\n");
  write(dir / "model.yaml", "schema: gradwire-model/1\n");
  fs::create_directory(dir / "sub.yaml");
  gw::test::RunOptions o = limit(60);
  o.env = {"GRADWIRE_PROFILES=" + dir.string()};
  auto r = run({kBin, "simulate", default_scenario(), "--profile", "myh100"}, o);
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.err.find("warning: " + (dir / "myh100.yaml").string() + " is named \"h100\" inside, not \"myh100\""),
            std::string::npos)
      << r.err;
  r = run({kBin, "simulate", default_scenario(), "--profile", "nosuch"}, o);
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_NE(r.err.find("myh100"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("h200-measured"), std::string::npos) << r.err;
  for (const char* other : {"notes", "model", "sub"}) {
    EXPECT_EQ(r.err.find(std::string(other) + ","), std::string::npos) << other << ": " << r.err;
    EXPECT_EQ(r.err.find(std::string(other) + ")"), std::string::npos) << other << ": " << r.err;
  }
  r = run({kBin, "simulate", default_scenario(), "--profile", " "}, o);
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_NE(r.err.find("is not a profile name or path"), std::string::npos) << r.err;
}

TEST(InputRules, EmptyProfileAndNegativeJobsAreRefused) {
  // An explicit empty --profile is not "no --profile" (f2c0d4f fell back to
  // the scenario's profile or said "no profile ... pass --profile").
  auto r = run({kBin, "simulate", default_scenario(), "--profile", ""}, limit(60));
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_NE(r.err.find("--profile: an empty profile name or path"), std::string::npos) << r.err;
  // sweep -j -5 ran with one worker per CPU on f2c0d4f.
  const auto dir = gw::test::scratch_dir("input_rules_jobs");
  for (const char* j : {"-5", "5000"}) {
    r = run({kBin, "sweep", (kSource / "scenarios" / "study-accumulation.yaml").string(), "-j", j, "--progress", "none",
             "--out", (dir / "r.jsonl").string()},
            limit(60));
    EXPECT_EQ(r.exit_code, 2) << j << ": " << r.all();
    EXPECT_NE(r.err.find("-j must be"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / "r.jsonl"));
  }
}
