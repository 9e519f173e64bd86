// NCCL's cost structure (gradwire/model/nccl_model.hpp). Every constant is
// NCCL 2.20.3's, src/graph/tuning.cc, but PAT's (NCCL 2.23+, tuning.cc; 2.20.3
// has no PAT); docs/engine.md ("NCCL's cost model", "PAT") documents each one.
#include "gradwire/model/nccl_model.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <iterator>
#include <stdexcept>

namespace gw {
namespace {

constexpr std::array<Algorithm, 8> kAlgorithms{Algorithm::Ring,     Algorithm::Tree, Algorithm::NVLS,
                                               Algorithm::NvlsTree, Algorithm::Pat,  Algorithm::Hierarchical,
                                               Algorithm::Direct,   Algorithm::Auto};
constexpr std::array<Protocol, 4> kProtocols{Protocol::LL, Protocol::LL128, Protocol::Simple, Protocol::Auto};

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// Index of the NCCL algorithms with a latency table: tree 0, ring 1, nvls 2,
// nvlstree 3.
int table_row(Algorithm a) {
  return a == Algorithm::Tree ? 0 : a == Algorithm::Ring ? 1 : a == Algorithm::NvlsTree ? 3 : 2;
}
int proto_index(Protocol p) { return p == Protocol::LL ? 0 : p == Protocol::LL128 ? 1 : 2; }

// tuning.cc baseLat (us): {LL, LL128, Simple} for tree, ring, nvls, nvlstree.
constexpr double kBaseLat[4][3] = {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}};
// tuning.cc hwLat (us) [NVLink, PCI, Net][tree, ring, nvls, nvlstree][LL,
// LL128, Simple].
constexpr double kHwLat[3][4][3] = {
    {{.6, 1.25, 28}, {.6, 1.9, 3.4}, {0, 0, 23}, {0, 0, 23}},
    {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}, {0, 0, 0}, {0, 0, 0}},
    {{5.0, 8.5, 28}, {2.7, 4.0, 14.0}, {0, 0, 18}, {0, 0, 14}},
};
// tuning.cc llMaxBws (GB/s): LL's bus-bandwidth cap, [Volta, Ampere, Hopper
// on one node; Intel, AMD CPUs across nodes][1 node, 2 nodes, more].
constexpr double kLlMaxBw[3][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {87.7, 22.5, 19.0}};
// tuning.cc treeCorrectionFactor[protocol][log2(bytes / 64)], 64 B .. 256 MiB.
constexpr double kTreeCorrection[3][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};
constexpr double kNetOverheadUs = 1.0;  // getNetOverhead(): x86 Intel (gradwire assumes the CPU)
// PAT (tuning.cc, NCCL 2.23+): busBw x 0.75; latency 8 us + log2i(nodes) x
// (interLat / 3.5) + 2.8 us per rank, interLat the tree's network latency
// (NCCL: "with ppn=1 latencies are fully exposed, use the Tree network
// latency"; hwLat's Net/Tree/Simple, here 2.20.3's table).
constexpr double kPatFactor = 0.75;
constexpr double kPatBaseUs = 8.0;
constexpr double kPatLogDivisor = 3.5;
constexpr double kPatPerRankUs = 2.8;

