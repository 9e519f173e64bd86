// References written in a scenario (a profile or model file beside it) are
// found by one rule, whatever the command and whatever the working folder
// (issue 30's two drift bugs): `collective` used to load the profile itself
// and missed a `profile:` file beside the scenario ("file does not exist",
// exit 2) where `simulate` and `check` found it, and the "is this a path?"
// rule existed three times, two of them without ".yml": a scenario naming
// `profile: p.yml` beside it passed `check` from its parent folder and failed
// from its own.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gradwire/model/reference.hpp"
#include "run_util.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kBin = GW_GRADWIRE_BIN;

// A 2 x 8 A100 scenario without intra_node (taken from the profile) whose
// profile is the file `profile` beside it.
fs::path scenario_with_profile_beside(const std::string& name, const std::string& profile) {
  const fs::path dir = gw::test::temp_scratch("gradwire-refs", name);
  fs::copy_file(fs::path(GW_SOURCE_ROOT) / "calibrate/profiles/a100-80gb.yaml", dir / profile);
  std::ofstream(dir / "s.yaml") << "name: beside\n"
                                   "profile: "
                                << profile
                                << "\n"
                                   "cluster:\n  nodes: 2\n  gpus_per_node: 8\n  gpu: a100-80gb\n"
                                   "  nics: {count: 4, bandwidth: 100Gbps, latency: 5us}\n"
                                   "  fabric: {topology: switch, latency: 1us}\n"
                                   "workload:\n  model: resnet50\n  micro_batch: 32\n";
  return dir;
}

gw::test::RunOptions in(const fs::path& dir) {
  gw::test::RunOptions o;
  o.cwd = dir.string();
  return o;
}

}  // namespace

TEST(References, OneRuleSaysWhatIsAPath) {
  for (const char* p : {"p.yml", "p.yaml", "dir/p", "./p", "/abs/p"}) EXPECT_TRUE(gw::looks_like_path(p)) << p;
  for (const char* n : {"h100", "a100-80gb", "resnet50", "yml", "p.yaml.bak"})
    EXPECT_FALSE(gw::looks_like_path(n)) << n;
}

TEST(References, ProfileBesideTheScenarioIsFoundFromAnyFolder) {
  for (const char* profile : {"mine.yaml", "mine.yml"}) {
    const fs::path dir = scenario_with_profile_beside(std::string("any-") + profile, profile);
    for (const fs::path& cwd : {dir, dir.parent_path(), fs::path("/")}) {
      const std::string s = cwd == dir ? "s.yaml" : (dir / "s.yaml").string();
      for (const char* cmd : {"check", "simulate", "collective"}) {
        std::vector<std::string> args{kBin, cmd, s};
        if (std::string(cmd) == "collective") args.insert(args.end(), {"--sizes", "1MiB:2MiB"});
        const auto r = gw::test::run(args, in(cwd));
        EXPECT_EQ(r.exit_code, 0) << cmd << " " << s << " from " << cwd << " (" << profile << "): " << r.all();
      }
    }
  }
}

TEST(References, CollectiveUsesTheProfileSimulateUses) {
  // The same scenario's intra-node links come from the profile beside it in
  // both commands; a profile that does not exist is refused at the field.
  const fs::path dir = scenario_with_profile_beside("missing", "mine.yaml");
  fs::remove(dir / "mine.yaml");
  for (const char* cmd : {"simulate", "collective"}) {
    const auto r = gw::test::run({kBin, cmd, (dir / "s.yaml").string()});
    EXPECT_EQ(r.exit_code, 2) << cmd << ": " << r.all();
    EXPECT_NE(r.err.find("s.yaml:2:10: profile:"), std::string::npos) << cmd << ": " << r.err;
  }
}

TEST(References, CollectiveTakesTheProfilesMeasuredTransportsAsSimulateDoes) {
  // The cluster `collective` runs on is the one `simulate` resolves
  // (resolve_scenario_cluster): a profile's measured transport figures apply
  // even when intra_node is given. collective used to load a profile only for
  // a left-out intra_node, so its IB links kept the scenario's 5 us.
  const fs::path dir = gw::test::temp_scratch("gradwire-refs", "transports");
  const fs::path a100 = fs::path(GW_SOURCE_ROOT) / "calibrate/profiles/a100-80gb.yaml";
  fs::copy_file(a100, dir / "plain.yaml");
  fs::copy_file(a100, dir / "measured.yaml");
  std::ofstream(dir / "measured.yaml", std::ios::app) << "transports:\n  ib: {latency: 40us}\n";
  const auto scenario = [&](const std::string& name, const std::string& profile, const std::string& latency) {
    std::ofstream(dir / name) << "name: transports\n"
                                 "profile: "
                              << profile
                              << "\n"
                                 "cluster:\n  nodes: 2\n  gpus_per_node: 8\n  gpu: a100-80gb\n"
                                 "  intra_node: {bandwidth: 2400Gbps, latency: 1us}\n"
                                 "  nics: {count: 4, bandwidth: 100Gbps, latency: "
                              << latency
                              << ", transport: ib}\n"
                                 "  fabric: {topology: switch, latency: 1us}\n";
    const auto r = gw::test::run(
        {kBin, "collective", (dir / name).string(), "--algo", "ring", "--sizes", "8B:64KiB", "--format", "csv"});
    EXPECT_EQ(r.exit_code, 0) << r.all();
    return r.out;
  };
  const std::string measured = scenario("with-measured.yaml", "measured.yaml", "5us");
  EXPECT_EQ(measured, scenario("written.yaml", "plain.yaml", "40us"));
  EXPECT_NE(measured, scenario("table.yaml", "plain.yaml", "5us"));
}
