// The one driver of every collective algorithm: looks the algorithm up, lets it
// emit its phases and runs each phase as simulated flows from the calling
// actor (see collective.hpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "collective.hpp"
#include "gradwire/model/closed_form.hpp"
#include "simulation_impl.hpp"

namespace gw::engine {
namespace s4u = simgrid::s4u;

namespace {

constexpr const detail::AlgorithmDescriptor* kAlgorithms[] = {
    &detail::kRingAllReduce,     &detail::kRingAllGather,      &detail::kRingReduceScatter,
    &detail::kTreeAllReduce,     &detail::kNvlsAllReduce,      &detail::kHierarchicalAllReduce,
    &detail::kPipelineBroadcast, &detail::kDirectAllToAll,
};

const detail::AlgorithmDescriptor& find_algorithm(CollectiveOp op, Algorithm a) {
  for (const auto* d : kAlgorithms)
    if (d->op == op && d->algorithm == a) return *d;
  throw std::invalid_argument("no " + to_string(a) + " algorithm for " + to_string(op) +
                              " (available: ring for allreduce, allgather, reducescatter and "
                              "broadcast; tree, nvls and hierarchical for allreduce; direct for "
                              "alltoall)");
}

// SimGrid 3.32 keeps every host-to-host communication (`Comm::sendto_async`:
// a detached activity) in ONE list, maestro's, and removes a finished one by a
// linear std::list::remove: F flows in flight cost O(F^2) whichever actor
// started them (87% of the CPU of a 4,096-GPU tree all-reduce, 16,380 flows:
// docs/engine.md "Where the time goes"). A mailbox communication is listed
// only by its two actors. Phases of more than g_flows_per_actor (256) flows
// are therefore run through mailboxes by actors on the flows' hosts
// (run_flows_by_host; one mailbox set per phase in flight:
// Impl::mailbox_sets). Both ways create the same network actions (host of the
// sender -> host of the receiver, same bytes) at the same simulated instant
// and in the same order, so the simulated times are the same (tested, full
// vs fast: test_flow_runner.cpp); small phases keep the cheaper sendto path.
std::size_t g_flows_per_actor = 256;

void run_flows(const std::vector<s4u::Host*>& hosts, const std::vector<detail::Flow>& flows) {
  std::vector<s4u::CommPtr> comms;
  comms.reserve(flows.size());
  for (const auto& f : flows)
    comms.push_back(s4u::Comm::sendto_async(hosts[f.src], hosts[f.dst],
                                            static_cast<std::uint64_t>(std::llround(f.bytes))));
  s4u::Comm::wait_all(comms);
}

// The payload of the mailbox communications (the engine moves no data).
char g_payload = 0;

// Runs a phase's flows through `boxes` (one mailbox per rank), creating the
// network actions in the order of `flows`, as run_flows does: SimGrid's
// max-min solver works to a precision (maxmin/precision, 1e-5) and its result
// depends on the order of the actions at that level (measured: the flows of
// a 512-GPU tree all-reduce sorted by destination changed its time by
// 1.4e-4 relative). A mailbox communication's network action is created
// when its second side arrives, and SimGrid runs the actors created at one
// instant in the order of their creation. So one receiver actor per
// destination host is created first (it posts its gets and waits), then one
// sender actor per run of consecutive flows from the same host, in the
// order of the flows: each put finds its get posted and creates its action
// at once, in the order of `flows`. Every actor releases `done` when its
// communications are over; the driver takes one token per actor.
void run_flows_by_host(const std::vector<s4u::Host*>& hosts, const std::vector<detail::Flow>& flows,
                       const std::vector<s4u::Mailbox*>& boxes) {
  std::vector<int> incoming(hosts.size(), 0);
  for (const auto& f : flows) ++incoming[f.dst];
  const s4u::SemaphorePtr done = s4u::Semaphore::create(0);
  int actors = 0;
  for (std::size_t h = 0; h < hosts.size(); ++h) {
    if (incoming[h] == 0) continue;
    ++actors;
    s4u::Actor::create("gets", hosts[h], [done, own = boxes[h], gets = incoming[h]] {
      std::vector<char*> received(static_cast<std::size_t>(gets));
      std::vector<s4u::CommPtr> comms;
      comms.reserve(received.size());
      for (auto& r : received) comms.push_back(own->get_async<char>(&r));
      s4u::Comm::wait_all(comms);
      done->release();
    });
  }
  for (std::size_t b = 0; b < flows.size();) {
    std::size_t e = b + 1;
    while (e < flows.size() && flows[e].src == flows[b].src) ++e;
    ++actors;
    s4u::Actor::create("puts", hosts[flows[b].src], [&flows, &boxes, done, b, e] {
      std::vector<s4u::CommPtr> comms;
      comms.reserve(e - b);
      for (std::size_t i = b; i < e; ++i)
        comms.push_back(boxes[flows[i].dst]->put_async(&g_payload, static_cast<std::uint64_t>(std::llround(flows[i].bytes))));
      s4u::Comm::wait_all(comms);
      done->release();
    });
    b = e;
  }
  for (int a = 0; a < actors; ++a) done->acquire();
}

// The nodes the ranks span (ranks are numbered node by node).
NcclShape shape_of(const std::vector<int>& ranks, int gpus_per_node) {
  std::vector<int> nodes;
  for (int r : ranks) nodes.push_back(r / gpus_per_node);
  std::sort(nodes.begin(), nodes.end());
  return {static_cast<int>(ranks.size()),
          static_cast<int>(std::unique(nodes.begin(), nodes.end()) - nodes.begin())};
}

std::vector<int> checked_ranks(const std::vector<int>& requested, int world) {
  std::vector<int> ranks = requested;
  if (ranks.empty()) {
    ranks.resize(world);
    for (int i = 0; i < world; ++i) ranks[i] = i;
    return ranks;
  }
  std::vector<bool> seen(world);
  for (int r : ranks) {
    if (r < 0 || r >= world) throw std::invalid_argument("collective rank " + std::to_string(r) + " out of range");
    if (seen[r]) throw std::invalid_argument("collective rank " + std::to_string(r) + " twice");
    seen[r] = true;
  }
  return ranks;
}

}  // namespace

void detail::set_flows_per_actor(std::size_t flows) { g_flows_per_actor = flows; }

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

double Simulation::run_collective(const CollectiveRequest& request) {
  if (!(std::isfinite(request.bytes) && request.bytes >= 0))
    throw std::invalid_argument("collective size must be a finite number of bytes >= 0");
  const ClusterSpec& cluster = impl_->cluster;
  detail::ScheduleInput in;
  in.cluster = &cluster;
  in.bytes = request.bytes;
  in.granularity = request.granularity;
  in.ranks = checked_ranks(request.ranks, world_size());
  const NcclShape shape = shape_of(in.ranks, cluster.gpus_per_node);
  if (request.algorithm != Algorithm::Auto) find_algorithm(request.op, request.algorithm);  // names what exists
  const CollectiveChoice pick =
      choose_collective(request.op, request.algorithm, request.protocol, cluster, shape, request.bytes);
  const auto& algo = find_algorithm(request.op, pick.algorithm);
  const NcclCost cost = *collective_cost(request.op, pick.algorithm, pick.protocol, cluster, shape, request.bytes);
  const double start = now();
  const auto& hosts = impl_->hosts;
  double wire_latency = 0;  // the route latencies the phases paid
  algo.schedule(in, [&](detail::Phase& phase) {
    auto& flows = phase.flows;
    if (cost.efficiency != 1.0)
      for (auto& f : flows) f.bytes /= cost.efficiency;
    if (flows.size() <= g_flows_per_actor) {
      run_flows(hosts, flows);
    } else {
      const std::size_t set = impl_->acquire_mailboxes();
      run_flows_by_host(hosts, flows, impl_->mailbox_sets[set]);
      impl_->free_mailbox_sets.push_back(set);
    }
    if (phase.extra_latency_steps > 0 || cost.latency > 0) {
      double alpha = 0;
      for (const auto& f : flows) alpha = std::max(alpha, route(f.src, f.dst).first);
      if (phase.extra_latency_steps > 0) sleep_for(phase.extra_latency_steps * alpha);
      wire_latency += (1 + phase.extra_latency_steps) * alpha;
    }
  });
  if (cost.latency > wire_latency) sleep_for(cost.latency - wire_latency);
  return now() - start;
}

}  // namespace gw::engine
