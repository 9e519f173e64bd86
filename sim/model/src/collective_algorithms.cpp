// The collective algorithms' table (gradwire/model/collective_algorithms.hpp):
// one row per (algorithm, op), each row's forms beside it. NCCL's constants
// shared by several algorithms (baseLat, hwLat, the tree's correction, LL's
// cap, channels) stay in nccl_model.cpp; the formulas in collective_model.cpp.
#include "gradwire/model/collective_algorithms.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include "gradwire/model/closed_form.hpp"
#include "gradwire/model/collective_model.hpp"
#include "gradwire/model/nccl_model.hpp"
#include "gradwire/model/topology.hpp"

namespace gw {
namespace {

namespace cm = collective;
using Row = AlgorithmRow;

// tuning.cc's rows of baseLat / hwLat.
constexpr int kTreeRow = 0, kRingRow = 1, kNvlsRow = 2, kNvlsTreeRow = 3;

// --- NCCL's latency and factors ----------------------------------------------

constexpr double kNetOverheadUs = 1.0;  // getNetOverhead(): x86 Intel (gradwire assumes the CPU)

double hw_lat(NcclLinkClass k, const Row& row, Protocol p) { return nccl_hw_latency_us(k, row.nccl_row, p); }
double intra_lat(const Row& row, Protocol p, const ClusterSpec& c) { return hw_lat(nccl_link_class(c, false), row, p); }

double ring_latency_us(const Row& row, Protocol p, const ClusterSpec& c, NcclShape s) {
  const int n = s.ranks, m = s.nodes;
  const bool ar = row.op == CollectiveOp::AllReduce;
  const int steps = ar ? 2 * (n - 1) : n - 1;
  // NCCL counts 2m inter-node steps for a multi-node all-reduce; at one rank
  // per node that is more than the 2(n-1) steps there are: every step is then
  // inter-node.
  const int inter_steps = std::min(steps, ar ? (m > 1 ? 2 * m : 0) : m - 1);
  double intra = intra_lat(row, p, c);
  const double inter = hw_lat(NcclLinkClass::Net, row, p);
  if (m > 1) intra = std::max(intra, kNetOverheadUs * (p == Protocol::Simple ? 3 : 1));
  return nccl_base_latency_us(row.nccl_row, p) + (steps - inter_steps) * intra + inter_steps * inter;
}

double ring_factor(const Row& row, Protocol p, NcclShape s) {
  const double ppn = static_cast<double>(s.ranks) / s.nodes;
  if (p == Protocol::LL) return (s.nodes > 1 || row.op == CollectiveOp::AllReduce) ? 1.0 / 4 : 1.0 / 3;
  if (p == Protocol::LL128) return ppn < 2 ? 0.7 : 0.92;
  return 1.0;
}

double tree_latency_us(const Row& row, Protocol p, const ClusterSpec& c, NcclShape s) {
  const int ppn = s.ranks / s.nodes;
  return nccl_base_latency_us(row.nccl_row, p) +
         2 * ((ppn - 1) * intra_lat(row, p, c) + nccl_log2i(s.nodes) * hw_lat(NcclLinkClass::Net, row, p));
}

double tree_factor(const Row&, Protocol p, NcclShape s) {
  if (p == Protocol::LL) return 0.92 / 3.8;
  if (p == Protocol::LL128) return 0.92 * (s.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0);
  return 0.92;
}

// NVLS, NVLS+tree: algorithm bandwidth = 5/6 of the bus bandwidth (2.20.3's
// tuning model, what NCCL's choice compares); they run on (nvlsChannels - 1)
// / nvlsChannels of it (NCCL HEAD tuning.cc: one channel of the 16 carries no data).
double nvls_factor(const Row&, Protocol, NcclShape) { return 5.0 / 6.0; }
constexpr double kNvlsShare = (kNvlsChannels - 1.0) / kNvlsChannels;
double nvls_latency_us(const Row& row, Protocol p, const ClusterSpec& c, NcclShape) { return intra_lat(row, p, c); }
// NVLS inside the node, then up and down the trees across nodes.
double nvlstree_latency_us(const Row& row, Protocol p, const ClusterSpec& c, NcclShape s) {
  return intra_lat(row, p, c) + 2 * nccl_log2i(s.nodes) * hw_lat(NcclLinkClass::Net, row, p);
}

// PAT (tuning.cc, NCCL 2.23+): busBw x 0.75; latency 8 us + log2i(nodes) x
// (interLat / 3.5) + 2.8 us per rank, interLat the tree's network latency
// (NCCL: "with ppn=1 latencies are fully exposed, use the Tree network
// latency"; hwLat's Net/Tree/Simple, here 2.20.3's table).
constexpr double kPatFactor = 0.75;
constexpr double kPatBaseUs = 8.0;
constexpr double kPatLogDivisor = 3.5;
constexpr double kPatPerRankUs = 2.8;

double pat_factor(const Row&, Protocol, NcclShape) { return kPatFactor; }
double pat_latency_us(const Row&, Protocol, const ClusterSpec&, NcclShape s) {
  const double inter = nccl_hw_latency_us(NcclLinkClass::Net, kTreeRow, Protocol::Simple);
  return kPatBaseUs + nccl_log2i(s.nodes) * (inter / kPatLogDivisor) + s.ranks * kPatPerRankUs;
}

// --- NCCL's pipelines (the per-size ramp, nccl_model.hpp NcclPipeline) --------
//
// enqueue.cc (2.20.3) computeCollChunkInfo, computeCollSteps and the kernels
// (all_reduce.h); docs/measurements/nccl-ramp-2026-12-03/design.md section 1.

int tree_levels(NcclShape s) { return std::max(1, nccl_log2i(s.nodes)); }

// The fill of a pipeline of `intra` stages inside a node (a GPU's link at
// `intra_share` of its rate: NVLS's 5/6 x 15/16) and `inter` stages between
// nodes (the node's share of the fabric, capped by the NIC transport's
// connections, plain network traffic), in the slowest stage's chunk times
// (NcclPipeline::fill): sum of the stages' chunk times / the slowest's - 1.
// The slowest is the closed form's bottleneck, so the time, the slowest
// stage's chunk time x (K + fill), falls as any link gets faster.
double pipeline_fill(const ClusterSpec& c, int intra, int inter, double intra_share) {
  const double t_intra = 1 / (intra_share * intra_flow_bandwidth(c, 1));
  const double t_inter = 1 / std::min(node_fabric_bandwidth(c), connection_limit(c));
  const double slowest = inter > 0 ? std::max(t_intra, t_inter) : t_intra;
  return (intra * t_intra + inter * t_inter) / slowest - 1;
}

// Ring: a channel runs loops of 2(n-1) lock-step steps (all-gather,
// reduce-scatter: n-1), one chunk each: depth 1. Across nodes each step of
// each active channel is one proxy message per slice (Simple: 2 slices per
// chunk, ALLREDUCE_CHUNKSTEPS / ALLREDUCE_SLICESTEPS; LL, LL128: 1).
NcclPipeline ring_pipeline(const Row& row, Protocol p, const ClusterSpec& c, NcclShape s, double bytes) {
  const int n = s.ranks;
  const double chunk = nccl_chunk_bytes(p, true);
  const double per_channel = bytes / nccl_comm_channels(c, s.nodes);
  const bool ar = row.op == CollectiveOp::AllReduce;
  const double loops = std::max(1.0, std::ceil(ar ? per_channel / (n * chunk) : per_channel / n / chunk));
  NcclPipeline out;
  out.chunks = (ar ? 2.0 * (n - 1) : n - 1.0) * loops;
  if (s.nodes > 1)
    out.messages = out.chunks * (p == Protocol::Simple ? 2 : 1) * nccl_channels(row.algorithm, p, c, s, bytes).channels;
  return out;
}

// Tree: K chunks per channel (LL128 halves its chunk while a channel has few,
// enqueue.cc); across nodes one message up and one down per level and active
// channel on a chunk's path (later chunks overlap them). No fill and no
// hand-offs: the tree is the one pipeline NCCL's tuning model already prices,
// its chain and levels in the latency (tuning.cc: (ppn - 1) intra + log2 m
// network hops, each way) and its chunks by the per-size treeCorrectionFactor
// ("instead of proper chunk modeling"), which nccl_cost applies to the tree
// (nccl_tree_correction): the ramp's stages would charge them twice.
NcclPipeline tree_pipeline(const Row& row, Protocol p, const ClusterSpec& c, NcclShape s, double bytes) {
  const double ppn = static_cast<double>(s.ranks) / s.nodes;
  const int channels = nccl_comm_channels(c, s.nodes);
  double chunk = nccl_chunk_bytes(p, false);
  if (p == Protocol::LL128) {
    const double steps = 1 + nccl_log2i(s.nodes) + 0.1 * ppn;
    while (bytes / (channels * chunk) < steps * 64 / ppn && chunk > 131072) chunk /= 2;
    while (bytes / (channels * chunk) < steps * 16 / ppn && chunk > 32768) chunk /= 2;
  }
  const int active = nccl_channels(row.algorithm, p, c, s, bytes).channels;
  NcclPipeline out;
  out.chunks = std::max(1.0, std::ceil(bytes / (active * chunk)));
  if (s.nodes > 1) out.messages = 2.0 * tree_levels(s) * active;
  return out;
}

// NVLS on one node: scatter, reduce-and-multicast, gather (d = 3) over chunks
// of at most 128 KiB, shrunk for small sizes, per channel and head (a head per
// GPU).
NcclPipeline nvls_pipeline(const Row&, Protocol, const ClusterSpec&, NcclShape s, double bytes) {
  constexpr double KiB = 1024;
  const double ops = static_cast<double>(kNvlsChannels) * s.ranks;
  double chunk = std::min(nccl_chunk_bytes(Protocol::Simple, false), 128 * KiB);
  for (auto [times, limit] : {std::pair{64.0, 64 * KiB}, {8.0, 32 * KiB}, {2.0, 16 * KiB}})
    if (bytes < times * ops * chunk && chunk > limit) chunk = limit;
  NcclPipeline out;
  out.chunks = std::max(1.0, std::ceil(bytes / (ops * chunk)));
  out.depth = 3;
  out.fill = out.depth - 1.0;
  return out;
}

// NVLSTree: scatter, NVLS reduce, tree up and down (a stage per level each
// way), NVLS broadcast, gather (d = 4 + 2 log2 m); a head per NIC; the chunk
// at most 64 KiB from 4 nodes (NCCL_NVLSTREE_MAX_CHUNKSIZE), shrunk for
// small sizes; one message up and one down per level and NVLS channel.
NcclPipeline nvlstree_pipeline(const Row& row, Protocol, const ClusterSpec& c, NcclShape s, double bytes) {
  constexpr double KiB = 1024;
  const double ops = static_cast<double>(kNvlsChannels) * std::max(1, c.nic_count);
  double chunk = nccl_chunk_bytes(Protocol::Simple, false);
  if (s.nodes >= 4) chunk = std::min(chunk, 64 * KiB);
  for (auto [times, limit] : {std::pair{32.0, 256 * KiB}, {16.0, 128 * KiB}, {4.0, 64 * KiB}, {1.0, 32 * KiB}})
    if (bytes < times * ops * chunk && chunk > limit) chunk = limit;
  NcclPipeline out;
  out.chunks = std::max(1.0, std::ceil(bytes / (ops * chunk)));
  out.depth = 4 + 2 * tree_levels(s);
  out.fill = pipeline_fill(c, 4, 2 * tree_levels(s), nvls_factor(row, Protocol::Simple, s) * kNvlsShare);
  out.messages = 2.0 * tree_levels(s) * kNvlsChannels;
  return out;
}

// --- closed forms ---------------------------------------------------------------

double ring_allreduce(const ClusterSpec& c, NcclShape s, double bytes, const NcclCost& cost) {
  return cm::ring_allreduce_time(s.ranks, bytes, collective_link(c, s), cost);
}
double ring_allgather(const ClusterSpec& c, NcclShape s, double bytes, const NcclCost& cost) {
  return cm::ring_allgather_time(s.ranks, bytes, collective_link(c, s), cost);
}
double tree_allreduce(const ClusterSpec& c, NcclShape s, double bytes, const NcclCost& cost) {
  return cm::tree_allreduce_time(collective_node_sizes(c, s.ranks), bytes, tree_links(c), cost);
}
// The tree's links as NCCL's tuning model sees them: the collective link for
// every flow (tuning.cc gives tree and ring the same nChannels x bw; its
// bandwidth already holds the connection cap and a host path's share), not
// the platform's link classes (tree_links).
double tree_allreduce_tuning(const ClusterSpec& c, NcclShape s, double bytes, const NcclCost& cost) {
  const cm::AlphaBeta flat = collective_link(c, s);
  const double none = std::numeric_limits<double>::infinity();
  return cm::tree_allreduce_time(collective_node_sizes(c, s.ranks), bytes, cm::TreeLinks{flat, flat, none, none}, cost);
}
double nvls_allreduce(const ClusterSpec& c, NcclShape s, double bytes, const NcclCost& cost) {
  return cm::nvls_allreduce_time(s.ranks, bytes, collective_link(c, s), cost);
}
// NVLS+tree: the engine's flows on the platform's link classes (tree_links).
double nvlstree_allreduce(const ClusterSpec& c, NcclShape s, double bytes, const NcclCost& cost) {
  return cm::nvlstree_allreduce_time(s.nodes, s.ranks / s.nodes, bytes, tree_links(c), cost);
}
// As NCCL's tuning model prices NVLS+tree: the GPU's NVLS bandwidth (the
// one-node NVLS link) against the node's NICs (capped by its GPUs' connections).
double nvlstree_allreduce_tuning(const ClusterSpec& c, NcclShape s, double bytes, const NcclCost& cost) {
  const int g = s.ranks / s.nodes;
  const cm::TreeLinks links = tree_links(c);
  const double inter = std::min(links.inter.bandwidth, g * links.connection);
  return cm::nvlstree_tuning_time(s.nodes, bytes, intra_flow_bandwidth(c, g), inter, links.inter.alpha, cost);
}
double pat(const ClusterSpec& c, NcclShape s, double bytes, const NcclCost& cost) {
  return cm::pat_time(s.ranks, bytes, collective_link(c, s), cost);
}
double pat_tuning(const ClusterSpec& c, NcclShape s, double bytes, const NcclCost& cost) {
  return cm::pat_tuning_time(bytes, collective_link(c, s), cost);
}
// gradwire's own alpha-beta schedules (no NCCL latency model). The
// hierarchical ones: intra-node flows, and one flow per rank out of its node
// while the g groups share the node's NICs.
struct HierarchicalLinks {
  int gpus, nodes;
  cm::AlphaBeta intra, inter;
};
HierarchicalLinks hierarchical_links(const ClusterSpec& c, NcclShape s) {
  const int g = std::min(s.ranks, c.gpus_per_node);
  const double out_cap = std::min(c.intra_node.usable_bandwidth(), connection_limit(c));
  return {g,
          s.nodes,
          {route_latency(c, false), intra_flow_bandwidth(c, g)},
          {route_latency(c, true), std::min(out_cap, node_fabric_bandwidth(c) / g)}};
}
double hierarchical_allreduce(const ClusterSpec& c, NcclShape s, double bytes, const NcclCost&) {
  const HierarchicalLinks h = hierarchical_links(c, s);
  return cm::hierarchical_allreduce_time(h.nodes, h.gpus, bytes, h.intra, h.inter);
}
double hierarchical_alltoall(const ClusterSpec& c, NcclShape s, double bytes, const NcclCost&) {
  const HierarchicalLinks h = hierarchical_links(c, s);
  return cm::hierarchical_alltoall_time(h.nodes, h.gpus, bytes, h.intra, h.inter);
}
double pipeline_broadcast(const ClusterSpec& c, NcclShape s, double bytes, const NcclCost&) {
  return cm::pipeline_broadcast_time(s.ranks, bytes, collective_link(c, s));
}
double direct_alltoall(const ClusterSpec& c, NcclShape s, double bytes, const NcclCost&) {
  return cm::direct_alltoall_time(s.ranks, bytes, collective_link(c, s));
}

// --- refusal rules --------------------------------------------------------------

// LL128 where NCCL 2.20 enables it (ring and tree).
std::string ll128_refusal(const Row&, Protocol p, const ClusterSpec& c, NcclShape) {
  const int cc = gpu_compute_capability(c.gpu);
  if (p != Protocol::LL128 ||
      ((cc == 70 || cc == 80 || cc == 90) && nccl_link_class(c, false) == NcclLinkClass::NVLink))
    return "";
  return "NCCL 2.20 enables LL128 only with NVLink inside the node and a GPU of compute capability 7.0, 8.0 or "
         "9.0 (" +
         c.gpu + ", intra_node transport " + transport_info(c.intra_node.transport).name + ")";
}

// gradwire's own schedules: Simple only.
std::string own_refusal(const Row& row, Protocol p, const ClusterSpec&, NcclShape) {
  return p == Protocol::Simple ? "" : std::string(row.name) + " is gradwire's own schedule and runs Simple only";
}
std::string broadcast_ring_refusal(const Row&, Protocol p, const ClusterSpec&, NcclShape) {
  return p == Protocol::Simple ? "" : "the broadcast ring is gradwire's own schedule and runs Simple only";
}

// " (R ranks on N nodes of G GPUs here)": what a shape rule was checked against.
std::string shape_here(const ClusterSpec& c, NcclShape s) {
  return " (" + std::to_string(s.ranks) + " ranks on " + std::to_string(s.nodes) + " node" + (s.nodes == 1 ? "" : "s") +
         " of " + std::to_string(c.gpus_per_node) + " GPUs here)";
}

// PAT (tuning.cc ncclPatEnable): Simple, one GPU per node, no network offload
// device.
std::string pat_refusal(const Row&, Protocol p, const ClusterSpec& c, NcclShape s) {
  if (p != Protocol::Simple) return "pat runs Simple only";
  if (s.ranks < 2 || s.ranks != s.nodes) return "pat runs at one GPU per node, two ranks or more" + shape_here(c, s);
  if (c.nic.transport == Transport::TCPX)
    return "NCCL turns pat off over a network offload device (nics transport: tcpx)";
  return "";
}

// Why c's nodes are not nodes NVLS runs on, or "": compute capability 90 or
// more, NVSwitch (4 or more GPUs on NVLink, not point-to-point `transport:
// nvlink`).
std::string nvls_node_refusal(const ClusterSpec& c) {
  const int cc = gpu_compute_capability(c.gpu);
  if (cc < 90)
    return "NVLS needs a GPU of compute capability 9.0 or later (" + c.gpu + ": " +
           (cc == 0 ? std::string("not known to gradwire") : std::to_string(cc / 10) + "." + std::to_string(cc % 10)) +
           ")";
  if (c.gpus_per_node < 4)
    return "NVLS needs an NVSwitch node of 4 GPUs or more (" + std::to_string(c.gpus_per_node) + " here)";
  if (nccl_link_class(c, false) != NcclLinkClass::NVLink)
    return std::string("NVLS needs NVLink inside the node (intra_node transport: ") +
           transport_info(c.intra_node.transport).name + ")";
  if (c.intra_node.transport == Transport::NVLink)
    return "NVLS needs an NVSwitch; intra_node `transport: nvlink` is point to point (nvswitch is the switch)";
  return "";
}

// NVLS: Simple, on one NVLS node.
std::string nvls_refusal(const Row&, Protocol p, const ClusterSpec& c, NcclShape s) {
  if (p != Protocol::Simple) return "nvls runs Simple only";
  if (s.nodes != 1)
    return "nvls runs inside one node, not across " + std::to_string(s.nodes) +
           " (NCCL's NVLS across nodes is nvlstree)";
  if (const std::string node = nvls_node_refusal(c); !node.empty()) return "nvls: " + node;
  return "";
}

// NVLS+tree (NCCL's NVLS_TREE; tuning.cc disables it on one node): Simple, two
// or more NVLS nodes, whole (the engine's rails need the same ranks on every node).
std::string nvlstree_refusal(const Row&, Protocol p, const ClusterSpec& c, NcclShape s) {
  if (p != Protocol::Simple) return "nvlstree runs Simple only";
  if (s.nodes < 2) return "nvlstree runs across two nodes or more (inside one node: nvls)";
  if (const std::string node = nvls_node_refusal(c); !node.empty()) return "nvlstree: " + node;
  if (s.ranks != s.nodes * c.gpus_per_node) return "nvlstree runs on whole nodes, every GPU of each" + shape_here(c, s);
  return "";
}

// --- the table ----------------------------------------------------------------

using A = Algorithm;
using Op = CollectiveOp;

// One row per (algorithm, op); fields left out are the defaults of
// AlgorithmRow (no note, no NCCL form, not chosen by NCCL's rule, not a
// scenario's choice).
const std::vector<Row>& rows() {
  // A row per (algorithm, op), its fields kept together: not reflowed.
  // clang-format off
  static const std::vector<Row> table{
      {.algorithm = A::Ring, .op = Op::AllReduce, .name = "ring", .nccl_row = kRingRow, .factor = &ring_factor,
       .latency_us = &ring_latency_us, .trims_channels = true, .pipeline = &ring_pipeline,
       .closed_form = &ring_allreduce,
       .refusal = &ll128_refusal, .nccl_rule = true, .scenario = true},
      {.algorithm = A::Ring, .op = Op::AllGather, .name = "ring", .nccl_row = kRingRow, .factor = &ring_factor,
       .latency_us = &ring_latency_us, .trims_channels = true, .pipeline = &ring_pipeline,
       .closed_form = &ring_allgather,
       .refusal = &ll128_refusal, .nccl_rule = true},
      {.algorithm = A::Ring, .op = Op::ReduceScatter, .name = "ring", .nccl_row = kRingRow, .factor = &ring_factor,
       .latency_us = &ring_latency_us, .trims_channels = true, .pipeline = &ring_pipeline,
       .closed_form = &ring_allgather,
       .refusal = &ll128_refusal, .nccl_rule = true},
      {.algorithm = A::Ring, .op = Op::Broadcast, .name = "ring", .closed_form = &pipeline_broadcast,
       .refusal = &broadcast_ring_refusal, .nccl_rule = true},
      {.algorithm = A::Tree, .op = Op::AllReduce, .name = "tree", .nccl_row = kTreeRow, .factor = &tree_factor,
       .latency_us = &tree_latency_us, .size_correction = &nccl_tree_correction, .trims_channels = true,
       .pipeline = &tree_pipeline, .closed_form = &tree_allreduce, .tuning_form = &tree_allreduce_tuning,
       .refusal = &ll128_refusal, .nccl_rule = true, .scenario = true},
      {.algorithm = A::NVLS, .op = Op::AllReduce, .name = "nvls", .note = ", one NVSwitch node of H100/H200/B200 class",
       .nccl_row = kNvlsRow, .factor = &nvls_factor, .latency_us = &nvls_latency_us, .pipeline = &nvls_pipeline,
       .run_share = kNvlsShare, .closed_form = &nvls_allreduce,
       .refusal = &nvls_refusal, .nccl_rule = true},
      {.algorithm = A::NvlsTree, .op = Op::AllReduce, .name = "nvlstree",
       .note = ", NCCL's NVLSTree: two or more such nodes", .nccl_row = kNvlsTreeRow, .factor = &nvls_factor,
       .latency_us = &nvlstree_latency_us, .pipeline = &nvlstree_pipeline, .run_share = kNvlsShare,
       .plain_network = true, .closed_form = &nvlstree_allreduce,
       .tuning_form = &nvlstree_allreduce_tuning, .refusal = &nvlstree_refusal, .nccl_rule = true},
      {.algorithm = A::Pat, .op = Op::AllGather, .name = "pat", .note = ": NCCL 2.23's PAT at one GPU per node",
       .factor = &pat_factor, .latency_us = &pat_latency_us, .closed_form = &pat, .tuning_form = &pat_tuning,
       .refusal = &pat_refusal, .nccl_rule = true},
      {.algorithm = A::Pat, .op = Op::ReduceScatter, .name = "pat", .factor = &pat_factor,
       .latency_us = &pat_latency_us, .closed_form = &pat, .tuning_form = &pat_tuning, .refusal = &pat_refusal,
       .nccl_rule = true},
      {.algorithm = A::Hierarchical, .op = Op::AllReduce, .name = "hierarchical", .note = "; gradwire's, not NCCL's",
       .closed_form = &hierarchical_allreduce, .refusal = &own_refusal, .scenario = true},
      {.algorithm = A::Direct, .op = Op::AllToAll, .name = "direct", .closed_form = &direct_alltoall,
       .refusal = &own_refusal, .nccl_rule = true},
      {.algorithm = A::Hierarchical, .op = Op::AllToAll, .name = "hierarchical", .closed_form = &hierarchical_alltoall,
       .refusal = &own_refusal},
  };
  // clang-format on
  return table;
}

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// "a, b and c" (or "a" alone).
std::string listed(const std::vector<std::string>& items, const char* last = " and ") {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) out += (i == 0 ? "" : i + 1 == items.size() ? last : ", ") + items[i];
  return out;
}

std::vector<std::string> op_names(Algorithm a) {
  std::vector<std::string> names;
  for (CollectiveOp op : algorithm_ops(a)) names.push_back(to_string(op));
  return names;
}

// The algorithms of the rows, each once, in the rows' order.
std::vector<Algorithm> row_algorithms() {
  std::vector<Algorithm> out;
  for (const Row& r : rows())
    if (std::find(out.begin(), out.end(), r.algorithm) == out.end()) out.push_back(r.algorithm);
  return out;
}

}  // namespace

