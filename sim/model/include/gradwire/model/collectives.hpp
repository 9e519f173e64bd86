// The collective vocabulary: the five collectives gradwire simulates and
// calibrates, each with its name, its nccl-tests bus-bandwidth factor, the
// size convention of its "size" and how nccl-tests
// names and prints it (binary, redop, root). Parsed and printed here only; the
// engine, `gradwire collective`, the nccl-tests log reader, the profile loader
// and the calibrator use it.
// Plain C++, no SimGrid.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gw {

enum class CollectiveOp { AllReduce, AllGather, ReduceScatter, Broadcast, AllToAll };

/// What a collective's size S (nccl-tests "size") counts.
enum class SizeConvention {
  PerRank,  ///< the buffer of one rank (allreduce, broadcast)
  Total,    ///< the gathered total (allgather, reducescatter; alltoall: all one rank sends)
};

struct CollectiveInfo {
  CollectiveOp op;
  const char* name;  ///< allreduce, allgather, ...
  SizeConvention size;
  /// nccl-tests bus-bandwidth factor at n ranks (busbw = algbw x factor):
  /// allreduce 2(n-1)/n; allgather, reducescatter, alltoall (n-1)/n;
  /// broadcast 1. Throws std::invalid_argument for n < 1.
  double (*busbw_factor)(int n);
  /// The nccl-tests binary that measures it ("all_reduce_perf", ...).
  const char* nccl_tests_binary;
  /// What nccl-tests prints in its redop and root columns for it.
  const char* nccl_tests_redop;
  int nccl_tests_root;
};

/// The five collectives, in this order: allreduce, allgather, reducescatter,
/// broadcast, alltoall.
const std::vector<CollectiveInfo>& collective_ops();
const CollectiveInfo& collective_info(CollectiveOp op);

std::string to_string(CollectiveOp op);  ///< "allreduce", ...
/// The op named `name`, or nullopt.
std::optional<CollectiveOp> find_collective_op(std::string_view name);
/// The op named `name`; throws std::invalid_argument "unknown collective 'x'
/// (allreduce, allgather, reducescatter, broadcast, alltoall)".
CollectiveOp parse_collective_op(std::string_view name);
/// The names, in order ("allreduce", ...).
std::vector<std::string> collective_op_names();
/// The names joined with `sep` ("allreduce, allgather, ...").
std::string collective_op_list(std::string_view sep = ", ");

/// The op an nccl-tests binary measures ("all_reduce_perf" -> AllReduce), or
/// nullopt (reduce_perf, sendrecv_perf, ...: not simulated).
std::optional<CollectiveOp> find_nccl_tests_op(std::string_view binary);

/// nccl-tests bus-bandwidth factor of `op` at n ranks.
double bus_bandwidth_factor(CollectiveOp op, int n);

}  // namespace gw
