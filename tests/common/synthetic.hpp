// Small synthetic models, clusters and device costs for the replay tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "gradwire/model/buckets.hpp"
#include "gradwire/model/iteration_model.hpp"
#include "gradwire/model/model_desc.hpp"
#include "gradwire/core/yaml_reader.hpp"
#include "gradwire/model/scenario.hpp"
#include "gradwire/model/sharding.hpp"

namespace gw::test {

/// `workload.sharding` from its YAML text ("zero3", "{scheme: zeropp, hpz: false}").
inline ShardingSpec sharding_of(const std::string& text) {
  auto doc = yaml::load_string("sharding: " + text + "\n", "s.yaml");
  return parse_sharding(doc.root().required("sharding"));
}

inline TensorDesc tensor(const std::string& name, std::vector<std::int64_t> shape, double backward_flops) {
  TensorDesc t;
  t.name = name;
  t.shape = std::move(shape);
  t.numel = 1;
  for (auto d : t.shape) t.numel *= d;
  t.dtype = "fp32";
  t.forward_flops_per_sample = backward_flops / 2;
  t.backward_flops_per_sample = backward_flops;
  return t;
}

inline ModelDesc model_of(std::vector<TensorDesc> tensors) {
  ModelDesc m;
  m.name = "synthetic";
  for (auto& t : tensors) {
    m.parameters += t.numel;
    m.forward_flops_per_sample += t.forward_flops_per_sample;
    m.backward_flops_per_sample += t.backward_flops_per_sample;
  }
  m.tensors = std::move(tensors);
  return m;
}

/// One node of `gpus` GPUs on a switch, or `nodes` x `gpus`.
inline ClusterSpec cluster(int nodes, int gpus_per_node) {
  ClusterSpec c;
  c.nodes = nodes;
  c.gpus_per_node = gpus_per_node;
  c.gpu = "synthetic";
  c.intra_node = {100e9, 1e-6};
  c.nic_count = 1;
  c.nic = {25e9, 2e-6};
  c.fabric.latency = 1e-6;
  return c;
}

/// 1 TFLOP/s, 1 TB/s copies; every codec costs `codec_ns` ns per element
/// (encode) and half of that (decode).
inline DeviceCosts costs(double codec_ns = 1.0) {
  DeviceCosts c;
  c.compute_precision = "fp32";
  c.flops = 1e12;
  c.copy_bandwidth = 1e12;
  c.codec_time = [codec_ns](const std::string&, bool encode, double elements) {
    return elements * codec_ns * 1e-9 * (encode ? 1.0 : 0.5);
  };
  return c;
}

/// Time (from the start of the backward pass) at which each bucket is ready:
/// the end of the backward of its last tensor, given the per-tensor backward
/// times (the reference the replay's bucket pipeline is checked against).
inline std::vector<double> bucket_ready_times(const std::vector<Bucket>& buckets,
                                              const std::vector<double>& tensor_backward) {
  std::vector<double> end(tensor_backward.size());
  double t = 0;
  for (std::size_t j = 0; j < tensor_backward.size(); ++j) {
    t += tensor_backward[j];
    end[j] = t;
  }
  std::vector<double> ready;
  for (const auto& b : buckets) ready.push_back(end.at(b.last_tensor));
  return ready;
}

/// The no-overlap iteration with each bucket's steps where BucketComm places
/// them (docs/model.md, "Where the hooks' kernels run"): forward, backward
/// and the hooks' compute-stream steps; then the buckets' comm-stream steps
/// one after another, each bucket's side-stream steps from the end of its
/// own (a hook that blocks the host, BucketComm::blocks_host: the next
/// bucket after them); the optimizer after the last of them to end.
inline double no_overlap_total(const IterationPlan& p, const CollectiveTimeFn& coll) {
  double compute = p.forward + p.backward(), comm = 0, end = 0;
  for (const auto& bc : p.comm) {
    const std::size_t side_from = bc.steps.size() - bc.on_side_stream;
    double side = 0;
    for (std::size_t i = 0; i < bc.steps.size(); ++i) {
      const auto& s = bc.steps[i];
      const double d = s.kind == CommStep::Kind::Collective ? coll(s) : s.seconds;
      if (i < bc.on_compute_stream) {
        compute += d;
      } else if (i < side_from) {
        comm += d;
      } else {
        side += d;
      }
    }
    end = std::max(end, comm + side);
    if (bc.blocks_host) comm += side;
  }
  return compute + end + p.optimizer;
}

}  // namespace gw::test
