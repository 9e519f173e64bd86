// The replay on the engine checked against the closed forms: no overlap,
// bucket pipeline, gradient accumulation (k = 1, 4, 1024), wire bytes of every
// compressor, scaling of all-gathered compressors with N, codec costs read
// from a profile file, interference, and the JSON/trace outputs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gradwire/core/atomic_file.hpp"
#include "gradwire/model/closed_form.hpp"
#include "gradwire/model/collective_model.hpp"
#include "gradwire/engine/engine.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/model/profile.hpp"
#include "gradwire/model/stragglers.hpp"
#include "gradwire/replay/replay.hpp"
#include "gradwire/replay/report.hpp"
#include "synthetic.hpp"

namespace gw {
namespace {

using test::costs;
using test::model_of;
using test::tensor;

ModelDesc tiny_convnet() { return load_model(std::string(GW_REPLAY_TEST_DATA) + "/tiny-convnet.yaml"); }

/// Latency and bandwidth of the route between ranks 0 and 1, read from the
/// engine's platform.
collective::AlphaBeta route_of(const ClusterSpec& c) {
  const std::string s = engine::run_in_child([&] {
    engine::Simulation sim(c);
    const auto [latency, bandwidth] = sim.route(0, 1);
    std::ostringstream o;
    o.precision(17);
    o << latency << ' ' << bandwidth;
    return o.str();
  });
  std::istringstream in(s);
  collective::AlphaBeta ab;
  in >> ab.alpha >> ab.bandwidth;
  return ab;
}

/// The collectives' closed forms (NCCL's pair per size) on a one-level
/// cluster, whose route (route_of) is the closed form's collective link.
CollectiveTimeFn ring_closed_form(const ClusterSpec& c) {
  const auto ab = route_of(c);
  const auto link = collective_link(c, collective_shape(c, c.world_size()));
  EXPECT_DOUBLE_EQ(ab.alpha, link.alpha);
  EXPECT_DOUBLE_EQ(ab.bandwidth, link.bandwidth);
  return closed_form_collective_time(c);
}

WorkloadSpec workload(bool overlap, int accumulation = 1, const std::string& compression = "none") {
  WorkloadSpec w;
  w.compute_efficiency = 1.0;  // the closed forms below use the raw GEMM rate
  w.micro_batch = 4;
  w.accumulation = accumulation;
  w.overlap = overlap;
  w.first_bucket_size = 64 * 1024;
  w.bucket_size = 512 * 1024;  // several buckets for the tiny model
  w.compression.kind = compression;
  w.optimizer.step_time = 1e-4;
  w.ddp_overheads = false;  // the plain closed forms; ReplayDdpOverheads turns them on
  return w;
}

// A slow compute rate so that backward and communication are comparable.
DeviceCosts slow_costs() {
  auto c = costs();
  c.flops = 2e11;
  return c;
}

// SimGrid rounds simulated times to its precision (~1e-9 s), hence 1e-6 relative.
void expect_rel(double actual, double expected, double rel = 1e-6) {
  EXPECT_NEAR(actual, expected, std::abs(expected) * rel) << "expected " << expected;
}

TEST(Replay, NoOverlapIsComputePlusSumOfCollectives) {
  const auto c = test::cluster(1, 8);
  const auto plan = plan_iteration(workload(false), c, tiny_convnet(), slow_costs());
  ASSERT_GE(plan.buckets.size(), 3u);
  const auto r = simulate_plan(c, plan);
  const auto coll = ring_closed_form(c);
  double sum = 0;
  for (const auto& bc : plan.comm)
    for (const auto& s : bc.steps) sum += coll(s);
  expect_rel(r.total, plan.forward + plan.backward() + sum + plan.optimizer);
  expect_rel(r.exposed_communication, sum);
  expect_rel(r.backward, plan.backward());
}

TEST(Replay, OverlapFollowsTheBucketPipeline) {
  const auto c = test::cluster(1, 8);
  const auto plan = plan_iteration(workload(true), c, tiny_convnet(), slow_costs());
  const auto r = simulate_plan(c, plan);
  const auto coll = ring_closed_form(c);
  ASSERT_EQ(r.buckets.size(), plan.buckets.size());
  double prev_end = 0;
  const auto ready = test::bucket_ready_times(plan.buckets, plan.tensor_backward);
  for (std::size_t b = 0; b < r.buckets.size(); ++b) {
    SCOPED_TRACE(b);
    const auto& bt = r.buckets[b];
    expect_rel(bt.ready, r.backward_start + ready[b]);
    // start_b = max(ready_b, end_{b-1}); end_b = start_b + collective time.
    expect_rel(bt.start, std::max(bt.ready, prev_end));
    expect_rel(bt.end - bt.start, coll(plan.comm[b].steps.at(0)), 1e-6);
    prev_end = bt.end;
  }
  const auto closed = evaluate_closed_form(plan, coll);
  expect_rel(r.total, closed.total);
  expect_rel(r.exposed_communication + r.backward + r.forward + r.optimizer, r.total);
  // Overlap hides part of the communication.
  const auto off = simulate_plan(c, plan_iteration(workload(false), c, tiny_convnet(), slow_costs()));
  EXPECT_LT(r.total, off.total);
}

// DDP overheads (docs/model.md): the copy-out after the last collective
// delays the optimizer; the replay places every term as the closed form does.
TEST(ReplayDdpOverheads, CopyOutAfterTheLastCollectiveDelaysTheOptimizer) {
  const auto c = test::cluster(1, 8);
  auto w = workload(true);
  w.ddp_overheads = true;
  auto dc = slow_costs();
  dc.copy_bandwidth = 1e10;  // copies comparable to the collectives
  const auto plan = plan_iteration(w, c, tiny_convnet(), dc);
  const auto r = simulate_plan(c, plan);
  const auto closed = evaluate_closed_form(plan, ring_closed_form(c));
  ASSERT_GE(r.buckets.size(), 3u);
  const double last_copy = plan.bucket_copy_out.back();
  EXPECT_NEAR(last_copy, 2 * plan.buckets.back().bytes / 1e10, 1e-15);
  ASSERT_GT(r.buckets.back().end, r.backward_end);  // the last collective ends after the backward
  // o = backward_end; o = max(o, end_b) + c_b, bucket by bucket.
  double o = r.backward_end;
  for (std::size_t b = 0; b < r.buckets.size(); ++b) o = std::max(o, r.buckets[b].end) + plan.bucket_copy_out[b];
  expect_rel(r.optimizer_start, o);
  EXPECT_GE(r.optimizer_start, r.buckets.back().end + last_copy - 1e-12);  // the optimizer waits for the copy
  expect_rel(r.bucket_copy_out, o - r.buckets.back().end);
  double copy_in = 0;
  for (double x : plan.tensor_copy_in) copy_in += x;
  expect_rel(r.bucket_copy_in, copy_in);
  expect_rel(r.backward, plan.backward());
  expect_rel(r.buckets[0].steps.at(0).start - r.buckets[0].start, kKernelLaunchSeconds);
  expect_rel(r.total, closed.total);
  expect_rel(r.optimizer_start, closed.optimizer_start);
  expect_rel(r.forward + r.backward + r.bucket_copy_in + r.exposed_communication + r.bucket_copy_out + r.optimizer +
                 r.fixed_work,
             r.total);
  // JSON carries the terms.
  const auto back = result_from_json(result_to_json(r, -1));
  EXPECT_TRUE(back.ddp_overheads);
  EXPECT_DOUBLE_EQ(back.bucket_copy_out, r.bucket_copy_out);
  EXPECT_DOUBLE_EQ(back.collective_launch, r.collective_launch);
}

// DDP's per-bucket host work (docs/model.md, "DDP overheads", issue 32 M3):
// h x the bucket's collectives on the autograd thread at its last tensor,
// before the bucket is ready; the replay places it as the closed form does.
TEST(ReplayDdpOverheads, PerBucketHostWorkDelaysTheBackwardAtEachBucket) {
  const auto c = test::cluster(1, 8);
  auto w = workload(true);
  w.ddp_overheads = true;
  auto dc = slow_costs();
  dc.copy_bandwidth = 1e10;
  const auto without = plan_iteration(w, c, tiny_convnet(), dc);
  constexpr double h = 40e-6;
  dc.fitted.host_per_collective = h;
  const auto plan = plan_iteration(w, c, tiny_convnet(), dc);
  ASSERT_GE(plan.buckets.size(), 3u);
  ASSERT_EQ(plan.tensor_host.size(), plan.tensor_backward.size());
  double host = 0;
  for (std::size_t j = 0; j < plan.tensor_host.size(); ++j) host += plan.tensor_host[j];
  for (const auto& b : plan.buckets) EXPECT_DOUBLE_EQ(plan.tensor_host[b.last_tensor], h);  // one all-reduce each
  EXPECT_DOUBLE_EQ(host, h * static_cast<double>(plan.buckets.size()));
  const auto r = simulate_plan(c, plan);
  const auto closed = evaluate_closed_form(plan, ring_closed_form(c));
  const auto base = evaluate_closed_form(without, ring_closed_form(c));
  // Bucket b is ready (b + 1) h later than without (no interference: the
  // tensors are the same); the backward is longer by all of it.
  for (std::size_t b = 0; b < r.buckets.size(); ++b)
    expect_rel(r.buckets[b].ready, base.buckets[b].ready + h * static_cast<double>(b + 1));
  expect_rel(r.backward_end - r.backward_start, base.backward_end - base.backward_start + host);
  expect_rel(r.bucket_host, host);
  expect_rel(r.backward, plan.backward());
  expect_rel(r.total, closed.total);
  expect_rel(r.bucket_host, closed.bucket_host);
  expect_rel(r.forward + r.backward + r.bucket_copy_in + r.bucket_host + r.exposed_communication + r.bucket_copy_out +
                 r.optimizer + r.fixed_work,
             r.total);
  EXPECT_NE(format_table(r).find("DDP bucket host work (autograd)"), std::string::npos);
  EXPECT_DOUBLE_EQ(result_from_json(result_to_json(r, -1)).bucket_host, r.bucket_host);
  // One GPU launches nothing to wait for: no host work.
  const auto one = plan_iteration(w, test::cluster(1, 1), tiny_convnet(), dc);
  for (double x : one.tensor_host) EXPECT_EQ(x, 0.0);
}

// The devset's fitted defaults (issue 32 M1, M2; docs/model.md sections 7
// and 7a): used only where nothing states the figure, named as fitted, and
// replayed as the closed form evaluates them.
TEST(ReplayFittedConstants, DefaultsApplyOnlyWhereNothingStatesThem) {
  const auto c = test::cluster(1, 8);
  auto w = workload(true, 2);
  w.ddp_overheads = true;
  auto dc = slow_costs();
  dc.copy_bandwidth = 1e10;
  dc.fitted = {0.2, 0.05, 10e-6};
  const auto plan = plan_iteration(w, c, tiny_convnet(), dc);
  EXPECT_DOUBLE_EQ(plan.interference, 0.2);
  EXPECT_DOUBLE_EQ(plan.interference_codec, 0.2);
  EXPECT_EQ(plan.interference_range_high, 0.0);  // the residuals hold the band's share
  EXPECT_EQ(plan.interference_source, "fitted on the devset (docs/validation.md)");
  EXPECT_DOUBLE_EQ(plan.compute_jitter, 0.05);
  EXPECT_TRUE(plan.compute_jitter_fitted);
  EXPECT_EQ(plan.compute_jitter_source, "fitted on the devset (docs/validation.md)");
  // D_b = cv mu_N sqrt((k-1) C^2 + (F + R_b)^2): the expected slowest of 8 ranks.
  ASSERT_EQ(plan.bucket_sync_delay.size(), plan.buckets.size());
  const double step = plan.forward + plan.backward();
  expect_rel(plan.bucket_sync_delay.back(), 0.05 * expected_max_normal(8) * std::sqrt(2.0) * step, 1e-12);
  const auto r = simulate_plan(c, plan);
  const auto closed = evaluate_closed_form(plan, ring_closed_form(c));
  expect_rel(r.total, closed.total);
  expect_rel(r.backward, closed.backward);
  expect_rel(r.straggler_wait, closed.straggler_wait);
  EXPECT_GT(r.backward, plan.backward() * (1 + 1e-6));     // slowed beside the collectives
  EXPECT_EQ(r.band.jitter_low + r.band.jitter_high, 0.0);  // a fitted cv's spread is in the residuals
  EXPECT_EQ(r.band.interference_high, 0.0);
  // What the scenario or a measurement states wins.
  auto stated = w;
  stated.interference = 0.0;
  stated.compute_jitter = 0.01;
  const auto own = plan_iteration(stated, c, tiny_convnet(), dc);
  EXPECT_EQ(own.interference, 0.0);
  EXPECT_EQ(own.interference_source, "workload.interference");
  EXPECT_DOUBLE_EQ(own.compute_jitter, 0.01);
  EXPECT_FALSE(own.compute_jitter_fitted);
  auto measured = dc;
  measured.interference.compute_under_nccl = 0.03;
  EXPECT_DOUBLE_EQ(plan_iteration(w, c, tiny_convnet(), measured).interference, 0.03);
  // One GPU: no collective to slow it, no rank to wait for.
  const auto one = plan_iteration(w, test::cluster(1, 1), tiny_convnet(), dc);
  EXPECT_EQ(one.interference, 0.0);
  EXPECT_EQ(one.compute_jitter, 0.0);
  EXPECT_TRUE(one.bucket_sync_delay.empty());
  // Costs made by hand have none; a profile's costs carry the compiled values.
  EXPECT_EQ(costs().fitted, FittedConstants{});
  {
    const ScopedFittedConstants scoped({0.3, 0.0, 0.0});
    EXPECT_DOUBLE_EQ(fitted_constants().compute_under_nccl, 0.3);
  }
  EXPECT_EQ(fitted_constants(), kFittedConstants);
}

TEST(Replay, AccumulationFoldsMicroStepsAndDoesNotGrowTheSimulation) {
  const auto c = test::cluster(1, 8);
  const auto m = tiny_convnet();
  const auto one = simulate_plan(c, plan_iteration(workload(true, 1), c, m, slow_costs()));
  for (int k : {1, 4, 1024}) {
    SCOPED_TRACE(k);
    const auto plan = plan_iteration(workload(true, k), c, m, slow_costs());
    const auto r = simulate_plan(c, plan);
    expect_rel(r.total, k * (plan.forward + plan.backward()) + one.exposed_communication + plan.optimizer);
    expect_rel(r.exposed_communication, one.exposed_communication);
    // Same simulated work whatever k.
    EXPECT_EQ(r.simulated_activities, one.simulated_activities);
    EXPECT_EQ(r.simulated_actors, 2);
    expect_rel(r.samples_per_second, 4.0 * k * 8 / r.total);
  }
}

// workload.no_sync: false: the replay simulates one synchronizing micro-step,
// as with no_sync, and repeats it k times analytically, as the closed form does.
TEST(Replay, AccumulationWithoutNoSyncRepeatsTheSynchronizingMicroStep) {
  const auto c = test::cluster(1, 8);
  const auto m = tiny_convnet();
  const auto coll = ring_closed_form(c);
  const auto one = simulate_plan(c, plan_iteration(workload(true, 1), c, m, slow_costs()));
  for (int k : {1, 4, 1024}) {
    SCOPED_TRACE(k);
    auto w = workload(true, k);
    w.no_sync = false;
    w.compute_jitter = 0.05;
    w.ddp_overheads = true;
    const auto plan = plan_iteration(w, c, m, slow_costs());
    const auto r = simulate_plan(c, plan);
    expect_rel(r.total, evaluate_closed_form(plan, coll).total);
    const auto p1 = plan_iteration(
        [&] {
          auto v = w;
          v.accumulation = 1;
          return v;
        }(),
        c, m, slow_costs());
    const auto r1 = simulate_plan(c, p1);
    const double ow = r1.optimizer + r1.fixed_work;
    expect_rel(r.total, k * (r1.total - ow) + ow);
    expect_rel(r.exposed_communication, k * r1.exposed_communication);
    EXPECT_EQ(r.simulated_activities, r1.simulated_activities);  // the simulation does not grow with k
    expect_rel(r.wire_bytes_per_gpu, k * one.wire_bytes_per_gpu);
    const auto back = result_from_json(result_to_json(r, -1));
    EXPECT_EQ(back.sync_every_micro_step, k > 1);
    EXPECT_EQ(result_to_json(r, -1).find("\"no_sync\"") != std::string::npos, k > 1);
    EXPECT_EQ(chrome_trace(r).find("each synchronizing") != std::string::npos, k > 1);
    EXPECT_EQ(format_table(r).find("no_sync off") != std::string::npos, k > 1);
  }
}

TEST(Replay, BucketsNeverOvertakeAndCodecsSitAroundTheirCollective) {
  const auto c = test::cluster(1, 8);
  const auto plan = plan_iteration(workload(true, 1, "powersgd"), c, tiny_convnet(), slow_costs());
  const auto r = simulate_plan(c, plan);
  double prev = 0;
  for (const auto& b : r.buckets) {
    EXPECT_GE(b.start, prev);
    prev = b.end;
    for (std::size_t s = 1; s < b.steps.size(); ++s) EXPECT_GE(b.steps[s].start, b.steps[s - 1].end);
  }
  double enc = 0;
  for (const auto& bc : plan.comm) enc += bc.encode;
  expect_rel(r.encode, enc);
}

TEST(Replay, WireBytesPerGpuOfEveryCompressor) {
  const int N = 8;
  const auto c = test::cluster(1, N);
  // One 512 x 1024 layer in a single bucket.
  const auto m = model_of({tensor("fc.weight", {512, 1024}, 1e9)});
  const double n = 512.0 * 1024;
  const double ar = 2.0 * (N - 1) / N, ag = (N - 1.0) / N;
  const double k = std::ceil(0.01 * n);
  const std::map<std::string, double> expected{
      {"none", ar * 4 * n},
      {"fp16", ar * 2 * n},
      {"bf16", ar * 2 * n},
      {"int8", ar * (n + 4 * std::ceil(n / 1024))},
      {"sign", ag * N * (std::ceil(n / 8) + 4 * std::ceil(n / 1024))},
      {"majority_vote", ag * N * (std::ceil(n / 8) + 4 * std::ceil(n / 1024))},
      {"topk", ag * N * 8 * k},  // 8 x 0.01 n bytes contributed, all-gathered
      {"randomk", ar * 4 * k},
      {"powersgd", ar * 4 * (512 + 1024) * 4.0},  // (m + k) r elements all-reduced
  };
  for (const auto& [kind, bytes] : expected) {
    SCOPED_TRACE(kind);
    auto w = workload(true, 1, kind);
    w.compression.implementation = "gradwire";  // the wire sizes of docs/model.md's table
    w.compression.ratio = 0.01;
    w.compression.rank = 4;
    w.bucket_size = w.first_bucket_size = 1e12;
    const auto r = simulate_plan(c, plan_iteration(w, c, m, costs()));
    expect_rel(r.wire_bytes_per_gpu, bytes);
    ASSERT_EQ(r.buckets.size(), 1u);
    expect_rel(r.buckets[0].wire_bytes_per_gpu, bytes);
  }
}

TEST(Replay, AllGatherCompressorsSlowDownWithNAllReduceOnesDoNot) {
  // 16 Mi fp32 elements in one bucket; one GPU per node so every ring edge
  // is a NIC whatever N; near-zero latencies so that the bandwidth terms decide.
  const auto m = model_of({tensor("w", {4096, 4096}, 1e9)});
  const auto comm_time = [&](const std::string& kind, int gpus) {
    auto c = test::cluster(gpus, 1);
    c.intra_node.latency = c.nic.latency = c.fabric.latency = 1e-9;
    auto w = workload(false, 1, kind);
    w.bucket_size = w.first_bucket_size = 1e12;
    // NCCL's rule: the ring's latency grows with N (NCCL's per-hop model,
    // whatever the links' latency), the tree's with log N.
    w.allreduce_algorithm = "auto";
    w.compression.rank = 64;  // P and Q large enough to be bandwidth-bound
    return simulate_plan(c, plan_iteration(w, c, m, costs(0.0))).exposed_communication;
  };
  for (const char* kind : {"topk", "sign"}) {
    SCOPED_TRACE(kind);
    const double t8 = comm_time(kind, 8), t64 = comm_time(kind, 64), t512 = comm_time(kind, 512);
    EXPECT_GT(t64, 2 * t8);
    EXPECT_GT(t512, 4 * t64);
  }
  // All-reduce compressors grow far slower than N: NCCL's model adds latency
  // with N (log N for the tree) and its tree correction at mid sizes, hence
  // the small P and Q of powersgd are latency-bound: up to 3x per 8x ranks.
  for (const char* kind : {"none", "fp16", "powersgd"}) {
    SCOPED_TRACE(kind);
    const double t8 = comm_time(kind, 8), t64 = comm_time(kind, 64), t512 = comm_time(kind, 512);
    EXPECT_LT(t64, 3.0 * t8);
    EXPECT_LT(t512, 3.0 * t64);
  }
}

TEST(ReplayPytorchHooks, EveryHookReplaysAsTheClosedForm) {
  // compression.implementation: pytorch (the default): the hooks' steps on
  // the comm stream, with and without overlap, match the closed form; with
  // no overlap the total is compute plus every step.
  const auto c = test::cluster(1, 8);
  const auto coll = ring_closed_form(c);
  for (const char* kind : {"fp16", "bf16", "int8", "sign", "majority_vote", "topk", "powersgd"}) {
    SCOPED_TRACE(kind);
    for (bool overlap : {false, true}) {
      const auto plan = plan_iteration(workload(overlap, 1, kind), c, tiny_convnet(), slow_costs());
      const auto r = simulate_plan(c, plan);
      expect_rel(r.total, evaluate_closed_form(plan, coll).total);
      if (overlap) continue;
      expect_rel(r.total, test::no_overlap_total(plan, coll));
    }
  }
}

// The PowerSGD hook blocks the backward (docs/model.md): the replay's
// compute actor waits for each bucket's last step as the closed form's
// timeline does, with and without overlap, with stragglers and DDP's
// overheads on; with overlap each bucket starts after the previous one's
// end and the next tensor after it.
TEST(ReplayPytorchHooks, PowerSgdHookBlocksTheBackwardAsInTheClosedForm) {
  const auto c = test::cluster(1, 8);
  const auto coll = ring_closed_form(c);
  for (bool overlap : {true, false}) {
    for (bool overheads : {false, true}) {
      SCOPED_TRACE(std::string(overlap ? "overlap" : "no overlap") + (overheads ? ", DDP overheads" : ""));
      auto w = workload(overlap, 2, "powersgd");
      w.ddp_overheads = overheads;
      w.compute_jitter = 0.05;
      const auto plan = plan_iteration(w, c, tiny_convnet(), slow_costs());
      ASSERT_GE(plan.buckets.size(), 2u);
      ASSERT_TRUE(plan.comm[0].blocks_host);
      // Every rank leaves a blocking hook at the slowest one's time: bucket
      // b + 1 waits for the spread of the compute since bucket b only,
      // cv mu_N (ready_(b+1) - ready_b) (no_sync's folded micro-step is behind).
      const auto ready = test::bucket_ready_times(plan.buckets, plan.tensor_backward);
      for (std::size_t b = 1; b < plan.buckets.size(); ++b)
        expect_rel(plan.bucket_sync_delay[b], 0.05 * expected_max_normal(8) * (ready[b] - ready[b - 1]), 1e-9);
      const auto r = simulate_plan(c, plan);
      const auto closed = evaluate_closed_form(plan, coll);
      expect_rel(r.total, closed.total);
      expect_rel(r.backward, closed.backward);
      expect_rel(r.exposed_communication, closed.exposed_communication);
      expect_rel(r.backward_end, closed.backward_end);
      for (std::size_t b = 0; b < r.buckets.size(); ++b) {
        expect_rel(r.buckets[b].end, closed.buckets[b].end);
        if (b + 1 == r.buckets.size()) continue;
        EXPECT_GE(r.buckets[b + 1].start, r.buckets[b].end * (1 - 1e-12));
        if (overlap) expect_rel(r.tensor_end[plan.buckets[b].last_tensor], r.buckets[b].end);
      }
    }
  }
}

// Where the hooks' kernels run and codec_under_compute (docs/model.md): the
// replay places the hooks' steps on the compute, comm and side streams and
// slows the codecs that start beside the backward as the closed form does,
// with every interference figure set; the side-stream steps show in the
// result, and codec_under_compute lengthens the iteration.
TEST(ReplayPytorchHooks, HookStreamsAndCodecSlowDownReplayAsTheClosedForm) {
  const auto c = test::cluster(1, 8);
  const auto coll = ring_closed_form(c);
  for (const char* kind : {"fp16", "powersgd", "int8"}) {
    SCOPED_TRACE(kind);
    auto costs = slow_costs();
    costs.interference = {0.2, 0.3, 0.5};
    const auto plan = plan_iteration(workload(true, 1, kind), c, tiny_convnet(), costs);
    EXPECT_EQ(plan.codec_interference, 0.5);
    const auto r = simulate_plan(c, plan);
    const auto closed = evaluate_closed_form(plan, coll);
    expect_rel(r.total, closed.total, 1e-3);
    expect_rel(r.backward_end, closed.backward_end, 1e-3);
    costs.interference = {0.2, 0.3, std::nullopt};
    const auto unslowed = simulate_plan(c, plan_iteration(workload(true, 1, kind), c, tiny_convnet(), costs));
    // PowerSGD's hook holds the host until its bucket ends (blocks_host):
    // none of its codec steps runs beside the backward.
    if (plan.comm.at(0).blocks_host)
      expect_rel(r.encode + r.decode, unslowed.encode + unslowed.decode);
    else
      EXPECT_GT(r.encode + r.decode, unslowed.encode + unslowed.decode);
    const bool hook = std::string(kind) != "int8";
    int side = 0;
    for (const auto& b : r.buckets)
      for (const auto& st : b.steps) side += st.side_stream ? 1 : 0;
    EXPECT_EQ(side > 0, hook);
  }
}

TEST(Replay, InterferenceSlowsComputeOnlyWhileCommunicating) {
  const auto c = test::cluster(1, 8);
  auto w = workload(true);
  w.interference = 0.5;
  const auto plan = plan_iteration(w, c, tiny_convnet(), slow_costs());
  const auto r = simulate_plan(c, plan);
  EXPECT_GT(r.backward, plan.backward() * (1 + 1e-6));
  EXPECT_LE(r.backward, plan.backward() * 1.5 * (1 + 1e-9));
  w.overlap = false;
  const auto off = simulate_plan(c, plan_iteration(w, c, tiny_convnet(), slow_costs()));
  expect_rel(off.backward, plan.backward());
}

// Stragglers (docs/model.md, "Stragglers"): the replay's collectives wait for
// the expected slowest rank as the closed form's do; jitter 0 changes nothing.
TEST(ReplayStragglers, CollectivesWaitForTheSlowestRankAsInTheClosedForm) {
  const auto c = test::cluster(1, 8);
  for (bool overlap : {false, true}) {
    SCOPED_TRACE(overlap ? "overlap" : "no overlap");
    auto w = workload(overlap, 3);
    const auto base = simulate_plan(c, plan_iteration(w, c, tiny_convnet(), slow_costs()));
    w.compute_jitter = 0.0;
    EXPECT_EQ(simulate_plan(c, plan_iteration(w, c, tiny_convnet(), slow_costs())).total, base.total);
    w.compute_jitter = 0.1;
    const auto plan = plan_iteration(w, c, tiny_convnet(), slow_costs());
    ASSERT_EQ(plan.bucket_sync_delay.size(), plan.buckets.size());
    const auto r = simulate_plan(c, plan);
    const double d = 0.1 * (plan.forward + plan.backward()) * std::sqrt(3.0) * expected_max_normal(8);
    expect_rel(r.straggler_wait, d, 1e-12);
    for (std::size_t b = 0; b < r.buckets.size(); ++b) {
      SCOPED_TRACE(b);
      const double from = overlap ? r.buckets[b].ready + plan.bucket_sync_delay[b] : r.backward_end + d;
      EXPECT_GE(r.buckets[b].start, from - 1e-9);
    }
    if (!overlap) expect_rel(r.total, base.total + d);  // every collective after the slowest backward end
    EXPECT_GT(r.total, base.total);
    const auto closed = evaluate_closed_form(plan, ring_closed_form(c));
    expect_rel(r.total, closed.total);
    expect_rel(r.straggler_wait + r.exposed_communication + r.backward + r.forward + r.optimizer, r.total);
    EXPECT_LT(r.band_low, r.total);
    EXPECT_GT(r.band_high, r.total);
    const auto trace = chrome_trace(r);
    EXPECT_NE(trace.find("waiting for the slowest of 8 ranks"), std::string::npos);
  }
}

// The band in every output: the table, JSON (round trip) and CSV hold low <= median <= high.
TEST(ReplayOutput, TheBandIsInEveryOutputAndContainsTheMedian) {
  const auto c = test::cluster(1, 8);
  auto w = workload(true, 2);
  w.compute_jitter = 0.05;
  auto costs = slow_costs();
  costs.flops_spread = 0.2;
  auto plan = plan_iteration(w, c, tiny_convnet(), costs);
  plan.residuals = {-0.1, 0.05, 12, ""};
  const auto r = simulate_plan(c, plan);
  ASSERT_LT(r.band_low, r.total);
  ASSERT_GT(r.band_high, r.total);
  const auto j = nlohmann::json::parse(result_to_json(r));
  EXPECT_EQ(j.at("band").at("median_s").get<double>(), r.total);
  EXPECT_LT(j.at("band").at("low_s").get<double>(), j.at("band").at("median_s").get<double>());
  EXPECT_GT(j.at("band").at("high_s").get<double>(), j.at("band").at("median_s").get<double>());
  const auto back = result_from_json(result_to_json(r));
  EXPECT_EQ(back.band_low, r.band_low);
  EXPECT_EQ(back.band_high, r.band_high);
  EXPECT_EQ(back.band.jitter_high, r.band.jitter_high);
  // CSV: the last three columns are low, median, high.
  const std::string header = csv_header(), row = csv_row(r);
  EXPECT_NE(header.find("band_low_s,band_median_s,band_high_s\n"), std::string::npos);
  std::vector<double> cells;
  std::stringstream ss(row);
  for (std::string cell; std::getline(ss, cell, ',');) cells.push_back(std::atof(cell.c_str()));
  ASSERT_GE(cells.size(), 3u);
  const double lo = cells[cells.size() - 3], mid = cells[cells.size() - 2], hi = cells.back();
  EXPECT_LT(lo, mid);
  EXPECT_GT(hi, mid);
  EXPECT_NEAR(mid, r.total, 1e-8 * r.total);
  EXPECT_NE(format_table(r).find("band"), std::string::npos);
  // A wider profile spread widens the band.
  costs.flops_spread = 0.4;
  auto wider_plan = plan_iteration(w, c, tiny_convnet(), costs);
  wider_plan.residuals = plan.residuals;
  const auto wider = simulate_plan(c, wider_plan);
  EXPECT_EQ(wider.total, r.total);
  EXPECT_GT(wider.band_high - wider.band_low, r.band_high - r.band_low);
}

// Interference (docs/model.md, section 7): collectives and codecs slow the
// backward by their own figures, in the replay as in the closed form, and the
// trace marks the slowed tensors.
TEST(ReplayInterference, CollectiveAndCodecFiguresSlowTheirOwnTensorsAndShowInTheTrace) {
  const auto c = test::cluster(1, 8);
  auto costs = slow_costs();
  costs.codec_time = [](const std::string&, bool encode, double elements) { return elements * (encode ? 4e-9 : 2e-9); };
  const auto run = [&](double nccl, double codec) {
    costs.interference = {nccl, codec, std::nullopt};
    return simulate_plan(c, plan_iteration(workload(true, 1, "int8"), c, tiny_convnet(), costs));
  };
  const auto low = run(0.1, 0.1), high = run(0.3, 0.3), split = run(0.3, 0.1), clean = run(0, 0);
  // Tensors beside codecs take the codec figure, the others the NCCL one
  // (here the slowed tensors all start beside codecs: split = low < high).
  EXPECT_GE(split.backward, low.backward * (1 - 1e-9));
  EXPECT_LT(split.backward, high.backward * (1 - 1e-6));
  EXPECT_GT(low.backward, clean.backward * (1 + 1e-6));
  // The closed form applies the same rule; the two break ties at the instant
  // a step ends differently (which step a tensor starting then sees), which
  // moves the backward by well under 0.1% here.
  costs.interference = {0.3, 0.1, std::nullopt};
  const auto plan = plan_iteration(workload(true, 1, "int8"), c, tiny_convnet(), costs);
  EXPECT_EQ(plan.interference_source, "profile (measured)");
  const auto closed = evaluate_closed_form(plan, ring_closed_form(c));
  expect_rel(split.backward, closed.backward, 1e-3);
  expect_rel(split.total, closed.total, 1e-3);
  const auto trace = nlohmann::json::parse(chrome_trace(split));
  int nccl = 0, codec = 0;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") != "X" || !e.at("args").contains("slowed_by")) continue;
    (e.at("args").at("beside") == "codec" ? codec : nccl) += 1;
  }
  EXPECT_GT(codec, 0);
  EXPECT_EQ(nccl, 0);
  const auto back = result_from_json(result_to_json(split));
  EXPECT_EQ(back.interference_codec, 0.1);
  EXPECT_EQ(back.overlapped_compute, split.overlapped_compute);
}

// --- With a profile file -----------------------------------------------------------

// implementation gradwire: the profile's codec costs (the tests below read
// them); pytorch: the hooks costed from the profile's bandwidth and GEMM rate.
Scenario scenario_for(const std::string& compression, const std::string& implementation = "gradwire") {
  Scenario s;
  s.name = "replay-test";
  s.file = "in-code";
  s.cluster = test::cluster(1, 8);
  s.cluster.gpu = "h100";
  s.workload = workload(true, 1, compression);
  s.workload->compression.implementation = implementation;
  return s;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("gw-replay-" + std::to_string(::getpid()) + "-" + name)).string();
}

