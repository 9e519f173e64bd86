// How the driver starts a phase's flows (Simulation::Impl::run_flows).
//
// SimGrid 3.32 keeps every host-to-host communication (`Comm::sendto_async`,
// a detached activity) in ONE list, maestro's, and removes a finished one by
// a linear std::list::remove: F flows in flight cost O(F^2) whichever actor
// started them (87% of the CPU of a 4,096-GPU tree all-reduce, 16,380 flows;
// docs/engine.md "Where the time goes"). A mailbox communication is listed
// only by its two actors, but needs an actor on each of its hosts, and each
// actor costs about 30 us of CPU and two memory mappings (its stack and guard
// page; Linux allows 65,530 per process: 65,536 actors failed with "Failed to
// protect stack").
//
// The order matters: SimGrid's max-min solver works to a precision
// (maxmin/precision, 1e-5) and its result depends on the order of the network
// actions at that level (measured: a 512-GPU tree all-reduce's flows sorted by
// destination moved its time by 1.4e-4 relative). A mailbox communication's
// network action is created when its second side is posted, and SimGrid runs
// the actors created at one instant in the order of their creation. Every
// path below creates the same actions (host of the sender -> host of the
// receiver, same bytes) at the same instant IN THE ORDER OF THE FLOWS, so the
// simulated times are the same (tested, full vs fast: test_flow_runner.cpp):
//  - sendto: the calling actor sends every flow host to host (phases of up to
//    kFlowsForMailboxes flows, where the O(F^2) list costs less than actors);
//  - host actors: one actor per host, in increasing rank order, posts its
//    gets, then its puts in the flows' order. Exact when the order in which
//    the actions are then created (predicted by host_actor_order, the same
//    matching SimGrid does: a mailbox matches its oldest pending side) is the
//    flows' order, which holds for a ring (checked at run time), and when
//    the actors stay under kMaxFlowActors;
//  - receivers then runs: one receiver per destination host posts its gets
//    first; then one sender per run of consecutive flows from one host, in
//    the flows' order: each put finds its get and creates its action at once.
//    Used when host actors do not keep the order and the actors stay under
//    kMaxFlowActors; otherwise the phase falls back to sendto.
// Before any of these, a phase of more than g_flows_for_symmetry flows on an
// idle network may be evaluated by symmetry classes instead (run_by_classes,
// symmetry.hpp): no SimGrid action at all, the same time.
// Each actor releases a semaphore when its communications are over; the
// driver takes one token per actor. One mailbox set (one mailbox per rank)
// per phase in flight (Impl::mailbox_sets), so concurrent collectives never
// match each other's communications.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "collective.hpp"
#include "simulation_impl.hpp"
#include "symmetry.hpp"

namespace gw::engine {
namespace s4u = simgrid::s4u;

namespace {

// Below this many flows the O(F^2) list costs less than the actors
// (measured on the ring: 4,096 flows, 0.17 s of CPU sent host to host, 0.29 s
// through 4,096 actors; tree, 16,380 flows: 1.94 s against 0.67 s).
std::size_t g_flows_for_mailboxes = 8192;
// Phases of more flows than this go by symmetry classes when exact: below,
// SimGrid's own cost is a few ms (measured: see docs/engine.md).
std::size_t g_flows_for_symmetry = 1024;
// At most this many actors per phase: two memory mappings each, within
// Linux's default 65,530 mappings per process with room for the rest.
constexpr std::size_t kMaxFlowActors = 24576;  // 20,476 ran; 32,768 failed

char g_payload = 0;  // the mailbox communications' payload (no data moves)

// Every flow carries at least one byte: SimGrid 3.32 sees a 0-byte
// communication end only at its next event, so a block rounded down to 0 (an
// 8 B all-to-all on 32 GPUs: 0.25 B blocks) took whatever else was in flight
// (4,004 us there instead of the closed form's 434 us). One byte is what a
// message's header carries at the least; it adds 1 B / bandwidth.
std::uint64_t bytes_of(const detail::Flow& f) {
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(f.bytes)));
}

void send_range(const std::vector<s4u::Host*>& hosts, const std::vector<detail::Flow>& flows, std::size_t begin,
                std::size_t end) {
  std::vector<s4u::CommPtr> comms;
  comms.reserve(end - begin);
  for (std::size_t i = begin; i < end; ++i)
    comms.push_back(s4u::Comm::sendto_async(hosts[flows[i].src], hosts[flows[i].dst], bytes_of(flows[i])));
  s4u::Comm::wait_all(comms);
}

