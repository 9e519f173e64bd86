// Inputs the sharded schedule's tests share (test_sharded.cpp,
// test_sharded_groups.cpp): a sharding spec from its YAML, two blocks of
// 1,000 elements, a hand-made DDP plan, a workload and a GPT-2 scenario.
#pragma once

#include <string>

#include "gradwire/core/yaml_reader.hpp"
#include "gradwire/model/iteration_model.hpp"
#include "gradwire/model/scenario.hpp"
#include "gradwire/model/sharding.hpp"
#include "synthetic.hpp"

namespace gw::test {

inline ShardingSpec spec_of(const std::string& text) { return sharding_of(text); }

/// Two blocks of 1,000 elements each, in gradient-ready order.
inline ModelDesc two_blocks() {
  return model_of({tensor("layers.1.w", {1000}, 2e9), tensor("layers.0.w", {1000}, 2e9)});
}

/// The DDP plan's compute: forward 2 s (1 s a unit), backward 2 s a unit,
/// the optimizer of the whole model 8 s.
inline IterationPlan hand_base(int k, int world = 8) {
  IterationPlan b;
  b.model = "synthetic";
  b.world_size = world;
  b.accumulation = k;
  b.forward = 2;
  b.tensor_names = {"layers.1.w", "layers.0.w"};
  b.tensor_backward = {2, 2};
  b.optimizer = 8;
  return b;
}

inline WorkloadSpec workload_with(const std::string& sharding, int k) {
  WorkloadSpec w;
  w.model = "synthetic";
  w.accumulation = k;
  w.precision = Precision::BF16;
  w.sharding = spec_of(sharding);
  return w;
}

/// A scenario on `cluster` with GPT-2 (12 blocks) under `sharding`.
inline Scenario gpt2_scenario(const ClusterSpec& cluster, const std::string& sharding, int k) {
  Scenario s;
  s.name = "sharded-test";
  s.file = "in-code";
  s.cluster = cluster;
  s.cluster.gpu = "h100";
  WorkloadSpec w = workload_with(sharding, k);
  w.model = "gpt2";
  w.micro_batch = 2;
  w.compute_precision = "bf16";
  w.optimizer.kind = "adamw";
  w.ddp_overheads = false;
  s.workload = w;
  return s;
}

}  // namespace gw::test