TEST(ReplayProfile, CodecCostInTheProfileDrivesEncodeTime) {
  const Profile base = load_profile("h100");
  const auto m = tiny_convnet();
  const auto s = scenario_for("int8");
  const auto r1 = simulate_iteration(s, m, base);
  EXPECT_EQ(r1.profile_name, "h100");
  EXPECT_EQ(r1.profile_detail, "datasheet-derived");
  EXPECT_EQ(r1.compute_precision, "tf32");
  ASSERT_GT(r1.encode, 0);
  // The same profile with int8's encode three times as slow, through a file.
  Profile slow = base;
  for (auto& k : slow.codecs.at("int8").encode.knots) k.seconds *= 3;
  for (auto& k : slow.codecs.at("int8").encode_points) k.seconds *= 3;
  const std::string path = temp_path("slow-int8.yaml");
  write_file_atomic(path, profile_to_yaml(slow));
  const Profile loaded = load_profile(path);
  std::filesystem::remove(path);
  const auto r3 = simulate_iteration(s, m, loaded);
  expect_rel(r3.encode, 3 * r1.encode, 1e-6);
  expect_rel(r3.decode, r1.decode, 1e-9);
  double expected = 0;
  for (const auto& b : r1.buckets) expected += base.codec_time("int8", true, static_cast<double>(b.elements));
  expect_rel(r1.encode, expected, 1e-9);
}

