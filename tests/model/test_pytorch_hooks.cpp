// compression.implementation: pytorch (docs/model.md, "Compression as PyTorch
// runs it"): each plan's steps against its formula, written here from the
// hooks' code independently of compressors.cpp; the no-overlap iteration as
// compute plus the sum of the steps.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "gradwire/model/compression.hpp"
#include "gradwire/model/iteration_model.hpp"
#include "synthetic.hpp"

namespace gw {
namespace {

using test::model_of;
using test::tensor;

constexpr double kL = 5e-6;

// Codecs must not be consulted by the pytorch plans.
double no_codec(const std::string& codec, bool, double) {
  ADD_FAILURE() << "the pytorch plan read the profile's codec " << codec;
  return 0;
}

BucketComm plan(const std::string& kind, const ModelDesc& m, int gpus, const HookCosts& hook, bool ef = true,
                int rank = 4) {
  CompressionSpec c;
  c.kind = kind;
  c.rank = rank;
  c.ratio = 0.01;
  c.chunk = 1024;
  c.error_feedback = ef;
  const auto buckets = assign_buckets(m, 4, 1e18, 1e18);  // one bucket
  return plan_bucket_comm(c, m, buckets.at(0), 4, test::cluster(1, gpus), "ring", no_codec, hook);
}

std::vector<const CommStep*> of_kind(const BucketComm& c, CommStep::Kind k) {
  std::vector<const CommStep*> out;
  for (const auto& s : c.steps)
    if (s.kind == k) out.push_back(&s);
  return out;
}

TEST(PytorchHooks, HalfHookIsCastDivideAllReduceCopyBack) {
  const double n = 1000003;
  const auto m = model_of({tensor("w", {1000003}, 1e9)});
  const HookCosts hook{1e12, 1e13, kL};
  for (const char* kind : {"fp16", "bf16"}) {
    SCOPED_TRACE(kind);
    const auto c = plan(kind, m, 8, hook);
    ASSERT_EQ(c.steps.size(), 3u);
    EXPECT_DOUBLE_EQ(c.steps[0].seconds, 2 * kL + 10 * n / 1e12);  // cast (4 + 2 B), divide in half (2 + 2 B)
    EXPECT_DOUBLE_EQ(c.steps[1].bytes, 2 * n);
    EXPECT_DOUBLE_EQ(c.steps[2].seconds, kL + 6 * n / 1e12);  // copy back (2 + 4 B)
    // The hook's body runs on the backward's stream, its `then` on a side stream.
    EXPECT_EQ(c.on_compute_stream, 1u);
    EXPECT_EQ(c.on_side_stream, 1u);
  }
}

// DDP calls the hook on the autograd thread (the backward's stream); the
// `then` callbacks run on pool streams: PowerSGD's first part (error
// feedback, P = M Q) on the compute stream, its last decode on a side
// stream, the work between its collectives on the comm stream. The open
// (GRACE) implementations and the gradwire plans keep every step on the comm stream.
TEST(PytorchHooks, HooksRunWhereDdpRunsThem) {
  const auto m = model_of({tensor("w", {256, 128}, 1e9), tensor("b", {256}, 1e6)});
  const HookCosts hook{1e12, 1e13, kL};
  const auto c = plan("powersgd", m, 8, hook);
  ASSERT_EQ(c.steps.size(), 7u);  // encode, all-reduce, decode, P, encode, Q, decode
  EXPECT_EQ(c.on_compute_stream, 1u);
  EXPECT_EQ(c.on_side_stream, 1u);
  EXPECT_EQ(c.steps.front().kind, CommStep::Kind::Encode);
  EXPECT_EQ(c.steps.back().kind, CommStep::Kind::Decode);
  // Only powerSGD_hook's last callback synchronizes the device.
  EXPECT_TRUE(c.blocks_host);
  EXPECT_FALSE(plan("fp16", m, 8, hook).blocks_host);
  for (const char* kind : {"topk", "sign", "majority_vote", "int8", "none"}) {
    SCOPED_TRACE(kind);
    const auto open = plan(kind, m, 8, hook);
    EXPECT_EQ(open.on_compute_stream, 0u);
    EXPECT_EQ(open.on_side_stream, 0u);
    EXPECT_FALSE(open.blocks_host);
  }
}

// With overlap (the closed form): the cast and division delay the backward
// after the bucket's last tensor and the bucket is ready after them; the
// copy back starts when the all-reduce ends, beside the next bucket's
// all-reduce, and the optimizer waits for the last copy back.
// Overlap, the raw GEMM rate, no DDP overheads, one bucket per tensor.
WorkloadSpec bucket_per_tensor(const std::string& kind) {
  WorkloadSpec w;
  w.compute_efficiency = 1.0;
  w.micro_batch = 4;
  w.ddp_overheads = false;
  w.optimizer.step_time = 1e-4;
  w.compression.kind = kind;
  w.first_bucket_size = w.bucket_size = 1;
  return w;
}

TEST(PytorchHooks, OverlapPutsTheCastOnTheBackwardStreamAndTheCopyBackBeside) {
  const WorkloadSpec w = bucket_per_tensor("fp16");
  const auto m = model_of({tensor("w2", {512, 256}, 2e9), tensor("w1", {256, 128, 3, 3}, 4e9)});
  const CollectiveTimeFn coll = [](const CommStep& s) { return 1e-4 + s.bytes / 1e10; };
  const auto p = plan_iteration(w, test::cluster(1, 8), m, test::costs());
  ASSERT_EQ(p.buckets.size(), 2u);
  const auto r = evaluate_closed_form(p, coll);
  const double pre0 = p.comm[0].steps[0].seconds, pre1 = p.comm[1].steps[0].seconds;
  const double ready0 = p.forward + p.tensor_backward[0] + pre0;
  const double end_backward = ready0 + p.tensor_backward[1] + pre1;
  const double ar0 = coll(p.comm[0].steps[1]), ar1 = coll(p.comm[1].steps[1]);
  EXPECT_NEAR(r.buckets[0].ready, ready0, 1e-15);
  EXPECT_NEAR(r.backward_end, end_backward, 1e-15);
  const double start1 = std::max(end_backward, ready0 + ar0);
  const double copy0_end = ready0 + ar0 + p.comm[0].steps[2].seconds;
  const double copy1_end = start1 + ar1 + p.comm[1].steps[2].seconds;
  EXPECT_NEAR(r.buckets[1].start, start1, 1e-15);  // not after bucket 0's copy back
  EXPECT_NEAR(r.buckets[0].end, copy0_end, 1e-15);
  EXPECT_TRUE(r.buckets[0].steps.back().side_stream);
  EXPECT_NEAR(r.total, std::max({copy0_end, copy1_end, end_backward}) + p.optimizer, 1e-15);
}

// powerSGD_hook's `decompress` calls torch.cuda.synchronize on the autograd
// thread (docs/model.md, "The PowerSGD hook blocks the backward"): with
// overlap, the backward's next tensor starts when the bucket's last step
// ends, so no communication overlaps the backward. The closed form is
// written here from the plan's parts: t = F; per bucket (one tensor each)
// t += d_b + h_b (the bucket is ready), then t += its comm-stream and
// side-stream steps; T = t + O.
TEST(PytorchHooks, PowerSgdHookBlocksTheBackwardUntilItsChainEnds) {
  const WorkloadSpec w = bucket_per_tensor("powersgd");
  const auto m =
      model_of({tensor("w3", {512, 512}, 8e9), tensor("w2", {512, 256}, 2e9), tensor("w1", {256, 128, 3, 3}, 4e9)});
  const CollectiveTimeFn coll = [](const CommStep& s) { return 1e-4 + s.bytes / 1e9; };
  auto p = plan_iteration(w, test::cluster(1, 8), m, test::costs());
  ASSERT_EQ(p.buckets.size(), 3u);
  double t = p.forward, backward = 0, chains = 0;
  for (std::size_t b = 0; b < p.buckets.size(); ++b) {
    const auto& bc = p.comm[b];
    ASSERT_TRUE(bc.blocks_host);
    double h = 0, chain = 0;
    for (std::size_t i = 0; i < bc.steps.size(); ++i) {
      const auto& s = bc.steps[i];
      (i < bc.on_compute_stream ? h : chain) += s.kind == CommStep::Kind::Collective ? coll(s) : s.seconds;
    }
    backward += p.tensor_backward[b] + h;
    chains += chain;
    t += p.tensor_backward[b] + h + chain;
  }
  const auto r = evaluate_closed_form(p, coll);
  EXPECT_NEAR(r.total, t + p.optimizer, 1e-12);
  EXPECT_NEAR(r.backward, backward, 1e-12);  // the waits are communication, not backward
  EXPECT_NEAR(r.exposed_communication, chains, 1e-12);
  EXPECT_NEAR(r.forward + r.backward + r.exposed_communication + r.optimizer, r.total, 1e-12);
  for (std::size_t b = 0; b + 1 < r.buckets.size(); ++b) {
    EXPECT_NEAR(r.buckets[b + 1].ready - p.tensor_backward[b + 1] - p.comm[b + 1].steps[0].seconds, r.buckets[b].end,
                1e-12);
    EXPECT_NEAR(r.tensor_end[b], r.buckets[b].end, 1e-12);
  }
  // Without the synchronize the chains would overlap the backward: faster.
  for (auto& bc : p.comm) bc.blocks_host = false;
  const auto overlapped = evaluate_closed_form(p, coll);
  EXPECT_LT(overlapped.total, r.total);
  EXPECT_LT(overlapped.exposed_communication, chains);
}

// codec_under_compute (docs/model.md, section 7): a codec step that starts
// while the backward runs takes (1 + g) times its time, one that starts after
// its end its own time; g = 0 changes nothing.
TEST(PytorchHooks, CodecsBesideTheBackwardAreSlowedByCodecUnderCompute) {
  WorkloadSpec w = bucket_per_tensor("int8");
  w.compression.implementation = "gradwire";  // the profile's codecs, all on the comm stream
  const auto m =
      model_of({tensor("w3", {512, 512}, 8e9), tensor("w2", {512, 256}, 2e9), tensor("w1", {256, 128, 3, 3}, 4e9)});
  const CollectiveTimeFn coll = [](const CommStep& s) { return 1e-5 + s.bytes / 1e11; };
  auto p = plan_iteration(w, test::cluster(1, 8), m, test::costs(1e3));
  const double base = evaluate_closed_form(p, coll).total;
  p.codec_interference = 0.5;
  const auto r = evaluate_closed_form(p, coll);
  int slowed = 0, plain = 0;
  for (std::size_t b = 0; b < r.buckets.size(); ++b)
    for (std::size_t i = 0; i < r.buckets[b].steps.size(); ++i) {
      const auto& st = r.buckets[b].steps[i];
      const auto& s = p.comm[b].steps[i];
      if (s.kind == CommStep::Kind::Collective) continue;
      const bool beside = st.start < r.backward_end;
      EXPECT_NEAR(st.end - st.start, s.seconds * (beside ? 1.5 : 1.0), 1e-15);
      (beside ? slowed : plain) += 1;
    }
  EXPECT_GT(slowed, 0);
  EXPECT_GT(plain, 0);
  EXPECT_GT(r.total, base);
  p.codec_interference = 0;
  EXPECT_EQ(evaluate_closed_form(p, coll).total, base);
}

// A conv weight 64 x 32 x 3 x 3 (m = 64, n = 288) and two biases of 64.
ModelDesc conv_layer() {
  return model_of({tensor("w", {64, 32, 3, 3}, 1e9), tensor("b1", {64}, 1e6), tensor("b2", {64}, 1e6)});
}

TEST(PytorchHooks, PowerSgdLaunchesAreTheHooksKernelCount) {
  // Memory and GEMMs free: every step is its kernel count x L.
  const HookCosts launches_only{1e30, 1e30, kL};
  const auto c = plan("powersgd", conv_layer(), 8, launches_only);
  ASSERT_EQ(c.steps.size(), 7u);
  const auto coll = of_kind(c, CommStep::Kind::Collective);
  ASSERT_EQ(coll.size(), 3u);
  EXPECT_EQ(coll[0]->label, "all-reduce uncompressed");
  EXPECT_DOUBLE_EQ(coll[0]->bytes, 128 * 4);
  EXPECT_DOUBLE_EQ(coll[1]->bytes, 64 * 4 * 4);   // P: m r
  EXPECT_DOUBLE_EQ(coll[2]->bytes, 288 * 4 * 4);  // Q: n r
  // Gram-Schmidt at rank r: 3 kernels per column, 4 per later block: 7r - 4.
  const double gs = 7 * 4 - 4;
  EXPECT_NEAR(c.steps[0].seconds, (2 + 1 + gs + 1) * kL, 1e-15);  // EF add + clone, cat, orthogonalize Q, P = MQ
  EXPECT_NEAR(c.steps[2].seconds, (1 + 2) * kL, 1e-15);           // divide, copy back two tensors
  EXPECT_NEAR(c.steps[4].seconds, (gs + 1) * kL, 1e-15);          // orthogonalize P, Q = M^T P
  EXPECT_NEAR(c.steps[6].seconds, (1 + 1 + 1) * kL, 1e-15);       // divide Q, P Q^T, residual
  const auto no_ef = plan("powersgd", conv_layer(), 8, launches_only, false, 1);
  EXPECT_NEAR(no_ef.steps[0].seconds, (1 + 3 + 1) * kL, 1e-15);  // rank 1: Gram-Schmidt is 3 kernels
  EXPECT_NEAR(no_ef.steps[6].seconds, (1 + 1) * kL, 1e-15);
}

TEST(PytorchHooks, PowerSgdBytesAndFlopsTerms) {
  const double e = 4, m = 64, n = 288, r = 4, N = 64 * 288 + 128;
  // Gram-Schmidt of an m x r matrix moves m (3r + 2(r-1) + 7 r(r-1)/2) elements.
  const auto gs = [&](double rows) { return rows * (3 * r + 2 * (r - 1) + 3.5 * r * (r - 1)) * e; };
  const HookCosts memory{1e12, 1e30, 0};
  const auto c = plan("powersgd", conv_layer(), 8, memory);
  EXPECT_NEAR(c.steps[0].seconds, (5 * e * N + 2 * e * 128 + gs(n) + e * (m * n + n * r + m * r)) / 1e12, 1e-18);
  EXPECT_NEAR(c.steps[4].seconds, (gs(m) + e * (n * m + m * r + n * r)) / 1e12, 1e-18);
  EXPECT_NEAR(c.steps[6].seconds, (2 * e * n * r + e * (m * r + r * n + m * n) + 3 * e * N) / 1e12, 1e-18);
  // Compute-bound products: 2 m n r FLOPs each.
  const HookCosts flops{1e30, 1e9, 0};
  const auto f = plan("powersgd", conv_layer(), 8, flops);
  EXPECT_NEAR(f.steps[4].seconds, 2 * m * n * r / 1e9, 1e-15);
}

TEST(PytorchHooks, GatheredDecodeGrowsWithTheWorkers) {
  const double n = 1 << 20, e = 4, k = std::ceil(0.01 * n);
  const auto m = model_of({tensor("w", {1 << 20}, 1e9)});
  const HookCosts hook{1e12, 1e13, kL};
  const auto dense_sum = [&](double N) { return N * kL + (3 * N - 1) * e * n / 1e12; };
  for (int gpus : {8, 64}) {
    SCOPED_TRACE(gpus);
    const double N = gpus;
    const auto topk = plan("topk", m, gpus, hook);
    const auto coll = of_kind(topk, CommStep::Kind::Collective);
    ASSERT_EQ(coll.size(), 2u);
    EXPECT_DOUBLE_EQ(coll[0]->contributed, k * e);  // values
    EXPECT_DOUBLE_EQ(coll[1]->contributed, 8 * k);  // int64 indices
    EXPECT_DOUBLE_EQ(coll[1]->bytes, 8 * k * N);
    const double scatter = 2 * kL + (e * n + k * (2 * e + 8)) / 1e12;
    EXPECT_NEAR(topk.decode, N * scatter + dense_sum(N) + kL + 2 * e * n / 1e12, 1e-12);
    // torch.topk: 18 passes over the input, abs, the gather; residual kept.
    EXPECT_NEAR(topk.encode,
                kL + 3 * e * n / 1e12 + kL + 2 * e * n / 1e12 + kL + (18 * e * n + k * (e + 8)) / 1e12 + kL +
                    k * (2 * e + 8) / 1e12 + scatter + kL + 3 * e * n / 1e12,
                1e-12);

    const auto sign = plan("sign", m, gpus, hook);
    const auto sc = of_kind(sign, CommStep::Kind::Collective);
    ASSERT_EQ(sc.size(), 2u);
    EXPECT_DOUBLE_EQ(sc[0]->contributed, n);  // one byte per sign
    EXPECT_DOUBLE_EQ(sc[1]->contributed, e);  // the mean
    EXPECT_NEAR(sign.decode, N * (4 * kL + (1 + 7 * e) * n / 1e12) + dense_sum(N) + kL + 2 * e * n / 1e12, 1e-12);

    const auto vote = plan("majority_vote", m, gpus, hook);
    EXPECT_DOUBLE_EQ(of_kind(vote, CommStep::Kind::Collective).at(0)->contributed, n);
    EXPECT_NEAR(vote.decode, N * (3 * kL + (1 + 5 * e) * n / 1e12) + dense_sum(N) + 3 * kL + (2 + 4 * e) * n / 1e12,
                1e-12);

    const auto q = plan("int8", m, gpus, hook);
    const auto qc = of_kind(q, CommStep::Kind::Collective);
    ASSERT_EQ(qc.size(), 2u);
    EXPECT_EQ(qc[0]->op, CommOp::AllGather);
    EXPECT_DOUBLE_EQ(qc[0]->contributed, n);
    EXPECT_DOUBLE_EQ(qc[1]->contributed, 4 * std::ceil(n / 1024));
    EXPECT_NEAR(q.decode, N * (2 * kL + (1 + 3 * e) * n / 1e12) + dense_sum(N) + kL + 2 * e * n / 1e12, 1e-12);
  }
}

TEST(PytorchHooks, GradwireKeepsTheMeasuredCodecsAndNoneAndRandomKAreUnchanged) {
  const auto m = model_of({tensor("w", {1000}, 1e9)});
  const auto buckets = assign_buckets(m, 4, 1e18, 1e18);
  CompressionSpec c;
  c.kind = "fp16";
  c.implementation = "gradwire";
  const auto codec = [](const std::string&, bool encode, double elements) { return (encode ? 1e-9 : 2e-9) * elements; };
  const auto g = plan_bucket_comm(c, m, buckets.at(0), 4, test::cluster(1, 8), "ring", codec, {1e12, 1e13, kL});
  EXPECT_DOUBLE_EQ(g.encode, 1e-6);
  EXPECT_DOUBLE_EQ(g.decode, 2e-6);
  c.implementation = "pytorch";
  for (const char* kind : {"none", "randomk"}) {
    c.kind = kind;
    c.implementation = "pytorch";
    const auto p = plan_bucket_comm(c, m, buckets.at(0), 4, test::cluster(1, 8), "ring", codec, {});
    c.implementation = "gradwire";
    const auto r = plan_bucket_comm(c, m, buckets.at(0), 4, test::cluster(1, 8), "ring", codec, {});
    ASSERT_EQ(p.steps.size(), r.steps.size()) << kind;
    EXPECT_DOUBLE_EQ(p.encode, r.encode) << kind;
  }
  // The project's PowerSGD kernels run on their own stream and never
  // synchronize the device: the host is not held.
  c.kind = "powersgd";
  c.rank = 4;
  c.implementation = "gradwire";
  const auto mm = model_of({tensor("w", {256, 128}, 1e9)});
  EXPECT_FALSE(
      plan_bucket_comm(c, mm, assign_buckets(mm, 4, 1e18, 1e18).at(0), 4, test::cluster(1, 8), "ring", codec, {})
          .blocks_host);
  c.kind = "fp16";
  c.implementation = "pytorch";  // a hook without a copy bandwidth to cost it
  EXPECT_THROW(plan_bucket_comm(c, m, buckets.at(0), 4, test::cluster(1, 8), "ring", codec, {}), std::invalid_argument);
  c.implementation = "apex";
  EXPECT_THROW(plan_bucket_comm(c, m, buckets.at(0), 4, test::cluster(1, 8), "ring", codec, {}), std::invalid_argument);
}

TEST(PytorchHooks, NoOverlapIterationIsComputePlusEveryHookStepOnItsStream) {
  WorkloadSpec w;
  w.compute_efficiency = 1.0;
  w.micro_batch = 4;
  w.overlap = false;
  w.ddp_overheads = false;
  w.optimizer.step_time = 1e-4;
  w.first_bucket_size = w.bucket_size = 1e5;  // several buckets
  const auto m = model_of({tensor("w1", {256, 128, 3, 3}, 4e9), tensor("b1", {256}, 1e6), tensor("w2", {512, 256}, 2e9),
                           tensor("b2", {512}, 1e6)});
  const CollectiveTimeFn coll = [](const CommStep& s) { return 1e-4 + s.bytes / 1e10; };
  for (const char* kind : {"fp16", "powersgd", "topk", "sign", "int8"}) {
    SCOPED_TRACE(kind);
    w.compression.kind = kind;
    const auto p = plan_iteration(w, test::cluster(1, 8), m, test::costs());
    ASSERT_GE(p.buckets.size(), 2u);
    const auto r = evaluate_closed_form(p, coll);
    EXPECT_NEAR(r.total, test::no_overlap_total(p, coll), 1e-12);
    EXPECT_GT(r.encode + r.decode, 0);
  }
}

}  // namespace
}  // namespace gw
