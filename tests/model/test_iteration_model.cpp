// Closed-form tests of the SimGrid-free iteration model: DDP buckets, compute
// and optimizer times, compressed wire sizes, and the no-overlap, pipeline and
// gradient-accumulation closed forms.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "gradwire/core/units.hpp"
#include "gradwire/model/buckets.hpp"
#include "gradwire/model/closed_form.hpp"
#include "gradwire/model/collective_model.hpp"
#include "gradwire/model/compression.hpp"
#include "gradwire/model/iteration_model.hpp"
#include "synthetic.hpp"

namespace gw {
namespace {

using test::costs;
using test::model_of;
using test::tensor;

ModelDesc five_tensors() {
  return model_of({tensor("a", {200000}, 1e9), tensor("b", {1000, 100}, 2e9), tensor("c", {3000, 1000}, 3e9),
                   tensor("d", {4000, 1000}, 4e9), tensor("e", {10}, 1e9)});
}

TEST(Buckets, FirstBucketSmallLaterOnesAtCapCrossingTensorStays) {
  const auto m = five_tensors();
  const auto b = assign_buckets(m, 4, 1024.0 * 1024, 25.0 * 1024 * 1024);
  ASSERT_EQ(b.size(), 3u);
  // a (800000 B) + b (400000 B) crosses 1 MiB: the first bucket closes.
  EXPECT_EQ(b[0].first_tensor, 0u);
  EXPECT_EQ(b[0].last_tensor, 1u);
  EXPECT_DOUBLE_EQ(b[0].bytes, 1.2e6);
  // c (12 MB) + d (16 MB) crosses 25 MiB.
  EXPECT_EQ(b[1].first_tensor, 2u);
  EXPECT_EQ(b[1].last_tensor, 3u);
  EXPECT_EQ(b[1].elements, 7000000);
  EXPECT_EQ(b[2].first_tensor, 4u);
  EXPECT_EQ(b[2].last_tensor, 4u);
  EXPECT_DOUBLE_EQ(b[2].bytes, 40);
}

TEST(Buckets, GradientPrecisionHalvesBytesAndChangesAssignment) {
  const auto m = five_tensors();
  const auto b = assign_buckets(m, 2, 1024.0 * 1024, 25.0 * 1024 * 1024);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].last_tensor, 2u);  // 400 kB + 200 kB + 6 MB
  EXPECT_DOUBLE_EQ(b[0].bytes, 6.6e6);
  EXPECT_EQ(b[1].first_tensor, 3u);
  EXPECT_DOUBLE_EQ(b[1].bytes, 8e6 + 20);
}

TEST(Buckets, ReadyWhenLastTensorIsAndBackwardSplitByFlops) {
  const auto m = five_tensors();
  const auto shares = backward_shares(m);
  ASSERT_EQ(shares.size(), 5u);
  EXPECT_DOUBLE_EQ(shares[3], 4.0 / 11.0);
  const auto b = assign_buckets(m, 4, 1024.0 * 1024, 25.0 * 1024 * 1024);
  const auto ready = test::bucket_ready_times(b, {1, 2, 3, 4, 5});
  EXPECT_EQ(ready, (std::vector<double>{3, 10, 15}));
}

TEST(Compute, ForwardBackwardFromFlopsAndOptimizerFromBytes) {
  const auto m = five_tensors();
  WorkloadSpec w;
  w.compute_efficiency = 1.0;  // the closed forms below use the raw GEMM rate
  w.micro_batch = 8;
  w.optimizer.kind = "adam";
  const auto p = plan_iteration(w, test::cluster(1, 8), m, costs());
  EXPECT_DOUBLE_EQ(p.forward, m.forward_flops_per_sample * 8 / 1e12);
  EXPECT_NEAR(p.backward(), 11e9 * 8 / 1e12, 1e-15);
  EXPECT_DOUBLE_EQ(p.tensor_backward[2], 3e9 * 8 / 1e12);
  // Adam, fp32: param r+w, grad r (12 B) + m and v r+w (16 B) = 28 B per parameter.
  EXPECT_DOUBLE_EQ(optimizer_bytes_per_parameter("adam", 4), 28);
  EXPECT_DOUBLE_EQ(optimizer_bytes_per_parameter("sgd", 2), 6);
  EXPECT_DOUBLE_EQ(p.optimizer, static_cast<double>(m.parameters) * 28 / 1e12);
  w.optimizer.step_time = 0.25;
  EXPECT_DOUBLE_EQ(plan_iteration(w, test::cluster(1, 8), m, costs()).optimizer, 0.25);
  w.optimizer = {};
  w.optimizer.kind = "rmsprop";
  EXPECT_THROW(plan_iteration(w, test::cluster(1, 8), m, costs()), std::invalid_argument);
}

