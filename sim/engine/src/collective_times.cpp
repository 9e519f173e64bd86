// A doubling size sweep of one collective in ONE child process on ONE
// simulation, back to back: each collective waits for its last flow, so the
// next starts on an idle network and its time is the clock difference.
// (SimGrid allows one engine per process; a child per size would rebuild the
// platform for every size.)
#include <stdexcept>

#include "gradwire/engine/engine.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/core/wire.hpp"
#include "collective.hpp"

namespace gw::engine {

std::vector<double> collective_times(const ClusterSpec& cluster, const CollectiveRequest& base,
                                     const std::vector<double>& sizes, const std::string& source) {
  const std::string out = run_in_child([&] {
    // Never destroyed: the child _exits right after the body, and tearing
    // down a 32,768-GPU platform (SimGrid's zones, links, solver) cost more
    // CPU than simulating one collective on it (docs/engine.md, bench).
    Simulation& sim = *new Simulation(cluster);
    std::vector<double> times;
    std::string error;
    // Prepared here, outside the actor, so that a refusal is raised before
    // the simulation runs (an exception thrown in an actor's context trips
    // AddressSanitizer's stack bookkeeping); the actor runs them as prepared.
    std::vector<detail::PreparedCollective> prepared;
    try {
      for (double s : sizes) {
        auto req = base;
        req.bytes = s;
        prepared.push_back(detail::prepare_collective(cluster, sim.world_size(), req));
      }
    } catch (const std::invalid_argument& e) {
      throw InputError(source, 0, 0, "collective", e.what());
    }
    sim.add_actor("collective", 0, [&] {
      try {  // what a schedule itself refuses (hierarchical, nvls, nvlstree check their ranks)
        for (const auto& p : prepared) times.push_back(sim.run_collective(p));
      } catch (const std::invalid_argument& e) {
        error = e.what();
      }
    });
    sim.run();
    if (!error.empty()) throw InputError(source, 0, 0, "collective", error);
    wire::Writer w;  // exact: each time by its bits
    w.put(times);
    return w.take();
  });
  wire::Reader in(out, "collective child's times");
  auto times = in.get<std::vector<double>>();
  in.finish();
  if (times.size() != sizes.size()) in.fail("missing simulated times");
  return times;
}

}  // namespace gw::engine