// Channels (docs/engine.md "Channels"). search.cc's speed tables (GB/s per
// channel): speedArrayIntra / speedArrayInter, sm90SpeedArrayIntra /
// sm90SpeedArrayInter (compute capability 90 and up).
constexpr double kSpeedIntra[] = {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
constexpr double kSpeedInter[] = {48, 30, 28, 24, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3, 2.4, 1.2, 0.24, 0.12};
constexpr double kSm90SpeedIntra[] = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
constexpr double kSm90SpeedInter[] = {48, 45, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12};
constexpr int kMaxChannels = 32;                 // MAXCHANNELS (device.h)
constexpr int kSearchMaxChannels = kMaxChannels / 2;  // init.cc: ringGraph->maxChannels
constexpr double kDupSpeed = 25.0;               // search.cc: duplicate channels when bwIntra >= 25
constexpr double kPciBw = 12.0;                  // topo.h PCI_BW: ring Simple runs 256 threads at or below it
// device.h NCCL_{LL,LL128,SIMPLE}_MAX_NTHREADS; comm.h NCCL_*_THREAD_THRESHOLD.
constexpr int kMaxThreads[3] = {512, 640, 512};
constexpr int kThreadThreshold[3] = {8, 8, 64};

struct SearchResult {
  int channels = 1;
  double speed = 0;
};

// The ring search: per speed s (from the largest at most the GPU's peak path
// bandwidth), the channels fitting the budgets; the best channels x s,
// stopping at the first that fills the budget, or once the next speed is
// below .49 of the best found.
SearchResult ring_search(const ClusterSpec& c, int nodes) {
  const bool sm90 = gpu_compute_capability(c.gpu) >= 90;
  const bool net = nodes > 1;
  const double* speeds = net ? (sm90 ? kSm90SpeedInter : kSpeedInter) : (sm90 ? kSm90SpeedIntra : kSpeedIntra);
  const int count = static_cast<int>(net ? (sm90 ? std::size(kSm90SpeedInter) : std::size(kSpeedInter))
                                         : (sm90 ? std::size(kSm90SpeedIntra) : std::size(kSpeedIntra)));
  const double intra = c.gpus_per_node > 1 ? c.intra_node.usable_bandwidth() / 1e9 : 0;
  const double nic = c.nic.usable_bandwidth() / 1e9;
  const double peak = net ? nic : intra;
  const double total = net ? nic * c.nic_count : intra;
  auto fit = [&](double s) {
    int ch = kSearchMaxChannels;
    if (c.gpus_per_node > 1) ch = std::min(ch, static_cast<int>(intra / s + 1e-9));
    if (net) ch = std::min(ch, c.nic_count * static_cast<int>(nic / s + 1e-9));
    return ch;
  };
  int i = 0;
  while (i < count - 1 && speeds[i] > peak) ++i;
  SearchResult best{0, 0};
  for (; i < count; ++i) {
    if (best.channels > 0 && speeds[i] / best.speed <= .49) break;
    const int ch = fit(speeds[i]);
    if (ch * speeds[i] > best.channels * best.speed) best = {ch, speeds[i]};
    if (best.channels > 0 && best.channels * best.speed >= total) break;
  }
  if (best.channels == 0) best = {1, speeds[count - 1]};
  return best;
}

int max_threads(Algorithm a, Protocol p, const ClusterSpec& c, int nodes) {
  if (a == Algorithm::Ring && p == Protocol::Simple) {
    const SearchResult r = ring_search(c, nodes);
    if (r.channels * r.speed <= kPciBw) return 256;
  }
  return kMaxThreads[proto_index(p)];
}

int log2i(double v) {
  int r = 0;
  while (v >= 2) {
    v /= 2;
    ++r;
  }
  return r;
}

double hw_lat(NcclLinkClass k, Algorithm a, Protocol p) {
  return kHwLat[static_cast<int>(k)][table_row(a)][proto_index(p)];
}

bool ll128_enabled(const ClusterSpec& c) {
  const int cc = gpu_compute_capability(c.gpu);
  return (cc == 70 || cc == 80 || cc == 90) && nccl_link_class(c, false) == NcclLinkClass::NVLink;
}

double ll_cap(const ClusterSpec& c, int nodes) {
  const int cc = gpu_compute_capability(c.gpu);
  const int index1 = nodes == 1 ? (cc >= 90 ? 2 : cc >= 80 ? 1 : 0) : 0;
  const int index2 = nodes <= 2 ? nodes - 1 : 2;
  return kLlMaxBw[index1][index2] * 1e9;
}

// The bus-bandwidth factor of the pair before LL's cap (tuning.cc "Various
// model refinements" and the algorithm-bandwidth ratio of NVLS).
double protocol_factor(CollectiveOp op, Algorithm a, Protocol p, NcclShape s) {
  const double ppn = static_cast<double>(s.ranks) / s.nodes;
  if (a == Algorithm::Ring) {
    if (p == Protocol::LL) return (s.nodes > 1 || op == CollectiveOp::AllReduce) ? 1.0 / 4 : 1.0 / 3;
    if (p == Protocol::LL128) return ppn < 2 ? 0.7 : 0.92;
    return 1.0;
  }
  if (a == Algorithm::Tree) {
    if (p == Protocol::LL) return 0.92 / 3.8;
    if (p == Protocol::LL128) return 0.92 * (s.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0);
    return 0.92;
  }
  if (a == Algorithm::Pat) return kPatFactor;
  return 5.0 / 6.0;  // NVLS, NVLS+tree: algorithm bandwidth = 5/6 of the bus bandwidth
}

double pat_latency_us(NcclShape s) {
  const double inter = kHwLat[static_cast<int>(NcclLinkClass::Net)][table_row(Algorithm::Tree)][2];
  return kPatBaseUs + log2i(s.nodes) * (inter / kPatLogDivisor) + s.ranks * kPatPerRankUs;
}

double ring_latency_us(CollectiveOp op, Protocol p, const ClusterSpec& c, NcclShape s) {
  const int n = s.ranks, m = s.nodes;
  const bool ar = op == CollectiveOp::AllReduce;
  const int steps = ar ? 2 * (n - 1) : n - 1;
  // NCCL counts 2m inter-node steps for a multi-node all-reduce; at one rank
  // per node that is more than the 2(n-1) steps there are: every step is then
  // inter-node.
  const int inter_steps = std::min(steps, ar ? (m > 1 ? 2 * m : 0) : m - 1);
  double intra = hw_lat(nccl_link_class(c, false), Algorithm::Ring, p);
  const double inter = hw_lat(NcclLinkClass::Net, Algorithm::Ring, p);
  if (m > 1) intra = std::max(intra, kNetOverheadUs * (p == Protocol::Simple ? 3 : 1));
  return kBaseLat[1][proto_index(p)] + (steps - inter_steps) * intra + inter_steps * inter;
}

}  // namespace

