// Internal: one phase of flows evaluated by symmetry classes instead of by
// SimGrid (docs/engine.md, "Symmetry classes of flows and links").
//
// Plain C++, no SimGrid: the caller (flow_runner.cpp) reads each flow's route
// from the platform and hands the phase over as links and flows.
//
// What it computes: the time SimGrid's CM02 network model takes to carry the
// phase's flows on an otherwise idle network, started at one instant. CM02
// (SimGrid 3.32, network_cm02.cpp and lmm/maxmin.cpp) gives each flow a
// variable of sharing penalty p = its route latency (1 when the route has no
// latency), disabled until that latency has passed; then SimGrid's max-min
// solver shares every (SHARED) link: the constraint with the least
// remaining / sum(1/p) saturates first, each of its unfixed flows getting
// that level / p, and so on. A flow ends when its bytes are carried.
//
// Why classes are exact: color refinement of the bipartite flow-link graph
// (flows colored by bytes, latency and bound; links by capacity; each
// refined by the multiset of its neighbours' colors until nothing splits)
// ends in an equitable partition: every flow of a class crosses the same
// number of links of each link class, every link of a class carries the same
// number of flows of each flow class. Max-min filling keeps every quantity
// constant on the classes (by induction over the solver's rounds: equal
// remaining / usage on the links of a class, so they saturate together, and
// their flows freeze together at the same level), and so do the events
// (a class's flows start, and end, together). So the phase is the quotient
// system: one variable per flow class, one constraint per link class with
// coefficient a(Y, X) = flows of class X on one link of class Y. The orbits
// of the topology's automorphisms (data-parallel ranks are identical) are
// finer than these classes, so a symmetric platform has few. The partition
// is verified to be equitable before use (not assumed from hashing).
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <string>
#include <vector>

namespace gw::engine::detail {

/// A phase of flows on the links they cross.
struct PhaseNetwork {
  std::vector<double> capacity;             ///< per link (bytes/s)
  std::vector<double> bytes;                ///< per flow
  std::vector<double> latency;              ///< per flow: its route latency (s)
  std::vector<double> bound;                ///< per flow: SimGrid's rate bound (bytes/s); <= 0: none
  std::vector<std::size_t> route_begin{0};  ///< flow i crosses route_links[route_begin[i] .. route_begin[i+1])
  std::vector<int> route_links;

  std::size_t flows() const { return bytes.size(); }
  void add_flow(double b, double lat, double bnd, const std::vector<int>& links);
};

/// The classes of a phase (an equitable partition of its flows and links).
struct PhaseClasses {
  std::vector<int> flow_class;  ///< per flow
  std::vector<int> link_class;  ///< per link; -1 for a link no flow crosses
  int flow_classes = 0;
  int link_classes = 0;
};

/// Color refinement to the coarsest equitable partition; `equitable` is
/// false when the check after it fails (it does not, barring a hash
/// collision between different neighbourhoods).
PhaseClasses refine_classes(const PhaseNetwork& net, bool* equitable);

struct SymmetricPhase {
  bool exact = false;   ///< false: the caller must simulate the phase in full
  double duration = 0;  ///< s, from the phase's start to its last flow's end
  int flow_classes = 0;
  int link_classes = 0;
  std::string why_not;  ///< when not exact: which condition failed
};

/// Evaluates the phase by classes. Not exact (and no duration) when the
/// partition is not equitable, has more than `max_flow_classes` flow
/// classes (too little symmetry to gain), a route repeats a link or is
/// empty, a flow would reach its rate bound, or a flow would get no rate.
/// With a store, the classes of an equal earlier phase are taken from it
/// (PartitionStore).
class PartitionStore;
SymmetricPhase evaluate_by_classes(const PhaseNetwork& net, std::size_t max_flow_classes,
                                   PartitionStore* store = nullptr);

/// False when a route is empty or crosses a link twice (refused).
bool routes_are_simple(const PhaseNetwork& net);

/// evaluate_by_classes on classes already known: `pc` and `equitable` as
/// refine_classes gives them for `net` (PartitionStore), on simple routes.
SymmetricPhase evaluate_on_classes(const PhaseNetwork& net, const PhaseClasses& pc, bool equitable,
                                   std::size_t max_flow_classes);

/// Partitions refined once (docs/engine.md, "Partitions refined once").
/// refine_classes and routes_are_simple read a phase only through its
/// routes (route_begin, route_links) and its initial colors (flows numbered
/// by their (bytes, latency, bound) in order of first appearance, links by
/// capacity), so a phase whose routes and initial colors equal an earlier
/// one's, compared in full (the hash only finds candidates), gets that
/// phase's result, bit for bit; its bytes enter only the quotient, which
/// evaluate_on_classes builds anew. Keys up to `max_key_ints` integers in
/// all are kept; past that the store starts again.
class PartitionStore {
 public:
  struct Known {
    bool simple = false;  ///< routes_are_simple
    bool equitable = false;
    PhaseClasses classes;  ///< when simple
  };
  explicit PartitionStore(std::size_t max_key_ints = std::size_t{16} << 20) : max_key_ints_(max_key_ints) {}
  const Known& classes_of(const PhaseNetwork& net);
  long reused() const { return reused_; }

 private:
  struct Entry {
    std::vector<std::size_t> route_begin;
    std::vector<int> route_links, flow_colors, link_colors;
    Known known;
  };
  std::unordered_map<std::uint64_t, std::vector<Entry>> entries_;
  std::size_t max_key_ints_;
  std::size_t key_ints_ = 0;
  long reused_ = 0;
};

}  // namespace gw::engine::detail
