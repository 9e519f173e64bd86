// Internal: builds the SimGrid platform of a cluster (see docs/engine.md).
#pragma once

#include <vector>

#include <simgrid/s4u.hpp>

#include "gradwire/model/scenario.hpp"

namespace gw::engine::detail {

/// Checks that the cluster can be built; throws std::invalid_argument.
void validate_cluster(const ClusterSpec& c);
/// Sets the network model configuration; must run before any zone exists.
void configure_network(const NetworkModelSpec& net);
/// Creates the zones, links and hosts; returns the GPU host of every rank.
std::vector<simgrid::s4u::Host*> build_platform(const ClusterSpec& c);

}  // namespace gw::engine::detail