TEST(Compute, EfficiencyScalesComputeAndHasModelDefaults) {
  auto m = five_tensors();
  WorkloadSpec w;
  w.micro_batch = 8;
  w.compute_efficiency = 1.0;
  const auto full = plan_iteration(w, test::cluster(1, 8), m, costs());
  w.compute_efficiency = 0.4;
  const auto part = plan_iteration(w, test::cluster(1, 8), m, costs());
  EXPECT_DOUBLE_EQ(part.forward, full.forward / 0.4);
  EXPECT_NEAR(part.backward(), full.backward() / 0.4, 1e-12);
  EXPECT_FALSE(part.compute_efficiency_default);
  w.compute_efficiency.reset();
  m.sequence_length = 0;
  // A CNN: 0.25 of a tensor-core rate, 0.69 of the fp32 (CUDA-core) rate.
  auto tensor_cores = costs();
  tensor_cores.compute_precision = "tf32";
  auto cnn = plan_iteration(w, test::cluster(1, 8), m, tensor_cores);
  EXPECT_TRUE(cnn.compute_efficiency_default);
  EXPECT_DOUBLE_EQ(cnn.compute_efficiency, 0.25);
  EXPECT_DOUBLE_EQ(cnn.forward, full.forward / 0.25);
  for (const char* p : {"fp16", "bf16", "amp-fp16", "amp-bf16"}) {
    tensor_cores.compute_precision = p;
    EXPECT_DOUBLE_EQ(plan_iteration(w, test::cluster(1, 8), m, tensor_cores).compute_efficiency, 0.25) << p;
  }
  auto cuda_cores = costs();
  cuda_cores.compute_precision = "fp32";
  EXPECT_DOUBLE_EQ(plan_iteration(w, test::cluster(1, 8), m, cuda_cores).compute_efficiency, 0.69);
  // A sequence model: 0.5 whatever the precision.
  m.sequence_length = 512;
  EXPECT_DOUBLE_EQ(plan_iteration(w, test::cluster(1, 8), m, cuda_cores).compute_efficiency, 0.5);
  EXPECT_DOUBLE_EQ(plan_iteration(w, test::cluster(1, 8), m, tensor_cores).compute_efficiency, 0.5);
}

// --- Wire sizes ---------------------------------------------------------------

BucketComm comm_for(const std::string& kind, const ModelDesc& m, int gpus, double e = 4) {
  CompressionSpec c;
  c.kind = kind;
  c.ratio = 0.01;
  c.rank = 4;
  c.chunk = 1024;
  c.implementation = "gradwire";  // the project's kernels: the wire formulas of docs/model.md's table
  const auto buckets = assign_buckets(m, e, 1e18, 1e18);  // one bucket
  return plan_bucket_comm(c, m, buckets.at(0), e, test::cluster(1, gpus), "ring", costs().codec_time);
}

const CommStep& only_collective(const BucketComm& c) {
  const CommStep* found = nullptr;
  for (const auto& s : c.steps)
    if (s.kind == CommStep::Kind::Collective) {
      EXPECT_EQ(found, nullptr) << "more than one collective";
      found = &s;
    }
  EXPECT_NE(found, nullptr);
  return *found;
}

TEST(WireBytes, EveryCompressorMatchesItsFormula) {
  const std::int64_t n = 1000003;  // not a multiple of anything
  const auto m = model_of({tensor("w", {n}, 1e9)});
  const double dn = static_cast<double>(n);
  for (int gpus : {8, 64}) {
    SCOPED_TRACE(gpus);
    const double N = gpus;
    auto c = comm_for("none", m, gpus);
    EXPECT_EQ(only_collective(c).op, CommOp::AllReduce);
    EXPECT_DOUBLE_EQ(only_collective(c).bytes, 4 * dn);
    EXPECT_DOUBLE_EQ(comm_for("none", m, gpus, 2).contributed, 2 * dn);
    for (const char* half : {"fp16", "bf16"}) {
      c = comm_for(half, m, gpus);
      EXPECT_EQ(only_collective(c).op, CommOp::AllReduce);
      EXPECT_DOUBLE_EQ(only_collective(c).bytes, 2 * dn);
    }
    c = comm_for("int8", m, gpus);
    EXPECT_EQ(only_collective(c).op, CommOp::AllReduce);
    EXPECT_DOUBLE_EQ(only_collective(c).bytes, dn + 4 * std::ceil(dn / 1024));
    const double sign = std::ceil(dn / 8) + 4 * std::ceil(dn / 1024);
    for (const char* s : {"sign", "majority_vote"}) {
      c = comm_for(s, m, gpus);
      EXPECT_EQ(only_collective(c).op, CommOp::AllGather);
      EXPECT_DOUBLE_EQ(only_collective(c).contributed, sign);
      EXPECT_DOUBLE_EQ(only_collective(c).bytes, N * sign);  // gathered total grows with N
    }
    const double k = std::ceil(0.01 * dn);
    c = comm_for("topk", m, gpus);
    EXPECT_EQ(only_collective(c).op, CommOp::AllGather);
    EXPECT_DOUBLE_EQ(c.contributed, 8 * k);  // fp32 value + int32 index
    EXPECT_DOUBLE_EQ(only_collective(c).bytes, N * 8 * k);
    c = comm_for("randomk", m, gpus);
    EXPECT_EQ(only_collective(c).op, CommOp::AllReduce);
    EXPECT_DOUBLE_EQ(only_collective(c).bytes, 4 * k);
  }
  EXPECT_THROW(comm_for("zip", m, 8), std::invalid_argument);
}

