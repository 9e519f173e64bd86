// gw::engine::Simulation: one SimGrid engine and the platform of one cluster.
#include <signal.h>

#include <atomic>
#include <stdexcept>
#include <string>

#include "platform.hpp"
#include "simulation_impl.hpp"

namespace gw::engine {
namespace s4u = simgrid::s4u;

namespace {

// SimGrid keeps global state: a second engine in one process silently keeps
// the old clock and configuration. Refuse instead (use run_in_child).
std::atomic<bool> g_engine_created{false};

// Each actor's stack (KiB). The engine's actors are plain functions with
// shallow call chains; 64 KiB keeps tens of thousands of actors cheap.
// Under AddressSanitizer (the "asan" preset) the frames are larger and
// SimGrid's default "raw" context switch (hand-written assembly) hides the
// stack switches from ASan, which then warns of false positives; the
// "ucontext" factory switches with swapcontext(), which ASan intercepts.
#if defined(__SANITIZE_ADDRESS__)
#define GW_ENGINE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GW_ENGINE_ASAN 1
#endif
#endif
#ifdef GW_ENGINE_ASAN
constexpr int kActorStackKiB = 256;
#else
constexpr int kActorStackKiB = 64;
#endif

// Flows that have ended (Simulation::network_activity), from SimGrid's
// signal: it fires when a network action, whoever started it, changes state
// (done, failed). One engine per process, so process-wide.
long g_flows_ended = 0;

void watch_network() {
  s4u::Link::on_communication_state_change_cb(
      [](simgrid::kernel::resource::NetworkAction&, simgrid::kernel::resource::Action::State) { ++g_flows_ended; });
}

}  // namespace

Simulation::Simulation(const ClusterSpec& cluster) : impl_(std::make_unique<Impl>()) {
  detail::validate_cluster(cluster);
  check_simulation_memory(cluster);  // before the platform takes it (docs/engine.md, "Scale")
  if (g_engine_created.exchange(true))
    throw std::logic_error("gw::engine::Simulation: one simulation per process (run it in run_in_child)");
  impl_->cluster = cluster;
  // SimGrid's own messages are silenced below the critical level; gradwire
  // reports its errors itself.
  static char arg0[] = "gradwire";
  static char arg1[] = "--log=root.thres:critical";
#ifdef GW_ENGINE_ASAN
  static char arg2[] = "--cfg=contexts/factory:ucontext";
  char* argv[] = {arg0, arg1, arg2, nullptr};
  int argc = 3;
#else
  char* argv[] = {arg0, arg1, nullptr};
  int argc = 2;
#endif
  // SimGrid's engine installs a SIGINT handler that prints the actors and
  // calls exit() inside the handler, which can crash in the middle of a
  // context switch. gradwire's commands handle ^C themselves (sweep,
  // calibrate) or die of it: keep the process's own disposition.
  struct sigaction own_sigint {};
  ::sigaction(SIGINT, nullptr, &own_sigint);
  impl_->engine = std::make_unique<s4u::Engine>(&argc, argv);
  ::sigaction(SIGINT, &own_sigint, nullptr);
  s4u::Engine::set_config("contexts/stack-size", kActorStackKiB);
  detail::configure_network(cluster.network);
  impl_->hosts = detail::build_platform(cluster);
  impl_->by_classes_enabled = !full_simulation_requested();
  watch_network();
}

Simulation::~Simulation() = default;

void Simulation::use_symmetry_classes(bool on) { impl_->by_classes_enabled = on; }

const ClusterSpec& Simulation::cluster() const { return impl_->cluster; }

int Simulation::world_size() const { return static_cast<int>(impl_->hosts.size()); }

void Simulation::add_actor(const std::string& name, int rank, std::function<void()> body) {
  if (rank < 0 || rank >= world_size())
    throw std::out_of_range("add_actor: rank " + std::to_string(rank) + " out of range");
  s4u::Actor::create(name, impl_->hosts[rank], std::move(body));
}

double Simulation::run() {
  impl_->engine->run();
  if (impl_->phase_stats.overlapped > 0)
    throw std::logic_error(
        "gw::engine::Simulation: a phase began while a phase evaluated by symmetry classes was in flight; "
        "run with GRADWIRE_FULL_SIMULATION=1 (docs/engine.md, \"Symmetry classes of flows and links\")");
  return s4u::Engine::get_clock();
}

double Simulation::now() { return s4u::Engine::get_clock(); }

void Simulation::sleep_for(double seconds) {
  if (seconds > 0) s4u::this_actor::sleep_for(seconds);
}

Simulation::NetworkActivity Simulation::network_activity() const {
  return {g_flows_ended + impl_->flows_by_classes_ended};
}

const Simulation::PhaseStats& Simulation::phase_stats() const { return impl_->phase_stats; }

std::pair<double, double> Simulation::route(int src_rank, int dst_rank) const {
  if (src_rank < 0 || src_rank >= world_size() || dst_rank < 0 || dst_rank >= world_size())
    throw std::out_of_range("route: rank out of range");
  std::vector<s4u::Link*> links;
  double latency = 0;
  impl_->hosts[src_rank]->route_to(impl_->hosts[dst_rank], links, &latency);
  double bandwidth = std::numeric_limits<double>::infinity();
  for (const auto* l : links) bandwidth = std::min(bandwidth, l->get_bandwidth());
  return {latency, bandwidth};
}

// --- Signal ---------------------------------------------------------------
struct Signal::Impl {
  s4u::SemaphorePtr semaphore = s4u::Semaphore::create(0);
};

Signal::Signal() : impl_(std::make_unique<Impl>()) {}
Signal::~Signal() = default;
void Signal::release() { impl_->semaphore->release(); }
void Signal::acquire() { impl_->semaphore->acquire(); }

}  // namespace gw::engine