// Host to host, as before the mailboxes: phases of more than 256 flows by
// helper actors of 256 flows each, joined by the driver. The helpers do not
// shorten maestro's list; they are kept because a flow of 0 bytes (a block
// under half a byte) is seen to end only at SimGrid's next event, which
// depends on how the flows are started (an 8 B all-to-all on 32 GPUs: 4,004 us
// with helpers, 11,620 us from the driver alone, 434 us with 1-byte blocks):
// keeping them keeps every result as it was.
void send_host_to_host(const std::vector<s4u::Host*>& hosts, const std::vector<detail::Flow>& flows) {
  constexpr std::size_t kFlowsPerHelper = 256;
  if (flows.size() <= kFlowsPerHelper) {
    send_range(hosts, flows, 0, flows.size());
    return;
  }
  std::vector<s4u::ActorPtr> helpers;
  helpers.reserve(flows.size() / kFlowsPerHelper + 1);
  for (std::size_t b = 0; b < flows.size(); b += kFlowsPerHelper) {
    const std::size_t e = std::min(b + kFlowsPerHelper, flows.size());
    helpers.push_back(s4u::Actor::create("flows", s4u::this_actor::get_host(),
                                         [&hosts, &flows, b, e] { send_range(hosts, flows, b, e); }));
  }
  for (auto& h : helpers) h->join();
}

// The order in which SimGrid creates the actions when one actor per host (in
// increasing rank order) posts its gets, then its puts in the flows' order;
// a mailbox matches its oldest pending side.
std::vector<std::size_t> host_actor_order(const std::vector<detail::Flow>& flows, std::size_t n_hosts) {
  std::vector<std::vector<std::size_t>> out(n_hosts);
  std::vector<int> incoming(n_hosts, 0), pending_gets(n_hosts, 0);
  for (std::size_t i = 0; i < flows.size(); ++i) {
    out[flows[i].src].push_back(i);
    ++incoming[flows[i].dst];
  }
  std::vector<std::deque<std::size_t>> pending_puts(n_hosts);
  std::vector<std::size_t> order;
  order.reserve(flows.size());
  for (std::size_t h = 0; h < n_hosts; ++h) {
    for (int k = 0; k < incoming[h]; ++k) {
      if (pending_puts[h].empty()) {
        ++pending_gets[h];
      } else {
        order.push_back(pending_puts[h].front());
        pending_puts[h].pop_front();
      }
    }
    for (std::size_t i : out[h]) {
      const auto d = static_cast<std::size_t>(flows[i].dst);
      if (pending_gets[d] > 0) {
        --pending_gets[d];
        order.push_back(i);
      } else {
        pending_puts[d].push_back(i);
      }
    }
  }
  return order;
}

bool in_flow_order(const std::vector<std::size_t>& order) {
  for (std::size_t i = 0; i < order.size(); ++i)
    if (order[i] != i) return false;
  return true;
}

// Starts an actor posting `gets` receives on `own`, then the puts of
// flows[i] for i in `puts`; it releases `done` when all are over.
void start_actor(s4u::Host* host, s4u::Mailbox* own, int gets, std::vector<std::size_t> puts,
                 const std::vector<detail::Flow>& flows, const std::vector<s4u::Mailbox*>& boxes,
                 const s4u::SemaphorePtr& done) {
  s4u::Actor::create("flows", host, [own, gets, puts = std::move(puts), &flows, &boxes, done] {
    std::vector<char*> received(static_cast<std::size_t>(gets));
    std::vector<s4u::CommPtr> comms;
    comms.reserve(received.size() + puts.size());
    for (auto& r : received) comms.push_back(own->get_async<char>(&r));
    for (std::size_t i : puts) {
      const auto& f = flows[i];
      if (f.rate > 0)  // a lockstep phase's pace (SimGrid 3.32 applies a rate to mailbox comms only)
        comms.push_back(boxes[f.dst]->put_init(&g_payload, bytes_of(f))->set_rate(f.rate)->start());
      else
        comms.push_back(boxes[f.dst]->put_async(&g_payload, bytes_of(f)));
    }
    s4u::Comm::wait_all(comms);
    done->release();
  });
}

