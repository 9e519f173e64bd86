#include "gradwire/replay/replay.hpp"

#include <stdexcept>

#include "child_results.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/replay/collective_memo.hpp"
#include "gradwire/replay/sharded_replay.hpp"

namespace gw {
namespace {

engine::CollectiveOp engine_op(CommOp op) {
  return op == CommOp::AllGather ? engine::CollectiveOp::AllGather : engine::CollectiveOp::AllReduce;
}

void sleep_if(double seconds) {
  if (seconds > 0) engine::Simulation::sleep_for(seconds);
}

// One step of a bucket on the comm stream: a collective over all ranks or a
// codec's sleep, timed.
StepTiming run_step(engine::Simulation& sim, CollectiveMemo& memo, const CommStep& s, int world_size,
                    const ReplayOptions& options, double codec_seconds) {
  StepTiming st;
  st.label = s.label;
  st.kind = s.kind;
  st.bytes = s.bytes;
  st.start = engine::Simulation::now();
  if (s.kind == CommStep::Kind::Collective) {
    if (s.measured_seconds > 0) {
      sleep_if(s.measured_seconds);  // the profile's fit measured on this cluster (plan_measured_collectives)
    } else if (world_size > 1) {
      engine::CollectiveRequest req;
      req.op = engine_op(s.op);
      // All-gathers take NCCL's rule (ring or PAT), as the closed form does (closed_form.cpp).
      req.algorithm = s.op == CommOp::AllGather ? engine::Algorithm::Auto : engine::parse_algorithm(s.algorithm);
      req.granularity = options.granularity;
      req.bytes = s.bytes;
      memo.run(sim, req);
    }
  } else {
    sleep_if(codec_seconds);
  }
  st.end = engine::Simulation::now();
  return st;
}

// Stragglers (docs/model.md): bucket b's collective waits for the slowest
// rank, D_b after this rank's ready time (with overlap off, D after the
// slowest rank's backward end).
void wait_for_slowest_rank(const IterationPlan& plan, const IterationResult& r, std::size_t b) {
  if (plan.bucket_sync_delay.empty()) return;
  const double from = plan.overlap ? r.buckets[b].ready : r.backward_end;
  sleep_if(from + plan.bucket_sync_delay[plan.overlap ? b : plan.bucket_sync_delay.size() - 1] -
           engine::Simulation::now());
}

// A PyTorch hook's work before its first collective: on the compute stream
// after the bucket's last tensor (docs/model.md, "Where the hooks' kernels run").
void run_on_compute_stream(engine::Simulation& sim, CollectiveMemo& memo, const IterationPlan& plan, std::size_t b,
                           BucketTiming& bt, const ReplayOptions& options) {
  const auto& bc = plan.comm[b];
  for (std::size_t i = 0; i < bc.on_compute_stream; ++i)
    bt.steps.push_back(run_step(sim, memo, bc.steps[i], plan.world_size, options, bc.steps[i].seconds));
}

// A hook's `then` work after its last collective: on a side stream from now,
// timed without holding the comm stream; returns its end.
double time_side_stream(const IterationPlan& plan, std::size_t b, bool beside_compute, BucketTiming& bt) {
  const auto& bc = plan.comm[b];
  double t = engine::Simulation::now();
  for (std::size_t i = bc.steps.size() - bc.on_side_stream; i < bc.steps.size(); ++i) {
    const auto& s = bc.steps[i];
    StepTiming st{s.label, s.kind, t, t + codec_step_seconds(plan, s.seconds, beside_compute), s.bytes, true};
    t = st.end;
    bt.steps.push_back(std::move(st));
  }
  return t;
}

// Collective durations recorded by this process's earlier replays, per
// platform (collective_memo.hpp, "Across iterations"); the few most recent
// clusters are kept.
std::vector<std::pair<ClusterSpec, CollectiveMemo::Durations>>& known_durations() {
  static std::vector<std::pair<ClusterSpec, CollectiveMemo::Durations>> known;
  return known;
}

const CollectiveMemo::Durations* find_known(const ClusterSpec& cluster) {
  for (const auto& [c, d] : known_durations())
    if (c == cluster) return &d;
  return nullptr;
}

CollectiveMemo::Durations& known_for(const ClusterSpec& cluster) {
  constexpr std::size_t kClusters = 16;
  auto& known = known_durations();
  for (auto& [c, d] : known)
    if (c == cluster) return d;
  if (known.size() == kClusters) known.erase(known.begin());
  return known.emplace_back(cluster, CollectiveMemo::Durations{}).second;
}

// The two actors of one replayed iteration and what they share.
struct ChildReplay {
  engine::Simulation& sim;
  const IterationPlan& plan;
  const ReplayOptions& options;
  CollectiveMemo& memo;
  IterationResult r;
  std::vector<int> bucket_of_last;  // tensor -> the bucket it completes, or -1
  engine::Signal ready;
  engine::Signal hook_returned;            // a blocking hook's bucket has its end (BucketComm::blocks_host)
  CommActivity comm = CommActivity::Idle;  // what the comm stream runs (interference)
  bool computing = false;                  // the backward runs (codec slow-down)
  std::size_t started = 0;                 // buckets the comm stream has taken
  long activities = 0;

