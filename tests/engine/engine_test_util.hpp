// Helpers for the engine tests: clusters built in code and collectives run in
// a child process (one SimGrid engine per process).
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "gradwire/engine/engine.hpp"

namespace gw::engine::test {

inline constexpr double kNicBw = 12.5e9;  // 100 Gbps
inline constexpr double kNicLat = 2e-6;
inline constexpr double kFabricLat = 0.5e-6;
inline constexpr double kIntraBw = 300e9;
inline constexpr double kIntraLat = 1e-6;

/// nodes x gpus on one non-blocking switch, CM02 (the ClusterSpec defaults).
inline ClusterSpec switch_cluster(int nodes, int gpus = 1) {
  ClusterSpec c;
  c.nodes = nodes;
  c.gpus_per_node = gpus;
  c.gpu = "test";
  c.intra_node = {kIntraBw, kIntraLat};
  c.nic_count = 1;
  c.nic = {kNicBw, kNicLat};
  c.fabric.topology = FabricTopology::Switch;
  c.fabric.latency = kFabricLat;
  return c;
}

/// switch_cluster's nodes on a two-level fat-tree.
inline ClusterSpec fat_tree_cluster(int nodes, int gpus, int nodes_per_leaf, double oversubscription,
                                    Placement placement) {
  ClusterSpec c = switch_cluster(nodes, gpus);
  c.fabric.topology = FabricTopology::FatTree;
  c.fabric.nodes_per_leaf = nodes_per_leaf;
  c.fabric.oversubscription = oversubscription;
  c.placement = placement;
  return c;
}

/// DGX-like H100 nodes (NVSwitch, 8 x 400 Gbps NICs) on one switch.
inline ClusterSpec dgx_h100_cluster(int nodes) {
  ClusterSpec c = switch_cluster(nodes, 8);
  c.gpu = "h100";
  c.intra_node = {450e9, 1e-6};
  c.nic_count = 8;
  c.nic = {50e9, 2e-6};
  c.fabric.latency = 1e-6;
  return c;
}

struct Run {
  std::vector<double> times;  ///< one per request, simulated seconds
  double alpha = 0;           ///< route latency rank 0 -> rank 1
  double bandwidth = 0;       ///< its bottleneck bandwidth
};

/// Runs the requests back to back on one simulation in a child process.
inline Run run_collectives(const ClusterSpec& cluster, const std::vector<CollectiveRequest>& reqs, int route_src = 0,
                           int route_dst = 1) {
  const std::string text = run_in_child([&] {
    Simulation sim(cluster);
    std::ostringstream out;
    out.precision(17);
    if (sim.world_size() > 1) {
      auto [a, b] = sim.route(route_src, route_dst);
      out << a << ' ' << b;
    } else {
      out << "0 0";
    }
    std::vector<double> times;
    sim.add_actor("driver", 0, [&] {
      for (const auto& r : reqs) times.push_back(sim.run_collective(r));
    });
    sim.run();
    for (double t : times) out << ' ' << t;
    return out.str();
  });
  std::istringstream in(text);
  Run run;
  in >> run.alpha >> run.bandwidth;
  double t;
  while (in >> t) run.times.push_back(t);
  return run;
}

inline CollectiveRequest request(CollectiveOp op, Algorithm a, double bytes, Granularity g = Granularity::Aggregated) {
  CollectiveRequest r;
  r.op = op;
  r.algorithm = a;
  r.bytes = bytes;
  r.granularity = g;
  return r;
}

inline constexpr double KiB = 1024.0;
inline constexpr double MiB = 1024.0 * KiB;
inline constexpr double GiB = 1024.0 * MiB;

}  // namespace gw::engine::test
