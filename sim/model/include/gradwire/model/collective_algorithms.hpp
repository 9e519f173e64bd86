// The collective algorithms, defined once: one row per (algorithm, op) with
// its name, the note `gradwire collective --help` shows, NCCL's latency row
// and cost forms, its closed form and tuning form, its refusal rule, whether
// NCCL's rule (auto) may pick it and whether a scenario may pin it. Parsing,
// names, the help text, a scenario's allowed choices, NCCL's candidates and
// the closed form's dispatch are derived from the rows; the engine binds one
// sim/engine/src/algo_*.cpp schedule to each row. A new algorithm: its value
// in `Algorithm`, its row (collective_algorithms.cpp), its engine file and a
// test against its closed form (docs/architecture.md, "Adding things").
// Plain C++, no SimGrid.
#pragma once

#include <string>
#include <vector>

#include "gradwire/model/collectives.hpp"

namespace gw {

/// ring, tree (double binary tree), nvls (NVLink SHARP on one NVSwitch node),
/// nvlstree (NCCL's NVLS_TREE), pat (NCCL's PAT, 2.23 and later),
/// hierarchical (gradwire's intra/inter/intra all-reduce; not NCCL's), direct
/// (all-to-all), auto (the pair NCCL's rule picks per size). What each runs,
/// and where: its rows.
enum class Algorithm { Ring, Tree, NVLS, NvlsTree, Pat, Hierarchical, Direct, Auto };
enum class Protocol;  // nccl_model.hpp
struct ClusterSpec;
struct NcclShape;
struct NcclCost;
struct NcclPipeline;

/// One algorithm for one op. Forms that NCCL's cost model reads are null for
/// gradwire's own schedules (hierarchical, direct, the broadcast ring), whose
/// cost is {0, 1}: their latency is the platform's per step.
struct AlgorithmRow {
  Algorithm algorithm;
  CollectiveOp op;
  const char* name;  ///< what --algo, NCCL_ALGO (case-insensitive) and scenarios say
  /// The help's words after the ops (", one NVSwitch node ..."); on the
  /// algorithm's first row.
  const char* note = "";
  /// tuning.cc's row of baseLat / hwLat (tree 0, ring 1, nvls 2, nvlstree 3);
  /// -1: none (PAT, gradwire's own schedules).
  int nccl_row = -1;
  /// NCCL's bus-bandwidth factor of the pair before LL's cap (tuning.cc's
  /// refinements); null: gradwire's own schedule.
  double (*factor)(const AlgorithmRow& row, Protocol p, NcclShape s) = nullptr;
  /// NCCL's latency, microseconds.
  double (*latency_us)(const AlgorithmRow& row, Protocol p, const ClusterSpec& c, NcclShape s) = nullptr;
  /// NCCL's size correction of the efficiency (the tree's); null: none.
  double (*size_correction)(Protocol p, double bytes) = nullptr;
  /// NCCL trims this algorithm's channels and threads for small sizes
  /// (nccl_channels: ring and tree; NVLS and PAT keep theirs).
  bool trims_channels = false;
  /// NCCL's pipeline at `bytes` (chunks, stages, proxy messages: the per-size
  /// ramp, nccl_model.hpp); null: none (one chunk, one stage, no message).
  NcclPipeline (*pipeline)(const AlgorithmRow& row, Protocol p, const ClusterSpec& c, NcclShape s,
                           double bytes) = nullptr;
  /// The share of NCCL's factor it runs at beyond the tuning model's (NVLS:
  /// (nvlsChannels - 1) / nvlsChannels of the link, NCCL HEAD tuning.cc).
  double run_share = 1.0;
  /// Its flows between nodes are plain network traffic, without the factor
  /// (NVLSTree's trees: NcclCost::inter_node_ratio).
  bool plain_network = false;
  /// The Aggregated schedule's closed form on `c` under `cost`.
  double (*closed_form)(const ClusterSpec& c, NcclShape s, double bytes, const NcclCost& cost) = nullptr;
  /// As NCCL's tuning model prices it (what choose_collective compares);
  /// null: the closed form.
  double (*tuning_form)(const ClusterSpec& c, NcclShape s, double bytes, const NcclCost& cost) = nullptr;
  /// Why the pair does not run on `c` at `s` ("" when it runs): one clause
  /// naming the rule and what the cluster has (nccl_pair_refusal).
  std::string (*refusal)(const AlgorithmRow& row, Protocol p, const ClusterSpec& c, NcclShape s) = nullptr;
  bool nccl_rule = false;  ///< NCCL's rule (auto) chooses among it (nccl_algorithms)
  bool scenario = false;   ///< a scenario's workload.allreduce_algorithm may pin it
};

/// Every row, algorithms in the enum's order, each algorithm's ops in
/// collective_ops()'s order.
const std::vector<AlgorithmRow>& algorithm_rows();
/// The row of (op, a), or nullptr when `a` does not run `op` (auto has none).
const AlgorithmRow* find_algorithm_row(CollectiveOp op, Algorithm a);
/// The ops `a` runs, in the rows' order.
std::vector<CollectiveOp> algorithm_ops(Algorithm a);
/// The same for messages: "allgather and reducescatter".
std::string listed_ops(Algorithm a);

std::string to_string(Algorithm a);
/// Case-insensitive, as NCCL_ALGO; throws std::invalid_argument naming the
/// algorithms.
Algorithm parse_algorithm(const std::string& s);
/// The names parse_algorithm accepts: auto, then the rows' algorithms in
/// their order (for strict readers and messages).
std::vector<std::string> algorithm_names();

/// "auto (...), ring (allreduce, allgather, ...), tree (allreduce), ...":
/// every algorithm with its ops and note, for --algo's help.
std::string algorithm_help();
/// "ring for allreduce, allgather, reducescatter and broadcast; tree, nvls,
/// ... for allreduce; ...": the algorithms grouped by the ops they run.
std::string algorithms_by_ops();
/// The all-reduce algorithms a scenario may pin, auto first ("auto", "ring",
/// "tree", "hierarchical").
std::vector<std::string> scenario_algorithm_names();

}  // namespace gw