TEST(ReplayProfile, MissingCodecIsAnInputError) {
  Profile p = load_profile("h100");
  p.codecs.erase("topk");
  try {
    simulate_iteration(scenario_for("topk"), tiny_convnet(), p);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "codecs.topk");
  }
  Scenario no_workload = scenario_for("none");
  no_workload.workload.reset();
  EXPECT_THROW(simulate_iteration(no_workload, tiny_convnet(), p), InputError);
}

// Both evaluators take the one prepare_iteration path: the same plan, the
// same labels, the same errors, and on a single node (no contention) the same
// iteration.
TEST(ReplayProfile, BothEvaluatorsSharePrepareIteration) {
  const Profile p = load_profile("h100");
  const auto m = tiny_convnet();
  for (const std::string kind : {"none", "int8", "powersgd", "pytorch int8", "pytorch powersgd"}) {
    SCOPED_TRACE(kind);
    Scenario s = kind.rfind("pytorch ", 0) == 0 ? scenario_for(kind.substr(8), "pytorch") : scenario_for(kind);
    s.workload->accumulation = 4;
    const PreparedIteration prep = prepare_iteration(s, m, p);
    EXPECT_EQ(prep.plan.accumulation, 4);
    EXPECT_DOUBLE_EQ(prep.plan.folded(), 3 * (prep.plan.forward + prep.plan.backward()));
    const auto sim = simulate_iteration(s, m, p);
    const auto closed = closed_form_iteration(s, m, p);
    for (const auto* r : {&sim, &closed}) {
      EXPECT_EQ(r->scenario, "replay-test");
      EXPECT_EQ(r->profile_name, "h100");
      EXPECT_EQ(r->profile_detail, "datasheet-derived");
      EXPECT_DOUBLE_EQ(r->folded, prep.plan.folded());
      EXPECT_DOUBLE_EQ(r->forward_start, prep.plan.folded());
      EXPECT_DOUBLE_EQ(r->wire_bytes_per_gpu, prep.plan.wire_bytes_per_gpu);
    }
    EXPECT_EQ(sim.method, "simulation");
    EXPECT_EQ(closed.method, "closed form");
    // SimGrid rounds simulated times to about 1e-9 s (see expect_rel).
    EXPECT_NEAR(closed.total, sim.total, 5e-9);
  }
  Profile no_topk = p;
  no_topk.codecs.erase("topk");
  for (auto evaluate :
       {+[](const Scenario&sc, const ModelDesc&md, const Profile&pr) { return simulate_iteration(sc, md, pr); },
        +[](const Scenario&sc, const ModelDesc&md, const Profile&pr) { return closed_form_iteration(sc, md, pr); }}) {
    try {
      evaluate(scenario_for("topk"), m, no_topk);
      FAIL() << "no error";
    } catch (const InputError& e) {
      EXPECT_EQ(e.key(), "codecs.topk");
    }
  }
}