TEST(WireBytes, PowerSgdAllReducesPThenQAndSendsOthersUncompressed) {
  // fc: 512 x 256 (compressed at rank 4), conv: (64, 32, 3, 3) -> 64 x 288,
  // a bias (1-D) and a 4 x 4 matrix not worth compressing ((4+4) 4 2 >= 16).
  const auto m = model_of({tensor("fc", {512, 256}, 1e9), tensor("conv", {64, 32, 3, 3}, 1e9),
                           tensor("bias", {512}, 1e6), tensor("tiny", {4, 4}, 1e6)});
  const auto c = comm_for("powersgd", m, 8);
  std::vector<const CommStep*> coll;
  for (const auto& s : c.steps)
    if (s.kind == CommStep::Kind::Collective) coll.push_back(&s);
  ASSERT_EQ(coll.size(), 3u);
  EXPECT_EQ(coll[0]->label, "all-reduce uncompressed");
  EXPECT_DOUBLE_EQ(coll[0]->bytes, 4.0 * (512 + 16));
  EXPECT_EQ(coll[1]->label, "all-reduce P");
  EXPECT_DOUBLE_EQ(coll[1]->bytes, 4.0 * (512 + 64) * 4);
  EXPECT_EQ(coll[2]->label, "all-reduce Q");
  EXPECT_DOUBLE_EQ(coll[2]->bytes, 4.0 * (256 + 288) * 4);
  // (m + k) r elements per layer all-reduced in total.
  EXPECT_DOUBLE_EQ(coll[1]->bytes + coll[2]->bytes, 4.0 * ((512 + 256) * 4 + (64 + 288) * 4));
  // Q's computation sits between the two dependent all-reduces.
  std::size_t p_at = 0, q_at = 0, orth_at = 0;
  for (std::size_t i = 0; i < c.steps.size(); ++i) {
    if (c.steps[i].label == "all-reduce P") p_at = i;
    if (c.steps[i].label == "all-reduce Q") q_at = i;
    if (c.steps[i].label == "orthogonalize, Q = M^T P") orth_at = i;
  }
  EXPECT_LT(p_at, orth_at);
  EXPECT_LT(orth_at, q_at);
  // Memory: error feedback for the whole bucket, P and Q buffers.
  EXPECT_DOUBLE_EQ(c.error_feedback_bytes, 4.0 * static_cast<double>(m.parameters));
  EXPECT_DOUBLE_EQ(c.state_bytes, 4.0 * ((512 + 256) * 4 + (64 + 288) * 4));
  // Rank is clamped to min(m, n) (only pays with a min_compression_rate < 1).
  EXPECT_FALSE(powersgd_shape(tensor("x", {2, 1000}, 1), 4, 1.0).compressed);
  const auto s = powersgd_shape(tensor("x", {2, 1000}, 1), 4, 0.5);
  EXPECT_TRUE(s.compressed);
  EXPECT_EQ(s.rank, 2);
}

TEST(WireBytes, SentPerGpuByAlgorithm) {
  const auto one = test::cluster(1, 8);
  EXPECT_DOUBLE_EQ(sent_bytes_per_gpu(CommOp::AllReduce, "ring", 8e6, one), 2 * 7.0 / 8 * 8e6);
  EXPECT_DOUBLE_EQ(sent_bytes_per_gpu(CommOp::AllGather, "ring", 8e6, one), 7.0 / 8 * 8e6);
  const auto four = test::cluster(4, 8);
  EXPECT_DOUBLE_EQ(sent_bytes_per_gpu(CommOp::AllReduce, "hierarchical", 8e6, four),
                   2 * 7.0 / 8 * 8e6 + 2 * 3.0 / 4 * 1e6);
  // auto stays auto: NCCL's rule per bucket size (closed_form.hpp choose_collective).
  EXPECT_EQ(resolve_allreduce_algorithm("auto", four), "auto");
  EXPECT_EQ(resolve_allreduce_algorithm("ring", one), "ring");
  EXPECT_THROW(resolve_allreduce_algorithm("butterfly", one), std::invalid_argument);
}

// --- Closed forms -----------------------------------------------------------------

// Three tensors, one bucket each; backward 1, 2 and 1 ms, forward 2 ms at 1 TFLOP/s.
IterationPlan three_bucket_plan(bool overlap, int accumulation, bool no_sync = true) {
  const auto m = model_of({tensor("t0", {1000}, 1e9), tensor("t1", {1000}, 2e9), tensor("t2", {1000}, 1e9)});
  WorkloadSpec w;
  w.compute_efficiency = 1.0;  // the closed forms below use the raw GEMM rate
  w.first_bucket_size = 1;
  w.bucket_size = 1;
  w.overlap = overlap;
  w.accumulation = accumulation;
  w.no_sync = no_sync;
  w.optimizer.step_time = 0.5e-3;
  w.ddp_overheads = false;  // the plain closed forms
  return plan_iteration(w, test::cluster(1, 8), m, costs());
}
const CollectiveTimeFn kOnePointFiveMs = [](const CommStep&) { return 1.5e-3; };

// --- DDP overheads (docs/model.md, "DDP overheads") --------------------------

// Three 1e6-element fp32 tensors (4 MB), one bucket each, no overlap; backward
// 1, 2, 1 ms; copy bandwidth 1e11 B/s (read + written): c = 2 x 4e6 / 1e11 = 80 us.
// No overlap, the raw GEMM rate, a 0.5 ms optimizer step.
WorkloadSpec no_overlap_workload(bool overheads) {
  WorkloadSpec w;
  w.compute_efficiency = 1.0;
  w.overlap = false;
  w.ddp_overheads = overheads;
  w.optimizer.step_time = 0.5e-3;
  return w;
}

