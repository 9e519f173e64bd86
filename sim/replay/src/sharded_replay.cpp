#include "gradwire/replay/sharded_replay.hpp"

#include <concepts>
#include <cstdint>
#include <memory>
#include <string_view>
#include <type_traits>

#include "gradwire/core/wire.hpp"
#include "gradwire/replay/collective_memo.hpp"

namespace gw {
namespace {

struct ChildLengths {
  bool exact = true;
  long simulated = 0, replayed = 0, activities = 0;
  std::vector<double> lengths;
};

template <class S, class F>
requires std::same_as<std::remove_const_t<S>, ChildLengths>
void wire_fields(S& c, F&& f) {
  f(c.exact);
  f(c.simulated);
  f(c.replayed);
  f(c.activities);
  f(c.lengths);
}

// The child's answer as a gw::wire message (exact doubles, length-checked).
constexpr std::string_view kLengthsKind = "SHRD";
constexpr std::uint32_t kLengthsVersion = 1;

std::string encode(const ChildLengths& c) {
  wire::Writer w;
  w.put(c);
  return wire::seal(kLengthsKind, kLengthsVersion, w.take());
}

ChildLengths decode(const std::string& message) {
  const std::string what = "the sharded replay child's message";
  wire::Reader r(wire::open(message, kLengthsKind, kLengthsVersion, what), what);
  ChildLengths c = r.get<ChildLengths>();
  r.finish();
  return c;
}

/// The engine's ranks of a schedule group: rank 0's group (empty for the
/// world: all ranks) and the groups beside it on its NICs (shard_groups.hpp).
struct GroupRanks {
  std::vector<int> ranks;
  std::vector<std::vector<int>> alongside;
};

GroupRanks engine_ranks(const ShardCommGroup& g, int world, int gpus_per_node) {
  if (g.size >= world) return {};
  return {group_ranks(g, 0), groups_alongside(g, world, gpus_per_node)};
}

/// The two streams of one rank running the plan's programs in turn.
struct ShardedChild {
  engine::Simulation& sim;
  const ShardedIterationPlan& plan;
  const ReplayOptions& options;
  CollectiveMemo& memo;
  std::vector<std::vector<std::unique_ptr<engine::Signal>>> done;  // per program, per op: released once per waiter
  std::vector<std::vector<int>> waiters;                           // per program, per op
  engine::Signal compute_idle, comm_idle;                          // a program's end on each stream
  std::vector<std::pair<ShardCommGroup, GroupRanks>> groups;       // each distinct group's ranks, made once
  ChildLengths out;

  ShardedChild(engine::Simulation& s, const ShardedIterationPlan& p, const ReplayOptions& o, CollectiveMemo& m)
      : sim(s), plan(p), options(o), memo(m), done(p.programs.size()), waiters(p.programs.size()) {
    for (std::size_t g = 0; g < p.programs.size(); ++g) {
      const auto& ops = p.programs[g].ops;
      for (std::size_t i = 0; i < ops.size(); ++i) done[g].push_back(std::make_unique<engine::Signal>());
      waiters[g].assign(ops.size(), 0);
      for (const auto& op : ops)
        for (int a : op.after) ++waiters[g][static_cast<std::size_t>(a)];
    }
  }

  const GroupRanks& ranks_of(const ShardCommGroup& g) {
    for (const auto& [group, ranks] : groups)
      if (group == g) return ranks;
    groups.emplace_back(g, engine_ranks(g, sim.world_size(), sim.cluster().gpus_per_node));
    return groups.back().second;
  }

  void run_op(std::size_t g, std::size_t i) {
    const ShardOp& op = plan.programs[g].ops[i];
    for (int a : op.after) done[g][static_cast<std::size_t>(a)]->acquire();
    if (!op.collective) {
      if (op.seconds > 0) engine::Simulation::sleep_for(op.seconds);
    } else if (op.kernel > 0) {
      engine::Simulation::sleep_for(op.kernel);  // its quantisation kernels
    }
    if (op.collective && sim.world_size() > 1 && op.group.size > 1) {
      const GroupRanks& group = ranks_of(op.group);
      engine::CollectiveRequest req;
      req.ranks = group.ranks;
      req.alongside = group.alongside;
      req.op = op.op;
      req.algorithm = sharded_algorithm(op.op);  // as sharded_collective_time
      req.granularity = options.granularity;
      req.bytes = op.bytes;
      memo.run(sim, req);
    }
    ++out.activities;
    for (int w = 0; w < waiters[g][i]; ++w) done[g][i]->release();
  }

  // One stream: its ops of each program, then wait until the other stream is idle too.
  void stream(bool collectives) {
    for (std::size_t g = 0; g < plan.programs.size(); ++g) {
      const double start = engine::Simulation::now();
      const auto& ops = plan.programs[g].ops;
      for (std::size_t i = 0; i < ops.size(); ++i)
        if (ops[i].collective == collectives) run_op(g, i);
      (collectives ? comm_idle : compute_idle).release();
      (collectives ? compute_idle : comm_idle).acquire();
      if (!collectives) out.lengths.push_back(engine::Simulation::now() - start);
    }
  }
};

std::string sharded_in_child(const ClusterSpec& cluster, const ShardedIterationPlan& plan,
                             const ReplayOptions& options) {
  // Never destroyed: the child _exits right after (replay.cpp, replay_in_child).
  engine::Simulation& sim = *new engine::Simulation(cluster);
  sim.use_symmetry_classes(!options.full_simulation);
  CollectiveMemo memo(!options.full_simulation);
  ShardedChild child(sim, plan, options, memo);
  sim.add_actor("compute", 0, [&] { child.stream(false); });
  sim.add_actor("nccl", 0, [&] { child.stream(true); });
  sim.run();
  child.out.exact = memo.exact();
  child.out.simulated = memo.simulated();
  child.out.replayed = memo.replayed();
  return encode(child.out);
}

}  // namespace

IterationResult simulate_sharded_plan(const ClusterSpec& cluster, const ShardedIterationPlan& plan,
                                      const ReplayOptions& options) {
  ReplayOptions opts = options;
  opts.full_simulation = full_simulation(options);
  auto run = [&] { return decode(engine::run_in_child([&] { return sharded_in_child(cluster, plan, opts); })); };
  ChildLengths c = run();
  ReplayOptions::Stats stats;
  if (!c.exact) {  // a memoised collective shared the network: the full simulation
    opts.full_simulation = true;
    stats.fell_back = true;
    c = run();
  }
  stats.simulated = c.simulated;
  stats.replayed = c.replayed;
  if (options.stats != nullptr) *options.stats = stats;
  IterationResult r = sharded_result(plan, c.lengths, "simulation");
  r.simulated_activities = c.activities;
  r.simulated_actors = 2;
  return r;
}

IterationResult simulate_sharded_iteration(const Scenario& scenario, const ModelDesc& model, const Profile& profile,
                                           const ReplayOptions& options) {
  const PreparedShardedIteration prepared = prepare_sharded_iteration(scenario, model, profile);
  IterationResult r = simulate_sharded_plan(prepared.cluster, prepared.plan, options);
  label_result(r, scenario, profile);
  return r;
}

}  // namespace gw