// Across nodes too: with one GPU per node every ring hop has a NIC to itself,
// so the closed form (alpha = the platform's route latency) and the replay
// agree, on a switch and across a fat-tree spine.
TEST(ReplayProfile, ClosedFormMatchesTheReplayAcrossNodes) {
  const Profile p = load_profile("h100");
  const auto m = tiny_convnet();
  for (const bool spine : {false, true}) {
    for (const std::string kind : {"none", "topk"}) {
      Scenario s = scenario_for(kind);
      s.cluster = test::cluster(4, 1);
      s.cluster.gpu = "h100";
      if (spine) {
        s.cluster.fabric.topology = FabricTopology::FatTree;
        s.cluster.fabric.nodes_per_leaf = 2;
      }
      const auto sim = simulate_iteration(s, m, p);
      const auto closed = closed_form_iteration(s, m, p);
      EXPECT_GT(closed.exposed_communication + closed.backward, 0);
      EXPECT_NEAR(closed.total, sim.total, 5e-9) << kind << (spine ? " across the spine" : " on a switch");
    }
  }
}

// Collectives measured on the cluster: with the profile's fit for 4 GPUs on
// 4 nodes, the replay runs no collective on the network and agrees with the
// closed form; each all-reduce takes alpha + bytes / beta; the outputs say so.
TEST(ReplayProfile, AFitMeasuredOnTheClusterReplacesTheNetworkModel) {
  Profile p = load_profile("h100");
  CollectiveCost fit;
  fit.op = CollectiveOp::AllReduce;
  fit.gpus = 4;
  fit.nodes = 4;
  fit.fit = {80e-6, 2e9, 0};  // far slower than the h100 cluster's network model
  p.collectives.push_back(fit);
  const auto m = tiny_convnet();
  Scenario s = scenario_for("none");
  s.cluster = test::cluster(4, 1);
  s.cluster.gpu = "h100";
  const auto modelled = simulate_iteration(s, m, load_profile("h100"));
  const auto sim = simulate_iteration(s, m, p);
  const auto closed = closed_form_iteration(s, m, p);
  EXPECT_NEAR(closed.total, sim.total, 5e-9);
  EXPECT_GT(sim.total, modelled.total);
  EXPECT_TRUE(modelled.measured_collectives.empty());
  ASSERT_EQ(sim.measured_collectives, std::vector<std::string>{"allreduce on 4 GPUs, 4 nodes"});
  for (const auto& b : sim.buckets) {
    for (const auto& st : b.steps) expect_rel(st.end - st.start, 80e-6 + st.bytes / 2e9);
  }
  const std::string json = result_to_json(sim, -1);
  EXPECT_EQ(nlohmann::json::parse(json).at("measured_collectives"),
            nlohmann::json::array({"allreduce on 4 GPUs, 4 nodes"}));
  EXPECT_EQ(result_from_json(json).measured_collectives, sim.measured_collectives);
  EXPECT_EQ(result_to_json(modelled, -1).find("measured_collectives"), std::string::npos);
  EXPECT_NE(
      format_table(sim).find("collectives measured on this cluster (the profile's measured times, not the network "
                             "model): allreduce on 4 GPUs, 4 nodes"),
      std::string::npos);
}