IterationPlan ddp_plan(bool overheads, bool as_view = false, bool derived_optimizer = false) {
  const auto m = model_of({tensor("t0", {1000000}, 1e9), tensor("t1", {1000000}, 2e9), tensor("t2", {1000000}, 1e9)});
  WorkloadSpec w = no_overlap_workload(overheads);
  w.first_bucket_size = 1;
  w.bucket_size = 1;
  w.gradient_as_bucket_view = as_view;
  if (derived_optimizer) w.optimizer.step_time.reset();
  auto c = costs();
  c.copy_bandwidth = 1e11;
  return plan_iteration(w, test::cluster(1, 8), m, c);
}
constexpr double kCopy = 2 * 4e6 / 1e11;

TEST(IterationModel, DdpOverheadCopyInLengthensEachGradientByTwoBytesOverBandwidth) {
  const auto off = evaluate_closed_form(ddp_plan(false), kOnePointFiveMs);
  const auto on = evaluate_closed_form(ddp_plan(true), kOnePointFiveMs);
  EXPECT_NEAR(on.bucket_copy_in, 3 * kCopy, 1e-15);
  EXPECT_NEAR(on.backward, off.backward, 1e-12);  // the copies are their own row
  EXPECT_NEAR(on.backward_end, off.backward_end + 3 * kCopy, 1e-12);
  EXPECT_NEAR(on.tensor_end[0], off.tensor_end[0] + kCopy, 1e-12);
  EXPECT_NEAR(on.tensor_end[1], off.tensor_end[1] + 2 * kCopy, 1e-12);
}

TEST(IterationModel, DdpOverheadLaunchDelaysEachBucketsCollective) {
  const auto off = evaluate_closed_form(ddp_plan(false), kOnePointFiveMs);
  const auto on = evaluate_closed_form(ddp_plan(true), kOnePointFiveMs);
  EXPECT_NEAR(on.collective_launch, 3 * kKernelLaunchSeconds, 1e-15);
  // No overlap: the buckets run back to back, each L later than its start.
  for (std::size_t b = 0; b < 3; ++b) {
    SCOPED_TRACE(b);
    EXPECT_NEAR(on.buckets[b].steps.at(0).start - on.buckets[b].start, kKernelLaunchSeconds, 1e-15);
    EXPECT_NEAR(on.buckets[b].end - on.buckets[b].start, 1.5e-3 + kKernelLaunchSeconds, 1e-12);
  }
  EXPECT_NEAR(on.exposed_communication, off.exposed_communication + 3 * kKernelLaunchSeconds, 1e-12);
}

TEST(IterationModel, DdpOverheadCopyOutFollowsTheLastBucketBeforeTheOptimizer) {
  const auto off = evaluate_closed_form(ddp_plan(false), kOnePointFiveMs);
  const auto on = evaluate_closed_form(ddp_plan(true), kOnePointFiveMs);
  // Earlier buckets' copy-outs end before the next bucket does; the last one's is exposed.
  EXPECT_NEAR(on.bucket_copy_out, kCopy, 1e-12);
  EXPECT_NEAR(on.optimizer_start, on.buckets.back().end + kCopy, 1e-12);
  EXPECT_DOUBLE_EQ(on.fixed_work, 0);  // step_time given: its launches are in it
  // Total = without + copy-in + launches + exposed copy-out.
  EXPECT_NEAR(on.total, off.total + 3 * kCopy + 3 * kKernelLaunchSeconds + kCopy, 1e-12);
  EXPECT_NEAR(on.forward + on.backward + on.bucket_copy_in + on.exposed_communication + on.bucket_copy_out +
                  on.optimizer + on.fixed_work,
              on.total, 1e-12);
}

TEST(IterationModel, DdpOverheadFixedWorkIsOneLaunchPerTensorWhenTheStepIsDerived) {
  const auto off = evaluate_closed_form(ddp_plan(false, false, true), kOnePointFiveMs);
  const auto on = evaluate_closed_form(ddp_plan(true, false, true), kOnePointFiveMs);
  EXPECT_NEAR(on.fixed_work, 3 * kKernelLaunchSeconds, 1e-15);
  EXPECT_NEAR(on.total, off.total + 4 * kCopy + 6 * kKernelLaunchSeconds, 1e-12);
}

// Input bound: T = max(T, b k / r); the wait is its own term of the total.
TEST(IterationModel, InputRateBoundsTheIterationFromBelow) {
  const auto m = model_of({tensor("t0", {1000000}, 1e9)});
  WorkloadSpec w = no_overlap_workload(false);
  w.micro_batch = 8;
  w.accumulation = 2;
  const auto free = evaluate_closed_form(plan_iteration(w, test::cluster(1, 8), m, costs()), kOnePointFiveMs);
  EXPECT_DOUBLE_EQ(free.input_wait, 0);
  w.input_rate = 16 / (2 * free.total);  // the loader needs twice the step
  const auto slow = evaluate_closed_form(plan_iteration(w, test::cluster(1, 8), m, costs()), kOnePointFiveMs);
  EXPECT_NEAR(slow.total, 2 * free.total, 1e-12);
  EXPECT_NEAR(slow.input_wait, free.total, 1e-12);
  w.input_rate = 16 / (0.5 * free.total);  // a fast loader changes nothing
  const auto fast = evaluate_closed_form(plan_iteration(w, test::cluster(1, 8), m, costs()), kOnePointFiveMs);
  EXPECT_DOUBLE_EQ(fast.total, free.total);
  EXPECT_DOUBLE_EQ(fast.input_wait, 0);
}

