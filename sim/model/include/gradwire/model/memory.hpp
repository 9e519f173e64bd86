// Device memory of one data-parallel GPU (docs/planning.md, "Memory model"):
//
//   parameters        P x master bytes (fp32: 4)
//   gradients         P x gradient bytes (workload.precision: 4 or 2)
//   optimizer states  P x states x 4 (fp32): sgd 0, momentum 1, lars 1,
//                     adam 2, adamw 2, lamb 2
//   error feedback    per compressor (iteration model): one residual of the
//                     gradient per GPU for the lossy compressors with
//                     error_feedback (none, fp16 and bf16 keep none)
//   DDP buckets       the flattened bucket copy of all gradients: P x gradient bytes
//   compressor state  PowerSGD P and Q matrices (iteration model)
//   gather buffer     all-gather compressors: the largest gathered message
//   activations       activation_bytes_per_sample x micro_batch, scaled by
//                     bytes(compute precision) / bytes(activation_dtype) when
//                     the model file names its activation_dtype (as is otherwise)
//   reserve           CUDA context, cuBLAS/NCCL workspaces, allocator slack
//                     (default 2 GiB; MemoryOptions::reserve)
// Plain C++ (in sim/model so that the sweep, `simulate` and its reports share it).
#pragma once

#include <string>

#include "gradwire/model/iteration_model.hpp"
#include "gradwire/model/model_desc.hpp"
#include "gradwire/model/profile.hpp"
#include "gradwire/model/scenario.hpp"

namespace gw {

/// Activation bytes of one sample in workload `w`: the file's figure, times the
/// bytes of an activation element at w's compute precision
/// (activation_element_bytes: 4 for fp32/tf32, 2 for fp16, bf16, amp-fp16,
/// amp-bf16) / bytes of its activation_dtype when the file names one; without
/// workload.compute_precision the gradient precision's bytes stand for it (the
/// default rate follows it too). The figure as is without an activation_dtype.
double activation_bytes_per_sample(const ModelDesc& model, const WorkloadSpec& w);

struct MemoryOptions {
  double reserve = 2.0 * 1024 * 1024 * 1024;  ///< bytes per GPU
  double master_bytes = 4;                    ///< bytes per parameter (fp32 master weights)
  double state_bytes = 4;                     ///< bytes per optimizer state element (fp32)
};

/// Compressor memory per GPU, independent of the micro-batch.
struct CompressorMemory {
  double error_feedback = 0;
  double state = 0;          ///< PowerSGD P and Q
  double gather_buffer = 0;  ///< largest all-gather result
};
/// Reads the compressor terms of an iteration plan.
CompressorMemory compressor_memory(const IterationPlan& plan);
/// The compressor terms of a workload on a cluster (its iteration plan).
CompressorMemory compressor_memory(const WorkloadSpec& workload, const ClusterSpec& cluster, const ModelDesc& model,
                                   const Profile& profile);
/// The same for a scenario's workload; a compute precision the profile has no
/// rate for throws gw::InputError at workload.compute_precision.
CompressorMemory compressor_memory(const Scenario& scenario, const ModelDesc& model, const Profile& profile);
/// Memory of one GPU of the cluster: the instance type's GPU memory (the
/// catalog), else the profile's.
double gpu_capacity(const ClusterSpec& cluster, const Profile& profile);

struct MemoryBreakdown {
  double parameters = 0, gradients = 0, optimizer_states = 0, error_feedback = 0, buckets = 0, compressor_state = 0,
         gather_buffer = 0, activations = 0, reserve = 0;
  double total = 0;
  double capacity = 0;
  bool fits() const { return total <= capacity; }
};

/// Optimizer states per parameter; throws std::invalid_argument for an unknown kind.
int optimizer_state_count(const std::string& kind);

MemoryBreakdown memory_per_gpu(const ModelDesc& model, const WorkloadSpec& workload, const CompressorMemory& compressor,
                               double capacity, const MemoryOptions& options = {});

/// The per-GPU memory of a scenario's workload (micro_batch as given) against
/// gpu_capacity: what the sweep computes for a point, for `simulate`.
MemoryBreakdown scenario_memory(const Scenario& scenario, const ModelDesc& model, const Profile& profile,
                                const MemoryOptions& options = {});

struct FitChoice {
  bool found = false;
  int micro_batch = 0;
  int accumulation = 0;
  MemoryBreakdown memory;  ///< of the chosen split; of accumulation = per-GPU batch when none fits
  std::string reason;      ///< why none fits
  /// The split tried just before the chosen one, which did not fit (0: the
  /// chosen k is the smallest split there is): why k is not smaller.
  int refused_micro_batch = 0, refused_accumulation = 0;
  MemoryBreakdown refused;
};

/// For a global batch over `world` GPUs: the smallest accumulation k (largest
/// micro-batch) with micro_batch x k x world == global_batch that fits, the
/// memory of each split that of workload.sharding (workload_memory,
/// sharding.hpp) with `gpus_per_node` GPUs per node (0: all on one node).
FitChoice smallest_fitting_accumulation(const ModelDesc& model, WorkloadSpec workload,
                                        const CompressorMemory& compressor, double capacity, long long global_batch,
                                        int world, const MemoryOptions& options = {}, int gpus_per_node = 0);

/// A scenario's batch split under a fixed training.global_batch G on N GPUs
/// (docs/planning.md, "Fixed global batch"): micro_batch x k x N = G.
///   accumulation given : micro_batch = G / (N k) (must divide; a micro_batch
///                        given beside it must agree)
///   micro_batch given  : k = G / (N micro_batch) (must divide)
///   neither            : the smallest k that fits in memory
///                        (smallest_fitting_accumulation)
struct BatchSplit {
  bool fixed = false;  ///< training.global_batch is set (else nothing below is)
  bool found = false;
  bool no_fit = false;  ///< not found because no split fits in memory
  int micro_batch = 0, accumulation = 0;
  long long global_batch = 0;
  std::string how;         ///< why this k: "k = 4 as asked", "k = 2, the smallest that fits: k = 1 (...) needs ..."
  std::string reason;      ///< why none (does not divide, disagrees, does not fit)
  MemoryBreakdown memory;  ///< of the chosen split (or the last one tried)
};
BatchSplit resolve_global_batch(const Scenario& scenario, const ModelDesc& model, const CompressorMemory& compressor,
                                double capacity, const MemoryOptions& options = {});

}  // namespace gw
