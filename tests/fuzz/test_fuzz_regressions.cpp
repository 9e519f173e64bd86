// Replays, in the normal build, every input the fuzzers ever broke a loader
// with (tests/fuzz/regressions/<target>/) and the seed files of each target
// through the same entry functions the libFuzzer targets call: each must be
// accepted or rejected with gw::InputError, never anything else.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_targets.hpp"
#include "gradwire/plan/planner.hpp"
#include "gradwire/plan/sweep.hpp"

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file()) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void replay(const gw::fuzz::Target& t, const std::vector<fs::path>& files) {
  for (const auto& f : files) {
    const std::string bytes = read_bytes(f);
    try {
      t.entry(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    } catch (const std::exception& e) {
      ADD_FAILURE() << t.name << ": " << f << ": " << e.what();
    }
  }
}

class FuzzTarget : public ::testing::TestWithParam<gw::fuzz::Target> {};

TEST_P(FuzzTarget, RegressionInputsAreRejectedCleanly) {
  const auto& t = GetParam();
  const fs::path dir = fs::path(GW_FUZZ_DIR) / "regressions" / t.name;
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  replay(t, files_in(dir));
}

TEST_P(FuzzTarget, SeedInputsLoadOrAreRejectedCleanly) {
  const auto& t = GetParam();
  const auto seeds = files_in(fs::path(GW_FUZZ_SEEDS_DIR) / t.name);
  ASSERT_GE(seeds.size(), 3u) << "seed corpus of " << t.name << " (scripts/fuzz.sh gathers it)";
  replay(t, seeds);
}

// The results target must reach the planner, not stop at the reader: its
// seeds from the bundled studies give plan points.
TEST(FuzzSeeds, ResultsSeedsReachThePlanner) {
  const fs::path dir = fs::path(GW_FUZZ_DIR) / "seeds" / "results";
  // (study-compression spells its cluster out: no instance, no price.)
  for (const char* name : {"study-accumulation-head.jsonl", "statuses.jsonl"}) {
    const auto lines = gw::plan::read_results((dir / name).string());
    EXPECT_GE(lines.size(), 3u) << name;
    EXPECT_GE(gw::plan::plan_points(lines, gw::plan::Pricing::Spot).size(), 3u) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(Loaders, FuzzTarget, ::testing::ValuesIn(gw::fuzz::targets()),
                         [](const ::testing::TestParamInfo<gw::fuzz::Target>& param_info) {
                           return param_info.param.name;
                         });

}  // namespace