TEST(IterationModel, DdpOverheadGradientAsBucketViewHasNoCopies) {
  const auto off = evaluate_closed_form(ddp_plan(false), kOnePointFiveMs);
  const auto view = evaluate_closed_form(ddp_plan(true, true), kOnePointFiveMs);
  EXPECT_DOUBLE_EQ(view.bucket_copy_in, 0);
  EXPECT_DOUBLE_EQ(view.bucket_copy_out, 0);
  EXPECT_NEAR(view.total, off.total + 3 * kKernelLaunchSeconds, 1e-12);
}

TEST(ClosedForm, PipelineRecurrenceByHand) {
  const auto r = evaluate_closed_form(three_bucket_plan(true, 1), kOnePointFiveMs);
  ASSERT_EQ(r.buckets.size(), 3u);
  // ready (from t = 0, backward starts at 2 ms): 3, 5, 6 ms.
  EXPECT_NEAR(r.buckets[0].ready, 3e-3, 1e-12);
  EXPECT_NEAR(r.buckets[1].ready, 5e-3, 1e-12);
  EXPECT_NEAR(r.buckets[2].ready, 6e-3, 1e-12);
  // end_b = max(ready_b, end_{b-1}) + 1.5 ms: 4.5, 6.5, 8 ms.
  EXPECT_NEAR(r.buckets[0].end, 4.5e-3, 1e-12);
  EXPECT_NEAR(r.buckets[1].start, 5e-3, 1e-12);
  EXPECT_NEAR(r.buckets[2].start, 6.5e-3, 1e-12);
  EXPECT_NEAR(r.buckets[2].end, 8e-3, 1e-12);
  EXPECT_NEAR(r.exposed_communication, 2e-3, 1e-12);
  EXPECT_NEAR(r.total, 8.5e-3, 1e-12);
  EXPECT_NEAR(r.samples_per_second, 8 / 8.5e-3, 1e-6);
}

TEST(ClosedForm, NoOverlapIsComputePlusSumOfCollectives) {
  const auto r = evaluate_closed_form(three_bucket_plan(false, 1), kOnePointFiveMs);
  EXPECT_NEAR(r.exposed_communication, 4.5e-3, 1e-12);
  EXPECT_NEAR(r.total, 2e-3 + 4e-3 + 3 * 1.5e-3 + 0.5e-3, 1e-12);
  EXPECT_NEAR(r.buckets[0].ready, 3e-3, 1e-12);  // gradient ready ...
  EXPECT_NEAR(r.buckets[0].start, 6e-3, 1e-12);  // ... but sent after the backward pass
}

TEST(ClosedForm, AccumulationAddsWholeMicroStepsOnly) {
  const auto one = evaluate_closed_form(three_bucket_plan(true, 1), kOnePointFiveMs);
  for (int k : {1, 4, 1024}) {
    SCOPED_TRACE(k);
    const auto r = evaluate_closed_form(three_bucket_plan(true, k), kOnePointFiveMs);
    EXPECT_NEAR(r.total, k * (2e-3 + 4e-3) + 2e-3 + 0.5e-3, 1e-9);
    EXPECT_NEAR(r.exposed_communication, one.exposed_communication, 1e-12);
    EXPECT_NEAR(r.forward, k * 2e-3, 1e-12);
    EXPECT_NEAR(r.backward, k * 4e-3, 1e-9);
    EXPECT_DOUBLE_EQ(r.global_batch, 8.0 * k);
    EXPECT_DOUBLE_EQ(r.wire_bytes_per_gpu, one.wire_bytes_per_gpu);  // one synchronization
  }
}

// Accumulation without no_sync (workload.no_sync: false): each of the k
// micro-steps runs as the synchronizing one, S = 8 ms from its forward to its
// last bucket's end (PipelineRecurrenceByHand), so T = k S + O.
TEST(ClosedForm, AccumulationWithoutNoSyncSynchronizesEveryMicroStep) {
  const auto one = evaluate_closed_form(three_bucket_plan(true, 1), kOnePointFiveMs);
  for (int k : {1, 4, 1024}) {
    SCOPED_TRACE(k);
    const auto with_no_sync = evaluate_closed_form(three_bucket_plan(true, k), kOnePointFiveMs);
    const auto plan = three_bucket_plan(true, k, false);
    EXPECT_EQ(plan.sync_every_micro_step, k > 1);
    EXPECT_EQ(plan.synchronizing_micro_steps(), k);
    const auto r = evaluate_closed_form(plan, kOnePointFiveMs);
    EXPECT_NEAR(r.total, k * 8e-3 + 0.5e-3, 1e-9);
    EXPECT_NEAR(r.folded, (k - 1) * 8e-3, 1e-9);
    EXPECT_NEAR(r.buckets[2].end, (k - 1) * 8e-3 + 8e-3, 1e-9);  // the last micro-step's timeline
    EXPECT_NEAR(r.exposed_communication, k * 2e-3, 1e-9);
    EXPECT_NEAR(r.forward, k * 2e-3, 1e-12);
    EXPECT_NEAR(r.backward, k * 4e-3, 1e-9);
    EXPECT_NEAR(r.forward + r.backward + r.exposed_communication + r.optimizer, r.total, 1e-9);
    EXPECT_DOUBLE_EQ(r.global_batch, 8.0 * k);
    EXPECT_DOUBLE_EQ(r.wire_bytes_per_gpu, k * one.wire_bytes_per_gpu);  // k synchronizations
    EXPECT_EQ(r.sync_every_micro_step, k > 1);
    if (k == 1) {
      EXPECT_EQ(r.total, with_no_sync.total);  // nothing to skip at k = 1
    } else {
      EXPECT_NEAR(r.total - with_no_sync.total, (k - 1) * 2e-3, 1e-9);  // k-1 more exposed syncs
    }
  }
}