// A measured curve (the profile's points for 4 GPUs on 4 nodes, as
// calibrate --from-nccl-tests writes them): every all-reduce takes the curve
// at its size, the replay (a sleep on the comm stream) and the closed form
// agree, and a bucket beyond the measured sizes takes the closed form scaled
// to meet the curve's end, in both.
TEST(ReplayProfile, AMeasuredCurveReplacesTheNetworkModel) {
  const auto m = tiny_convnet();
  Scenario s = scenario_for("none");
  s.cluster = test::cluster(4, 1);
  s.cluster.gpu = "h100";
  for (const double top : {1e9, 1e4}) {  // every bucket inside; every bucket beyond 10 kB
    Profile p = load_profile("h100");
    CollectiveCost curve;
    curve.op = CollectiveOp::AllReduce;
    curve.gpus = 4;
    curve.nodes = 4;
    curve.points = {{8, 40e-6, 0, 20}, {1e3, 38e-6, 0, 20}, {top, 40e-6 + top / 1e9, 0, 20}};
    curve.fit = {40e-6, 1e9, 0};
    p.collectives.push_back(curve);
    const auto sim = simulate_iteration(s, m, p);
    const auto closed = closed_form_iteration(s, m, p);
    EXPECT_NEAR(closed.total, sim.total, 5e-9) << top;
    ASSERT_EQ(sim.measured_collectives.size(), 1u);
    EXPECT_EQ(sim.measured_collectives[0].find("allreduce on 4 GPUs, 4 nodes"), 0u);
    const MeasuredCollective measured = measured_collectives(p).back();
    int outside = 0;
    for (const auto& b : sim.buckets) {
      for (const auto& st : b.steps) {
        if (measured.in_range(st.bytes))
          expect_rel(st.end - st.start, measured.curve.evaluate(st.bytes));
        else
          ++outside;
      }
    }
    EXPECT_EQ(outside > 0, top < 1e9) << top;
  }
}