// Host actors when they keep the flows' order, else receivers then runs when
// the actors fit; false: neither (the caller sends host to host).
bool run_through_mailboxes(const std::vector<s4u::Host*>& hosts, const std::vector<detail::Flow>& flows,
                           const std::vector<s4u::Mailbox*>& boxes) {
  const std::size_t n = hosts.size();
  std::vector<int> incoming(n, 0);
  std::vector<std::vector<std::size_t>> out(n);
  for (std::size_t i = 0; i < flows.size(); ++i) {
    ++incoming[flows[i].dst];
    out[flows[i].src].push_back(i);
  }
  const s4u::SemaphorePtr done = s4u::Semaphore::create(0);
  std::size_t actors = 0;
  std::size_t hosts_used = 0;
  for (std::size_t h = 0; h < n; ++h) hosts_used += (incoming[h] > 0 || !out[h].empty()) ? 1 : 0;
  if (hosts_used <= kMaxFlowActors && in_flow_order(host_actor_order(flows, n))) {
    for (std::size_t h = 0; h < n; ++h) {
      if (incoming[h] == 0 && out[h].empty()) continue;
      start_actor(hosts[h], boxes[h], incoming[h], std::move(out[h]), flows, boxes, done);
      ++actors;
    }
  } else {
    std::size_t receivers = 0, runs = 0;
    for (std::size_t h = 0; h < n; ++h) receivers += incoming[h] > 0 ? 1 : 0;
    for (std::size_t i = 0; i < flows.size(); ++i) runs += (i == 0 || flows[i].src != flows[i - 1].src) ? 1 : 0;
    if (receivers + runs > kMaxFlowActors) return false;
    for (std::size_t h = 0; h < n; ++h)
      if (incoming[h] > 0) start_actor(hosts[h], boxes[h], incoming[h], {}, flows, boxes, done);
    for (std::size_t b = 0; b < flows.size();) {
      std::vector<std::size_t> run{b};
      while (run.back() + 1 < flows.size() && flows[run.back() + 1].src == flows[b].src) run.push_back(run.back() + 1);
      b = run.back() + 1;
      s4u::Host* src = hosts[flows[run.front()].src];  // before `run` moves
      start_actor(src, nullptr, 0, std::move(run), flows, boxes, done);
    }
    actors = receivers + runs;
  }
  for (std::size_t a = 0; a < actors; ++a) done->acquire();
  return true;
}

}  // namespace

void detail::set_flows_for_mailboxes(std::size_t flows) { g_flows_for_mailboxes = flows; }

void detail::set_flows_for_symmetry(std::size_t flows) { g_flows_for_symmetry = flows; }

bool full_simulation_requested() {
  const char* env = std::getenv("GRADWIRE_FULL_SIMULATION");
  return env != nullptr && *env != '\0' && std::strcmp(env, "0") != 0;
}

const Simulation::Impl::Route& Simulation::Impl::route_of(int src, int dst) {
  const auto key = static_cast<std::uint64_t>(src) * hosts.size() + static_cast<std::uint64_t>(dst);
  auto [it, fresh] = routes.try_emplace(key);
  if (!fresh) return it->second;
  std::vector<s4u::Link*> links;
  double latency = 0;
  hosts[src]->route_to(hosts[dst], links, &latency);
  it->second.latency = latency;
  for (auto* l : links) {
    auto [at, added] = link_index.try_emplace(l, static_cast<int>(link_capacity.size()));
    // -1: not SHARED (a FATPIPE link does not share its capacity): refused.
    const bool shared = l->get_sharing_policy() == s4u::Link::SharingPolicy::SHARED;
    if (added) link_capacity.push_back(shared ? l->get_bandwidth() : -1);
    it->second.links.push_back(at->second);
  }
  return it->second;
}

// A phase by classes (symmetry.hpp) when every condition of its exactness
// holds: CM02 without cross-traffic (the rules symmetry.cpp follows), no
// other phase in flight (an idle network at its start; one that begins
// during it is counted as overlapped, and run() refuses the result), every
// link SHARED (split-duplex halves), no time-varying link state (the
// platform sets no profiles), and the partition equitable with at most half
// as many classes as flows.
bool Simulation::Impl::run_by_classes(const std::vector<detail::Flow>& flows) {
  if (cluster.network.model != "CM02" || cluster.network.crosstraffic) {
    phase_stats.last_refusal = "network model other than CM02 without cross-traffic";
    return false;
  }
  detail::PhaseNetwork net;
  net.bytes.reserve(flows.size());
  for (const auto& f : flows) {
    const Route& r = route_of(f.src, f.dst);
    const double bound = r.latency > 0 ? cluster.network.tcp_gamma / (2.0 * r.latency) : -1.0;
    net.add_flow(static_cast<double>(bytes_of(f)), r.latency, bound, r.links);
  }
  net.capacity = link_capacity;
  for (int l : net.route_links)
    if (net.capacity[l] < 0) {
      phase_stats.last_refusal = "a link that is not SHARED";
      return false;
    }
  const detail::SymmetricPhase p = detail::evaluate_by_classes(net, flows.size() / 2, &partitions);
  phase_stats.reused = partitions.reused();
  phase_stats.last_flow_classes = p.flow_classes;
  phase_stats.last_refusal = p.why_not;
  if (!p.exact) return false;
  ++phases_in_flight;
  by_classes_in_flight = true;
  s4u::this_actor::sleep_for(p.duration);
  by_classes_in_flight = false;
  --phases_in_flight;
  flows_by_classes_ended += static_cast<long>(flows.size());
  ++phase_stats.by_classes;
  return true;
}