// Without no_sync, each synchronization waits for the slowest rank of one
// micro-step, k times, and the DDP overheads (copies, launches) run k times;
// the optimizer and the per-iteration fixed work once: T = k (T_1 - O - W) + O + W.
TEST(ClosedForm, AccumulationWithoutNoSyncRepeatsOverheadsAndStragglerWaits) {
  const auto m = model_of({tensor("t0", {1000000}, 1e9), tensor("t1", {1000000}, 2e9), tensor("t2", {1000000}, 1e9)});
  auto c = costs();
  c.copy_bandwidth = 1e11;
  WorkloadSpec w;
  w.compute_efficiency = 1.0;
  w.first_bucket_size = 1;
  w.bucket_size = 1;
  w.compute_jitter = 0.1;
  w.interference = 0.2;
  const auto one = evaluate_closed_form(plan_iteration(w, test::cluster(1, 8), m, c), kOnePointFiveMs);
  ASSERT_GT(one.straggler_wait, 0);
  ASSERT_GT(one.fixed_work, 0);
  w.accumulation = 5;
  w.no_sync = false;
  const auto plan = plan_iteration(w, test::cluster(1, 8), m, c);
  const auto r = evaluate_closed_form(plan, kOnePointFiveMs);
  const double ow = one.optimizer + one.fixed_work;
  EXPECT_NEAR(r.total, 5 * (one.total - ow) + ow, 1e-12);
  EXPECT_NEAR(r.straggler_wait, 5 * one.straggler_wait, 1e-12);
  EXPECT_NEAR(r.bucket_copy_in, 5 * one.bucket_copy_in, 1e-15);
  EXPECT_NEAR(r.bucket_copy_out, 5 * one.bucket_copy_out, 1e-15);
  EXPECT_NEAR(r.collective_launch, 5 * one.collective_launch, 1e-15);
  EXPECT_NEAR(r.backward, 5 * one.backward, 1e-12);  // slowed as the one micro-step's
  EXPECT_NEAR(r.overlapped_compute, 5 * one.overlapped_compute, 1e-12);
  EXPECT_NEAR(r.forward + r.backward + r.bucket_copy_in + r.straggler_wait + r.exposed_communication +
                  r.bucket_copy_out + r.optimizer + r.fixed_work,
              r.total, 1e-12);
  // Under no_sync the one synchronization waits for 5 micro-steps' jitter instead.
  w.no_sync = true;
  const auto folded = evaluate_closed_form(plan_iteration(w, test::cluster(1, 8), m, c), kOnePointFiveMs);
  EXPECT_GT(folded.straggler_wait, one.straggler_wait);
  EXPECT_LT(folded.total, r.total);
}

TEST(ClosedForm, CodecsRunOnTheCommStreamAndScaleWithTheirCost) {
  const auto m = model_of({tensor("w", {1000000}, 1e9)});
  WorkloadSpec w;
  w.compute_efficiency = 1.0;  // the closed forms below use the raw GEMM rate
  w.compression.kind = "int8";
  w.compression.implementation = "gradwire";  // the profile's codec costs
  w.overlap = false;
  w.optimizer.step_time = 0;
  w.ddp_overheads = false;  // the plain closed form
  const CollectiveTimeFn zero = [](const CommStep&) { return 0.0; };
  const auto r1 = evaluate_closed_form(plan_iteration(w, test::cluster(1, 8), m, costs(1.0)), zero);
  const auto r3 = evaluate_closed_form(plan_iteration(w, test::cluster(1, 8), m, costs(3.0)), zero);
  EXPECT_NEAR(r1.encode, 1e6 * 1e-9, 1e-15);
  EXPECT_NEAR(r1.decode, 0.5e6 * 1e-9, 1e-15);
  EXPECT_NEAR(r3.encode, 3 * r1.encode, 1e-15);
  EXPECT_NEAR(r3.exposed_communication, 3 * 1.5e-3, 1e-12);
}