TEST(ReplayOutput, JsonRoundTripAndTraceTracks) {
  const auto c = test::cluster(1, 8);
  const auto plan = plan_iteration(workload(true, 2, "powersgd"), c, tiny_convnet(), slow_costs());
  const auto r = simulate_plan(c, plan);
  const auto back = result_from_json(result_to_json(r));
  EXPECT_EQ(back.total, r.total);
  EXPECT_EQ(back.buckets.size(), r.buckets.size());
  EXPECT_EQ(back.buckets.back().steps.size(), r.buckets.back().steps.size());
  EXPECT_EQ(back.tensor_end, r.tensor_end);
  const auto trace = nlohmann::json::parse(chrome_trace(r));
  EXPECT_EQ(trace.at("otherData").at("schema"), "gradwire-trace/1");
  EXPECT_EQ(trace.at("otherData").at("total_s"), r.total);
  std::set<std::string> threads;
  int bucket_spans = 0, folded = 0;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "thread_name") threads.insert(e.at("args").at("name").get<std::string>());
    if (e.at("ph") == "X" && e.at("name").get<std::string>().rfind("bucket ", 0) == 0) ++bucket_spans;
    if (e.at("ph") == "X" && e.at("name").get<std::string>().find("folded") != std::string::npos) ++folded;
  }
  // compute, NCCL, comm-stream codecs, and powerSGD_hook's compute- and
  // side-stream steps (tests/replay/test_hook_streams.cpp)
  EXPECT_EQ(threads.size(), 5u);
  EXPECT_TRUE(threads.count("hook steps (compute stream)"));
  EXPECT_TRUE(threads.count("hook steps (side stream)"));
  EXPECT_GE(bucket_spans, static_cast<int>(r.buckets.size()));
  EXPECT_EQ(folded, 1);
  const auto table = format_table(r);
  EXPECT_NE(table.find("exposed communication"), std::string::npos);
  EXPECT_NE(csv_row(r).find("powersgd"), std::string::npos);
}

