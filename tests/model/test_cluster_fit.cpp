// A cluster from a measurement (gradwire/model/cluster_fit.hpp): the NIC fit
// gives back the NICs of a cluster whose curve the model itself drew, and the
// written block reads back as the cluster that was fitted.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "gradwire/core/error.hpp"
#include "gradwire/core/yaml_reader.hpp"
#include "gradwire/model/closed_form.hpp"
#include "gradwire/model/cluster_fit.hpp"
#include "gradwire/model/scenario_yaml.hpp"

using namespace gw;

namespace {

ClusterSpec two_by_eight(Transport nic, int nic_count, double nic_bandwidth, double nic_latency) {
  ClusterSpec c;
  c.nodes = 2;
  c.gpus_per_node = 8;
  c.gpu = "h100";
  c.intra_node = make_link(450e9, 1e-6, Transport::NVSwitch);
  c.nic_count = nic_count;
  c.nic = make_link(nic_bandwidth, nic_latency, nic);
  return c;
}

/// The model's own curve on `c`: 8 B .. 8 GiB, x2.
std::vector<CurvePoint> model_curve(const ClusterSpec& c, CollectiveOp op) {
  std::vector<CurvePoint> points;
  const NcclShape shape = collective_shape(c, c.world_size());
  for (double bytes = 8; bytes <= 8.0 * (1ull << 30); bytes *= 2)
    points.push_back({bytes, choose_collective(op, Algorithm::Auto, Protocol::Auto, c, shape, bytes).time, 0, 20});
  return points;
}

}  // namespace

TEST(ClusterFit, GivesBackTheNicsOfTheModelsOwnCurve) {
  // Several transports, NIC counts and node counts: each curve is drawn by the
  // model on known NICs, the fit starts from the same cluster with the NICs
  // unknown and must find them again.
  struct Case {
    Transport transport;
    int nics, nodes;
    double bandwidth, latency;
  };
  // The latencies are where the model's floor depends on them: below about
  // 15 us (2 nodes) NCCL's own latency model holds the floor (next test).
  for (const Case& k : {Case{Transport::Network, 8, 2, 200e9 / 8, 30e-6}, Case{Transport::IB, 4, 2, 400e9 / 8, 20e-6},
                        Case{Transport::TCPX, 8, 4, 200e9 / 8, 45e-6}, Case{Transport::EFA, 4, 2, 100e9 / 8, 60e-6}}) {
    ClusterSpec truth = two_by_eight(k.transport, k.nics, k.bandwidth, k.latency);
    truth.nodes = k.nodes;
    ClusterSpec base = truth;
    base.nic.bandwidth = 1e9;
    base.nic.latency = 0;
    const ClusterFit f =
        fit_cluster_network(base, CollectiveOp::AllReduce, model_curve(truth, CollectiveOp::AllReduce));
    SCOPED_TRACE(transport_info(k.transport).name);
    EXPECT_NEAR(f.cluster.nic.bandwidth / k.bandwidth, 1.0, 1e-3);
    EXPECT_NEAR(f.cluster.nic.latency / k.latency, 1.0, 1e-2);
    EXPECT_FALSE(f.latency_at_zero);
    EXPECT_FALSE(f.bandwidth_lower_bound);
    EXPECT_NEAR(f.plateau_model / f.plateau_measured, 1.0, 1e-6);
    EXPECT_NEAR(f.floor_ratio, 1.0, 1e-6);
    EXPECT_EQ(f.plateau_bytes, 8.0 * (1ull << 30));
    EXPECT_EQ(f.floor_bytes, (std::vector<double>{8, 16, 32, 64}));
    EXPECT_EQ(f.cluster.nic_count, k.nics);
    EXPECT_EQ(f.cluster.nic.transport, k.transport);
    EXPECT_EQ(f.cluster.intra_node, truth.intra_node);  // only the NICs move
  }
}

TEST(ClusterFit, EachValueIsTheLeastThatGivesItsEnd) {
  // A NIC latency of 5 us leaves NCCL's latency model in charge of the floor
  // on 2 nodes: the least latency that gives it is none. 32 NICs of 100 Gbps
  // per node are more than 8 GPUs' links carry: the least rate that gives the
  // plateau, a lower bound, said as such.
  // A100 nodes: no NVLS, so no NVLS+tree pipeline whose fill reads the NICs'
  // chunk time even where they are not its slowest stage (NcclPipeline); on
  // H100 nodes the plateau keeps depending on the rate through that fill.
  ClusterSpec truth = two_by_eight(Transport::EFA, 32, 100e9 / 8, 5e-6);
  truth.gpu = "a100-80gb";
  const auto points = model_curve(truth, CollectiveOp::AllReduce);
  const ClusterFit f = fit_cluster_network(truth, CollectiveOp::AllReduce, points);
  EXPECT_TRUE(f.latency_at_zero);
  EXPECT_EQ(f.cluster.nic.latency, 0);
  EXPECT_NEAR(f.floor_ratio, 1.0, 1e-9);
  EXPECT_TRUE(f.bandwidth_lower_bound);
  EXPECT_LT(f.cluster.nic.bandwidth, truth.nic.bandwidth);
  EXPECT_NEAR(f.plateau_model / f.plateau_measured, 1.0, 1e-6);
}

