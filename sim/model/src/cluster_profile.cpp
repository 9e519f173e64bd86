// Profile-derived parts of a cluster (see resolve_cluster in scenario.hpp).
#include <cmath>
#include <sstream>

#include "gradwire/core/error.hpp"
#include "gradwire/model/profile.hpp"
#include "gradwire/model/scenario.hpp"

namespace gw {
namespace {

// The profile's measured figures for the link's transport replace the table's.
void apply_measured(const Profile& profile, LinkSpec& l) {
  auto it = profile.transports.find(transport_info(l.transport).name);
  if (it == profile.transports.end()) return;
  const TransportFigures& f = it->second;
  if (f.fraction) l.fraction = *f.fraction;
  if (f.latency) l.latency = *f.latency;
  if (f.per_connection) l.per_connection = *f.per_connection;
}

}  // namespace

ClusterSpec resolve_cluster(const Scenario& scenario, const Profile& profile) {
  ClusterSpec c = scenario.cluster;
  apply_measured(profile, c.nic);
  if (!c.intra_node_from_profile) {
    apply_measured(profile, c.intra_node);
    return c;
  }
  const int g = c.gpus_per_node;
  const CollectiveCost* fit = profile.collective(CollectiveOp::AllReduce, g);
  if (fit == nullptr || !(fit->fit.beta > 0) || !std::isfinite(fit->fit.alpha) || fit->fit.alpha < 0) {
    std::ostringstream os;
    os << "not given, and profile '" << profile.name << "' (" << profile.path << ") has no all-reduce fit for " << g
       << " GPUs to derive it from; give cluster.intra_node: {bandwidth, latency}";
    throw InputError(scenario.file, c.line, c.column, "cluster.intra_node", os.str());
  }
  const double steps = 2.0 * (g - 1);
  c.intra_node.bandwidth = fit->fit.beta * steps / g;
  c.intra_node.latency = fit->fit.alpha / (2.0 * steps);
  c.intra_node_from_profile = false;
  return c;
}

}  // namespace gw
