// The communicators of the sharded schedule (gradwire/model/shard_groups.hpp).
#include "gradwire/model/shard_groups.hpp"

#include <algorithm>

namespace gw {

namespace {

ShardCommGroup consecutive(ShardGroupKind kind, int size) { return {kind, std::max(1, size), 1}; }

}  // namespace

ScheduleGroups schedule_groups(const ShardingSpec& s, const ShardTopology& t, int degree) {
  ScheduleGroups g;
  g.shard = consecutive(degree == t.world ? ShardGroupKind::World : ShardGroupKind::Shard, degree);
  g.reshard = consecutive(ShardGroupKind::Reshard, s.reshard_after_forward > 0 ? s.reshard_after_forward : 1);
  // HSDP: rank j's replicas are j + m G (FSDP2's DeviceMesh (W / G, G),
  // replicate the outer dimension; FSDP1 _init_intra_and_inter_node_groups).
  g.replicas = {ShardGroupKind::Replicas, degree > 0 ? t.world / degree : 1, degree};
  if (g.replicas.size <= 1) g.replicas = {ShardGroupKind::Replicas, 1, 1};
  const int gpn = std::min(t.world, std::max(1, t.gpus_per_node));
  g.node = consecutive(ShardGroupKind::Node, gpn);
  g.cross_node = {ShardGroupKind::CrossNode, t.world / gpn, t.world > gpn ? gpn : 1};
  return g;
}

std::vector<int> group_ranks(const ShardCommGroup& g, int first) {
  std::vector<int> ranks(static_cast<std::size_t>(g.size));
  for (int j = 0; j < g.size; ++j) ranks[static_cast<std::size_t>(j)] = first + j * g.stride;
  return ranks;
}

NcclShape group_shape(const ShardCommGroup& g, int gpus_per_node) {
  const int gpn = std::max(1, gpus_per_node);
  // Rank 0's group: ranks j x stride, on nodes j x stride / gpn (non-decreasing).
  int nodes = 0;
  for (int j = 0, last = -1; j < g.size; ++j) {
    const int node = j * g.stride / gpn;
    nodes += node != last ? 1 : 0;
    last = node;
  }
  return {g.size, std::max(1, nodes)};
}

std::vector<std::vector<int>> groups_alongside(const ShardCommGroup& g, int world, int gpus_per_node) {
  std::vector<std::vector<int>> out;
  if (g.stride <= 1 || group_shape(g, gpus_per_node).nodes <= 1) return out;
  for (int first = 1; first < g.stride && first < world; ++first) out.push_back(group_ranks(g, first));
  return out;
}

int nic_sharing(const std::vector<int>& ranks, const std::vector<std::vector<int>>& alongside, int gpus_per_node) {
  if (ranks.empty()) return 1;
  const int gpn = std::max(1, gpus_per_node), node = ranks.front() / gpn;
  int n = 1;
  for (const auto& other : alongside)
    n += std::any_of(other.begin(), other.end(), [&](int r) { return r / gpn == node; }) ? 1 : 0;
  return n;
}

}  // namespace gw