TEST(ClosedForm, InterferenceSlowsOnlyOverlappedCompute) {
  // Many small tensors so that buckets run beside the remaining backward.
  std::vector<TensorDesc> ts;
  for (int i = 0; i < 40; ++i) ts.push_back(tensor("t" + std::to_string(i), {300000}, 1e9));
  const auto m = model_of(ts);
  WorkloadSpec w;
  w.compute_efficiency = 1.0;  // the closed forms below use the raw GEMM rate
  w.interference = 0.25;
  w.optimizer.step_time = 0;
  const CollectiveTimeFn slow = [](const CommStep& s) { return s.bytes / 2e9; };
  const auto p = plan_iteration(w, test::cluster(1, 8), m, costs());
  const auto r = evaluate_closed_form(p, slow);
  EXPECT_GT(r.backward, p.backward() * 1.05);
  EXPECT_LE(r.backward, p.backward() * 1.25 + 1e-12);
  w.overlap = false;
  const auto r0 = evaluate_closed_form(plan_iteration(w, test::cluster(1, 8), m, costs()), slow);
  EXPECT_NEAR(r0.backward, p.backward(), 1e-12);
}

// All-gathered compressors slow down with N, all-reduced ones do not
// (alpha-beta ring times from collective_model.hpp; bandwidth terms only, the
// ring's 2(N-1) alpha latency term grows with N for every collective).
TEST(ClosedForm, AllGatherCompressorsSlowDownWithN) {
  const auto m = model_of({tensor("w", {4096, 4096}, 1e9)});
  const collective::AlphaBeta ab{0.0, 25e9};
  const auto comm_time = [&](const std::string& kind, int n) {
    WorkloadSpec w;
    w.compute_efficiency = 1.0;  // the closed forms below use the raw GEMM rate
    w.compression.kind = kind;
    w.compression.implementation = "gradwire";  // int8 as an all-reduce (PyTorch users' int8 all-gathers)
    w.compression.ratio = 0.01;
    w.overlap = false;
    w.optimizer.step_time = 0;
    w.allreduce_algorithm = "ring";
    const auto p = plan_iteration(w, test::cluster(n, 1), m, costs(0.0));
    const auto r = evaluate_closed_form(p, [&](const CommStep& s) {
      return s.op == CommOp::AllGather ? collective::ring_allgather_time(n, s.bytes, ab)
                                       : collective::ring_allreduce_time(n, s.bytes, ab);
    });
    return r.exposed_communication;
  };
  for (const char* kind : {"sign", "topk", "majority_vote"}) {
    SCOPED_TRACE(kind);
    EXPECT_GT(comm_time(kind, 64), 5 * comm_time(kind, 8));
    EXPECT_GT(comm_time(kind, 512), 5 * comm_time(kind, 64));
  }
  for (const char* kind : {"none", "fp16", "int8", "randomk", "powersgd"}) {
    SCOPED_TRACE(kind);
    EXPECT_LT(comm_time(kind, 512), 1.6 * comm_time(kind, 8));
  }
}

// An entry measured on a cluster shape without points: its alpha-beta line.
MeasuredCollective line_fit(CollectiveOp op, int gpus, int nodes, double alpha, double beta) {
  MeasuredCollective m;
  m.op = op;
  m.gpus = gpus;
  m.nodes = nodes;
  m.line = {alpha, beta, 0};
  return m;
}

// Tensors of 4, 8 and 4 MB (fp32) and a workload that gives each its bucket.
ModelDesc three_buckets_model() {
  return model_of({tensor("t0", {1000000}, 1e9), tensor("t1", {2000000}, 2e9), tensor("t2", {1000000}, 1e9)});
}
WorkloadSpec bucket_per_tensor() {
  WorkloadSpec w;
  w.compute_efficiency = 1.0;
  w.first_bucket_size = 1;
  w.bucket_size = 1;
  return w;
}

