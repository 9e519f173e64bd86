// Phases evaluated by symmetry classes (symmetry.hpp, flow_runner.cpp) give
// the full simulation's times: every algorithm and protocol on the flat
// switch, two-level nodes, a full-bisection fat-tree and an oversubscribed
// fat-tree with interleaved placement, each collective's duration equal to
// 1e-9 relative; the checker's refusals (another network model, overlapping
// phases) fall back to or demand the full simulation; and the classes
// themselves on small networks worked by hand.
#include <gtest/gtest.h>

#include <cstdlib>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "collective.hpp"
#include "engine_test_util.hpp"
#include "symmetry.hpp"

namespace gw::engine::test {
namespace {

constexpr double kEqual = 1e-9;  // relative
constexpr std::size_t kNever = std::numeric_limits<std::size_t>::max();
constexpr std::size_t kAlways = 0;

struct Outcome {
  std::vector<double> times;
  long by_classes = 0;
  long in_full = 0;
  long reused = 0;
};

Outcome run_requests(const ClusterSpec& c, const std::vector<CollectiveRequest>& reqs, std::size_t symmetry_flows) {
  const std::string text = run_in_child([&] {
    detail::set_flows_for_symmetry(symmetry_flows);
    Simulation sim(c);
    std::vector<double> times;
    sim.add_actor("driver", 0, [&] {
      for (const auto& r : reqs) times.push_back(sim.run_collective(r));
    });
    sim.run();
    std::ostringstream out;
    out.precision(17);
    out << sim.phase_stats().by_classes << ' ' << sim.phase_stats().in_full << ' ' << sim.phase_stats().reused;
    for (double t : times) out << ' ' << t;
    return out.str();
  });
  std::istringstream in(text);
  Outcome o;
  in >> o.by_classes >> o.in_full >> o.reused;
  double t;
  while (in >> t) o.times.push_back(t);
  return o;
}

void expect_classes_equal_full(const ClusterSpec& c, const std::vector<CollectiveRequest>& reqs,
                               std::size_t symmetry_flows = kAlways) {
  const Outcome full = run_requests(c, reqs, kNever);
  const Outcome fast = run_requests(c, reqs, symmetry_flows);
  EXPECT_EQ(full.by_classes, 0);
  EXPECT_GT(fast.by_classes, 0) << "no phase went by classes: the comparison would prove nothing";
  ASSERT_EQ(full.times.size(), reqs.size());
  ASSERT_EQ(fast.times.size(), reqs.size());
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    EXPECT_GT(full.times[i], 0) << "request " << i;
    EXPECT_NEAR(fast.times[i], full.times[i], kEqual * full.times[i])
        << "request " << i << ": " << to_string(reqs[i].op) << '/' << to_string(reqs[i].algorithm) << '/'
        << to_string(reqs[i].protocol) << " size " << reqs[i].bytes
        << (reqs[i].granularity == Granularity::PerStep ? " per-step" : "");
  }
}

CollectiveRequest pinned(CollectiveOp op, Algorithm a, Protocol p, double bytes,
                         Granularity g = Granularity::Aggregated) {
  auto r = request(op, a, bytes, g);
  r.protocol = p;
  return r;
}

// NCCL's ring ops and tree under every protocol, gradwire's own schedules
// (Simple), at a small and a large size, and the per-step tree and ring.
std::vector<CollectiveRequest> every_algorithm_and_protocol() {
  std::vector<CollectiveRequest> out;
  for (double s : {8 * KiB, 64 * MiB}) {
    for (auto p : {Protocol::LL, Protocol::LL128, Protocol::Simple}) {
      for (auto op : {CollectiveOp::AllReduce, CollectiveOp::AllGather, CollectiveOp::ReduceScatter})
        out.push_back(pinned(op, Algorithm::Ring, p, s));
      out.push_back(pinned(CollectiveOp::AllReduce, Algorithm::Tree, p, s));
    }
    out.push_back(pinned(CollectiveOp::AllReduce, Algorithm::Hierarchical, Protocol::Simple, s));
    out.push_back(pinned(CollectiveOp::AllToAll, Algorithm::Direct, Protocol::Simple, s));
    out.push_back(pinned(CollectiveOp::Broadcast, Algorithm::Ring, Protocol::Simple, s));
  }
  out.push_back(pinned(CollectiveOp::AllReduce, Algorithm::Tree, Protocol::Simple, 4 * MiB, Granularity::PerStep));
  out.push_back(pinned(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::LL128, 4 * MiB, Granularity::PerStep));
  return out;
}

ClusterSpec h100(ClusterSpec c) {
  c.gpu = "h100";  // LL128 on NVLink (compute capability 90)
  return c;
}

ClusterSpec fat_tree(int nodes, int gpus, double oversubscription, Placement placement) {
  return h100(fat_tree_cluster(nodes, gpus, 2, oversubscription, placement));
}

TEST(Symmetry, FlatSwitchEqualsFullSimulation) {
  expect_classes_equal_full(h100(switch_cluster(16)), every_algorithm_and_protocol());
}

TEST(Symmetry, TwoLevelEqualsFullSimulation) {
  expect_classes_equal_full(h100(switch_cluster(4, 4)), every_algorithm_and_protocol());
}

TEST(Symmetry, FullBisectionFatTreeEqualsFullSimulation) {
  expect_classes_equal_full(fat_tree(8, 2, 1, Placement::Linear), every_algorithm_and_protocol());
}

TEST(Symmetry, OversubscribedInterleavedFatTreeEqualsFullSimulation) {
  expect_classes_equal_full(fat_tree(8, 2, 4, Placement::Interleaved), every_algorithm_and_protocol());
}

TEST(Symmetry, NvlsAndNvlsTreeEqualFullSimulation) {
  const ClusterSpec one = h100(switch_cluster(1, 8));
  expect_classes_equal_full(one, {pinned(CollectiveOp::AllReduce, Algorithm::NVLS, Protocol::Simple, 8 * KiB),
                                  pinned(CollectiveOp::AllReduce, Algorithm::NVLS, Protocol::Simple, 64 * MiB)});
  const ClusterSpec four = h100(switch_cluster(4, 8));
  expect_classes_equal_full(
      four, {pinned(CollectiveOp::AllReduce, Algorithm::NvlsTree, Protocol::Simple, 8 * KiB),
             pinned(CollectiveOp::AllReduce, Algorithm::NvlsTree, Protocol::Simple, 64 * MiB),
             pinned(CollectiveOp::AllReduce, Algorithm::NvlsTree, Protocol::Simple, 64 * MiB, Granularity::PerStep)});
}

// 64 DGX-like nodes (8 H100, 8 NICs), NCCL's rule: tree/LL128 at 100 MB,
// 2,044 flows in one phase, so the default threshold (1,024) takes it by
// classes; the ring at 1 GiB (512 flows) stays below it.
TEST(Symmetry, Dgx512DefaultThresholdEqualsFullSimulation) {
  const ClusterSpec c = dgx_h100_cluster(64);
  auto r = request(CollectiveOp::AllReduce, Algorithm::Auto, 100e6);
  r.protocol = Protocol::Auto;
  expect_classes_equal_full(c, {r, pinned(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::Simple, GiB), r}, 1024);
}

// use_symmetry_classes(false) (the replay's full simulation) sends every
// phase to the full simulation, with the same times.
TEST(Symmetry, TurnedOffEveryPhaseRunsInFull) {
  const ClusterSpec c = h100(switch_cluster(8, 2));
  const auto r = pinned(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::Simple, 64 * MiB);
  const auto run = [&](bool classes) {
    return run_in_child([&] {
      detail::set_flows_for_symmetry(kAlways);
      Simulation sim(c);
      sim.use_symmetry_classes(classes);
      double t = 0;
      sim.add_actor("driver", 0, [&] { t = sim.run_collective(r); });
      sim.run();
      std::ostringstream out;
      out.precision(17);
      out << sim.phase_stats().by_classes << ' ' << sim.phase_stats().in_full << ' ' << t;
      return out.str();
    });
  };
  std::istringstream on(run(true)), off(run(false));
  long on_classes = 0, on_full = 0, off_classes = 0, off_full = 0;
  double on_t = 0, off_t = 0;
  on >> on_classes >> on_full >> on_t;
  off >> off_classes >> off_full >> off_t;
  EXPECT_GT(on_classes, 0);
  EXPECT_EQ(off_classes, 0);
  EXPECT_GT(off_full, 0);
  EXPECT_NEAR(on_t, off_t, kEqual * off_t);
}

// Partitions refined once (classes_of): the same request again reuses the
// classes of every phase; another size of the same algorithm (other bytes,
// the same pattern of equal bytes) reuses them too, its quotient evaluated
// with its own bytes; and the times, mixed with other algorithms in one
// simulation, equal the full simulation's.
TEST(Symmetry, PartitionsAreRefinedOnce) {
  const ClusterSpec c = h100(switch_cluster(16));
  const auto ring = pinned(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::Simple, 64 * MiB);
  const auto small = pinned(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::Simple, 8 * KiB);
  const auto tree = pinned(CollectiveOp::AllReduce, Algorithm::Tree, Protocol::Simple, 64 * MiB);
  const Outcome once = run_requests(c, {ring}, kAlways);
  ASSERT_GT(once.by_classes, 0);
  const Outcome twice = run_requests(c, {ring, ring}, kAlways);
  EXPECT_EQ(twice.by_classes, 2 * once.by_classes);
  EXPECT_EQ(twice.reused, once.reused + once.by_classes) << "the second collective refines nothing";
  const Outcome other = run_requests(c, {ring, small}, kAlways);
  EXPECT_GT(other.reused, once.reused) << "another size has the same partition";
  EXPECT_NE(other.times[0], other.times[1]);
  expect_classes_equal_full(c, {ring, small, tree, ring, tree, small});
}

// The checker: another network model is refused, with its reason, and the
// phase is simulated in full (the same times as with no classes at all).
TEST(Symmetry, OtherNetworkModelFallsBackToFullSimulation) {
  ClusterSpec c = h100(switch_cluster(8, 2));
  c.network.model = "LV08";
  const std::vector<CollectiveRequest> reqs = {pinned(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::Simple, MiB)};
  const Outcome full = run_requests(c, reqs, kNever);
  const Outcome forced = run_requests(c, reqs, kAlways);
  EXPECT_EQ(forced.by_classes, 0);
  EXPECT_GT(forced.in_full, 0);
  ASSERT_EQ(forced.times.size(), 1u);
  EXPECT_EQ(forced.times[0], full.times[0]);
  const std::string why = run_in_child([&] {
    detail::set_flows_for_symmetry(kAlways);
    Simulation sim(c);
    sim.add_actor("driver", 0, [&] { sim.run_collective(reqs[0]); });
    sim.run();
    return sim.phase_stats().last_refusal;
  });
  EXPECT_NE(why.find("CM02"), std::string::npos) << why;
}

// Two collectives in flight at once: the second's phases begin while the
// first's are evaluated by classes, which assumed an idle network: the run
// refuses its result; GRADWIRE_FULL_SIMULATION=1 simulates it in full.
TEST(Symmetry, OverlappingPhasesAreRefused) {
  const ClusterSpec c = fat_tree(8, 2, 2, Placement::Interleaved);
  const auto ring = pinned(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::Simple, 64 * MiB);
  auto run_two = [&] {
    return run_in_child([&] {
      detail::set_flows_for_symmetry(kAlways);
      Simulation sim(c);
      double a = 0, b = 0;
      sim.add_actor("one", 0, [&] { a = sim.run_collective(ring); });
      sim.add_actor("two", 1, [&] { b = sim.run_collective(ring); });
      sim.run();
      std::ostringstream out;
      out.precision(17);
      out << a << ' ' << b;
      return out.str();
    });
  };
  try {
    run_two();
    ADD_FAILURE() << "two overlapping phases by classes ran without a word";
  } catch (const std::runtime_error& e) {  // the child's logic_error, carried back as text
    EXPECT_NE(std::string(e.what()).find("evaluated by symmetry classes was in flight"), std::string::npos) << e.what();
  }
  ::setenv("GRADWIRE_FULL_SIMULATION", "1", 1);
  std::string text;
  EXPECT_NO_THROW(text = run_two());
  ::unsetenv("GRADWIRE_FULL_SIMULATION");
  double a = 0, b = 0;
  std::istringstream(text) >> a >> b;
  EXPECT_GT(a, 0);
  EXPECT_NEAR(a, b, kEqual * a);  // the same ring twice, sharing every link
}

// The checker on 32 nodes of 2 GPUs, 4 nodes per leaf, 4:1 oversubscribed:
// with linear placement the ring's flows fall in 3 classes (in a node, to a
// node of the same leaf, across the spine), interleaved in 2 (every flow out
// of a node crosses the spine), also over 6 scattered ranks; NCCL's tree in
// 47 of its 252 flows. With a TCP window of 64 KiB the flows out of a node
// would reach SimGrid's window bound (gamma / 2 x latency): refused, and
// simulated in full. Every time equals the full simulation.
std::string checker_says(const ClusterSpec& c, const std::vector<CollectiveRequest>& reqs) {
  return run_in_child([&] {
    detail::set_flows_for_symmetry(kAlways);
    Simulation sim(c);
    std::ostringstream out;
    sim.add_actor("driver", 0, [&] {
      for (const auto& r : reqs) {
        const long before = sim.phase_stats().by_classes;
        sim.run_collective(r);
        out << sim.phase_stats().by_classes - before << ' ' << sim.phase_stats().last_flow_classes << " '"
            << sim.phase_stats().last_refusal << "'\n";
      }
    });
    sim.run();
    return out.str();
  });
}

TEST(Symmetry, CheckerOnOversubscribedFatTrees) {
  const auto ring = pinned(CollectiveOp::AllReduce, Algorithm::Ring, Protocol::Simple, 64 * MiB);
  auto scattered = ring;
  scattered.ranks = {0, 1, 5, 12, 13, 30};
  const std::vector<CollectiveRequest> reqs = {
      ring, pinned(CollectiveOp::AllReduce, Algorithm::Tree, Protocol::Simple, 64 * MiB), scattered};
  for (auto place : {Placement::Linear, Placement::Interleaved}) {
    ClusterSpec c = fat_tree(32, 2, 4, place);
    c.fabric.nodes_per_leaf = 4;
    const std::string ring_says = place == Placement::Linear ? "1 3 ''\n" : "1 2 ''\n";
    EXPECT_EQ(checker_says(c, reqs), ring_says + "1 47 ''\n" + ring_says);
    expect_classes_equal_full(c, reqs);
    c.network.tcp_gamma = 64 * KiB;
    const std::string bound = checker_says(c, {ring});
    EXPECT_EQ(bound.substr(0, 2), "0 ") << bound;
    EXPECT_NE(bound.find("rate bound"), std::string::npos) << bound;
    EXPECT_EQ(run_requests(c, {ring}, kAlways).times, run_requests(c, {ring}, kNever).times);
  }
}

// --- The classes on networks worked by hand (no SimGrid) --------------------

// n nodes in a ring, g GPUs each: every GPU link (up, down) and node link
// (up, down); rank r sends to r + 1. Links: GPU r up 2r, down 2r+1; node k
// up 2n g + 2k, down 2n g + 2k + 1.
detail::PhaseNetwork ring_network(int nodes, int gpus, double bytes) {
  detail::PhaseNetwork net;
  const int n = nodes * gpus;
  for (int r = 0; r < n; ++r) net.capacity.insert(net.capacity.end(), {300e9, 300e9});
  for (int k = 0; k < nodes; ++k) net.capacity.insert(net.capacity.end(), {12.5e9, 12.5e9});
  for (int r = 0; r < n; ++r) {
    const int d = (r + 1) % n;
    if (r / gpus == d / gpus) {
      net.add_flow(bytes, 2e-6, -1, {2 * r, 2 * d + 1});
    } else {
      net.add_flow(bytes, 7e-6, -1, {2 * r, 2 * n + 2 * (r / gpus), 2 * n + 2 * (d / gpus) + 1, 2 * d + 1});
    }
  }
  return net;
}

TEST(SymmetryClasses, RingHasTwoFlowClasses) {
  const auto net = ring_network(64, 8, 1e6);
  bool equitable = false;
  const auto pc = detail::refine_classes(net, &equitable);
  EXPECT_TRUE(equitable);
  EXPECT_EQ(pc.flow_classes, 2);  // inside a node, out of a node
  const auto p = detail::evaluate_by_classes(net, net.flows() / 2);
  ASSERT_TRUE(p.exact) << p.why_not;
  // No link is shared: each flow at its route's narrowest link.
  EXPECT_NEAR(p.duration, std::max(2e-6 + 1e6 / 300e9, 7e-6 + 1e6 / 12.5e9), 1e-15);
}

// The store of partitions gives what refine_classes gives for the phase at
// hand: the same routes with other bytes in the same pattern reuse the
// classes (and evaluate to their own time); the same routes with another
// pattern of equal bytes (one flow in eight larger) are refined anew, into
// more classes; a full store starts again (keeping the newest).
TEST(SymmetryClasses, StoreGivesWhatRefinementGives) {
  auto expect_as_refined = [](detail::PartitionStore& store, const detail::PhaseNetwork& net) {
    bool equitable = false;
    const auto pc = detail::refine_classes(net, &equitable);
    const auto& known = store.classes_of(net);
    EXPECT_TRUE(known.simple);
    EXPECT_EQ(known.equitable, equitable);
    EXPECT_EQ(known.classes.flow_class, pc.flow_class);
    EXPECT_EQ(known.classes.link_class, pc.link_class);
    EXPECT_EQ(known.classes.flow_classes, pc.flow_classes);
    const auto direct = detail::evaluate_by_classes(net, net.flows() / 2);
    const auto stored = detail::evaluate_on_classes(net, known.classes, known.equitable, net.flows() / 2);
    EXPECT_EQ(stored.exact, direct.exact);
    EXPECT_EQ(stored.duration, direct.duration);
    return pc.flow_classes;
  };
  detail::PartitionStore store;
  const auto small = ring_network(16, 8, 1e6);
  EXPECT_EQ(expect_as_refined(store, small), 2);
  EXPECT_EQ(store.reused(), 0);
  EXPECT_EQ(expect_as_refined(store, ring_network(16, 8, 5e6)), 2);
  EXPECT_EQ(store.reused(), 1) << "other bytes, the same pattern";
  auto uneven = ring_network(16, 8, 1e6);
  for (std::size_t f = 0; f < uneven.flows(); f += 8) uneven.bytes[f] = 2e6;
  EXPECT_GT(expect_as_refined(store, uneven), 2);
  EXPECT_EQ(store.reused(), 1) << "another pattern of equal bytes is another partition";
  detail::PartitionStore tiny(1);  // room for one phase: each new one starts it again
  expect_as_refined(tiny, small);
  expect_as_refined(tiny, uneven);
  expect_as_refined(tiny, small);
  EXPECT_EQ(tiny.reused(), 0) << "the uneven phase replaced the first";
  expect_as_refined(tiny, small);
  EXPECT_EQ(tiny.reused(), 1);
}

// Three flows on one link of 30 B/s: two of latency 1 s (30 B each), one of
// latency 2 s (12 B) that also crosses a link of 7 B/s. CM02 shares in
// inverse proportion to latency. 0-1 s nothing moves; 1-2 s the two share
// 30 (15 each); from 2 s the levels are 30 / (1 + 1 + 1/2) = 12: rates 12,
// 12 and 6 (under 7). The pair has 15 B left at 2 s and ends at 3.25 s,
// when the third has 12 - 7.5 = 4.5 B left, alone at 7: 3.25 + 4.5/7 s.
// (Equal shares would end at 2 + 12/7 s.)
TEST(SymmetryClasses, SharesInInverseProportionToLatency) {
  detail::PhaseNetwork net;
  net.capacity = {30.0, 1e9, 1e9, 7.0};
  net.add_flow(30, 1, -1, {0, 1});
  net.add_flow(30, 1, -1, {0, 2});
  net.add_flow(12, 2, -1, {0, 3});
  const auto p = detail::evaluate_by_classes(net, 3);
  ASSERT_TRUE(p.exact) << p.why_not;
  EXPECT_EQ(p.flow_classes, 2);
  EXPECT_NEAR(p.duration, 3.25 + 4.5 / 7, 1e-12);
}

TEST(SymmetryClasses, RefusesWhatItCannotReproduce) {
  auto net = ring_network(4, 2, 1e6);
  EXPECT_FALSE(detail::evaluate_by_classes(net, 1).exact);  // 2 classes > 1 allowed
  net.bound.assign(net.flows(), 1e3);                       // every flow would exceed its bound
  const auto p = detail::evaluate_by_classes(net, net.flows());
  EXPECT_FALSE(p.exact);
  EXPECT_NE(p.why_not.find("bound"), std::string::npos) << p.why_not;
  detail::PhaseNetwork twice;
  twice.capacity = {1e9};
  twice.add_flow(1e6, 1e-6, -1, {0, 0});
  EXPECT_FALSE(detail::evaluate_by_classes(twice, 1).exact);
}

}  // namespace
}  // namespace gw::engine::test
