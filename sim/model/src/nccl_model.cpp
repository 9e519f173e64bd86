// NCCL's cost structure (gradwire/model/nccl_model.hpp). Every constant is
// NCCL 2.20.3's, src/graph/tuning.cc; PAT's (NCCL 2.23+) and the forms each
// algorithm applies sit on its rows (collective_algorithms.cpp);
// docs/engine.md ("NCCL's cost model", "PAT") documents each one.
#include "gradwire/model/nccl_model.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <iterator>
#include <stdexcept>

namespace gw {
namespace {

constexpr std::array<Protocol, 4> kProtocols{Protocol::LL, Protocol::LL128, Protocol::Simple, Protocol::Auto};

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
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

// Channels (docs/engine.md "Channels"). search.cc's speed tables (GB/s per
// channel): speedArrayIntra / speedArrayInter, sm90SpeedArrayIntra /
// sm90SpeedArrayInter (compute capability 90 and up).
constexpr double kSpeedIntra[] = {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
constexpr double kSpeedInter[] = {48, 30, 28, 24, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3, 2.4, 1.2, 0.24, 0.12};
constexpr double kSm90SpeedIntra[] = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
constexpr double kSm90SpeedInter[] = {48, 45, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12};
constexpr int kMaxChannels = 32;                      // MAXCHANNELS (device.h)
constexpr int kSearchMaxChannels = kMaxChannels / 2;  // init.cc: ringGraph->maxChannels
constexpr double kDupSpeed = 25.0;                    // search.cc: duplicate channels when bwIntra >= 25
constexpr double kPciBw = 12.0;                       // topo.h PCI_BW: ring Simple runs 256 threads at or below it
// device.h NCCL_{LL,LL128,SIMPLE}_MAX_NTHREADS; comm.h NCCL_*_THREAD_THRESHOLD.
constexpr int kMaxThreads[3] = {512, 640, 512};
constexpr int kThreadThreshold[3] = {8, 8, 64};

// The per-size ramp's constants: fitted once by least squares over every
// devset collective case at the same time (`gradwire validate collectives`
// prints the fit beside these; ValidateBundled.CompiledRampEqualsTheDevsetFit
// holds them to it). docs/engine.md ("The per-size ramp") lists the cases
// each one is fitted on and its residual.
constexpr NcclRamp kRamp{
    .launch = 4.360e-6,  // t_launch (s): every case
    .stage = 3.564e-6,   // t_stage (s): the NVLS pipelines (A1, A11 NVLS; A6 NVLS+tree)
    .proxy = 4.617e-6,   // o_proxy (s per message): socket / tcpx cases (A4a, A4b, A6, A8*)
};

// init.cc's buffers: LL 8 lines x 512 threads x NCCL_STEPS x 16 B; LL128 120
// words x 640 threads x NCCL_STEPS x 8 B; Simple NCCL_BUFFSIZE 4 MiB.
constexpr int kNcclSteps = 8;  // device.h NCCL_STEPS
constexpr double kBufferBytes[3] = {8.0 * 512 * kNcclSteps * 16, 120.0 * 640 * kNcclSteps * 8, 4.0 * 1024 * 1024};
constexpr int kRingChunkSteps = kNcclSteps / 2;  // collectives.h ALLREDUCE_CHUNKSTEPS (ring, Simple)

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

double ll_cap(const ClusterSpec& c, int nodes) {
  const int cc = gpu_compute_capability(c.gpu);
  const int index1 = nodes == 1 ? (cc >= 90 ? 2 : cc >= 80 ? 1 : 0) : 0;
  const int index2 = nodes <= 2 ? nodes - 1 : 2;
  return kLlMaxBw[index1][index2] * 1e9;
}

// The per-size ramp on NCCL's cost (docs/engine.md "The per-size ramp"): the
// row's run share (NVLS's channels), the pipeline fill K / (K + fill) on the
// efficiency, the launch floor and the stages' hand-offs as ramp_latency, the
// proxy's messages on a host-proxied network as proxy_time (collective_cost
// overlaps them with the transfer). tuning_efficiency keeps none of it.
void apply_ramp(NcclCost& cost, const AlgorithmRow& row, Protocol p, const ClusterSpec& c, NcclShape s, double bytes,
                const NcclRamp& ramp) {
  const NcclPipeline pipe = row.pipeline ? row.pipeline(row, p, c, s, bytes) : NcclPipeline{};
  cost.efficiency *= row.run_share * pipe.chunks / (pipe.chunks + pipe.fill);
  cost.ramp_latency = ramp.launch + ramp.stage * (pipe.depth - 1);
  cost.proxy_time = s.nodes > 1 && host_proxied_network(c) ? ramp.proxy * pipe.messages : 0.0;
}

}  // namespace

std::string to_string(Protocol p) {
  switch (p) {
    case Protocol::LL:
      return "LL";
    case Protocol::LL128:
      return "LL128";
    case Protocol::Simple:
      return "Simple";
    case Protocol::Auto:
      return "auto";
  }
  return "?";
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
  if (c.network.nccl_channels > 0) return c.network.nccl_channels;  // forced (NCCL_MIN/MAX_NCHANNELS)
  const SearchResult r = ring_search(c, nodes);
  int channels = r.channels;
  if (r.speed >= kDupSpeed) channels = std::min(2 * channels, kSearchMaxChannels);
  return std::min(2 * channels, kMaxChannels);
}

const NcclRamp& nccl_ramp() { return kRamp; }

double nccl_chunk_bytes(Protocol p, bool ring) {
  const int i = proto_index(p);
  double chunk = kBufferBytes[i] / kNcclSteps * (ring && p == Protocol::Simple ? kRingChunkSteps : 1);
  if (p == Protocol::LL) chunk /= 2;
  if (p == Protocol::LL128) chunk = chunk / 16 * 15;
  return chunk;
}

bool host_proxied_network(const ClusterSpec& c) {
  return c.nic.transport == Transport::Socket || c.nic.transport == Transport::TCPX;
}

NcclChannels nccl_channels(Algorithm a, Protocol p, const ClusterSpec& c, NcclShape shape, double bytes) {
  NcclChannels ch;
  const std::vector<CollectiveOp> ops = algorithm_ops(a);
  if (ops.empty() || !find_algorithm_row(ops.front(), a)->trims_channels) return ch;  // NVLS, PAT keep theirs
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

double nccl_base_latency_us(int row, Protocol p) { return kBaseLat[row][proto_index(p)]; }

double nccl_hw_latency_us(NcclLinkClass k, int row, Protocol p) {
  return kHwLat[static_cast<int>(k)][row][proto_index(p)];
}

double nccl_tree_correction(Protocol p, double bytes) {
  const int log_size = nccl_log2i(bytes / 64);
  return log_size < 23 ? kTreeCorrection[proto_index(p)][log_size] : 1.0;
}

int nccl_log2i(double v) {
  int r = 0;
  while (v >= 2) {
    v /= 2;
    ++r;
  }
  return r;
}

std::string nccl_pair_refusal(CollectiveOp op, Algorithm a, Protocol p, const ClusterSpec& c, NcclShape s) {
  if (a == Algorithm::Auto || p == Protocol::Auto) return "auto is a rule, not a pair";
  const AlgorithmRow* row = find_algorithm_row(op, a);
  if (!row) return to_string(a) + " is for " + listed_ops(a);
  return row->refusal(*row, p, c, s);
}

std::optional<NcclCost> nccl_cost(CollectiveOp op, Algorithm a, Protocol p, const ClusterSpec& c, NcclShape s,
                                  double bytes, double link_bandwidth, const NcclRamp& ramp) {
  if (s.ranks < 1 || s.nodes < 1) throw std::invalid_argument("NCCL cost over no ranks");
  if (!nccl_pair_refusal(op, a, p, c, s).empty()) return std::nullopt;
  const AlgorithmRow& row = *find_algorithm_row(op, a);
  if (!row.factor || s.ranks == 1) return NcclCost{};  // gradwire's own schedules: the platform's latency
  NcclCost cost;
  // NCCL's factor on every channel (tuning) and on the channels this size
  // gets, each channel an equal share; LL's cap bounds the sum either way.
  const double factor = row.factor(row, p, s);
  const double share = factor * nccl_channels(a, p, c, s, bytes).fraction();
  const double cap = (p == Protocol::LL && link_bandwidth > 0) ? ll_cap(c, s.nodes) / link_bandwidth : factor;
  cost.tuning_efficiency = std::min(factor, cap);
  cost.efficiency = std::min(share, cap);
  if (row.size_correction) {
    const double correction = row.size_correction(p, bytes);
    cost.efficiency *= correction;
    cost.tuning_efficiency *= correction;
  }
  cost.latency = row.latency_us(row, p, c, s) * 1e-6;
  apply_ramp(cost, row, p, c, s, bytes, ramp);
  if (row.plain_network) cost.inter_node_ratio = 1.0 / (factor * row.run_share);
  return cost;
}

std::vector<Algorithm> nccl_algorithms(CollectiveOp op) {
  std::vector<Algorithm> out;
  for (const AlgorithmRow& r : algorithm_rows())
    if (r.op == op && r.nccl_rule) out.push_back(r.algorithm);
  return out;
}

}  // namespace gw
