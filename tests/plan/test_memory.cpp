// The per-GPU memory model against hand-computed totals.
#include <gtest/gtest.h>

#include "gradwire/model/memory.hpp"
#include "gradwire/model/scenario.hpp"

namespace gw::plan {
namespace {

constexpr double kP = 1e9;

ModelDesc model() {
  ModelDesc m;
  m.name = "one-billion";
  m.parameters = static_cast<std::int64_t>(kP);
  m.activation_bytes_per_sample = 1e8;
  return m;
}

WorkloadSpec adam(int micro_batch) {
  WorkloadSpec w;
  w.model = "one-billion";
  w.micro_batch = micro_batch;
  w.optimizer.kind = "adam";
  return w;
}

TEST(Memory, AdamFp32IsSixteenBytesPerParameterPlusBucketsActivationsReserve) {
  MemoryOptions o;
  o.reserve = 2e9;
  auto m = memory_per_gpu(model(), adam(4), CompressorMemory{}, 80e9, o);
  EXPECT_DOUBLE_EQ(m.parameters + m.gradients + m.optimizer_states, 16 * kP);
  EXPECT_DOUBLE_EQ(m.buckets, 4 * kP);
  EXPECT_DOUBLE_EQ(m.activations, 4e8);
  EXPECT_DOUBLE_EQ(m.total, 20 * kP + 4e8 + 2e9);
  EXPECT_TRUE(m.fits());
  EXPECT_FALSE(memory_per_gpu(model(), adam(4), CompressorMemory{}, 20e9, o).fits());
}

TEST(Memory, ActivationsScaleFromTheFilesDtypeToTheScenariosPrecision) {
  MemoryOptions o;
  ModelDesc m = model();  // 1e8 bytes per sample, no activation_dtype: as is in every precision
  auto w = adam(3);
  for (Precision p : {Precision::FP32, Precision::BF16, Precision::FP16}) {
    w.precision = p;
    EXPECT_DOUBLE_EQ(memory_per_gpu(m, w, CompressorMemory{}, 1e12, o).activations, 3e8);
  }
  m.activation_dtype = "bf16";  // measured at 2 bytes: fp32 training keeps twice as much
  w.precision = Precision::FP32;
  EXPECT_DOUBLE_EQ(memory_per_gpu(m, w, CompressorMemory{}, 1e12, o).activations, 6e8);
  w.precision = Precision::FP16;
  EXPECT_DOUBLE_EQ(memory_per_gpu(m, w, CompressorMemory{}, 1e12, o).activations, 3e8);
  m.activation_dtype = "fp32";  // measured at 4 bytes: 16-bit training keeps half
  w.precision = Precision::BF16;
  EXPECT_DOUBLE_EQ(activation_bytes_per_sample(m, w), 5e7);
  EXPECT_DOUBLE_EQ(memory_per_gpu(m, w, CompressorMemory{}, 1e12, o).activations, 1.5e8);
}

TEST(Memory, ActivationsFollowTheComputePrecisionNotTheGradients) {
  MemoryOptions o;
  o.reserve = 0;
  ModelDesc m = model();
  m.activation_dtype = "fp32";  // 1e8 bytes per sample measured at 4 bytes an element
  auto w = adam(3);
  w.precision = Precision::FP32;  // AMP as usually run: fp32 gradients, 16-bit activations
  const auto fp32_run = memory_per_gpu(m, w, CompressorMemory{}, 1e12, o);
  EXPECT_DOUBLE_EQ(fp32_run.activations, 3e8);
  for (const char* cp : {"amp-bf16", "amp-fp16", "bf16", "fp16"}) {
    w.compute_precision = cp;
    EXPECT_DOUBLE_EQ(activation_bytes_per_sample(m, w), 5e7) << cp;
    const auto amp = memory_per_gpu(m, w, CompressorMemory{}, 1e12, o);
    EXPECT_DOUBLE_EQ(amp.activations, 1.5e8) << cp;             // 3 samples x 1e8 x 2/4
    EXPECT_DOUBLE_EQ(amp.gradients, fp32_run.gradients) << cp;  // gradients stay fp32: 4 P
    EXPECT_DOUBLE_EQ(amp.buckets, 4 * kP) << cp;
    EXPECT_DOUBLE_EQ(amp.total, fp32_run.total - 1.5e8) << cp;
  }
  for (const char* cp : {"fp32", "tf32"}) {  // TF32 math keeps fp32 storage
    w.compute_precision = cp;
    EXPECT_DOUBLE_EQ(activation_bytes_per_sample(m, w), 1e8) << cp;
  }
  w.precision = Precision::BF16;  // 16-bit gradients with fp32 compute: fp32 activations
  w.compute_precision = "fp32";
  EXPECT_DOUBLE_EQ(memory_per_gpu(m, w, CompressorMemory{}, 1e12, o).activations, 3e8);
}

TEST(Memory, OptimizerStatesAndGradientPrecision) {
  MemoryOptions o;
  o.reserve = 0;
  auto w = adam(1);
  w.optimizer.kind = "sgd";
  w.precision = Precision::BF16;
  auto m = memory_per_gpu(model(), w, CompressorMemory{}, 1e12, o);
  EXPECT_DOUBLE_EQ(m.optimizer_states, 0);
  EXPECT_DOUBLE_EQ(m.gradients, 2 * kP);
  EXPECT_DOUBLE_EQ(m.total, 4 * kP + 2 * kP + 2 * kP + 1e8);
  EXPECT_EQ(optimizer_state_count("momentum"), 1);
  EXPECT_EQ(optimizer_state_count("lars"), 1);
  EXPECT_EQ(optimizer_state_count("adamw"), 2);
  EXPECT_EQ(optimizer_state_count("lamb"), 2);
  EXPECT_THROW(optimizer_state_count("adagrad"), std::invalid_argument);
}

TEST(Memory, CompressorTermsAreAdded) {
  MemoryOptions o;
  o.reserve = 0;
  CompressorMemory c{4 * kP, 3e7, 5e8};
  auto m = memory_per_gpu(model(), adam(1), c, 1e12, o);
  EXPECT_DOUBLE_EQ(m.total, 24 * kP + 1e8 + 3e7 + 5e8);
}

TEST(Memory, CompressorMemoryFromTheIterationPlan) {
  ModelDesc m = model();
  m.parameters = 0;
  for (int i = 0; i < 4; ++i) {
    TensorDesc t;
    t.name = "w" + std::to_string(i);
    t.shape = {1024, 1024};
    t.numel = 1024 * 1024;
    t.dtype = "fp32";
    t.forward_flops_per_sample = 1e6;
    t.backward_flops_per_sample = 2e6;
    m.tensors.push_back(t);
    m.parameters += t.numel;
    m.forward_flops_per_sample += 1e6;
    m.backward_flops_per_sample += 2e6;
  }
  ClusterSpec c;
  c.nodes = 2;
  c.gpus_per_node = 4;
  c.intra_node = {1e11, 1e-6};
  c.nic = {1e10, 1e-6};
  DeviceCosts costs;
  costs.flops = 1e12;
  costs.copy_bandwidth = 1e12;
  costs.codec_time = [](const std::string&, bool, double) { return 0.0; };
  WorkloadSpec w = adam(1);
  w.compression.kind = "fp16";
  EXPECT_DOUBLE_EQ(compressor_memory(plan_iteration(w, c, m, costs)).error_feedback, 0);
  w.compression.kind = "topk";
  w.compression.ratio = 0.01;
  auto top = compressor_memory(plan_iteration(w, c, m, costs));
  EXPECT_DOUBLE_EQ(top.error_feedback, 4.0 * static_cast<double>(m.parameters));  // one fp32 residual
  EXPECT_GT(top.gather_buffer, 0);
  w.compression.kind = "powersgd";
  w.compression.rank = 4;
  auto psgd = compressor_memory(plan_iteration(w, c, m, costs));
  EXPECT_DOUBLE_EQ(psgd.state, 4 * (1024 + 1024) * 4 * 4.0);  // P and Q of 4 matrices, rank 4, fp32
}

TEST(Memory, SmallestAccumulationThatFits) {
  MemoryOptions o;
  o.reserve = 0;
  // 20P fixed + 1e8 per sample. Capacity 20P + 1e9: micro-batch 10 fits, 16 does not.
  const double cap = 20 * kP + 1e9;
  auto f = smallest_fitting_accumulation(model(), adam(1), CompressorMemory{}, cap, 16 * 8, 8, o);
  ASSERT_TRUE(f.found) << f.reason;
  EXPECT_EQ(f.accumulation, 2);  // 16 per GPU: k=1 (16) does not fit, k=2 (8) does
  EXPECT_EQ(f.micro_batch, 8);
  auto g = smallest_fitting_accumulation(model(), adam(1), CompressorMemory{}, cap, 6 * 8 * 8, 8, o);
  ASSERT_TRUE(g.found);
  EXPECT_EQ(g.micro_batch, 8);  // 48 per GPU: 48, 24, 16, 12 too large; k=6 gives 8
  EXPECT_EQ(g.accumulation, 6);
  auto none = smallest_fitting_accumulation(model(), adam(1), CompressorMemory{}, 10 * kP, 64, 8, o);
  EXPECT_FALSE(none.found);
  EXPECT_NE(none.reason.find("micro_batch 1"), std::string::npos);
  auto odd = smallest_fitting_accumulation(model(), adam(1), CompressorMemory{}, cap, 100, 8, o);
  EXPECT_FALSE(odd.found);
  EXPECT_NE(odd.reason.find("not a multiple"), std::string::npos);
}

TEST(Memory, FittingAccumulationKeepsBothFactorsWithinTheScenarioLimits) {
  MemoryOptions o;
  o.reserve = 0;
  const double plenty = 1e30;  // everything fits: only the limits decide
  // 2^30 samples on one GPU: micro-batch 2^30 would fit but is above the
  // 2^20 limit; the smallest allowed split is 2^20 x 2^10.
  auto f = smallest_fitting_accumulation(model(), adam(1), CompressorMemory{}, plenty, 1ll << 30, 1, o);
  ASSERT_TRUE(f.found) << f.reason;
  EXPECT_EQ(f.micro_batch, kMaxMicroBatch);
  EXPECT_EQ(f.accumulation, 1 << 10);
  // 2^31 - 1 is prime: 1 x (2^31 - 1) and (2^31 - 1) x 1 both break a limit.
  auto p = smallest_fitting_accumulation(model(), adam(1), CompressorMemory{}, plenty, (1ll << 31) - 1, 1, o);
  EXPECT_FALSE(p.found);
  EXPECT_NE(p.reason.find("no split"), std::string::npos) << p.reason;
}

// Fixed global batch (issue 16, item 1): micro_batch x k x world = G, the
// smallest k that fits when neither is given, and why.
Scenario fixed_batch_scenario(long long global_batch, int world) {
  Scenario s;
  s.cluster.nodes = world;
  s.cluster.gpus_per_node = 1;
  s.workload = adam(1);
  s.workload->micro_batch_given = false;
  s.training = TrainingSpec{};
  s.training->samples = 1e6;
  s.training->global_batch = global_batch;
  return s;
}

TEST(Memory, FixedGlobalBatchTakesTheSmallestAccumulationThatFitsAndSaysWhy) {
  MemoryOptions o;
  o.reserve = 0;
  // 20 GB fixed + 0.1 GB a sample: 32 per GPU needs 23.2 GB, 16 needs 21.6 GB.
  const Scenario s = fixed_batch_scenario(128, 4);
  const BatchSplit b = resolve_global_batch(s, model(), CompressorMemory{}, 22e9, o);
  ASSERT_TRUE(b.fixed);
  ASSERT_TRUE(b.found) << b.reason;
  EXPECT_EQ(b.micro_batch, 16);
  EXPECT_EQ(b.accumulation, 2);
  EXPECT_EQ(static_cast<long long>(b.micro_batch) * b.accumulation * 4, 128);
  EXPECT_EQ(b.how.rfind("k = 2, the smallest that fits in memory (micro-batch 16 needs ", 0), 0u) << b.how;
  EXPECT_NE(b.how.find("available): k = 1 (micro-batch 32) needs "), std::string::npos) << b.how;
  // Nothing fits: even micro-batch 1 needs 20.1 GB.
  const BatchSplit none = resolve_global_batch(s, model(), CompressorMemory{}, 19e9, o);
  EXPECT_FALSE(none.found);
  EXPECT_TRUE(none.no_fit);
}

TEST(Memory, FixedGlobalBatchWithAGivenAccumulationOrMicroBatch) {
  Scenario s = fixed_batch_scenario(96, 4);
  s.workload->accumulation = 3;
  s.workload->accumulation_given = true;
  BatchSplit b = resolve_global_batch(s, model(), CompressorMemory{}, 80e9);
  ASSERT_TRUE(b.found) << b.reason;
  EXPECT_EQ(b.micro_batch, 8);
  EXPECT_EQ(b.how, "k = 3 as asked");
  s.workload->accumulation = 5;  // 96 / (4 x 5) is not whole
  b = resolve_global_batch(s, model(), CompressorMemory{}, 80e9);
  EXPECT_FALSE(b.found);
  EXPECT_FALSE(b.no_fit);
  EXPECT_EQ(b.reason, "training.global_batch 96 is not a multiple of 4 GPUs x accumulation 5");
  s.workload->accumulation = 3;
  s.workload->micro_batch = 4;  // 4 x 3 x 4 = 48, not 96
  s.workload->micro_batch_given = true;
  EXPECT_NE(resolve_global_batch(s, model(), CompressorMemory{}, 80e9).reason.find("is not training.global_batch 96"),
            std::string::npos);
  s.workload->accumulation_given = false;  // micro-batch given: k follows
  b = resolve_global_batch(s, model(), CompressorMemory{}, 80e9);
  ASSERT_TRUE(b.found);
  EXPECT_EQ(b.accumulation, 6);
  s.training->global_batch.reset();
  EXPECT_FALSE(resolve_global_batch(s, model(), CompressorMemory{}, 80e9).fixed);
}

}  // namespace
}  // namespace gw::plan
