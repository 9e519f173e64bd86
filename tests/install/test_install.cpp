// The installed tree (issue 29, item 3; README.md, "To install"): `cmake
// --install` of this build into a temporary prefix, then every command that
// `gradwire --help` lists, run by the installed gradwire from a folder that is
// neither the prefix nor the sources, with no GRADWIRE_* variable set: each
// finds its data (models, profiles, catalog, scenarios, the validation cases)
// beside the executable. `model export` needs PyTorch, which an install does
// not bring: it must say so in one line (no traceback), exit 1 or 2.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "commands_util.hpp"
#include "run_util.hpp"

namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

std::size_t lines_in(const std::string& text) {
  std::size_t n = 0;
  for (char c : text) n += c == '\n';
  return n + (!text.empty() && text.back() != '\n');
}

class Installed : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = gw::test::temp_scratch("gradwire-install", "run");
    prefix_ = root_ / "prefix";
    elsewhere_ = root_ / "elsewhere";
    fs::create_directories(elsewhere_);
    const auto inst = gw::test::run({GW_CMAKE_COMMAND, "--install", GW_BINARY_DIR, "--prefix", prefix_.string()});
    ASSERT_EQ(inst.exit_code, 0) << inst.all();
    bin_ = (prefix_ / "bin" / "gradwire").string();
    // Nothing may point the installed gradwire at the sources: no data
    // variable, and the current directory is elsewhere (the test process is
    // this test's own; ctest runs each test in a process of its own).
    for (const char* v : {"GRADWIRE_DATA", "GRADWIRE_DATA_DIR", "GRADWIRE_MODELS", "GRADWIRE_PROFILES",
                          "GRADWIRE_CATALOG", "GRADWIRE_PYTHON", "PYTHONPATH"})
      ::unsetenv(v);
    fs::current_path(elsewhere_);
  }
  void TearDown() override { fs::current_path(fs::temp_directory_path()); }

  gw::test::RunResult gradwire(const std::vector<std::string>& args, double timeout_s = 600) {
    std::vector<std::string> argv{bin_};
    argv.insert(argv.end(), args.begin(), args.end());
    gw::test::RunOptions o;
    o.timeout_s = timeout_s;
    return gw::test::run(argv, o);
  }

  fs::path root_, prefix_, elsewhere_;
  std::string bin_;
};

TEST_F(Installed, EveryCommandRunsFromAnotherFolder) {
  const fs::path share = prefix_ / "share" / "gradwire";
  for (const char* f : {"validation/collectives", "validation/iterations", "validation/clusters",
                        "validation/residuals.yaml", "scenarios/default.yaml", "models/resnet50.yaml"})
    EXPECT_TRUE(fs::exists(share / f)) << f;
  fs::copy_file(share / "scenarios" / "default.yaml", elsewhere_ / "default.yaml");
  write(elsewhere_ / "s.sweep.yaml",
        "base:\n  cluster: {instance: p4d.24xlarge, nodes: 1}\n  workload: {model: resnet50, micro_batch: 32}\n"
        "  training: {samples: 100000000}\naxes:\n  cluster.nodes: [1, 2]\n");

  // Each command with arguments that make it do its work, in an order where
  // a command's inputs were made by the ones before it (relative paths:
  // they are read from and written to `elsewhere`).
  const std::vector<std::pair<std::string, std::vector<std::string>>> runs = {
      {"check", {"check", "default.yaml"}},
      {"simulate", {"simulate", "default.yaml"}},
      {"collective", {"collective", "default.yaml", "--sizes", "1MiB:4MiB"}},
      {"sweep", {"sweep", "s.sweep.yaml", "-j", "1", "--progress", "none", "-o", "s.jsonl"}},
      {"merge", {"merge", "merged.jsonl", "s.jsonl"}},
      {"plan", {"plan", "s.jsonl", "--deadline", "1000h"}},
      {"report", {"report", "s.jsonl", "-o", "report"}},
      {"validate", {"validate"}},
      {"list", {"list", "models"}},
      {"calibrate", {"calibrate", "--device", "cpu", "--quick", "--out", "cpu-profile.yaml"}},
  };
  std::map<std::string, bool> covered{{"model", true}};
  for (const auto& [name, args] : runs) {
    covered[name] = true;
    const auto r = gradwire(args);
    EXPECT_EQ(r.exit_code, 0) << name << ":\n" << r.all();
    EXPECT_FALSE(gw::test::looks_like_crash(r.all())) << name << ":\n" << r.all();
  }
  EXPECT_TRUE(fs::is_regular_file(elsewhere_ / "merged.jsonl"));
  EXPECT_TRUE(fs::is_regular_file(elsewhere_ / "report" / "index.html"));
  EXPECT_TRUE(fs::is_regular_file(elsewhere_ / "cpu-profile.yaml"));
  // The profile calibrate wrote is one simulate loads.
  const auto with_profile = gradwire({"simulate", "default.yaml", "--profile", "cpu-profile.yaml"});
  EXPECT_EQ(with_profile.exit_code, 0) << with_profile.all();

  // help: the overview and each command's page.
  const auto overview = gradwire({"help"});
  EXPECT_EQ(overview.exit_code, 0) << overview.all();
  for (const auto& name : gw::test::listed_commands(bin_)) {
    EXPECT_TRUE(covered.count(name)) << "gradwire " << name << " is not run by this test";
    const auto page = gradwire({"help", name});
    EXPECT_EQ(page.exit_code, 0) << "help " << name << ":\n" << page.all();
    EXPECT_NE(page.out.find("Example: "), std::string::npos) << "help " << name;
  }

  // model export: no PyTorch in an install; one line that says what to do.
  const auto model = gradwire({"model", "export", "torchvision:resnet50", "--out", "resnet50.yaml"});
  EXPECT_TRUE(model.exit_code == 1 || model.exit_code == 2) << model.all();
  EXPECT_EQ(model.out, "");
  EXPECT_EQ(lines_in(model.err), 1u) << model.err;
  EXPECT_EQ(model.err.find("Traceback"), std::string::npos) << model.err;
  EXPECT_FALSE(fs::exists(elsewhere_ / "resnet50.yaml"));
}

TEST_F(Installed, ValidateFindsItsCasesAndRefusesABadFolderInOneLine) {
  // The bundled cases, as from the source root: the same summary.
  const auto here = gradwire({"validate", "collectives"});
  ASSERT_EQ(here.exit_code, 0) << here.all();
  const auto source = gw::test::run(
      {bin_, "validate", "collectives", "--cases", std::string(GW_SOURCE_DIR) + "/validation/collectives"});
  ASSERT_EQ(source.exit_code, 0) << source.all();
  EXPECT_EQ(here.out, source.out);

  // --cases that is not a folder of cases: one line naming it, exit 2.
  write(elsewhere_ / "a-file.yaml", "case: x\n");
  fs::create_directories(elsewhere_ / "empty");
  for (const std::string bad : {"no-such-folder", "a-file.yaml", "empty"}) {
    for (const char* kind : {"collectives", "iterations"}) {
      const auto r = gradwire({"validate", kind, "--cases", bad});
      EXPECT_EQ(r.exit_code, 2) << kind << " " << bad << "\n" << r.all();
      EXPECT_EQ(r.out, "");
      EXPECT_EQ(lines_in(r.err), 1u) << r.err;
      EXPECT_EQ(r.err.rfind("gradwire validate: " + bad + ": ", 0), 0u) << r.err;
      EXPECT_EQ(r.err.find("filesystem error"), std::string::npos) << r.err;
    }
  }
}

}  // namespace
