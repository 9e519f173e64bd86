// The collective vocabulary (gradwire/model/collectives.hpp). The bus-bandwidth
// factors are the closed forms of collective_model.hpp.
#include "gradwire/model/collectives.hpp"

#include <stdexcept>

#include "gradwire/model/collective_model.hpp"

namespace gw {

const std::vector<CollectiveInfo>& collective_ops() {
  static const std::vector<CollectiveInfo> ops{
      {CollectiveOp::AllReduce, "allreduce", SizeConvention::PerRank, &collective::allreduce_busbw_factor,
       "all_reduce_perf", "sum", -1},
      {CollectiveOp::AllGather, "allgather", SizeConvention::Total, &collective::allgather_busbw_factor,
       "all_gather_perf", "none", -1},
      {CollectiveOp::ReduceScatter, "reducescatter", SizeConvention::Total, &collective::reducescatter_busbw_factor,
       "reduce_scatter_perf", "sum", -1},
      {CollectiveOp::Broadcast, "broadcast", SizeConvention::PerRank, &collective::broadcast_busbw_factor,
       "broadcast_perf", "none", 0},
      {CollectiveOp::AllToAll, "alltoall", SizeConvention::Total, &collective::alltoall_busbw_factor, "alltoall_perf",
       "none", -1},
  };
  return ops;
}

const CollectiveInfo& collective_info(CollectiveOp op) {
  for (const auto& i : collective_ops()) {
    if (i.op == op) return i;
  }
  throw std::invalid_argument("unknown collective op " + std::to_string(static_cast<int>(op)));
}

std::string to_string(CollectiveOp op) { return collective_info(op).name; }

std::optional<CollectiveOp> find_collective_op(std::string_view name) {
  for (const auto& i : collective_ops()) {
    if (name == i.name) return i.op;
  }
  return std::nullopt;
}

CollectiveOp parse_collective_op(std::string_view name) {
  if (auto op = find_collective_op(name)) return *op;
  throw std::invalid_argument("unknown collective '" + std::string(name) + "' (" + collective_op_list() + ")");
}

std::vector<std::string> collective_op_names() {
  std::vector<std::string> out;
  for (const auto& i : collective_ops()) out.emplace_back(i.name);
  return out;
}

std::string collective_op_list(std::string_view sep) {
  std::string out;
  for (const auto& i : collective_ops()) out += (out.empty() ? "" : std::string(sep)) + i.name;
  return out;
}

std::optional<CollectiveOp> find_nccl_tests_op(std::string_view binary) {
  for (const auto& i : collective_ops()) {
    if (binary == i.nccl_tests_binary) return i.op;
  }
  return std::nullopt;
}

double bus_bandwidth_factor(CollectiveOp op, int n) { return collective_info(op).busbw_factor(n); }

}  // namespace gw
