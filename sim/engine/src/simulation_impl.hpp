// Internal: the state behind gw::engine::Simulation.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <simgrid/s4u.hpp>

#include "collective.hpp"
#include "gradwire/engine/engine.hpp"
#include "symmetry.hpp"

namespace gw::engine {

struct Simulation::Impl {
  ClusterSpec cluster;
  std::unique_ptr<simgrid::s4u::Engine> engine;
  std::vector<simgrid::s4u::Host*> hosts;  ///< GPU host of each rank
  /// Mailboxes of the big phases' flows (flow_runner.cpp), one per rank
  /// in each set; a phase holds a set while its flows run, so concurrent
  /// collectives never match each other's communications.
  std::deque<std::vector<simgrid::s4u::Mailbox*>> mailbox_sets;  ///< deque: a held set never moves
  std::vector<std::size_t> free_mailbox_sets;
  /// A set no phase holds (a new one when all are held).
  std::size_t acquire_mailboxes();
  /// Runs one phase's flows from the calling actor and returns when all are
  /// over (flow_runner.cpp).
  void run_flows(const std::vector<detail::Flow>& flows);
  /// Sets every flow's rate to its bytes over T, T the largest bytes per
  /// capacity over the SHARED links the flows cross (Phase::lockstep).
  void pace_lockstep(std::vector<detail::Flow>& flows);
  /// A paced phase with no other in flight, its duration computed (flow_runner.cpp).
  void run_lockstep(const std::vector<detail::Flow>& flows);

  // --- Phases by symmetry classes (flow_runner.cpp, symmetry.hpp) ----------
  bool by_classes_enabled = true;  ///< off: GRADWIRE_FULL_SIMULATION
  int phases_in_flight = 0;        ///< phases of any kind now running
  bool by_classes_in_flight = false;
  long flows_by_classes_ended = 0;  ///< counted in network_activity()
  Simulation::PhaseStats phase_stats;
  /// Each link a phase crossed: its index in link_capacity.
  std::unordered_map<const simgrid::s4u::Link*, int> link_index;
  std::vector<double> link_capacity;
  struct Route {
    std::vector<int> links;
    double latency = 0;
  };
  std::unordered_map<std::uint64_t, Route> routes;  ///< by src * world + dst
  const Route& route_of(int src, int dst);
  /// Evaluates the phase by classes when exact and sleeps its duration;
  /// false: the caller simulates it in full.
  bool run_by_classes(const std::vector<detail::Flow>& flows);
  /// Partitions refined once, reused by equal phases (symmetry.hpp).
  detail::PartitionStore partitions;
};

}  // namespace gw::engine
