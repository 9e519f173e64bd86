// Internal: the state behind gw::engine::Simulation.
#pragma once

#include <memory>
#include <vector>

#include <simgrid/s4u.hpp>

#include "gradwire/engine/engine.hpp"

namespace gw::engine {

struct Simulation::Impl {
  ClusterSpec cluster;
  std::unique_ptr<simgrid::s4u::Engine> engine;
  std::vector<simgrid::s4u::Host*> hosts;  ///< GPU host of each rank
};

}  // namespace gw::engine
