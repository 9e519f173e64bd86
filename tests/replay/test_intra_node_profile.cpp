// A scenario that leaves cluster.intra_node out takes the intra-node link from
// the profile's all-reduce fit: a simulated ring all-reduce over one node's
// GPUs then reproduces the profile's bandwidth (S / beta); its latency is
// NCCL's latency model (nccl_model.hpp), the same at every size.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "gradwire/engine/engine.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/model/profile.hpp"
#include "gradwire/model/scenario.hpp"
#include "gradwire/model/scenario_yaml.hpp"
#include "gradwire/core/yaml_reader.hpp"

namespace {

gw::Scenario scenario_without_intra_node(int gpus_per_node) {
  const std::string text = "cluster:\n  nodes: 2\n  gpus_per_node: " + std::to_string(gpus_per_node) +
                           "\n  gpu: h100\n  nics: {count: 8, bandwidth: 400Gbps, latency: 3us}\n"
                           "  fabric: {topology: switch}\n";
  return gw::parse_scenario(gw::yaml::load_string(text, "no-intra.yaml"));
}

gw::Profile profile_with_allreduce(int gpus, double alpha, double beta) {
  gw::Profile p;
  p.name = "synthetic";
  p.path = "synthetic.yaml";
  gw::CollectiveCost c;
  c.op = gw::CollectiveOp::AllReduce;
  c.gpus = gpus;
  c.fit.alpha = alpha;
  c.fit.beta = beta;
  p.collectives.push_back(c);
  return p;
}

}  // namespace

TEST(IntraNodeFromProfile, LeftOutIsMarkedAndResolvedFromTheFit) {
  const auto s = scenario_without_intra_node(8);
  EXPECT_TRUE(s.cluster.intra_node_from_profile);
  const auto c = gw::resolve_cluster(s, profile_with_allreduce(8, 20e-6, 200e9));
  EXPECT_FALSE(c.intra_node_from_profile);
  EXPECT_DOUBLE_EQ(c.intra_node.bandwidth, 200e9 * 14 / 8);
  EXPECT_DOUBLE_EQ(c.intra_node.latency, 20e-6 / 28);
}

TEST(IntraNodeFromProfile, SimulatedRingReproducesTheProfileFit) {
  const double alpha = 25e-6, beta = 150e9;
  const auto c = gw::resolve_cluster(scenario_without_intra_node(8), profile_with_allreduce(8, alpha, beta));
  std::vector<double> times;
  // From 1 MB: NCCL runs every channel (below it, fewer: nccl_channels).
  const std::vector<double> sizes = {1e6, 16e6, 256e6};
  for (double bytes : sizes) {
    SCOPED_TRACE(bytes);
    const std::string out = gw::engine::run_in_child([&] {
      gw::engine::Simulation sim(c);
      double t = 0;
      sim.add_actor("ar", 0, [&] {
        gw::engine::CollectiveRequest r;
        r.op = gw::engine::CollectiveOp::AllReduce;
        r.algorithm = gw::engine::Algorithm::Ring;
        r.protocol = gw::engine::Protocol::Simple;
        r.bytes = bytes;
        for (int i = 0; i < 8; ++i) r.ranks.push_back(i);  // the GPUs of node 0
        t = sim.run_collective(r);
      });
      sim.run();
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.17g", t);
      return std::string(buf);
    });
    times.push_back(std::stod(out));
  }
  for (std::size_t i = 1; i < sizes.size(); ++i) {
    const double bw_term = (sizes[i] - sizes[0]) / beta;
    EXPECT_NEAR(times[i] - times[0], bw_term, 1e-3 * bw_term) << sizes[i];
  }
}

TEST(IntraNodeFromProfile, MissingFitIsAnInputErrorAtTheClusterSection) {
  const auto s = scenario_without_intra_node(4);
  try {
    gw::resolve_cluster(s, profile_with_allreduce(8, 1e-5, 1e11));
    FAIL() << "accepted a profile without a 4-GPU all-reduce fit";
  } catch (const gw::InputError& e) {
    EXPECT_EQ(e.file(), "no-intra.yaml");
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.key(), "cluster.intra_node");
    EXPECT_NE(e.reason().find("no all-reduce fit for 4 GPUs"), std::string::npos) << e.what();
  }
}

TEST(IntraNodeFromProfile, GivenIntraNodeWinsAndOneGpuNodesNeedNone) {
  auto s = gw::parse_scenario(
      gw::yaml::load_string("cluster:\n  nodes: 2\n  gpus_per_node: 1\n  gpu: h100\n"
                            "  nics: {count: 1, bandwidth: 100Gbps, latency: 3us}\n  fabric: {topology: switch}\n",
                            "one.yaml"));
  EXPECT_FALSE(s.cluster.intra_node_from_profile);
  EXPECT_NO_THROW(gw::resolve_cluster(s, gw::Profile{}));
}

TEST(IntraNodeFromProfile, BundledDatasheetProfilesCarryEightGpuFits) {
  for (const char* name : {"h100", "a100-80gb", "h200"}) {
    SCOPED_TRACE(name);
    const auto c = gw::resolve_cluster(scenario_without_intra_node(8), gw::load_profile(name));
    EXPECT_GT(c.intra_node.bandwidth, 100e9);
    EXPECT_GT(c.intra_node.latency, 0);
  }
}
