// Profile-derived parts of a cluster (see resolve_cluster in scenario.hpp).
#include <cmath>
#include <sstream>

#include "gradwire/core/error.hpp"
#include "gradwire/model/profile.hpp"
#include "gradwire/model/scenario.hpp"

namespace gw {

ClusterSpec resolve_cluster(const Scenario& scenario, const Profile& profile) {
  ClusterSpec c = scenario.cluster;
  if (!c.intra_node_from_profile) return c;
  const int g = c.gpus_per_node;
  const CollectiveCost* fit = profile.collective(CollectiveOp::AllReduce, g);
  if (fit == nullptr || !(fit->fit.beta > 0) || !std::isfinite(fit->fit.alpha) || fit->fit.alpha < 0) {
    std::ostringstream os;
    os << "not given, and profile '" << profile.name << "' (" << profile.path << ") has no all-reduce fit for "
       << g << " GPUs to derive it from; give cluster.intra_node: {bandwidth, latency}";
    throw InputError(scenario.file, c.line, c.column, "cluster.intra_node", os.str());
  }
  const double steps = 2.0 * (g - 1);
  c.intra_node.bandwidth = fit->fit.beta * steps / g;
  c.intra_node.latency = fit->fit.alpha / (2.0 * steps);
  c.intra_node_from_profile = false;
  return c;
}

}  // namespace gw