TEST(ClusterFit, AFloorBelowTheModelsGivesNoLatencyAndSaysSo) {
  const ClusterSpec truth = two_by_eight(Transport::IB, 8, 50e9, 5e-6);
  auto points = model_curve(truth, CollectiveOp::AllReduce);
  for (std::size_t i = 0; i < 4; ++i) points[i].seconds /= 10;  // faster than NCCL's own latency model
  const ClusterFit f = fit_cluster_network(truth, CollectiveOp::AllReduce, points);
  EXPECT_TRUE(f.latency_at_zero);
  EXPECT_EQ(f.cluster.nic.latency, 0);
  EXPECT_GT(f.floor_ratio, 1.0);
}

TEST(ClusterFit, APlateauNoNicGivesIsRefused) {
  // 8 GiB in 1 ms: far beyond what 8 GPUs' 450 GB/s links carry.
  const ClusterSpec base = two_by_eight(Transport::IB, 8, 50e9, 5e-6);
  const std::vector<CurvePoint> points = {{8, 20e-6, 0, 1}, {8.0 * (1ull << 30), 1e-3, 0, 1}};
  try {
    fit_cluster_network(base, CollectiveOp::AllReduce, points);
    FAIL() << "fitted a plateau beyond the intra-node link";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no NIC bandwidth"), std::string::npos) << e.what();
  }
  EXPECT_THROW(fit_cluster_network(base, CollectiveOp::AllReduce, {{8, 20e-6, 0, 1}}), std::invalid_argument);
}

TEST(ClusterFit, TheWrittenBlockReadsBackAsTheCluster) {
  const ClusterSpec c = two_by_eight(Transport::TCPX, 8, 23.456789012e9, 7.654321e-6);
  // A comment that carries a line break cannot add a key.
  const std::string text = cluster_yaml("a \"fitted\" cluster: x", c, {"log: evil\nworkload: {model: x}"});
  const Scenario s = parse_scenario(yaml::load_string(text, "fitted.yaml"));
  EXPECT_EQ(s.name, "a \"fitted\" cluster: x");
  EXPECT_FALSE(s.workload);
  EXPECT_EQ(s.cluster.nodes, 2);
  EXPECT_EQ(s.cluster.gpus_per_node, 8);
  EXPECT_EQ(s.cluster.gpu, "h100");
  EXPECT_EQ(s.cluster.nic_count, 8);
  EXPECT_EQ(s.cluster.nic.transport, Transport::TCPX);
  EXPECT_NEAR(s.cluster.nic.bandwidth / c.nic.bandwidth, 1.0, 1e-8);
  EXPECT_NEAR(s.cluster.nic.latency / c.nic.latency, 1.0, 1e-8);
  EXPECT_EQ(s.cluster.intra_node.transport, Transport::NVSwitch);
  EXPECT_NEAR(s.cluster.intra_node.bandwidth / c.intra_node.bandwidth, 1.0, 1e-8);
  EXPECT_FALSE(s.cluster.intra_node_from_profile);
  EXPECT_NE(text.find("# log: evil?workload: {model: x}\n"), std::string::npos) << text;
}

// The bundled A3 Mega log (2 x 8 H100): the cluster written from it, read
// back from its text, gives the log's 8 GiB time under the model within 1%
// and the median of its four smallest sizes within 2%.
TEST(ClusterFit, TheA3MegaLogComesBackFromItsCluster) {
  const std::string log = std::string(GW_SOURCE_DIR) + "/tests/data/nccl-tests/a3mega-2x8-h100-all_reduce_perf.log";
  const auto runs = nccl_tests::load_runs(log);
  const ClusterFromLogs r = cluster_from_logs(runs, {});
  const Scenario s = parse_scenario(yaml::load_string(r.yaml, "a3.yaml"));
  const ClusterSpec& c = s.cluster;
  EXPECT_EQ(c.nodes, 2);
  EXPECT_EQ(c.gpus_per_node, 8);
  EXPECT_EQ(c.gpu, "h100");
  EXPECT_EQ(c.nic_count, 8);
  EXPECT_EQ(c.nic.transport, Transport::Network);
  EXPECT_EQ(s.name, "h100-2x8-from-nccl-tests");
  const NcclShape shape = collective_shape(c, 16);
  const auto at = [&](double bytes) {
    return choose_collective(CollectiveOp::AllReduce, Algorithm::Auto, Protocol::Auto, c, shape, bytes).time;
  };
  EXPECT_NEAR(at(8589934592.0) / 47639e-6, 1.0, 0.01);  // the median of 47535 and 47743 us
  // 8..64 B: 129.65 (8 B: 135.8 and 123.5), 122.75, 123.0, 123.15 us; median ratio 1.
  std::vector<double> ratios = {at(8) / 129.65e-6, at(16) / 122.75e-6, at(32) / 123.0e-6, at(64) / 123.15e-6};
  std::sort(ratios.begin(), ratios.end());
  EXPECT_NEAR((ratios[1] + ratios[2]) / 2, 1.0, 0.02);
  EXPECT_NEAR(r.fit.plateau_model / r.fit.plateau_measured, 1.0, 1e-6);
  EXPECT_NE(r.yaml.find("#   " + log + ": all_reduce_perf, 16 ranks on 2 nodes, NVIDIA H100 80GB HBM3\n"),
            std::string::npos)
      << r.yaml;
  EXPECT_NE(r.yaml.find("(busbw 338.09 GB/s measured, 338.09 GB/s modelled, "), std::string::npos) << r.yaml;
  // One node: no network to fit.
  const std::string one = std::string(GW_SOURCE_DIR) + "/tests/data/nccl-tests/rtx2080ti-1x2-all_reduce_perf.log";
  try {
    cluster_from_logs(nccl_tests::load_runs(one), {});
    FAIL() << "fitted a network to a one-node log";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no network to fit"), std::string::npos) << e.what();
    EXPECT_EQ(e.line(), 1);
  }
}