  ChildReplay(engine::Simulation& s, const IterationPlan& p, const ReplayOptions& o, CollectiveMemo& m)
      : sim(s), plan(p), options(o), memo(m), bucket_of_last(p.tensor_backward.size(), -1) {
    r.method = "simulation";
    r.buckets.resize(plan.buckets.size());
    r.tensor_end.assign(plan.tensor_backward.size(), 0.0);
    for (std::size_t b = 0; b < plan.buckets.size(); ++b)
      bucket_of_last.at(plan.buckets[b].last_tensor) = static_cast<int>(b);
  }

  void compute_stream() {
    const std::size_t nt = plan.tensor_backward.size();
    sleep_if(plan.forward);
    ++activities;
    r.backward_start = engine::Simulation::now();
    computing = true;
    for (std::size_t j = 0; j < nt; ++j) {
      double d = plan.tensor_backward[j];
      const CommActivity beside =
          comm != CommActivity::Idle ? comm : side_stream_activity(r, started, engine::Simulation::now());
      d *= 1 + interference_at(plan, beside);
      d += autograd_host_work(plan, j);  // DDP's copy into the bucket and per-bucket host work
      sleep_if(d);
      ++activities;
      const int b = bucket_of_last[j];
      if (b >= 0) {
        const auto bu = static_cast<std::size_t>(b);
        run_on_compute_stream(sim, memo, plan, bu, r.buckets[bu], options);
      }
      if (j + 1 == nt) computing = false;
      if (b >= 0) {
        r.buckets[static_cast<std::size_t>(b)].ready = engine::Simulation::now();
        if (plan.overlap) ready.release();
        if (plan.overlap && j + 1 < nt) wait_for_blocking_hook(static_cast<std::size_t>(b));
      }
      r.tensor_end[j] = engine::Simulation::now();
    }
    computing = false;
    r.backward_end = engine::Simulation::now();
    if (!plan.overlap)
      for (std::size_t b = 0; b < plan.buckets.size(); ++b) ready.release();
  }

  // A hook that blocks the host (PowerSGD's synchronize): the backward's
  // next tensor waits for the bucket's end (docs/model.md).
  void wait_for_blocking_hook(std::size_t b) {
    if (!plan.comm[b].blocks_host) return;
    hook_returned.acquire();
    sleep_if(r.buckets[b].end - engine::Simulation::now());
  }