std::string to_string(Algorithm a) {
  switch (a) {
    case Algorithm::Ring: return "ring";
    case Algorithm::Tree: return "tree";
    case Algorithm::NVLS: return "nvls";
    case Algorithm::NvlsTree: return "nvlstree";
    case Algorithm::Pat: return "pat";
    case Algorithm::Hierarchical: return "hierarchical";
    case Algorithm::Direct: return "direct";
    case Algorithm::Auto: return "auto";
  }
  return "?";
}

std::string to_string(Protocol p) {
  switch (p) {
    case Protocol::LL: return "LL";
    case Protocol::LL128: return "LL128";
    case Protocol::Simple: return "Simple";
    case Protocol::Auto: return "auto";
  }
  return "?";
}

std::vector<std::string> algorithm_names() {
  std::vector<std::string> names{to_string(Algorithm::Auto)};
  for (auto a : kAlgorithms)
    if (a != Algorithm::Auto) names.push_back(to_string(a));
  return names;
}

std::vector<std::string> protocol_names() {
  std::vector<std::string> names{to_string(Protocol::Auto)};
  for (auto p : kProtocols)
    if (p != Protocol::Auto) names.push_back(to_string(p));
  return names;
}

namespace {
std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}
}  // namespace

Algorithm parse_algorithm(const std::string& s) {
  for (auto a : kAlgorithms)
    if (lower(s) == to_string(a)) return a;
  throw std::invalid_argument("unknown algorithm '" + s + "' (" + joined(algorithm_names()) + ")");
}

Protocol parse_protocol(const std::string& s) {
  for (auto p : kProtocols)
    if (lower(s) == lower(to_string(p))) return p;
  throw std::invalid_argument("unknown protocol '" + s + "' (" + joined(protocol_names()) + ")");
}

const std::vector<ProtocolInfo>& protocols() {
  static const std::vector<ProtocolInfo> table{
      {Protocol::LL, "LL", 4.0 / 8.0},
      {Protocol::LL128, "LL128", 120.0 / 128.0},
      {Protocol::Simple, "Simple", 1.0},
  };
  return table;
}

int nccl_comm_channels(const ClusterSpec& c, int nodes) {
  const SearchResult r = ring_search(c, nodes);
  int channels = r.channels;
  if (r.speed >= kDupSpeed) channels = std::min(2 * channels, kSearchMaxChannels);
  return std::min(2 * channels, kMaxChannels);
}

