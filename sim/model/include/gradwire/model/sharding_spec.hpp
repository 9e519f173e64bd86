// The value of `workload.sharding` and `workload.activation_checkpointing`
// (docs/model.md, section 7c): the scheme, its framework and the options
// that change its collectives or memory. Apart from sharding.hpp so that
// the scenario (scenario.hpp) can hold one; what it means is there.
#pragma once

#include <string>

namespace gw {

enum class ShardingScheme { Ddp, Zero1, Zero2, Zero3, Hsdp, ZeroPP };
enum class ShardingFramework { PyTorchDdp, Fsdp1, Fsdp2, DeepSpeed };
/// When the gradients are reduced under accumulation: after every micro-step,
/// or only after the last (DDP/FSDP1 no_sync, FSDP2
/// set_requires_gradient_sync(False), DeepSpeed ZeRO-1's boundary).
enum class GradientSync { EveryMicroStep, LastMicroStep };
enum class ActivationCheckpointing { None, Selective, Full };

std::string to_string(ShardingScheme s);           ///< "ddp", "zero1", ...
std::string to_string(ShardingFramework f);        ///< "pytorch-ddp", "fsdp1", "fsdp2", "deepspeed"
std::string to_string(GradientSync g);             ///< "every", "last"
std::string to_string(ActivationCheckpointing a);  ///< "none", "selective", "full"

/// reshard_after_forward: true (kReshardFull), false (kReshardNone) or R ranks.
inline constexpr int kReshardFull = -1;
inline constexpr int kReshardNone = 0;

struct ShardingSpec {
  ShardingScheme scheme = ShardingScheme::Ddp;
  ShardingFramework framework = ShardingFramework::PyTorchDdp;
  GradientSync gradient_sync = GradientSync::LastMicroStep;
  /// HSDP: GPUs per shard group (0: the GPUs of one node).
  int group = 0;
  /// After forward: kReshardFull, kReshardNone or R ranks (FSDP2 int; hpZ
  /// sets it to the GPUs of one node). Derived from the scheme unless given.
  int reshard_after_forward = kReshardFull;
  /// After a backward that is not the last of the optimizer step (FSDP2
  /// set_reshard_after_backward; FSDP1: false under no_sync for strategies
  /// that keep parameters after forward).
  bool reshard_after_backward = true;
  int prefetch = 1;                            ///< units all-gathered ahead of the one computing
  bool qwz = false, hpz = false, qgz = false;  ///< ZeRO++ parts
  /// FSDP2 with torchao float8 training (Float8LinearConfig
  /// enable_fsdp_float8_all_gather): the linear weights all-gathered in fp8.
  bool float8_all_gather = false;
  /// Bytes per element of the gradient reduction (FSDP reduce_dtype,
  /// DeepSpeed communication_data_type); 0: the gradient precision's.
  double reduce_bytes = 0;
  /// Bytes per element of the all-gathered parameters (FSDP param_dtype);
  /// 0: the gradient precision's.
  double gather_bytes = 0;
};

}  // namespace gw
