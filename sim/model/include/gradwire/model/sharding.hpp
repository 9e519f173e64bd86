// Sharded data parallelism (docs/model.md, "Sharded data parallelism"): the
// schemes, how each framework accumulates gradients, the collectives of one
// optimizer step in closed form, and the memory of one GPU.
//
//   scheme   params at rest   grads        optimizer states   framework
//   ddp      replicated       replicated   replicated         PyTorch DDP (today's model)
//   zero1    replicated       replicated   sharded /W         DeepSpeed stage 1
//   zero2    replicated (DS)  sharded /W   sharded /W         DeepSpeed stage 2, FSDP SHARD_GRAD_OP,
//            sharded (FSDP)                                   FSDP2 reshard_after_forward=False
//   zero3    sharded /W       sharded /W   sharded /W         DeepSpeed stage 3, FSDP FULL_SHARD, FSDP2
//   hsdp     sharded /G       sharded /G   sharded /G         FSDP HYBRID_SHARD, FSDP2 2-D mesh
//   zeropp   zero3 + qwZ (int8 forward weight all-gather), hpZ (secondary
//            shard in the node: backward all-gather inside the node), qgZ
//            (int4 gradients, hierarchical all-to-all)          DeepSpeed ZeRO++
//
// One micro-step of a unit (a wrapped module: a transformer block) under the
// parameter life cycle the framework gives it:
//   forward  : all-gather the unit when its parameters are sharded (prefetching
//              the next); after it reshard fully, to R ranks (FSDP2 int,
//              hpZ: R = GPUs per node) or keep them.
//   backward : all-gather again over the shard group (sharded) or R ranks
//              (partly resharded); none when kept; then reduce the gradients
//              when this micro-step synchronizes, and reshard after backward
//              (always after the last micro-step).
//   step     : DeepSpeed ZeRO-1/2 all-gather the updated 16-bit parameters.
// Micro-steps 2..k start from the same state, so the counts per optimizer
// step are closed forms in k (sharding_plan). Plain C++, no SimGrid.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gradwire/core/yaml_reader.hpp"
#include "gradwire/model/collectives.hpp"
#include "gradwire/model/memory.hpp"
#include "gradwire/model/model_desc.hpp"
#include "gradwire/model/scenario.hpp"
#include "gradwire/model/sharding_spec.hpp"