NcclChannels nccl_channels(Algorithm a, Protocol p, const ClusterSpec& c, NcclShape shape, double bytes) {
  NcclChannels ch;
  if (a != Algorithm::Ring && a != Algorithm::Tree) return ch;  // NVLS keeps its channels; gradwire's own: none
  ch.max_channels = ch.channels = nccl_comm_channels(c, shape.nodes);
  ch.max_threads = ch.threads = max_threads(a, p, c, shape.nodes);
  double threshold = kThreadThreshold[proto_index(p)];
  if (a == Algorithm::Ring && p == Protocol::LL) threshold *= shape.ranks;
  while (bytes < ch.channels * ch.threads * threshold) {
    if (ch.channels >= 2) {
      --ch.channels;
    } else if (ch.threads % 128 == 0) {
      ch.threads /= 2;
    } else {
      break;
    }
  }
  return ch;
}

NcclLinkClass nccl_link_class(const ClusterSpec& c, bool crosses_nodes) {
  return crosses_nodes ? NcclLinkClass::Net : transport_info(c.intra_node.transport).nccl_class;
}

int gpu_compute_capability(const std::string& gpu) {
  static const std::pair<const char*, int> table[] = {
      {"v100", 70}, {"rtx-2080ti", 75}, {"a100-40gb", 80}, {"a100-80gb", 80}, {"a100", 80},
      {"a10g", 86}, {"l4", 89},         {"h100", 90},      {"h200", 90},      {"b200", 100},
  };
  for (const auto& [name, cc] : table)
    if (gpu == name) return cc;
  return 0;
}

namespace {
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

// Why gradwire's own schedules (hierarchical, direct, the broadcast ring) do
// not run the pair, or "": Simple only, on the ops they implement.
std::string own_pair_refusal(CollectiveOp op, Algorithm a, Protocol p) {
  if (a == Algorithm::Hierarchical && op != CollectiveOp::AllReduce) return "hierarchical is for allreduce";
  if (a == Algorithm::Direct && op != CollectiveOp::AllToAll) return "direct is for alltoall";
  if (a == Algorithm::Ring && op == CollectiveOp::AllToAll) return "alltoall runs as direct sends, not a ring";
  if (p != Protocol::Simple)
    return (a == Algorithm::Ring ? std::string("the broadcast ring") : to_string(a)) +
           " is gradwire's own schedule and runs Simple only";
  return "";
}

// " (R ranks on N nodes of G GPUs here)": what a shape rule was checked against.
std::string shape_here(const ClusterSpec& c, NcclShape s) {
  return " (" + std::to_string(s.ranks) + " ranks on " + std::to_string(s.nodes) + " node" +
         (s.nodes == 1 ? "" : "s") + " of " + std::to_string(c.gpus_per_node) + " GPUs here)";
}

// PAT (tuning.cc ncclPatEnable): all-gather and reduce-scatter, Simple, one
// GPU per node, no network offload device.
std::string pat_refusal(CollectiveOp op, Protocol p, const ClusterSpec& c, NcclShape s) {
  if (op != CollectiveOp::AllGather && op != CollectiveOp::ReduceScatter)
    return "pat is for allgather and reducescatter";
  if (p != Protocol::Simple) return "pat runs Simple only";
  if (s.ranks < 2 || s.ranks != s.nodes) return "pat runs at one GPU per node, two ranks or more" + shape_here(c, s);
  if (c.nic.transport == Transport::TCPX)
    return "NCCL turns pat off over a network offload device (nics transport: tcpx)";
  return "";
}

// NVLS (one node) and NVLS+tree (two or more whole nodes): Simple, on NVLS nodes.
std::string nvls_refusal(Algorithm a, Protocol p, const ClusterSpec& c, NcclShape s) {
  const std::string name = to_string(a);
  if (p != Protocol::Simple) return name + " runs Simple only";
  if (a == Algorithm::NVLS && s.nodes != 1)
    return "nvls runs inside one node, not across " + std::to_string(s.nodes) +
           " (NCCL's NVLS across nodes is nvlstree)";
  if (a == Algorithm::NvlsTree && s.nodes < 2) return "nvlstree runs across two nodes or more (inside one node: nvls)";
  if (const std::string node = nvls_node_refusal(c); !node.empty()) return name + ": " + node;
  if (a == Algorithm::NvlsTree && s.ranks != s.nodes * c.gpus_per_node)
    return "nvlstree runs on whole nodes, every GPU of each" + shape_here(c, s);
  return "";
}

}  // namespace

