// The wire format of sharded traffic (docs/model.md, section 7c,
// "Compressed sharded traffic"): for one unit's all-gather and gradient
// reduction, the bytes each collective moves, the quantisation kernels
// around it and the buffers they add. Which group each collective runs on is
// the schedule's (sharded_iteration.hpp); this is the per-collective format
// it calls.
//
//   format          all-gather                          gradient reduction
//   plain           Ψ_u x param_dtype                   reduce-scatter Ψ_u x reduce_dtype
//   qwZ (ZeRO++)    Ψ_u int8 + fp32 scales, 1 per       -
//                   8,000 elements (own all-gather);
//                   quantise the shard on the sender,
//                   dequantise the unit on every receiver
//   qgZ (ZeRO++)    -                                   hierarchical all-to-all of the matrices
//                                                       in int4 + fp32 scales; the rest a
//                                                       reduce-scatter; its kernels on the
//                                                       reduction stream
//   float8 (FSDP2,  the blocks' linear weights in fp8,  -
//   torchao)        the rest param_dtype; cast the
//                   shard on the sender
//
// Sources: DeepSpeed deepspeed/runtime/zero/partition_parameters.py
// (CUDAQuantizer, _all_gather_coalesced, AllGatherCoalescedHandle.wait),
// deepspeed/runtime/comm/coalesced_collectives.py (all_to_all_quant_reduce);
// torchao float8/fsdp_utils.py (WeightWithDynamicFloat8CastTensor). Plain
// C++, no SimGrid.
#pragma once

#include <string>

#include "gradwire/model/compression.hpp"
#include "gradwire/model/model_desc.hpp"
#include "gradwire/model/sharding.hpp"

namespace gw {

/// DeepSpeed's CUDAQuantizer.target_group_size: qwZ's int8 groups aim at
/// 8,000 elements (one fp32 scale each).
inline constexpr double kQwzGroupElements = 8000;

/// A unit's parameter elements by what the compressed formats apply to.
struct UnitElements {
  double all = 0;
  /// In tensors of two or more dimensions whose size 2 W divides: qgZ's
  /// all-to-all (all_to_all_quant_reduce sends the rest, and one-dimensional
  /// tensors, through a reduce-scatter).
  double matrices = 0;
  /// qgZ's intra-node quantisation groups, max(rows, columns, W) per such tensor.
  double qgz_groups = 0;
  /// In the two-dimensional weights of numbered blocks: torchao's
  /// Float8Linear modules (convert_to_float8_training; the embedding and the
  /// output head stay in param_dtype).
  double float8 = 0;
  UnitElements& operator+=(const UnitElements& o);
};
UnitElements unit_elements(const ModelDesc& model, const ShardUnit& unit, int world);
/// The whole model's (the units' sum).
UnitElements model_elements(const ModelDesc& model, int world);
/// Every element of `parameters` counted in every class: what sharding_plan
/// assumes without a model (the ZeRO++ paper's table).
UnitElements uniform_elements(double parameters);

/// What the kernels cost on one GPU: the profile's codec times (int8 for
/// the block quantizers of qwZ and qgZ, the bf16 cast for float8; measured
/// on fp32 input, so charged at the element count that moves the same
/// bytes) and, for plain elementwise work (qgZ's sum of the nodes' chunks,
/// the cast after qwZ's dequantization, the fp8 amax), the bytes read and
/// written over the device's copy bandwidth.
struct WireKernels {
  CodecTimeFn codec_time;     ///< null: no codec costs (0 s)
  double copy_bandwidth = 0;  ///< bytes read + written per second; 0: no cost
  double codec(const std::string& name, bool encode, double elements) const;
  double bandwidth_bound(double bytes) const;
};

/// The element formats of a workload's sharded traffic.
struct ShardWireFormat {
  double source_bytes = 2;  ///< the working parameters' and gradients' element (precision)
  double gather_bytes = 2;  ///< param_dtype
  double reduce_bytes = 2;  ///< reduce_dtype
  bool bf16 = false;        ///< qwZ dequantises to fp16, then casts to bf16
  bool qwz = false, qgz = false, float8 = false;
};
/// `element_bytes`: the precision's; `bf16`: the precision is bf16.
ShardWireFormat wire_format(const ShardingSpec& s, double element_bytes, bool bf16 = false);
/// "bf16", "int8 weights + int4 gradients", "fp8 weights": the formats in words, for labels.
std::string wire_label(const ShardWireFormat& f);

/// A workload's scheme in words for labels: "zero3 (fsdp1)", "zeropp
/// (deepspeed, int8 weights + int4 gradients) + full activation
/// checkpointing"; "" for DDP without checkpointing.
std::string scheme_label(const ShardingSpec& s, ActivationCheckpointing ac);

/// One all-gather of a unit over `ranks` GPUs.
struct GatherWire {
  double bytes = 0;             ///< the data all-gather, nccl-tests size (the gathered total)
  double scale_bytes = 0;       ///< qwZ: the scales' own all-gather (gathered total); 0: none
  double sender_seconds = 0;    ///< quantise or cast this rank's shard, on the all-gather stream
  double receiver_seconds = 0;  ///< dequantise the unit on every receiver, on the compute stream
  double unsharded_bytes = 0;   ///< the unit ready for compute
  double buffer_bytes = 0;      ///< the compressed receive buffers while it is in flight
};
GatherWire gather_wire(const ShardWireFormat& f, const UnitElements& u, int ranks, const WireKernels& k);

/// The gradient reduction of a unit.
struct ReduceWire {
  double reduce_scatter_bytes = 0;  ///< all of it, or qgZ's fallback tensors; 0: none
  double all_to_all_bytes = 0;      ///< qgZ: first-stage per-rank total of the hierarchical all-to-all
  double seconds = 0;               ///< qgZ's kernels, on the reduction stream
  double buffer_bytes = 0;          ///< qgZ's int4 buffers and its fp16 output
};
ReduceWire reduce_wire(const ShardWireFormat& f, const UnitElements& u, const ShardTopology& t, const WireKernels& k);

}  // namespace gw