const std::vector<AlgorithmRow>& algorithm_rows() { return rows(); }

const AlgorithmRow* find_algorithm_row(CollectiveOp op, Algorithm a) {
  for (const Row& r : rows())
    if (r.op == op && r.algorithm == a) return &r;
  return nullptr;
}

std::vector<CollectiveOp> algorithm_ops(Algorithm a) {
  std::vector<CollectiveOp> ops;
  for (const Row& r : rows())
    if (r.algorithm == a) ops.push_back(r.op);
  return ops;
}

std::string listed_ops(Algorithm a) { return listed(op_names(a)); }

std::string to_string(Algorithm a) {
  if (a == Algorithm::Auto) return "auto";
  for (const Row& r : rows())
    if (r.algorithm == a) return r.name;
  return "?";
}

std::vector<std::string> algorithm_names() {
  std::vector<std::string> names{to_string(Algorithm::Auto)};
  for (Algorithm a : row_algorithms()) names.push_back(to_string(a));
  return names;
}

Algorithm parse_algorithm(const std::string& s) {
  const std::string name = lower(s);
  if (name == to_string(Algorithm::Auto)) return Algorithm::Auto;
  for (const Row& r : rows())
    if (name == r.name) return r.algorithm;
  std::string names;
  for (const auto& n : algorithm_names()) names += (names.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown algorithm '" + s + "' (" + names + ")");
}

std::string algorithm_help() {
  std::string out;
  for (Algorithm a : row_algorithms()) {
    const AlgorithmRow& first = *find_algorithm_row(algorithm_ops(a).front(), a);
    out += (out.empty() ? "" : ", ") + to_string(a) + " (" + listed(op_names(a), ", ") + first.note + ")";
  }
  return out;
}

std::string algorithms_by_ops() {
  std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> groups;  // ops, algorithms
  for (Algorithm a : row_algorithms()) {
    const std::vector<std::string> ops = op_names(a);
    auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.first == ops; });
    if (g == groups.end())
      groups.push_back({ops, {to_string(a)}});
    else
      g->second.push_back(to_string(a));
  }
  std::string out;
  for (const auto& [ops, algorithms] : groups)
    out += (out.empty() ? "" : "; ") + listed(algorithms) + " for " + listed(ops);
  return out;
}

std::vector<std::string> scenario_algorithm_names() {
  std::vector<std::string> names{to_string(Algorithm::Auto)};
  for (const Row& r : rows())
    if (r.scenario && r.op == CollectiveOp::AllReduce) names.push_back(r.name);
  return names;
}

}  // namespace gw
