// The plain logic of the MPI calibration (gradwire-calibrate --mpi), tested
// without MPI or a GPU: the slowest rank per repeat, then median and spread
// as the pipeline records them; node counting; GPU choice; rank 0's commands;
// the launcher's environment.
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "gradwire/calibrate/ranks.hpp"
#include "gradwire/model/fit.hpp"

namespace r = gw::calibrate::ranks;

TEST(MpiRanks, CollectiveTimeIsTheSlowestRankPerRepeat) {
  // 3 ranks x 4 repeats; the slowest rank changes from repeat to repeat.
  const std::vector<std::vector<double>> per_rank = {
      {1.0e-3, 2.0e-3, 1.5e-3, 1.1e-3},
      {1.2e-3, 1.0e-3, 1.4e-3, 1.0e-3},
      {0.9e-3, 1.1e-3, 3.0e-3, 1.3e-3},
  };
  const std::vector<double> want = {1.2e-3, 2.0e-3, 3.0e-3, 1.3e-3};
  EXPECT_EQ(r::max_over_ranks(per_rank), want);
  // The gathered buffer on rank 0 is rank after rank.
  std::vector<double> gathered;
  for (const auto& v : per_rank) gathered.insert(gathered.end(), v.begin(), v.end());
  EXPECT_EQ(r::max_over_ranks(gathered, 3, 4), want);
  // Then the point: median of the per-repeat maxima, spread (max - min) / median.
  const auto s = gw::fit::summarize(r::max_over_ranks(gathered, 3, 4));
  EXPECT_DOUBLE_EQ(s.median, 0.5 * (1.3e-3 + 2.0e-3));
  EXPECT_DOUBLE_EQ(s.spread, (3.0e-3 - 1.2e-3) / s.median);
  EXPECT_EQ(s.repeats, 4);
  // Not the max of the medians nor the median of all samples.
  EXPECT_NE(s.median, 1.2e-3);
}

TEST(MpiRanks, OneRankIsItsOwnTimeAndBadShapesAreRefused) {
  EXPECT_EQ(r::max_over_ranks({{4.0, 5.0}}), (std::vector<double>{4.0, 5.0}));
  EXPECT_THROW(r::max_over_ranks(std::vector<std::vector<double>>{}), std::invalid_argument);
  EXPECT_THROW(r::max_over_ranks({{}}), std::invalid_argument);
  EXPECT_THROW(r::max_over_ranks({{1.0, 2.0}, {1.0}}), std::invalid_argument);
  EXPECT_THROW(r::max_over_ranks({1.0, 2.0, 3.0}, 2, 2), std::invalid_argument);
  EXPECT_THROW(r::max_over_ranks({1.0}, 0, 1), std::invalid_argument);
}

TEST(MpiRanks, ImbalanceIsTheWaitOfTheFastestRank) {
  // 2 ranks x 2 repeats: (2 - 1) / 2 and (4 - 4) / 4.
  const auto im = r::rank_imbalance({1.0, 4.0, 2.0, 4.0}, 2, 2);
  ASSERT_EQ(im.size(), 2u);
  EXPECT_DOUBLE_EQ(im[0], 0.5);
  EXPECT_DOUBLE_EQ(im[1], 0.0);
}

TEST(MpiRanks, NodesAreDistinctHostNames) {
  const std::vector<std::string> hosts = {"gpu-a", "gpu-a", "gpu-b", "gpu-b", "gpu-a"};
  EXPECT_EQ(r::distinct_hosts(hosts), 2);
  EXPECT_EQ(r::distinct_hosts({"one"}), 1);
  EXPECT_EQ(r::hosts_summary(hosts), "2 nodes: gpu-a (ranks 0-1,4), gpu-b (ranks 2-3)");
  EXPECT_EQ(r::hosts_summary({"solo"}), "1 node: solo (rank 0)");
}

TEST(MpiRanks, EachRankTakesTheGpuOfItsLocalRank) {
  EXPECT_EQ(r::local_device(0, 8, 8, "h"), 0);
  EXPECT_EQ(r::local_device(5, 8, 8, "h"), 5);
  EXPECT_EQ(r::local_device(1, 2, 8, "h"), 1);
  // A launcher that gives each rank one GPU (CUDA_VISIBLE_DEVICES per rank).
  EXPECT_EQ(r::local_device(3, 4, 1, "h"), 0);
  try {
    r::local_device(8, 9, 8, "node-7");
    ADD_FAILURE() << "accepted 9 ranks on 8 GPUs";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("node-7 runs 9 ranks but has 8 GPUs"), std::string::npos) << e.what();
  }
  EXPECT_THROW(r::local_device(0, 1, 0, "h"), std::runtime_error);
}

TEST(MpiRanks, CommandsRoundTripAndMalformedOnesAreRefused) {
  r::Command c;
  c.kind = r::Command::kCollective;
  c.op = gw::CollectiveOp::AllToAll;
  c.bytes = 1073741824.0;
  c.warmup = 5;
  c.repeats = 10;
  const r::Command d = r::decode(r::encode(c));
  EXPECT_EQ(d.kind, c.kind);
  EXPECT_EQ(d.op, gw::CollectiveOp::AllToAll);
  EXPECT_EQ(d.bytes, c.bytes);
  EXPECT_EQ(d.warmup, 5);
  EXPECT_EQ(d.repeats, 10);
  EXPECT_EQ(r::decode(r::encode(r::Command{})).kind, r::Command::kStopOk);
  EXPECT_EQ(r::encode(c)[1], 4.0);  // the op travels as its index in gw::collective_ops()
  EXPECT_EQ(r::decode({2, 1, 8, 0, 1}).op, gw::CollectiveOp::AllGather);
  EXPECT_THROW(r::decode({2, 5, 8, 0, 1}), std::runtime_error);
  EXPECT_THROW(r::decode({7, 0, 0, 0, 0}), std::runtime_error);
  EXPECT_THROW(r::decode({2, 5, 1024, 1, 1}), std::runtime_error);
  EXPECT_THROW(r::decode({2, 0, 1024, 1, 0}), std::runtime_error);  // a collective of no repeats
  EXPECT_THROW(r::decode({2, 0.5, 1024, 1, 1}), std::runtime_error);
}

TEST(MpiRanks, LauncherWorldSizeFromTheEnvironment) {
  std::map<std::string, std::string> env;
  auto get = [&](const char* k) -> const char* {
    auto it = env.find(k);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  EXPECT_EQ(r::launcher_world_size(get), 0);
  env["PMI_SIZE"] = "16";
  EXPECT_EQ(r::launcher_world_size(get), 16);
  env["OMPI_COMM_WORLD_SIZE"] = "4";  // Open MPI's variable first
  EXPECT_EQ(r::launcher_world_size(get), 4);
  env["OMPI_COMM_WORLD_SIZE"] = "four";
  EXPECT_EQ(r::launcher_world_size(get), 16);
  env.clear();
  env["MV2_COMM_WORLD_SIZE"] = "0";
  EXPECT_EQ(r::launcher_world_size(get), 0);
}