  void comm_stream() {
    for (std::size_t b = 0; b < plan.buckets.size(); ++b) {
      ready.acquire();
      auto& bt = r.buckets[b];
      // The host calls this bucket's hook after the previous blocking one returned.
      if (b > 0 && plan.comm[b - 1].blocks_host) sleep_if(r.buckets[b - 1].end - engine::Simulation::now());
      wait_for_slowest_rank(plan, r, b);
      comm = CommActivity::Collective;  // the launches, then each step's own
      bt.start = engine::Simulation::now();
      started = b + 1;
      if (b < plan.bucket_launch.size()) sleep_if(plan.bucket_launch[b]);  // hook dispatch + kernel launches
      const auto& bc = plan.comm[b];
      const std::size_t side_from = bc.steps.size() - bc.on_side_stream;
      for (std::size_t i = bc.on_compute_stream; i < side_from; ++i) {
        const auto& s = bc.steps[i];
        comm = s.kind == CommStep::Kind::Collective ? CommActivity::Collective : CommActivity::Codec;
        bt.steps.push_back(run_step(sim, memo, s, plan.world_size, options,
                                    codec_step_seconds(plan, s.seconds, computing && !bc.blocks_host)));
        ++activities;
      }
      comm = CommActivity::Idle;
      bt.end = time_side_stream(plan, b, computing && !bc.blocks_host, bt);
      if (bc.blocks_host && plan.overlap) hook_returned.release();
    }
  }
};

// Runs inside the child: builds the platform, runs the two actors, returns
// the outcome as its message to the parent (detail::encode_outcome): whether
// the memo's conditions held throughout (or it was off; if not, the caller
// runs the whole simulation again), the collectives simulated and replayed,
// the memo's durations and the timeline.
std::string replay_in_child(const ClusterSpec& cluster, const IterationPlan& plan, const ReplayOptions& options,
                            const CollectiveMemo::Durations& seed) {
  // Never destroyed: this runs in the replay's child, which _exits right
  // after; tearing a large platform down (SimGrid's zones, links, solver)
  // was about a sixth of a 131,072-GPU replay (docs/engine.md, bench).
  engine::Simulation& sim = *new engine::Simulation(cluster);
  sim.use_symmetry_classes(!options.full_simulation);
  // The comm actor is the only network user; each collective runs alone on
  // it, so a repeated one can be a sleep (collective_memo.hpp), and so can
  // one an earlier replay on an equal cluster recorded (`seed`).
  CollectiveMemo memo(!options.full_simulation);
  memo.seed(seed);
  ChildReplay replay(sim, plan, options, memo);
  sim.add_actor("compute", 0, [&] { replay.compute_stream(); });
  sim.add_actor("comm", 0, [&] { replay.comm_stream(); });
  sim.run();
  // Copy-out and the per-iteration fixed work follow the last bucket on the
  // compute stream: finish_result() places them after the simulated timeline.
  replay.r.simulated_activities = replay.activities;
  replay.r.simulated_actors = 2;
  detail::ChildOutcome out;
  out.exact = memo.exact();
  out.simulated = memo.simulated();
  out.replayed = memo.replayed();
  out.durations = memo.durations();
  out.result = std::move(replay.r);
  return detail::encode_outcome(out);
}

// One replay child's outcome (`child` = detail::child_plan of the plan).
// With the memo on, an equal child run before in this process (the same
// cluster, plan fields, options and seed: child_results.hpp) gives its
// outcome without a fork; --full-simulation always forks.
detail::ChildOutcome run_child(const ClusterSpec& cluster, const IterationPlan& child, const ReplayOptions& opts) {
  CollectiveMemo::Durations seed;
  if (!opts.full_simulation && opts.share_durations)
    if (const auto* known = find_known(cluster)) seed = *known;
  auto fork_child = [&] {
    return detail::decode_outcome(engine::run_in_child([&] { return replay_in_child(cluster, child, opts, seed); }));
  };
  if (opts.full_simulation) return fork_child();
  std::string key = detail::child_key(child, static_cast<int>(opts.granularity), true, seed);
  if (const auto* kept = detail::find_child_outcome(cluster, key)) {
    detail::ChildOutcome out = *kept;
    out.reused = true;
    return out;
  }
  detail::ChildOutcome out = fork_child();
  detail::keep_child_outcome(cluster, std::move(key), out);
  return out;
}

}  // namespace

void forget_replay_children() { detail::forget_child_outcomes(); }

bool full_simulation(const ReplayOptions& options) {
  return options.full_simulation || engine::full_simulation_requested();
}

IterationResult simulate_plan(const ClusterSpec& cluster, const IterationPlan& plan, const ReplayOptions& options) {
  ReplayOptions opts = options;
  opts.full_simulation = full_simulation(options);
  const IterationPlan child = detail::child_plan(plan);
  detail::ChildOutcome out = run_child(cluster, child, opts);
  ReplayOptions::Stats stats;
  if (!out.exact) {  // a memoised collective shared the network: the full simulation
    opts.full_simulation = true;
    stats.fell_back = true;
    out = run_child(cluster, child, opts);
  }
  stats.simulated = out.simulated;
  stats.replayed = out.replayed;
  stats.reused = out.reused;
  if (options.stats != nullptr) *options.stats = stats;
  // What the child recorded serves the next replay on this cluster.
  if (!opts.full_simulation && opts.share_durations) known_for(cluster) = out.durations;
  IterationResult r = std::move(out.result);
  // The child simulated the synchronizing micro-step from t = 0; put it after
  // the k-1 folded micro-steps.
  shift_timeline(r, plan.folded());
  finish_result(plan, r);
  return r;
}

IterationResult simulate_iteration(const Scenario& scenario, const ModelDesc& model, const Profile& profile,
                                   const ReplayOptions& options) {
  if (is_sharded(scenario)) return simulate_sharded_iteration(scenario, model, profile, options);
  const PreparedIteration prepared = prepare_iteration(scenario, model, profile);
  IterationResult r = simulate_plan(prepared.cluster, prepared.plan, options);
  label_result(r, scenario, profile);
  return r;
}

}  // namespace gw
