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
//   max(L, w) + R + (bytes on the busiest link) / (B e)
// L, e: NcclCost (NCCL's latency model and the pair's bandwidth efficiency,
// the per-size ramp's pipeline fill included); R: NcclCost::ramp_latency (the
// launch floor and a host proxy's messages); w: the route latency the
// engine's flows pay, a floor under L (Aggregated: one phase, w = alpha;
// PerStep: one alpha per step). The efficiency makes every flow carry
// bytes / e on the wire.
double nccl_time(double wire_latency, double bandwidth_time, NcclCost cost);
/// Ring all-reduce: max(L, w) + 2(n-1)/n S/(B e); PerStep w = 2(n-1) alpha.
double ring_allreduce_time(int n, double bytes, AlphaBeta ab, NcclCost cost, bool per_step = false);
/// Ring all-gather / reduce-scatter: max(L, w) + (n-1)/n S/(B e); PerStep w = (n-1) alpha.
double ring_allgather_time(int n, double bytes, AlphaBeta ab, NcclCost cost, bool per_step = false);
double ring_reducescatter_time(int n, double bytes, AlphaBeta ab, NcclCost cost, bool per_step = false);
/// NVLS all-reduce on one NVSwitch node: every GPU sends S to the switch,
/// which reduces and multicasts, and receives S: max(L, alpha) + S/(B e).
double nvls_allreduce_time(int n, double bytes, AlphaBeta ab, NcclCost cost);

/// PAT (NCCL's Parallel Aggregated Trees, 2.23+; all-gather and
/// reduce-scatter at one GPU per node): the Bruck-style exchange NCCL's PAT
/// runs, D = ceil(log2 n) steps; in step d every rank r sends to r + 2^d
/// (mod n) and receives from r - 2^d the blocks of S/n it aggregated so far,
/// min(2^d, n - 2^d) of them (all-gather: the distances grow, d = 0 .. D-1;
/// reduce-scatter: the same exchanges with the distances shrinking), so a rank
/// sends and receives n - 1 blocks in all:
///   max(L, w) + (n-1)/n S / (B e);  Aggregated w = alpha, PerStep w = D alpha.
/// S: the gathered total (all-gather), the input per rank (reduce-scatter).
double pat_time(int n, double bytes, AlphaBeta ab, NcclCost cost, bool per_step = false);
/// D above: ceil(log2 n) (0 for one rank).
int pat_steps(int n);
/// Blocks of S/n a rank sends in step d: min(2^d, n - 2^d).
int pat_step_blocks(int n, int d);
/// PAT as NCCL's tuning model prices it (tuning.cc keeps PAT's bus bandwidth
/// as its algorithm bandwidth for all-gather and reduce-scatter: no (n-1)/n):
///   max(L, alpha) + S / (B e).
double pat_tuning_time(double bytes, AlphaBeta ab, NcclCost cost);

/// Hierarchical all-reduce on `nodes` nodes of `gpus` ranks each: intra-node
/// ring reduce-scatter of S, inter-node ring all-reduce of S/gpus among the
/// ranks with the same local index (the gpus rings run at once), intra-node ring
/// all-gather of S. `inter.bandwidth` is what one inter-node flow gets while all
/// gpus rings share the node's NICs (min(intra, node NIC bandwidth / gpus) on
/// gradwire's platforms).
///   2[(g-1) a_i + (g-1)/g S/B_i] + 2(n-1) a_o + 2(n-1)/n (S/g)/B_o
double hierarchical_allreduce_time(int nodes, int gpus, double bytes, AlphaBeta intra, AlphaBeta inter);

/// Direct all-to-all: n-1 steps, in step k rank i sends S/n to rank i+k.
///   (n-1) alpha + (n-1)/n S/B   (S = total one rank sends, its own share included)
double direct_alltoall_time(int n, double bytes, AlphaBeta ab);

/// Hierarchical all-to-all on `nodes` nodes of `gpus` ranks each (ZeRO++
/// qgZ): a direct all-to-all of S inside every node, then one of S / gpus
/// among the ranks with the same local index (the gpus groups at once;
/// `inter.bandwidth` as for hierarchical_allreduce_time).
///   (g-1) a_i + (g-1)/g S/B_i + (n-1) a_o + (n-1)/n (S/g)/B_o
double hierarchical_alltoall_time(int nodes, int gpus, double bytes, AlphaBeta intra, AlphaBeta inter);

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

/// NCCL's trees over ranks grouped by node (positions node by node:
/// `node_sizes[k]` ranks on node k; trees.cc, connect.cc, graph.h
/// NCCL_TOPO_PATTERN_BALANCED_TREE, NCCL 2.20.3): the nodes form the double
/// binary tree (double_binary_tree over nodes); inside a node the ranks form a
/// chain. In the first tree the chain's head is the node's first rank: it
/// holds the edge to the parent node and to the first child node, each rank
/// j > 0 hangs below rank j-1, and the second child node attaches to the
/// chain's last rank (BALANCED_TREE: "tree parent + one child on first GPU,
/// second child on second GPU"). The second tree mirrors the chain (head: the
/// node's last rank). One rank per node gives double_binary_tree(nodes).
std::array<BinaryTree, 2> nccl_trees(const std::vector<int>& node_sizes);

