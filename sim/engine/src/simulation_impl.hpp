// Internal: the state behind gw::engine::Simulation.
#pragma once

#include <deque>
#include <memory>
#include <vector>

#include <simgrid/s4u.hpp>

#include "collective.hpp"
#include "gradwire/engine/engine.hpp"

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
};

}  // namespace gw::engine