std::size_t Simulation::Impl::acquire_mailboxes() {
  if (!free_mailbox_sets.empty()) {
    const std::size_t set = free_mailbox_sets.back();
    free_mailbox_sets.pop_back();
    return set;
  }
  // The set is registered before its mailboxes are made: Mailbox::by_name is
  // a simcall, during which another collective's driver may run and take a
  // set of its own.
  const std::size_t set = mailbox_sets.size();
  auto& boxes = mailbox_sets.emplace_back(hosts.size());
  const std::string prefix = "gw-flows-" + std::to_string(set) + "-";
  for (std::size_t r = 0; r < boxes.size(); ++r) boxes[r] = s4u::Mailbox::by_name(prefix + std::to_string(r));
  return set;
}

// A lockstep phase alone on the network: every flow gets its rate once its
// route latency has passed (the rates fit every link, pace_lockstep), so it
// ends at latency + bytes / min(rate, TCP-gamma bound), as SimGrid would run
// it; the phase lasts the latest end. Overlap is detected as run_by_classes.
void Simulation::Impl::run_lockstep(const std::vector<detail::Flow>& flows) {
  double duration = 0;
  for (const auto& f : flows) {
    const Route& r = route_of(f.src, f.dst);
    const double rate = r.latency > 0 ? std::min(f.rate, cluster.network.tcp_gamma / (2.0 * r.latency)) : f.rate;
    duration = std::max(duration, r.latency + static_cast<double>(bytes_of(f)) / rate);
  }
  ++phases_in_flight;
  by_classes_in_flight = true;
  s4u::this_actor::sleep_for(duration);
  by_classes_in_flight = false;
  --phases_in_flight;
  flows_by_classes_ended += static_cast<long>(flows.size());
  ++phase_stats.by_classes;
}

void Simulation::Impl::run_flows(const std::vector<detail::Flow>& flows) {
  const bool paced = !flows.empty() && flows.front().rate > 0;
  if (by_classes_in_flight) {
    ++phase_stats.overlapped;
  } else if (by_classes_enabled && phases_in_flight == 0 && flows.size() > g_flows_for_symmetry && paced) {
    run_lockstep(flows);
    return;
  } else if (by_classes_enabled && phases_in_flight == 0 && flows.size() > g_flows_for_symmetry &&
             run_by_classes(flows)) {
    return;
  }
  ++phases_in_flight;
  ++phase_stats.in_full;
  bool ran = false;
  // A paced phase through the mailboxes, where SimGrid applies the rates
  // (host to host beyond the actors they allow: unpaced, max-min alone).
  if (paced || flows.size() > g_flows_for_mailboxes) {
    const std::size_t set = acquire_mailboxes();
    ran = run_through_mailboxes(hosts, flows, mailbox_sets[set]);
    free_mailbox_sets.push_back(set);
  }
  if (!ran) send_host_to_host(hosts, flows);
  --phases_in_flight;
}

void Simulation::Impl::pace_lockstep(std::vector<detail::Flow>& flows) {
  std::vector<double> load(link_capacity.size(), 0.0);
  for (const auto& f : flows) {
    const Route& r = route_of(f.src, f.dst);
    load.resize(link_capacity.size(), 0.0);
    for (int l : r.links) load[static_cast<std::size_t>(l)] += static_cast<double>(bytes_of(f));
  }
  double t = 0;
  for (std::size_t l = 0; l < load.size(); ++l)
    if (link_capacity[l] > 0) t = std::max(t, load[l] / link_capacity[l]);
  if (t <= 0) return;
  for (auto& f : flows) f.rate = static_cast<double>(bytes_of(f)) / t;
}

}  // namespace gw::engine