/// What the tree's flows cross on the platform (topology.hpp): within a node
/// the route latency and each GPU's link (each direction); across nodes the
/// route latency and a node's share of the fabric (each direction); the
/// per-GPU connection cap on flows out of a node (infinite when none); the
/// node's one host-memory path every intra-node copy crosses when host-staged
/// (both directions; infinite when not).
struct TreeLinks {
  AlphaBeta intra;
  AlphaBeta inter;
  double connection = 0;
  double staging = 0;
};
/// Every link of one bandwidth, one route latency (one GPU per node on a
/// non-blocking switch).
TreeLinks uniform_tree_links(AlphaBeta ab);

/// Schedule of the tree all-reduce as rounds: each tree carries S/2 in K
/// chunks; chunk k crosses the edge above a rank of depth d upwards (reduce)
/// in round k + (H - d) and downwards (broadcast) in round k + H + d - 1, H
/// the trees' common height in hops, so R = K + 2H - 1 rounds. A round in
/// which every flow carries one chunk c takes cost[r] x c, cost[r] the largest
/// flows-per-bandwidth over the link classes of TreeLinks (a GPU's link each
/// way, its connection cap, a node's fabric share each way, a host-staged
/// node's shared path).
struct TreeSchedule {
  int chunks = 1;          ///< K
  int height = 0;          ///< H
  int rounds = 0;          ///< R = K + 2H - 1
  int max_load = 0;        ///< largest number of edges of both trees at one rank, one direction
  double load_sum = 0;     ///< sum_r loads[r] (O(n H) work whatever K)
  std::vector<int> loads;  ///< per round, one rank's link; empty beyond 2^22 ranks x rounds (load_sum still holds)
  double cost_sum = 0;     ///< sum_r cost[r] (s per chunk byte)
  double peak = 0;         ///< the steady round's cost: every edge busy
  int inter_rounds = 0;    ///< rounds in which a flow crosses nodes
};
TreeSchedule tree_allreduce_schedule(const std::vector<int>& node_sizes, double bytes, const TreeLinks& links);
/// One rank per node, every link alike (cost in flows per unit bandwidth).
TreeSchedule tree_allreduce_schedule(int n, double bytes);

/// Tree all-reduce as NCCL pipelines it (Aggregated): the chunks overlap and
/// NCCL's latency model L covers the pipeline's depth (as NCCL's tuning model:
/// latency + bytes / bandwidth):
///   max(L, w) + peak (S/2) / e,  w = the worst route's latency
/// (one rank per node on a switch: peak = 4 / B, four flows of S/2 per link).
/// PerStep (lock-step rounds, every chunk a message, fill and drain included):
///   max(L, w) + cost_sum (S/2K) / e,  w = each round's worst route latency, summed.
double tree_allreduce_time(const std::vector<int>& node_sizes, double bytes, const TreeLinks& links, NcclCost cost,
                           bool per_step = false);
/// n ranks, one per node, every link `ab`.
double tree_allreduce_time(int n, double bytes, AlphaBeta ab, NcclCost cost, bool per_step = false);

/// NVLS+tree all-reduce (NCCL's NVLS_TREE) over `nodes` NVSwitch nodes of
/// `gpus` ranks each. Inside a node NVLS: every GPU writes S to the switch and
/// reads S back (S on its link each way, as nvls_allreduce_time). Between
/// nodes NCCL's double binary tree over the nodes (double_binary_tree), each
/// tree carrying S/2, split over the g rails (GPU j of a node talks to GPU j
/// of the others, each rail its own NIC share): every tree edge carries
/// S/(2g) per rail and direction, pipelined (all at once, as the tree's
/// Aggregated schedule). With D the most tree edges at one node (both trees:
/// 2 on two nodes, 4 from four nodes on) and c = S/(2g), each direction:
///   GPU link   (2g / e + D / e') c / B_intra  (NVLS's S and the node's rail traffic)
///   connection D c / (B_conn e')                (a GPU's flows out of its node)
///   node       g D c / (B_inter e')             (D S/2 through the node's NICs)
///   time = max(L, alpha_inter) + R + max(the three)
/// e' = e x NcclCost::inter_node_ratio: the trees carry plain network
/// traffic, without NVLS's ratio.
/// `links`: TreeLinks (intra: the GPU link; inter: a node's fabric share).
double nvlstree_allreduce_time(int nodes, int gpus, double bytes, const TreeLinks& links, NcclCost cost);
/// D above: the most edges of both node-level trees at one node.
int nvlstree_node_degree(int nodes);
/// As NCCL's tuning model prices NVLS_TREE (tuning.cc): bus bandwidth
/// min(B_intra, B_inter) on two nodes, min(B_intra, B_inter / 2) beyond,
/// B_inter the node's NIC bandwidth (NCCL: nChannels x bwInter, one NIC per
/// channel):  max(L, alpha) + S / (min(...) e).
double nvlstree_tuning_time(int nodes, double bytes, double intra_bandwidth, double inter_bandwidth, double alpha,
                            NcclCost cost);

}  // namespace gw::collective