// Measured compute (workload.compute): the fixture's round numbers give the
// iteration by hand. F = 1.5 ms, B = 2.5 ms, O = 0.4 ms; ready order
// fc.bias 0.1, fc.weight 0.3, conv3.weight 1.0, conv3.bias 1.05, ...,
// conv1.bias 2.45 ms. Buckets (64 KiB first, 512 KiB later, in that order):
// [fc.bias, fc.weight] ready at 0.3 ms, [conv3.weight] at 1.0 ms, the rest at
// 2.5 ms (the last tensor takes the 0.05 ms after the last gradient).
// The document's spread would make stragglers (docs/model.md, "Stragglers");
// the closed forms below are without them: compute_jitter 0.
Scenario measured_scenario() {
  Scenario s = load_scenario(std::string(GW_REPLAY_TEST_DATA) + "/tiny-measured.yaml");
  s.workload->compute_jitter = 0.0;
  return s;
}

// Without workload.compute_jitter the document's interquartile ranges give
// cv = sqrt(IQR_F^2 + IQR_B^2) / 1.349 / (F + B): 0.02 and 0.03 ms of 4 ms.
TEST(ReplayMeasured, TheDocumentsSpreadGivesTheJitter) {
  Scenario s = measured_scenario();
  s.workload->compute_jitter.reset();
  const auto plan = prepare_iteration(s, tiny_convnet(), load_profile("h100")).plan;
  EXPECT_NEAR(plan.compute_jitter, std::hypot(0.02e-3, 0.03e-3) / 1.3489795003921634 / 4e-3, 1e-12);
  EXPECT_EQ(plan.compute_jitter_source.rfind("measured compute", 0), 0u);
  EXPECT_EQ(plan.bucket_sync_delay.size(), plan.buckets.size());
  s.workload->compute_jitter = 0.0;
  EXPECT_TRUE(prepare_iteration(s, tiny_convnet(), load_profile("h100")).plan.bucket_sync_delay.empty());
}

