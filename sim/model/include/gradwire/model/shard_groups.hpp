// The communicators of the sharded schedule (docs/model.md, section 7c,
// "Groups"): which ranks each collective runs over, how they lie on the
// nodes, and which other groups run the same collective beside them at the
// same time. Ranks are numbered node by node (rank = node x GPUs per node +
// local rank), as torchrun and DeepSpeed's launcher number them.
//
//   world     : all W data-parallel GPUs (zero*, FULL_SHARD's one group).
//   shard     : HSDP's shard group of G consecutive ranks (FSDP1
//               HYBRID_SHARD's intra-node process group; FSDP2's 2-D mesh
//               (replicate, shard), shard the inner dimension).
//   reshard   : R consecutive ranks holding the parameters between forward
//               and backward (FSDP2 reshard_after_forward: R; ZeRO++ hpZ's
//               secondary partition, R = GPUs per node).
//   replicas  : the W / G ranks holding the same shard, one per shard group:
//               ranks j, j + G, j + 2G, ... (FSDP1's _inter_node_pg, FSDP2's
//               replicate mesh dimension).
//   node      : the g GPUs of one node; cross_node: the GPUs of one local
//               rank on every node, j, j + g, ... (ZeRO++ qgZ's two
//               all-to-alls, coalesced_collectives.py all_to_all_quant_reduce;
//               not scheduled yet: qgZ is refused).
//
// Every group is a block of a partition of the W ranks into equal groups:
// stride 1 (consecutive ranks) or stride G (every G-th rank). Plain C++.
#pragma once

#include <vector>

#include "gradwire/model/nccl_model.hpp"
#include "gradwire/model/sharding.hpp"

namespace gw {

struct ShardCommGroup {
  ShardGroupKind kind = ShardGroupKind::World;
  int size = 1;    ///< ranks in one group
  int stride = 1;  ///< distance between consecutive ranks of one group
  bool operator==(const ShardCommGroup&) const = default;
};

/// The groups of a sharded schedule on `t` with shard degree `degree`
/// (shard_degree): the shard group (world unless hsdp), the resharded group
/// (size 1 when none), the replicas (size 1 unless hsdp on several groups),
/// the node and the local rank across nodes (size 1 on one node).
struct ScheduleGroups {
  ShardCommGroup shard, reshard, replicas, node, cross_node;
};
ScheduleGroups schedule_groups(const ShardingSpec& effective, const ShardTopology& t, int degree);

/// The ranks of the group holding `first` (a rank of the group's first
/// block: 0 .. stride - 1 for strided groups, a multiple of size otherwise).
std::vector<int> group_ranks(const ShardCommGroup& g, int first);
/// Ranks of the group and the nodes they span, as the engine's shape_of.
NcclShape group_shape(const ShardCommGroup& g, int gpus_per_node);
/// The groups that run the same collective beside rank 0's group on rank
/// 0's nodes' NICs: the other strided groups when the group spans several
/// nodes (HSDP's replicas: G groups at once, all on every node); none for
/// consecutive groups (they share no NIC: other nodes, or inside a node).
std::vector<std::vector<int>> groups_alongside(const ShardCommGroup& g, int world, int gpus_per_node);
/// How many groups use the NICs of the first rank's node at once: 1 + the
/// groups of `alongside` with a rank on that node (each has 1/n of them).
/// The closed form (sharded_collective_time) and the engine
/// (CollectiveRequest::alongside) both count it here.
int nic_sharing(const std::vector<int>& ranks, const std::vector<std::vector<int>>& alongside, int gpus_per_node);

}  // namespace gw
