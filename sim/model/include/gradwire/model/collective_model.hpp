// Closed-form (alpha-beta) times of the collective algorithms that the engine
// simulates, and the nccl-tests bus-bandwidth factors. Plain C++: no SimGrid.
//
// Notation: n ranks, S bytes ("size" as nccl-tests reports it), alpha the
// latency of one route between two ranks (s), B the bandwidth one flow gets on
// that route (bytes/s). Every algorithm is a sequence of steps; in each step a
// rank sends one chunk to a peer. The engine's tests check its simulated times
// against these functions, and the replay uses them for quick estimates.
// docs/engine.md derives each formula.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "gradwire/model/nccl_model.hpp"

namespace gw::collective {

/// Latency of one step's route and the bandwidth one flow gets on it.
struct AlphaBeta {
  double alpha = 0;      ///< seconds
  double bandwidth = 0;  ///< bytes per second
};

// --- nccl-tests bus-bandwidth factors (busbw = algbw x factor) ---------------
double allreduce_busbw_factor(int n);      ///< 2(n-1)/n
double allgather_busbw_factor(int n);      ///< (n-1)/n
double reducescatter_busbw_factor(int n);  ///< (n-1)/n
double alltoall_busbw_factor(int n);       ///< (n-1)/n
double broadcast_busbw_factor(int n);      ///< 1

// --- Ring algorithms (each step: every rank sends S/n to its successor) ------
/// 2(n-1) alpha + 2(n-1)/n S/B  (S = per-rank buffer)
double ring_allreduce_time(int n, double bytes, AlphaBeta ab);
/// (n-1) alpha + (n-1)/n S/B  (S = gathered total)
double ring_allgather_time(int n, double bytes, AlphaBeta ab);
/// (n-1) alpha + (n-1)/n S/B  (S = total input per rank)
double ring_reducescatter_time(int n, double bytes, AlphaBeta ab);

// --- NCCL's algorithms under NCCL's cost (nccl_model.hpp) ------------------
// A collective of NCCL's takes
//   max(L, w) + (bytes on the busiest link) / (B e)
// L, e: NcclCost (NCCL's latency model and the pair's bandwidth efficiency);
// w: the route latency the engine's flows pay, a floor under L (Aggregated:
// one phase, w = alpha; PerStep: one alpha per step). The efficiency makes
// every flow carry bytes / e on the wire.
double nccl_time(double wire_latency, double bandwidth_time, NcclCost cost);
/// Ring all-reduce: max(L, w) + 2(n-1)/n S/(B e); PerStep w = 2(n-1) alpha.
double ring_allreduce_time(int n, double bytes, AlphaBeta ab, NcclCost cost, bool per_step = false);
/// Ring all-gather / reduce-scatter: max(L, w) + (n-1)/n S/(B e); PerStep w = (n-1) alpha.
double ring_allgather_time(int n, double bytes, AlphaBeta ab, NcclCost cost, bool per_step = false);
double ring_reducescatter_time(int n, double bytes, AlphaBeta ab, NcclCost cost, bool per_step = false);
/// NVLS all-reduce on one NVSwitch node: every GPU sends S to the switch,
/// which reduces and multicasts, and receives S: max(L, alpha) + S/(B e).
double nvls_allreduce_time(int n, double bytes, AlphaBeta ab, NcclCost cost);

/// Hierarchical all-reduce on `nodes` nodes of `gpus` ranks each: intra-node
/// ring reduce-scatter of S, inter-node ring all-reduce of S/gpus among the
/// ranks with the same local index (the gpus rings run at once), intra-node ring
/// all-gather of S. `inter.bandwidth` is what one inter-node flow gets while all
/// gpus rings share the node's NICs (min(intra, node NIC bandwidth / gpus) on
/// gradwire's platforms).
///   2[(g-1) a_i + (g-1)/g S/B_i] + 2(n-1) a_o + 2(n-1)/n (S/g)/B_o
double hierarchical_allreduce_time(int nodes, int gpus, double bytes, AlphaBeta intra,
                                   AlphaBeta inter);

/// Direct all-to-all: n-1 steps, in step k rank i sends S/n to rank i+k.
///   (n-1) alpha + (n-1)/n S/B   (S = total one rank sends, its own share included)
double direct_alltoall_time(int n, double bytes, AlphaBeta ab);

// --- Pipelines ---------------------------------------------------------------
/// Chunk size of the pipelined algorithms (broadcast, tree): 128 KiB, the
/// order of the slices NCCL's Simple protocol moves per step and channel. A
/// modelling choice: it sets the pipeline fill (K + depth - 1 steps).
inline constexpr double kPipelineChunkBytes = 128.0 * 1024.0;
/// Most pipeline chunks: 2^30 (sizes beyond 128 TiB move larger chunks).
inline constexpr double kMaxPipelineChunks = 1073741824.0;
/// Number of pipeline chunks K for S bytes: ceil(S / chunk), at least 1, at
/// most kMaxPipelineChunks.
int pipeline_chunks(double bytes);

/// Pipelined broadcast along the ring order (rank 0 of the order is the root):
/// K chunks over a chain of n-1 hops take K+n-2 steps of alpha + (S/K)/B.
///   (K+n-2) (alpha + S/(K B))
double pipeline_broadcast_time(int n, double bytes, AlphaBeta ab);

/// One binary tree over positions 0..n-1: parent (-1 for the root) and up to
/// two children (-1 when absent).
struct BinaryTree {
  int root = 0;
  std::vector<int> parent;
  std::vector<std::array<int, 2>> children;
  /// Distance of each position from the root.
  std::vector<int> depth;
  int height() const;  ///< largest depth
};
/// NCCL's double binary tree over n positions: the first tree gives the
/// parent of position r by clearing r's lowest set bit and setting the next
/// one (clearing only when that leaves the range), so odd positions are leaves
/// and position 0 is the root with one child; the second tree is the first
/// mirrored (r -> n-1-r) when n is even and shifted by one when n is odd, so a
/// position that is interior in one tree is a leaf in the other.
std::array<BinaryTree, 2> double_binary_tree(int n);

/// Schedule of the double-binary-tree all-reduce as rounds: each tree carries
/// S/2 in K chunks; chunk k crosses the edge above a node of depth d upwards
/// (reduce) in round k + (H - d) and downwards (broadcast) in round
/// k + H + d - 1, H the trees' common height, so R = K + 2H - 1 rounds.
/// loads[r] is the largest number of flows that leave or enter one rank in
/// round r (both trees together); on a non-blocking switch round r takes
/// alpha + loads[r] (S/2K)/B.
struct TreeSchedule {
  int chunks = 1;           ///< K
  int height = 0;           ///< H
  int rounds = 0;           ///< R = K + 2H - 1
  int max_load = 0;         ///< largest number of edges of both trees at one rank, one direction
  double load_sum = 0;      ///< sum_r loads[r] (O(H) work whatever K)
  std::vector<int> loads;   ///< per round; empty beyond 2^22 ranks x rounds (load_sum still holds)
};
TreeSchedule tree_allreduce_schedule(int n, double bytes);

/// Double-binary-tree all-reduce on a non-blocking switch (one GPU per link),
/// pipelined as NCCL runs it: the chunks' latencies overlap, NCCL's latency
/// model L covers the pipeline's depth:
///   max(L, w) + sum_r loads[r] (S/2K)/(B e)
/// (the bandwidth term -> max_load (S/2)/(B e) once K is large against H:
/// every link busy). Aggregated w = alpha; PerStep (lock-step rounds, every
/// chunk a message) w = R alpha.
double tree_allreduce_time(int n, double bytes, AlphaBeta ab, NcclCost cost, bool per_step = false);

}  // namespace gw::collective