std::string nccl_pair_refusal(CollectiveOp op, Algorithm a, Protocol p, const ClusterSpec& c, NcclShape s) {
  if (a == Algorithm::Auto || p == Protocol::Auto) return "auto is a rule, not a pair";
  const bool nccl_ring = a == Algorithm::Ring && op != CollectiveOp::Broadcast && op != CollectiveOp::AllToAll;
  if (!nccl_ring && a != Algorithm::Tree && a != Algorithm::NVLS && a != Algorithm::NvlsTree && a != Algorithm::Pat)
    return own_pair_refusal(op, a, p);
  if (a == Algorithm::Pat) return pat_refusal(op, p, c, s);
  if (a != Algorithm::Ring && op != CollectiveOp::AllReduce) return to_string(a) + " is for allreduce";
  if (a == Algorithm::NVLS || a == Algorithm::NvlsTree) return nvls_refusal(a, p, c, s);
  if (p == Protocol::LL128 && !ll128_enabled(c))
    return "NCCL 2.20 enables LL128 only with NVLink inside the node and a GPU of compute capability 7.0, 8.0 or "
           "9.0 (" + c.gpu + ", intra_node transport " + transport_info(c.intra_node.transport).name + ")";
  return "";
}

std::optional<NcclCost> nccl_cost(CollectiveOp op, Algorithm a, Protocol p, const ClusterSpec& c, NcclShape s,
                                  double bytes, double link_bandwidth) {
  if (s.ranks < 1 || s.nodes < 1) throw std::invalid_argument("NCCL cost over no ranks");
  if (!nccl_pair_refusal(op, a, p, c, s).empty()) return std::nullopt;
  if (a == Algorithm::Hierarchical || a == Algorithm::Direct ||
      (a == Algorithm::Ring && op == CollectiveOp::Broadcast))
    return NcclCost{};
  if (s.ranks == 1) return NcclCost{};
  NcclCost cost;
  // NCCL's factor on every channel (tuning) and on the channels this size
  // gets, each channel an equal share; LL's cap bounds the sum either way.
  const double factor = protocol_factor(op, a, p, s);
  const double share = factor * nccl_channels(a, p, c, s, bytes).fraction();
  const double cap = (p == Protocol::LL && link_bandwidth > 0) ? ll_cap(c, s.nodes) / link_bandwidth : factor;
  cost.tuning_efficiency = std::min(factor, cap);
  cost.efficiency = std::min(share, cap);
  const int i = proto_index(p);
  const double intra = hw_lat(nccl_link_class(c, false), a, p);
  double us = 0;
  if (a == Algorithm::Ring) {
    us = ring_latency_us(op, p, c, s);
  } else if (a == Algorithm::Tree) {
    const int ppn = s.ranks / s.nodes;
    us = kBaseLat[0][i] + 2 * ((ppn - 1) * intra + log2i(s.nodes) * hw_lat(NcclLinkClass::Net, a, p));
    const int log_size = log2i(bytes / 64);
    if (log_size < 23) {
      cost.efficiency *= kTreeCorrection[i][log_size];
      cost.tuning_efficiency *= kTreeCorrection[i][log_size];
    }
  } else if (a == Algorithm::Pat) {
    us = pat_latency_us(s);
  } else if (a == Algorithm::NvlsTree) {
    // NVLS inside the node, then up and down the trees across nodes.
    us = intra + 2 * log2i(s.nodes) * hw_lat(NcclLinkClass::Net, a, p);
  } else {
    us = intra;  // NVLS on one node
  }
  cost.latency = us * 1e-6;
  return cost;
}

std::vector<Algorithm> nccl_algorithms(CollectiveOp op) {
  if (op == CollectiveOp::AllReduce) return {Algorithm::Ring, Algorithm::Tree, Algorithm::NVLS, Algorithm::NvlsTree};
  if (op == CollectiveOp::AllToAll) return {Algorithm::Direct};
  if (op == CollectiveOp::AllGather || op == CollectiveOp::ReduceScatter) return {Algorithm::Ring, Algorithm::Pat};
  return {Algorithm::Ring};
}

}  // namespace gw
