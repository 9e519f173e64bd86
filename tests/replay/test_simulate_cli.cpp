// `gradwire simulate` end to end: table, JSON, CSV and trace outputs of a small
// scenario, and exit code 2 with the position for bad input.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "gradwire/core/atomic_file.hpp"
#include "run_util.hpp"

namespace {

struct Run {
  int code = -1;
  std::string out;
};

Run run(const std::string& args) {
  const std::string cmd = std::string(GW_GRADWIRE_BIN) + " simulate " + args + " 2>&1";
  const auto c = gw::test::run_command(cmd);
  return {c.exit_code, c.out};
}

const std::string kData = GW_REPLAY_TEST_DATA;

TEST(SimulateCli, JsonBreakdownAddsUpAndNamesTheProfile) {
  const auto r = run(kData + "/tiny-8gpu.yaml --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  const auto& s = j.at("seconds");
  const double sum = s.at("forward").get<double>() + s.at("backward").get<double>() +
                     s.at("exposed_communication").get<double>() + s.at("optimizer").get<double>();
  EXPECT_NEAR(s.at("total").get<double>(), sum, 1e-12);
  EXPECT_EQ(j.at("profile").at("name"), "h100");
  EXPECT_EQ(j.at("profile").at("source"), "datasheet");
  EXPECT_EQ(j.at("accumulation"), 4);
  EXPECT_DOUBLE_EQ(j.at("global_batch").get<double>(), 32.0 * 4 * 8);
  EXPECT_GT(j.at("buckets").size(), 1u);
  // Top-K at 1%: every bucket all-gathers 8 ceil(0.01 n) bytes per worker.
  double wire = 0;
  for (const auto& b : j.at("buckets")) {
    const double k = std::ceil(0.01 * b.at("elements").get<double>());
    wire += 7.0 / 8 * 8 * 8 * k;
  }
  EXPECT_NEAR(j.at("wire_bytes_per_gpu").get<double>(), wire, 1e-6);
}

TEST(SimulateCli, TableShowsTheProfileKindAndTraceIsWritten) {
  const auto trace = (std::filesystem::temp_directory_path() /
                      ("gw-sim-cli-" + std::to_string(::getpid()) + ".json")).string();
  const auto r = run(kData + "/tiny-8gpu.yaml --trace " + trace);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("profile: h100 (datasheet-derived)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("exposed communication"), std::string::npos);
  EXPECT_NE(r.out.find("samples/s"), std::string::npos);
  EXPECT_NE(r.out.find("bytes on the wire per GPU"), std::string::npos);
  const auto j = nlohmann::json::parse(gw::read_file(trace));
  std::filesystem::remove(trace);
  EXPECT_GT(j.at("traceEvents").size(), 10u);
}

TEST(SimulateCli, CsvHasHeaderAndOneRow) {
  const auto r = run(kData + "/tiny-8gpu.yaml --format csv --profile a100-80gb");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2);
  EXPECT_NE(r.out.find("tiny-8gpu,tiny-convnet,a100-80gb,datasheet,8,32,4"), std::string::npos) << r.out;
}

TEST(SimulateCli, BadInputExitsTwoWithFileLineAndKey) {
  auto r = run(kData + "/bad-rank-for-topk.yaml");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("bad-rank-for-topk.yaml:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rank"), std::string::npos) << r.out;
  r = run(kData + "/tiny-8gpu.yaml --profile no-such-gpu");
  EXPECT_EQ(r.code, 2) << r.out;
  r = run(kData + "/tiny-8gpu.yaml --format xml");
  EXPECT_EQ(r.code, 2) << r.out;
}

}  // namespace