TEST(ReplayMeasured, PlanTakesForwardReadyTimesAndOptimizerFromTheDocument) {
  const Scenario s = measured_scenario();
  const PreparedIteration prep = prepare_iteration(s, tiny_convnet(), load_profile("h100"));
  const auto& plan = prep.plan;
  EXPECT_EQ(plan.compute_measured, "measured on Test GPU, 2026-12-01");
  EXPECT_EQ(plan.compute_precision, "amp-bf16");
  EXPECT_DOUBLE_EQ(plan.forward, 1.5e-3);
  EXPECT_NEAR(plan.backward(), 2.5e-3, 1e-15);
  EXPECT_DOUBLE_EQ(plan.optimizer, 0.4e-3);
  const std::vector<std::string> order{"fc.bias",      "fc.weight",  "conv3.weight", "conv3.bias",
                                       "conv2.weight", "conv2.bias", "conv1.weight", "conv1.bias"};
  EXPECT_EQ(plan.tensor_names, order);
  ASSERT_EQ(plan.buckets.size(), 3u);
  const auto ready = test::bucket_ready_times(plan.buckets, plan.tensor_backward);
  EXPECT_NEAR(ready[0], 0.3e-3, 1e-15);
  EXPECT_NEAR(ready[1], 1.0e-3, 1e-15);
  EXPECT_NEAR(ready[2], 2.5e-3, 1e-15);
  // The measured order decides the buckets: conv3.weight alone in bucket 1.
  EXPECT_EQ(plan.buckets[1].last_tensor - plan.buckets[1].first_tensor, 0u);
  EXPECT_EQ(plan.buckets[1].elements, 294912);
  // workload.optimizer.step_time still wins over the measured step.
  Scenario given = s;
  given.workload->optimizer.step_time = 1e-3;
  EXPECT_DOUBLE_EQ(prepare_iteration(given, tiny_convnet(), load_profile("h100")).plan.optimizer, 1e-3);
}

TEST(ReplayMeasured, NoOverlapAndOneBucketEqualTheClosedFormOfTheDocument) {
  const ScopedFittedConstants none({});  // the document's closed forms, without the devset's fitted terms
  const double F = 1.5e-3, B = 2.5e-3, O = 0.4e-3;
  Scenario s = measured_scenario();
  s.workload->overlap = false;        // T = k (F + B) + sum of the collectives + O
  s.workload->ddp_overheads = false;  // the plain closed form
  const Profile p = load_profile("h100");
  auto prep = prepare_iteration(s, tiny_convnet(), p);
  auto coll = ring_closed_form(prep.cluster);
  double sum = 0;
  for (const auto& bc : prep.plan.comm)
    for (const auto& st : bc.steps) sum += coll(st);
  const auto r = simulate_iteration(s, tiny_convnet(), p);
  expect_rel(r.total, 2 * (F + B) + sum + O);
  EXPECT_EQ(r.compute_measured, "measured on Test GPU, 2026-12-01");
  // One bucket with overlap: it is ready when the backward pass ends.
  s.workload->overlap = true;
  s.workload->first_bucket_size = s.workload->bucket_size = 64.0 * 1024 * 1024;
  prep = prepare_iteration(s, tiny_convnet(), p);
  ASSERT_EQ(prep.plan.comm.size(), 1u);
  const double one = coll(prep.plan.comm[0].steps.at(0));
  const auto r1 = simulate_iteration(s, tiny_convnet(), p);
  expect_rel(r1.total, 2 * (F + B) + one + O);
  expect_rel(r1.buckets.at(0).ready - r1.backward_start, B);
  // The tensors end at the measured ready times (from the backward start).
  expect_rel(r1.tensor_end.at(2) - r1.backward_start, 1.0e-3);
  const auto back = result_from_json(result_to_json(r1));
  EXPECT_EQ(back.compute_measured, r1.compute_measured);
  EXPECT_NE(format_table(r1).find("compute: measured on Test GPU, 2026-12-01"), std::string::npos);
  // DDP overheads with the document's bucket_copy (0.05 ms, all gradients in
  // and back): the copy-in is half of it, one bucket's copy-out the other half.
  s.workload->ddp_overheads = true;
  const auto r2 = simulate_iteration(s, tiny_convnet(), p);
  expect_rel(r2.bucket_copy_in, 0.025e-3);
  expect_rel(r2.bucket_copy_out, 0.025e-3);
  expect_rel(r2.total, r1.total + 0.05e-3 + kKernelLaunchSeconds);  // the measured step: no fixed work
  EXPECT_NE(format_table(r2).find("DDP bucket copy-out (exposed)"), std::string::npos);
}

// Overlap with the fixture's three buckets: ready at 0.3, 1.0 and 2.5 ms
// (measured), start_b = max(ready_b, end_{b-1}), end_b = start_b + c_b,
// T = k (F + B) + max(0, end_last - B) + O with the literals of the document.
TEST(ReplayMeasured, OverlapFollowsTheMeasuredReadyTimes) {
  const ScopedFittedConstants none({});  // the measured ready times alone, not slowed by the fitted interference
  const double F = 1.5e-3, B = 2.5e-3, O = 0.4e-3;
  const double ready[] = {0.3e-3, 1.0e-3, 2.5e-3};
  Scenario s = measured_scenario();
  s.workload->ddp_overheads = false;  // the measured ready times alone
  const Profile p = load_profile("h100");
  const auto prep = prepare_iteration(s, tiny_convnet(), p);
  ASSERT_EQ(prep.plan.comm.size(), 3u);
  const auto coll = ring_closed_form(prep.cluster);
  double end = 0;
  for (std::size_t b = 0; b < 3; ++b) end = std::max(ready[b], end) + coll(prep.plan.comm[b].steps.at(0));
  const auto r = simulate_iteration(s, tiny_convnet(), p);
  for (std::size_t b = 0; b < 3; ++b) expect_rel(r.buckets.at(b).ready - r.backward_start, ready[b]);
  expect_rel(r.total, 2 * (F + B) + std::max(0.0, end - B) + O);
}

TEST(ReplayMeasured, AMismatchIsAnInputErrorAtWorkloadCompute) {
  const Profile p = load_profile("h100");
  const auto expect_mismatch = [&](Scenario s, const std::string& what) {
    try {
      (void)prepare_iteration(s, tiny_convnet(), p);
      ADD_FAILURE() << "no error for " << what;
    } catch (const InputError& e) {
      EXPECT_EQ(e.key(), "workload.compute") << e.what();
      EXPECT_EQ(e.line(), 19) << e.what();
      EXPECT_NE(e.reason().find(what), std::string::npos) << e.what();
    }
  };
  Scenario s = measured_scenario();
  s.workload->micro_batch = 16;
  expect_mismatch(s, "micro-batch 32, the scenario's is 16");
  s = measured_scenario();
  s.workload->precision = Precision::BF16;
  expect_mismatch(s, "gradient precision fp32, the scenario's is bf16");
  s = measured_scenario();
  s.workload->optimizer.kind = "sgd";
  expect_mismatch(s, "optimizer adam, the scenario's is sgd");
  s = measured_scenario();
  ModelDesc other = tiny_convnet();
  other.name = "other";
  try {
    (void)prepare_iteration(s, other, p);
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_NE(e.reason().find("model tiny-convnet (411786 parameters), the scenario's is other"), std::string::npos);
  }
  s.workload->compute = "no-such-measurement.yaml";
  try {
    (void)prepare_iteration(s, tiny_convnet(), p);
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 19) << e.what();
  }
}

}  // namespace
}  // namespace gw