namespace gw {

/// A scheme under its default framework (the first name of the scheme:
/// DeepSpeed for zero*, FSDP2 for hsdp) with that framework's defaults.
ShardingSpec sharding_defaults(ShardingScheme scheme);

/// Parses a `workload.sharding` mapping:
///   scheme: ddp | zero1 | zero2 | zero3 | hsdp | zeropp   (aliases:
///           full_shard, shard_grad_op, hybrid_shard, zero++)
///   framework: pytorch-ddp | fsdp1 | fsdp2 | deepspeed   (default: by scheme)
///   gradient_sync: every | last, group, reshard_after_forward (bool or int),
///   reshard_after_backward, prefetch, qwz, hpz, qgz, reduce_dtype, param_dtype
/// A bare scalar is the scheme. Combinations a framework does not have (ZeRO-2
/// on DeepSpeed with gradient_sync last, reshard_after_backward on FSDP1, ...)
/// and unknown names throw gw::InputError at the key, with "did you mean".
ShardingSpec parse_sharding(const yaml::Node& node);
/// Parses `workload.activation_checkpointing`: none | selective | full.
ActivationCheckpointing parse_activation_checkpointing(const yaml::Node& node);

/// The GPUs a plan runs on.
struct ShardTopology {
  int world = 1;  ///< data-parallel GPUs
  int gpus_per_node = 1;
  int nodes() const { return world / gpus_per_node; }
};

/// Ranks the parameters, gradients and optimizer states are sharded over:
/// 1 (ddp), world (zero*), the HSDP group. Throws std::invalid_argument when
/// the group does not divide the world or an int reshard does not divide it.
int shard_degree(const ShardingSpec& s, const ShardTopology& t);

/// The spec with what the topology decides filled in: hpZ's secondary shard
/// as reshard_after_forward = GPUs per node (none on one node).
ShardingSpec effective_spec(const ShardingSpec& s, const ShardTopology& t);

enum class ShardPhase { Forward, Backward, Step };
/// Who takes part: all GPUs, the shard group, the GPUs of one node, the
/// replicas of one shard (one per shard group), or one GPU per node.
enum class ShardGroupKind { World, Shard, Node, Replicas, CrossNode, Reshard };

struct ShardCollective {
  std::string what;  ///< "forward all-gather", "gradient reduce-scatter", ...
  CollectiveOp op = CollectiveOp::AllGather;
  ShardPhase phase = ShardPhase::Forward;
  ShardGroupKind group = ShardGroupKind::World;
  int ranks = 1;                   ///< GPUs in one group
  int gpus_per_node_in_group = 1;  ///< how many of them share a node
  double bytes = 0;                ///< one pass over the model, nccl-tests size (SizeConvention)
  long long count = 0;             ///< passes per optimizer step
  /// Bytes one GPU sends per optimizer step: count x busbw factor x bytes.
  double wire_bytes_per_gpu() const;
  /// Bytes leaving one node per optimizer step (rings over nodes carry
  /// factor x bytes across each node boundary; a group of one GPU per node
  /// sends gpus_per_node x its wire bytes; inside a node: 0).
  double cross_node_bytes_per_node(int gpus_per_node) const;
};

/// What one micro-step runs: all-gathers in forward, over the shard group in
/// backward or over the resharded group (R ranks), and the gradient reduction.
struct MicroStepPasses {
  bool forward_gather = false, backward_gather = false, backward_regather = false, reduce = false;
};
/// A micro-step and how many of the optimizer step's run as it does.
struct MicroStepKind {
  MicroStepPasses passes;
  long long times = 0;
};
/// The distinct micro-steps of an optimizer step of k: the first, the k - 2
/// middle ones (k > 2) and the last (k > 1), in that order; micro-steps
/// after the first start from the state the first leaves. Throws
/// std::invalid_argument for k < 1.
std::vector<MicroStepKind> micro_steps(const ShardingSpec& s, int k);

/// The collectives of one optimizer step with k micro-steps.
struct ShardingPlan {
  ShardingSpec spec;
  int accumulation = 1;
  int degree = 1;
  std::vector<ShardCollective> collectives;
  double wire_bytes_per_gpu() const;
  double cross_node_bytes_per_node(int gpus_per_node) const;
  /// Passes of `op` in `phase` per optimizer step (all groups).
  long long count(CollectiveOp op, ShardPhase phase) const;
};

struct UnitElements;  // sharded_wire.hpp
/// Builds the plan for a model of `parameters` elements with `element_bytes`
/// the gradient precision's bytes (the default wire dtype); the compressed
/// formats (qwZ, qgZ, float8) apply to `elements`' classes (null: every
/// parameter in each, uniform_elements). Throws std::invalid_argument for
/// k < 1 and what shard_degree throws.
ShardingPlan sharding_plan(const ShardingSpec& s, const ShardTopology& t, std::int64_t parameters, double element_bytes,
                           int accumulation, const UnitElements* elements = nullptr);

/// A wrapped unit (FSDP wrap, ZeRO-3 module): the tensors of one transformer
/// block (names up to their first numeric component, "model.layers.7"), or
/// of one other module ("lm_head", "model.embed_tokens"), in the model's
/// gradient-ready order.
struct ShardUnit {
  std::string name;
  std::int64_t parameters = 0;
  std::vector<int> tensors;  ///< indices into ModelDesc::tensors
  bool repeated = false;     ///< a numbered block
};
std::vector<ShardUnit> shard_units(const ModelDesc& model);

/// Sequence-model block shape read from the units: the numbered blocks and
/// the hidden size (the smallest one-dimensional tensor of a block, its
/// norm's scale); zeros when the model has no numbered blocks.
struct BlockShape {
  int layers = 0;
  std::int64_t hidden = 0;
};
BlockShape block_shape(const ModelDesc& model);

/// Activation bytes of one sample under checkpointing (Korthikanti et al.
/// 2022): none: the model's figure A; full: the blocks' inputs L s h e plus
/// one block's share A / L recomputed at a time; selective: A x 34 / (34 + 5
/// a s / h) with a = attention_heads. Throws std::invalid_argument for full
/// or selective on a model without blocks, or selective without heads.
double checkpointed_activation_bytes(const ModelDesc& model, const WorkloadSpec& w, ActivationCheckpointing ac,
                                     int attention_heads = 0);
/// Forward FLOPs recomputed per sample in the backward: full: the forward;
/// selective: the attention score and value products, 4 s^2 h per block.
double recompute_flops_per_sample(const ModelDesc& model, ActivationCheckpointing ac);

/// Memory of one GPU under a scheme (the ZeRO paper's 2 + 2 + K bytes per
/// parameter, split by stage; docs/model.md). DDP is memory_per_gpu as is.
struct ShardedMemory {
  double parameters = 0;  ///< working copy (16-bit), or the fp32 parameters in fp32 training
  double master = 0;      ///< fp32 master weights (16-bit training only)
  double gradients = 0;
  double optimizer_states = 0;
  double unit_buffers = 0;           ///< unsharded units in flight, kept or partly resharded
  double accumulated_gradients = 0;  ///< full unsharded gradients kept between micro-steps
  double wire_buffers = 0;           ///< compressed receive buffers of qwZ and qgZ (sharded_wire.hpp)
  double activations = 0;
  double other = 0;  ///< DDP buckets, error feedback, compressor state, gather buffer
  double reserve = 0;
  double total = 0, capacity = 0;
  bool fits() const { return total <= capacity; }
  /// parameters + master + gradients + optimizer states: the ZeRO paper's "model states".
  double model_states() const { return parameters + master + gradients + optimizer_states; }
};

ShardedMemory sharded_memory(const ModelDesc& model, const WorkloadSpec& w, const ShardingSpec& s,
                             const ShardTopology& t, const CompressorMemory& compressor, double capacity,
                             ActivationCheckpointing ac = ActivationCheckpointing::None, int attention_heads = 0,
                             const MemoryOptions& options = {});

/// The memory verdict's figures for a workload on `t` (resolve_global_batch,
/// evaluate_scenario): memory_per_gpu under DDP without activation
/// checkpointing; else sharded_memory at w's sharding and checkpointing in
/// MemoryBreakdown's terms: parameters = working copy + fp32 master,
/// gradients = sharded + accumulated, gather_buffer = the unsharded unit
/// buffers + the compressor's; no DDP bucket copy under a sharded scheme.
/// Throws std::invalid_argument as shard_degree, or for checkpointing on a
/// model without blocks.
MemoryBreakdown workload_memory(const ModelDesc& model, const WorkloadSpec& w, const ShardTopology& t,
                                const CompressorMemory& compressor, double capacity, const MemoryOptions& options = {});

/// One candidate of schemes_that_fit: a scheme with its defaults, a
/// checkpointing choice and the memory it needs.
struct SchemeFit {
  ShardingSpec spec;
  ActivationCheckpointing checkpointing = ActivationCheckpointing::None;
  ShardedMemory memory;
};
/// The standard schemes (ddp, zero1, zero2, zero3; hsdp and zeropp on more
/// than one node), each without and with full activation checkpointing (the
/// latter for sequence models with blocks), in that order, with their memory
/// at w's micro-batch and accumulation: what `simulate` can list when the
/// chosen scheme does not fit.
std::vector<SchemeFit> scheme_candidates(const ModelDesc& model, const WorkloadSpec& w, const ShardTopology& t,
                                         const CompressorMemory& compressor, double capacity,
                                         const MemoryOptions& options = {});

}  // namespace gw
