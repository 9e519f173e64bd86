// The command-line conventions (issue 16, item 7): every command's --help
// has examples that work from the repository root; `collective` takes its
// scenario as a positional argument like every other command; --deadline
// and a plan file's `deadline` read one duration grammar; `cmake --install`
// gives an executable that finds its data beside it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "commands_util.hpp"
#include "run_util.hpp"

namespace fs = std::filesystem;

namespace {

const std::string kBin = GW_GRADWIRE_BIN;

/// A fresh directory for one test, under the system's temporary directory.
fs::path scratch(const std::string& name) { return gw::test::temp_scratch("gradwire-conv", name); }

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

std::string sh_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

/// The commands `gradwire --help` lists.
std::vector<std::string> commands() { return gw::test::listed_commands(kBin); }

/// The "Example: ..." lines of `gradwire CMD --help`, without the prefix.
std::vector<std::string> examples(const std::string& cmd) {
  const auto r = gw::test::run({kBin, cmd, "--help"});
  EXPECT_EQ(r.exit_code, 0) << cmd << ": " << r.err;
  std::vector<std::string> lines;
  std::istringstream in(r.out);
  std::string line;
  const std::string prefix = "Example: ";
  while (std::getline(in, line))
    if (line.rfind(prefix, 0) == 0) lines.push_back(line.substr(prefix.size()));
  return lines;
}

bool has_gpu() {
#ifdef GW_TEST_HAVE_CUDA
  return gw::test::run_command("nvidia-smi -L >/dev/null 2>&1").exit_code == 0;
#else
  return false;  // a build without CUDA has no GPU path
#endif
}

/// `gradwire model`'s examples run PyTorch: the Python it would use
/// (cmd_model.cpp) imports what they use (torch, torchvision, transformers).
/// A real import, not the file's existence: a half-made .venv-torch (a
/// bin/python without torch) has the file and cannot run them.
bool has_torch() {
  const char* env = std::getenv("GRADWIRE_PYTHON");
  const std::string python =
      (env != nullptr && *env != '\0') ? std::string(env) : std::string(GW_SOURCE_DIR) + "/.venv-torch/bin/python";
  if (::access(python.c_str(), X_OK) != 0) return false;
  return gw::test::run({python, "-c", "import torch, torchvision, transformers"}).exit_code == 0;
}

TEST(HelpExamples, EveryCommandHasExamplesThatRunFromTheRepositoryRoot) {
  const auto names = commands();
  ASSERT_GE(names.size(), 10u);
  // The examples write under /tmp; here they write into a scratch folder, so
  // that concurrent runs do not share files.
  const fs::path tmp = scratch("examples");
  const std::string bin_dir = fs::path(kBin).parent_path().string();
  for (const auto& cmd : names) {
    const auto lines = examples(cmd);
    EXPECT_FALSE(lines.empty()) << "gradwire " << cmd << " --help has no \"Example:\" line";
    for (std::string line : lines) {
      EXPECT_EQ(line.rfind("gradwire ", 0), 0u) << line;
      if (cmd == "calibrate" && line.find("--device cpu") == std::string::npos && !has_gpu()) {
        std::cout << "skipped (no GPU in this build or machine): " << line << "\n";
        continue;
      }
      if (cmd == "model" && !has_torch()) {
        std::cout << "skipped (no PyTorch environment: ./setup.sh --with-torch): " << line << "\n";
        continue;
      }
      for (std::size_t at = line.find("/tmp/"); at != std::string::npos; at = line.find("/tmp/", at))
        line.replace(at, 5, tmp.string() + "/"), at += tmp.string().size() + 1;
      const std::string shell = "cd " + sh_quote(GW_SOURCE_DIR) + " && PATH=" + sh_quote(bin_dir) +
                                ":\"$PATH\" sh -c " + sh_quote(line) + " >/dev/null 2>&1";
      EXPECT_EQ(gw::test::run_command(shell).exit_code, 0) << cmd << ": " << line;
    }
  }
  fs::remove_all(tmp.parent_path());
}

const std::string kScenario = std::string(GW_SOURCE_DIR) + "/scenarios/resnet50-8xa100.yaml";

TEST(Collective, TheScenarioIsPositionalAndTheOldOptionAnAlias) {
  const auto positional = gw::test::run({kBin, "collective", kScenario, "--sizes", "1MiB:16MiB"});
  ASSERT_EQ(positional.exit_code, 0) << positional.err;
  EXPECT_NE(positional.out.find("16777216"), std::string::npos) << positional.out;
  const auto option = gw::test::run({kBin, "collective", "--scenario", kScenario, "--sizes", "1MiB:16MiB"});
  ASSERT_EQ(option.exit_code, 0) << option.err;
  EXPECT_EQ(positional.out, option.out);

  const auto both = gw::test::run({kBin, "collective", kScenario, "--scenario", kScenario});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("not both"), std::string::npos) << both.err;
  const auto none = gw::test::run({kBin, "collective", "--sizes", "1MiB"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("a scenario file is required"), std::string::npos) << none.err;
}

TEST(Collective, AlgoPatRunsAllGatherAtOneGpuPerNodeAndSaysThePair) {
  // NCCL's PAT (NCCL_ALGO=PAT): all-gather / reduce-scatter, one GPU per node.
  const std::string cluster = std::string(GW_SOURCE_DIR) + "/validation/clusters/tcp-32gbe-4x1.yaml";
  for (const char* op : {"allgather", "reducescatter"}) {
    const auto r = gw::test::run({kBin, "collective", cluster, "--op", op, "--algo", "pat", "--sizes", "1MiB"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("pat/Simple"), std::string::npos) << r.out;
  }
  const auto allreduce = gw::test::run({kBin, "collective", cluster, "--op", "allreduce", "--algo", "pat"});
  EXPECT_EQ(allreduce.exit_code, 2);
  EXPECT_NE(allreduce.err.find("pat"), std::string::npos) << allreduce.err;
  const auto eight = gw::test::run({kBin, "collective", kScenario, "--op", "allgather", "--algo", "pat"});
  EXPECT_EQ(eight.exit_code, 2);  // 8 GPUs per node: NCCL does not run PAT
  EXPECT_NE(eight.err.find("one GPU per node"), std::string::npos) << eight.err;
}

/// A small results file (2 points with a time-to-train and a price).
fs::path results(const fs::path& dir) {
  write(dir / "c.sweep.yaml",
        "base:\n  cluster: {instance: p4d.24xlarge, nodes: 2}\n"
        "  workload: {model: resnet50, micro_batch: 32}\n"
        "  training: {samples: 100000000}\n"
        "axes:\n  cluster.nodes: [1, 2]\n");
  const fs::path out = dir / "c.jsonl";
  const auto r =
      gw::test::run({kBin, "sweep", (dir / "c.sweep.yaml").string(), "-o", out.string(), "--progress", "none"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return out;
}

std::string rule_line(const std::string& out) {
  const auto at = out.find("rule: ");
  return at == std::string::npos ? "" : out.substr(at, out.find('\n', at) - at);
}

TEST(Deadline, OneDurationGrammarOnTheCommandLineAndInPlanFiles) {
  const fs::path dir = scratch("deadline");
  const fs::path res = results(dir);
  const auto hours = gw::test::run({kBin, "plan", res.string(), "--deadline", "1000h"});
  ASSERT_EQ(hours.exit_code, 0) << hours.err;
  EXPECT_NE(rule_line(hours.out).find("within 1000:00:00"), std::string::npos) << hours.out;
  // The same deadline in minutes and seconds, and in a plan file.
  for (const char* same : {"60000min", "3600000s"}) {
    const auto r = gw::test::run({kBin, "plan", res.string(), "--deadline", same});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(rule_line(r.out), rule_line(hours.out)) << same;
  }
  write(dir / "p.yaml", "results: c.jsonl\ndeadline: 1000h\n");
  const auto file = gw::test::run({kBin, "plan", (dir / "p.yaml").string()});
  EXPECT_EQ(file.exit_code, 0) << file.err;
  EXPECT_EQ(rule_line(file.out), rule_line(hours.out));

  // A bare number is refused in both places, with the grammar in the message.
  const auto bare = gw::test::run({kBin, "plan", res.string(), "--deadline", "10"});
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_NE(bare.err.find("--deadline"), std::string::npos) << bare.err;
  EXPECT_NE(bare.err.find("10h"), std::string::npos) << bare.err;
  write(dir / "bare.yaml", "results: c.jsonl\ndeadline: 10\n");
  const auto bare_file = gw::test::run({kBin, "plan", (dir / "bare.yaml").string()});
  EXPECT_EQ(bare_file.exit_code, 2);
  EXPECT_NE(bare_file.err.find("bare.yaml:2:"), std::string::npos) << bare_file.err;
  EXPECT_NE(bare_file.err.find("10h"), std::string::npos) << bare_file.err;
  fs::remove_all(dir.parent_path());
}

TEST(Install, TheInstalledBinaryFindsItsDataBesideIt) {
  const fs::path prefix = scratch("install");
  const auto inst = gw::test::run_command(sh_quote(GW_CMAKE_COMMAND) + " --install " + sh_quote(GW_BINARY_DIR) +
                                          " --prefix " + sh_quote(prefix.string()) + " 2>&1");
  ASSERT_EQ(inst.exit_code, 0) << inst.out;
  for (const char* f : {"bin/gradwire", "bin/gradwire-sim", "bin/gradwire-calibrate",
                        "share/gradwire/models/resnet50.yaml", "share/gradwire/calibrate/profiles/a100-80gb.yaml",
                        "share/gradwire/catalog/instances.yaml", "share/gradwire/scenarios/default.yaml"})
    EXPECT_TRUE(fs::exists(prefix / f)) << f;

  // From another directory, with no data variable: the model and profile the
  // bundled scenario names are found beside the binary.
  const fs::path elsewhere = scratch("elsewhere");
  fs::copy_file(prefix / "share/gradwire/scenarios/default.yaml", elsewhere / "default.yaml");
  auto simulate = [&](const std::string& bin, const std::string& data_env = "") {
    return gw::test::run_command(
        "cd " + sh_quote(elsewhere.string()) +
        " && env -u GRADWIRE_DATA -u GRADWIRE_DATA_DIR -u GRADWIRE_MODELS -u GRADWIRE_PROFILES "
        "-u GRADWIRE_CATALOG " +
        data_env + sh_quote(bin) + " simulate default.yaml 2>&1");
  };
  const auto installed = simulate((prefix / "bin/gradwire").string());
  EXPECT_EQ(installed.exit_code, 0) << installed.out;
  EXPECT_EQ(installed.out, simulate(kBin).out);  // the build tree's binary says the same
  // Without its share folder, the installed binary finds no model, unless
  // GRADWIRE_DATA (or its alias GRADWIRE_DATA_DIR) names a data folder;
  // when both are set, GRADWIRE_DATA wins.
  const std::string data = (prefix / "data").string();
  fs::rename(prefix / "share/gradwire", data);
  fs::remove_all(prefix / "share");
  const std::string bin = (prefix / "bin/gradwire").string();
  EXPECT_EQ(simulate(bin).exit_code, 2);
  const std::string nowhere = (prefix / "nowhere").string();
  EXPECT_EQ(simulate(bin, "GRADWIRE_DATA=" + sh_quote(data) + " ").out, installed.out);
  EXPECT_EQ(simulate(bin, "GRADWIRE_DATA_DIR=" + sh_quote(data) + " ").out, installed.out);
  EXPECT_EQ(simulate(bin, "GRADWIRE_DATA=" + sh_quote(data) + " GRADWIRE_DATA_DIR=" + sh_quote(nowhere) + " ").out,
            installed.out);
  EXPECT_EQ(
      simulate(bin, "GRADWIRE_DATA=" + sh_quote(nowhere) + " GRADWIRE_DATA_DIR=" + sh_quote(data) + " ").exit_code, 2);
  fs::remove_all(prefix.parent_path());
}

}  // namespace