// Collectives measured on the cluster (docs/model.md): a profile fit across
// nodes whose GPU and node counts are the cluster's gives every all-reduce
// step alpha + bytes / beta, in place of the network model (a collective
// time function that would fail the test if asked); anything else does not.
TEST(ClosedForm, AFitMeasuredOnTheClusterTimesItsCollectives) {
  const auto m = three_buckets_model();
  WorkloadSpec w = bucket_per_tensor();
  auto c = costs();
  c.cluster_collectives = {line_fit(CollectiveOp::AllReduce, 8, 4, 1.0, 1.0),   // other node count
                           line_fit(CollectiveOp::AllReduce, 16, 2, 1.0, 1.0),  // other GPU count
                           line_fit(CollectiveOp::AllReduce, 8, 2, 100e-6, 50e9)};
  const CollectiveTimeFn never = [](const CommStep&) -> double { throw std::logic_error("modelled, not measured"); };
  const auto plan = plan_iteration(w, test::cluster(2, 4), m, c);
  ASSERT_EQ(plan.measured_collectives, std::vector<std::string>{"allreduce on 8 GPUs, 2 nodes"});
  const auto r = evaluate_closed_form(plan, never);
  EXPECT_EQ(r.measured_collectives, plan.measured_collectives);
  ASSERT_EQ(r.buckets.size(), 3u);
  for (const auto& b : r.buckets) {
    ASSERT_EQ(b.steps.size(), 1u);
    EXPECT_NEAR(b.steps[0].end - b.steps[0].start, 100e-6 + b.steps[0].bytes / 50e9, 1e-15);
  }
  // A pin NCCL accepts takes the measurement too (it already is NCCL's
  // choice); gradwire's own hierarchical schedule keeps the model.
  w.allreduce_algorithm = "ring";
  const auto ring = plan_iteration(w, test::cluster(2, 4), m, c);
  EXPECT_EQ(ring.measured_collectives, plan.measured_collectives);
  for (const auto& bc : ring.comm) EXPECT_EQ(bc.steps[0].measured_seconds, 100e-6 + bc.steps[0].bytes / 50e9);
  w.allreduce_algorithm = "hierarchical";
  auto pinned = plan_iteration(w, test::cluster(2, 4), m, c);
  EXPECT_TRUE(pinned.measured_collectives.empty());
  for (const auto& bc : pinned.comm) EXPECT_EQ(bc.steps[0].measured_seconds, 0.0);
  // The node count selects the fit: 4 nodes of 2 GPUs take the 8-GPU, 4-node
  // one; the same GPUs on one node none (a single-node entry without points
  // stays the source of the intra-node link only, resolve_cluster), nor 2 nodes of 2.
  w.allreduce_algorithm = "auto";
  const auto four = plan_iteration(w, test::cluster(4, 2), m, c);
  EXPECT_EQ(four.measured_collectives, std::vector<std::string>{"allreduce on 8 GPUs, 4 nodes"});
  EXPECT_DOUBLE_EQ(four.comm[0].steps[0].measured_seconds, 1.0 + four.comm[0].steps[0].bytes);
  EXPECT_TRUE(plan_iteration(w, test::cluster(1, 8), m, c).measured_collectives.empty());
  EXPECT_TRUE(plan_iteration(w, test::cluster(2, 2), m, c).measured_collectives.empty());
  // An all-gather compressor takes an all-gather fit, not the all-reduce one.
  w.compression.kind = "topk";
  w.compression.implementation = "gradwire";
  c.cluster_collectives.push_back(line_fit(CollectiveOp::AllGather, 8, 2, 30e-6, 20e9));
  const auto gathered = plan_iteration(w, test::cluster(2, 4), m, c);
  EXPECT_EQ(gathered.measured_collectives, std::vector<std::string>{"allgather on 8 GPUs, 2 nodes"});
  int gathers = 0;
  for (const auto& bc : gathered.comm) {
    for (const auto& s : bc.steps) {
      if (s.kind != CommStep::Kind::Collective) continue;
      ASSERT_EQ(s.op, CommOp::AllGather);
      EXPECT_DOUBLE_EQ(s.measured_seconds, 30e-6 + s.bytes / 20e9);
      ++gathers;
    }
  }
  EXPECT_GT(gathers, 0);
}

// A measured curve (the profile's points, here on one node of 8): within its
// sizes every step takes the curve, log-log between the measured points;
// beyond them the closed form, scaled to meet the curve at its end; the
// label counts the steps outside. The closed form and the plan agree.
TEST(ClosedForm, AMeasuredCurveTimesItsCollectivesAndJoinsTheModelAtItsEnds) {
  const auto m = three_buckets_model();
  WorkloadSpec w = bucket_per_tensor();
  const ClusterSpec cluster = test::cluster(1, 8);
  MeasuredCollective curve;
  curve.gpus = 8;
  auto c = costs();
  // Buckets of 4 MB, 8 MB, 4 MB: 4e6 is a measured size, 8e6 lies between two.
  curve.curve.knots = {{1e6, 50e-6, 0, 20}, {4e6, 90e-6, 0, 20}, {16e6, 400e-6, 0, 20}};
  c.cluster_collectives = {curve};
  const auto plan = plan_iteration(w, cluster, m, c);
  ASSERT_EQ(plan.measured_collectives, std::vector<std::string>{"allreduce on 8 GPUs, 1 node"});
  ASSERT_EQ(plan.comm.size(), 3u);
  EXPECT_DOUBLE_EQ(plan.comm[0].steps[0].measured_seconds, 90e-6);
  EXPECT_NEAR(plan.comm[1].steps[0].measured_seconds, 90e-6 * std::sqrt(400.0 / 90.0), 1e-12);  // halfway in log
  const CollectiveTimeFn never = [](const CommStep&) -> double { throw std::logic_error("modelled, not measured"); };
  const auto closed = evaluate_closed_form(plan, never);
  EXPECT_NEAR(closed.buckets[1].steps[0].end - closed.buckets[1].steps[0].start, plan.comm[1].steps[0].measured_seconds,
              1e-15);
  // Measured up to 4 MB only: the 8 MB bucket is the model's time x the
  // curve's / the model's at 4 MB.
  c.cluster_collectives[0].curve.knots.pop_back();
  const auto shorter = plan_iteration(w, cluster, m, c);
  ASSERT_EQ(shorter.measured_collectives,
            std::vector<std::string>{"allreduce on 8 GPUs, 1 node (1 of 3 steps outside the measured " +
                                     units::format_size(1e6) + ".." + units::format_size(4e6) +
                                     ": the model, joined to the curve's end)"});
  const CollectiveTimeFn model = closed_form_collective_time(cluster);
  CommStep at_end = shorter.comm[1].steps[0];
  at_end.bytes = 4e6;
  EXPECT_NEAR(shorter.comm[1].steps[0].measured_seconds, model(shorter.comm[1].steps[0]) * 90e-6 / model(at_end),
              1e-15);
  EXPECT_DOUBLE_EQ(shorter.comm[0].steps[0].measured_seconds, 90e-6);
}

}  // namespace
}  // namespace gw
