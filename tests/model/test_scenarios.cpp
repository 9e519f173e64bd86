// Scenario loading: good files load with the right values; every file of the
// malformed corpus (tests/scenarios/bad) is rejected with the file, line,
// column and key path its "# expect:" header names, and `gradwire check`
// exits with code 2 printing that position.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gradwire/model/scenario.hpp"
#include "run_util.hpp"

namespace fs = std::filesystem;

namespace {

struct Expectation {
  int line = 0;
  int column = 0;
  std::string key;
  std::string message;
};

Expectation read_expectation(const fs::path& p) {
  std::ifstream in(p);
  std::string first;
  std::getline(in, first);
  const std::string tag = "# expect: ";
  EXPECT_EQ(first.rfind(tag, 0), 0u) << p << " lacks an # expect: header";
  std::istringstream is(first.substr(tag.size()));
  Expectation e;
  std::string bar;
  is >> e.line >> e.column >> e.key >> bar;
  std::getline(is, e.message);
  e.message = e.message.substr(e.message.find_first_not_of(' '));
  if (e.key == "-") e.key.clear();
  return e;
}

std::vector<fs::path> bad_files() {
  std::vector<fs::path> out;
  for (auto& entry : fs::directory_iterator(fs::path(GW_SCENARIO_TEST_DIR) / "bad")) {
    if (entry.path().extension() == ".yaml") out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST(Scenario, DefaultLoads) {
  auto s = gw::load_scenario(std::string(GW_BUNDLED_SCENARIOS_DIR) + "/default.yaml");
  EXPECT_EQ(s.cluster.world_size(), 32);
  EXPECT_EQ(s.cluster.gpu, "a100-80gb");
  EXPECT_DOUBLE_EQ(s.cluster.intra_node.bandwidth, 300e9);
  EXPECT_DOUBLE_EQ(s.cluster.node_bandwidth(), 4 * 12.5e9);
  EXPECT_DOUBLE_EQ(s.cluster.nic.latency, 5e-6);
  ASSERT_TRUE(s.workload);
  EXPECT_EQ(s.workload->model, "resnet50");
  EXPECT_DOUBLE_EQ(s.workload->bucket_size, 25.0 * 1048576);
  EXPECT_EQ(s.workload->compression.kind, "none");
}

// DDP overheads default on with PyTorch's gradient_as_bucket_view=False; the
// keys read back as written (docs/model.md, "DDP overheads").
TEST(Scenario, DdpOverheadKeysDefaultOnAndReadBack) {
  auto s = gw::load_scenario(std::string(GW_BUNDLED_SCENARIOS_DIR) + "/default.yaml");
  ASSERT_TRUE(s.workload);
  EXPECT_TRUE(s.workload->ddp_overheads);
  EXPECT_FALSE(s.workload->gradient_as_bucket_view);
  const fs::path dir = fs::temp_directory_path() / ("gw-ddp-keys-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ifstream in(std::string(GW_BUNDLED_SCENARIOS_DIR) + "/default.yaml");
  std::stringstream text;
  text << in.rdbuf();
  std::string yaml = text.str();
  const auto at = yaml.find("workload:\n");
  ASSERT_NE(at, std::string::npos);
  yaml.insert(at + 10,
              "  ddp_overheads: false\n  gradient_as_bucket_view: true\n  input_rate: 250\n  no_sync: false\n");
  const fs::path p = dir / "keys.yaml";
  std::ofstream(p) << yaml;
  auto t = gw::load_scenario(p.string());
  ASSERT_TRUE(t.workload);
  EXPECT_FALSE(t.workload->ddp_overheads);
  EXPECT_TRUE(t.workload->gradient_as_bucket_view);
  EXPECT_EQ(t.workload->input_rate, 250.0);
  EXPECT_FALSE(s.workload->input_rate);
  EXPECT_FALSE(t.workload->no_sync);  // workload.no_sync, default true
  EXPECT_TRUE(s.workload->no_sync);
  fs::remove_all(dir);
}

TEST(Scenario, EveryFieldOfTheFatTreeExample) {
  auto s = gw::load_scenario(std::string(GW_SCENARIO_TEST_DIR) + "/good/fat-tree.yaml");
  EXPECT_EQ(s.profile, "h100");
  EXPECT_EQ(s.cluster.fabric.topology, gw::FabricTopology::FatTree);
  EXPECT_EQ(s.cluster.fabric.nodes_per_leaf, 4);
  EXPECT_DOUBLE_EQ(s.cluster.fabric.oversubscription, 2.0);
  EXPECT_DOUBLE_EQ(s.cluster.fabric.latency, 500e-9);
  EXPECT_EQ(s.cluster.placement, gw::Placement::Interleaved);
  EXPECT_DOUBLE_EQ(s.cluster.network.tcp_gamma, 1073741824.0);
  ASSERT_TRUE(s.workload);
  EXPECT_EQ(s.workload->precision, gw::Precision::BF16);
  EXPECT_DOUBLE_EQ(s.workload->bucket_size, 50e6);
  EXPECT_FALSE(s.workload->overlap);
  EXPECT_EQ(s.workload->accumulation, 4);
  EXPECT_DOUBLE_EQ(s.workload->interference.value(), 0.1);
  EXPECT_EQ(s.workload->allreduce_algorithm, "hierarchical");
  EXPECT_EQ(s.workload->optimizer.kind, "adamw");
  ASSERT_TRUE(s.workload->optimizer.step_time);
  EXPECT_DOUBLE_EQ(*s.workload->optimizer.step_time, 3e-3);
  EXPECT_EQ(s.workload->compression.kind, "topk");
  EXPECT_DOUBLE_EQ(s.workload->compression.ratio, 0.01);
  ASSERT_TRUE(s.training);
  ASSERT_TRUE(s.training->tokens);
  EXPECT_DOUBLE_EQ(*s.training->tokens, 1e10);
  EXPECT_DOUBLE_EQ(s.training->convergence_factor, 1.2);
}

TEST(Scenario, CorpusHasAtLeastTwentyFiles) { EXPECT_GE(bad_files().size(), 20u); }

class BadScenario : public ::testing::TestWithParam<fs::path> {};

TEST_P(BadScenario, RejectedWithFileLineColumnAndKey) {
  const fs::path p = GetParam();
  Expectation want = read_expectation(p);
  try {
    gw::load_scenario(p.string());
    FAIL() << p << " was accepted";
  } catch (const gw::InputError& e) {
    EXPECT_EQ(e.file(), p.string());
    // The "# expect:" header is line 1 of the file, so lines count it.
    EXPECT_EQ(e.line(), want.line) << e.what();
    EXPECT_EQ(e.column(), want.column) << e.what();
    EXPECT_EQ(e.key(), want.key) << e.what();
    EXPECT_NE(e.reason().find(want.message), std::string::npos) << e.what();
  }
}

TEST_P(BadScenario, CliExitsTwoNamingThePosition) {
  const fs::path p = GetParam();
  Expectation want = read_expectation(p);
  const auto r = gw::test::run({GW_GRADWIRE_BIN, "check", p.string()});
  const int rc = r.exit_code;
  const std::string out = r.all();
  EXPECT_EQ(rc, 2) << out;
  std::string where = p.string() + (want.line > 0 ? ":" + std::to_string(want.line) + ":" : ":");
  EXPECT_NE(out.find(where), std::string::npos) << out;
  if (!want.key.empty()) {
    EXPECT_NE(out.find(want.key + ":"), std::string::npos) << out;
  }
  EXPECT_EQ(out.find("terminate"), std::string::npos) << out;
}

INSTANTIATE_TEST_SUITE_P(Corpus, BadScenario, ::testing::ValuesIn(bad_files()),
                         [](const ::testing::TestParamInfo<fs::path>& file) { return file.param.stem().string(); });
