// NCCL's cost structure, defined once: the protocols, the hardware class of a
// route, and NCCL's tuning model (latency per collective and the fraction of
// the link bandwidth each algorithm x protocol delivers), applying each
// algorithm's forms from its row (collective_algorithms.hpp, where the
// algorithms are). Constants from NVIDIA/nccl 2.20.3, src/graph/tuning.cc
// (ncclTopoTuneModel, ncclTopoGetAlgoTime); docs/engine.md ("NCCL's cost
// model") lists each one. PAT, which 2.20.3 lacks, takes its own constants
// (its rows) from tuning.cc of NCCL 2.23 and later (docs/engine.md "PAT"); the
// hardware latency it scales is 2.20.3's.
// The engine (sim/engine) and the closed forms (closed_form.hpp) read the
// costs from here; the choice of the pair per size is closed_form.hpp's
// choose_collective(). Plain C++, no SimGrid.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gradwire/model/collective_algorithms.hpp"
#include "gradwire/model/collectives.hpp"
#include "gradwire/model/scenario.hpp"

namespace gw {

/// NCCL's protocols; auto: the one NCCL's rule picks.
enum class Protocol { LL, LL128, Simple, Auto };

std::string to_string(Protocol p);
/// Case-insensitive, as NCCL_PROTO; throws std::invalid_argument.
Protocol parse_protocol(const std::string& s);
/// The names parse_protocol accepts: auto, then the others in the enum's
/// order (for strict readers and messages).
std::vector<std::string> protocol_names();

/// A protocol: its name and the fraction of the bytes it stores that are data
/// (LL: 8-byte stores carrying 4 data bytes and a 4-byte flag; LL128: 128-byte
/// lines carrying 120 data bytes; Simple: all data, synchronised per chunk).
struct ProtocolInfo {
  Protocol protocol;
  const char* name;
  double wire_efficiency;
};
const std::vector<ProtocolInfo>& protocols();  ///< LL, LL128, Simple

/// NCCL's hardware class of a route on `c` (tuning.cc NCCL_HW_NVLINK/PCI/NET):
/// inter-node routes Net; intra-node routes the class of the intra-node
/// link's transport (transports.hpp: nvlink, nvswitch and the default
/// gpu-link NVLink; pcie and pcie-host PCI). The one place that decides it.
NcclLinkClass nccl_link_class(const ClusterSpec& c, bool crosses_nodes);

/// Where a collective runs: its ranks and the nodes they span.
struct NcclShape {
  int ranks = 1;
  int nodes = 1;
};

/// Compute capability of a GPU type (70 v100, 75 rtx-2080ti, 80 a100-*, 86
/// a10g, 89 l4, 90 h100/h200, 100 b200); 0 for a type gradwire does not know.
int gpu_compute_capability(const std::string& gpu);
/// Why NCCL (or gradwire's own schedules) does not run the pair on `c` at
/// `shape`, in one clause naming the rule and what the cluster has; "" when
/// it runs. The one statement of the rules nccl_cost and choose_collective
/// apply (nccl_cost's nullopt below): an algorithm runs the ops of its rows
/// (collective_algorithms.hpp; "tree is for allreduce"), then its row's
/// refusal rule says the rest:
/// - NVLS: compute capability >= 90 and an NVSwitch node (4 or more GPUs on
///   NVLink: HGX boards; a 2-GPU NVLink bridge has no switch; an intra-node
///   link declared `transport: nvlink`, point to point, has none), one node,
///   Simple;
/// - NVLS+tree (NCCL's NVLS_TREE; tuning.cc disables it on one node): such
///   nodes, two or more of them, each with all its GPUs in the collective
///   (whole nodes: the engine's rails need the same ranks on every node),
///   Simple;
/// - PAT (tuning.cc ncclPatEnable, NCCL 2.23+): Simple, one GPU per node
///   (NCCL's nNodes == nRanks), two ranks or more, and no network device
///   offload (NCCL disables PAT when netDeviceType is not HOST: a TCPX NIC
///   transport);
/// - ring and tree: LL128 where NCCL 2.20 enables it (compute capability 70,
///   80, 90 on NVLink);
/// - hierarchical, direct and the broadcast ring, gradwire's own schedules:
///   Simple only.
std::string nccl_pair_refusal(CollectiveOp op, Algorithm a, Protocol p, const ClusterSpec& c, NcclShape shape);

/// NCCL's model of one (op, algorithm, protocol) on `c`:
///   time = latency + bytes-on-the-links / (link bandwidth x efficiency)
/// latency: NCCL's base + per-hop latencies (seconds); efficiency: the
/// fraction of the link bandwidth the pair delivers at `bytes` (NCCL's
/// per-protocol factors, LL's bandwidth cap, the tree's size correction).
struct NcclCost {
  double latency = 0;
  /// What the collective runs at: NCCL's factor x the share of its channels
  /// and threads NCCL launches at this size (nccl_channels). The engine's
  /// flows carry bytes / efficiency.
  double efficiency = 1;
  /// NCCL's tuning model's own factor (all channels): what NCCL's rule
  /// compares (choose_collective); NCCL picks the pair before it trims the
  /// channels.
  double tuning_efficiency = 1;
  /// The per-size ramp's additive time (seconds; nccl_ramp): the launch floor,
  /// the stages' fixed hand-off (d - 1) x t_stage and, on a host-proxied
  /// network transport, what the proxy's messages take beyond the wire time
  /// (collective_cost). The closed forms add it after max(latency, route
  /// latency), the engine sleeps it after the phases; NCCL's choice leaves it out.
  double ramp_latency = 0;
  /// The proxy's messages in sequence, M x o_proxy (s), before collective_cost
  /// overlaps them with the transfer (it folds the excess into ramp_latency
  /// and sets this to 0).
  double proxy_time = 0;
  /// Flows that cross nodes run at efficiency x inter_node_ratio: NVLSTree's
  /// tree between nodes is plain network traffic and pays no NVLS ratio
  /// (1 / (5/6 x 15/16)); 1 for every other algorithm.
  double inter_node_ratio = 1;
};

/// The per-size ramp's constants (issue 31; docs/engine.md "The per-size
/// ramp"): what NCCL's own structure leaves without a sourced value, fitted
/// once over the whole devset (`gradwire validate collectives`).
struct NcclRamp {
  double launch = 0;  ///< t_launch (s): once per collective (nccl-tests' back-to-back launches)
  double stage = 0;   ///< t_stage (s): a chunk's fixed hand-off from one stage of the pipeline to the next
  double proxy = 0;   ///< o_proxy (s): per message of a host-proxied network transport (socket, tcpx)
};
/// The compiled constants (nccl_model.cpp's table).
const NcclRamp& nccl_ramp();

/// NCCL's pipeline of one collective at one size (enqueue.cc's chunk rule
/// per algorithm and protocol, the algorithm's stages): what the ramp reads.
///
/// K chunks through d stages whose chunk times are t_1 .. t_d, the slowest
/// t_max, take K t_max + sum of the others (the pipeline fills once, each
/// chunk then leaves at the slowest stage's pace): `fill` = (sum t_i - t_max)
/// / t_max, in the slowest stage's chunk times. A stage on NVLink in a tree
/// whose slowest stage is a 1 Gb/s NIC adds almost nothing to it.
struct NcclPipeline {
  double chunks = 1;    ///< K: chunks one channel (and NVLS head) runs in sequence
  int depth = 1;        ///< d: stages a chunk passes (ring: 1, lock-step)
  double fill = 0;      ///< the other stages' chunk times in the slowest one's (d - 1 when alike)
  double messages = 0;  ///< M: network messages the GPU's proxy handles in sequence (0 on one node)
};
/// NCCL's chunk before the per-algorithm shrinking (enqueue.cc
/// computeCollChunkInfo): the protocol's buffer step (init.cc, NCCL_STEPS
/// = 8 steps) x chunkSteps (ring Simple 4, else 1); LL carries half data, LL128
/// 15 of 16 words. Bytes.
double nccl_chunk_bytes(Protocol p, bool ring);
/// NVLS's channels (NCCL_NVLS_NCHANNELS' default, transport/nvls.cc).
constexpr int kNvlsChannels = 16;
/// True for the network transports whose messages a host proxy thread
/// handles one after another (socket, tcpx); RDMA posts cost nothing here.
bool host_proxied_network(const ClusterSpec& c);

/// NCCL's channels for one collective. NCCL runs a collective on up to
/// comm->nChannels channels (one CTA each) and, for small messages, on fewer
/// channels and threads (enqueue.cc topoGetAlgoInfo, NCCL 2.20.3): while
/// bytes < channels x threads x threadThreshold it drops a channel, and at
/// one channel it halves the threads while they are a multiple of 128.
/// NVLS keeps its channels, and so does PAT (ncclTopoTuneModel leaves
/// comm->maxThreads[PAT] at 0, so the loop never drops one). gradwire gives each channel an equal share of
/// the link, so the collective runs at fraction() of NCCL's factor (LL's cap
/// still bounds the sum). The threads are NCCL's; they change nothing here:
/// NCCL trims them only on one channel, below channels x threads x threshold
/// bytes, where the latency term dominates.
struct NcclChannels {
  int max_channels = 1;  ///< comm->nChannels (nccl_comm_channels)
  int channels = 1;      ///< channels launched at this size
  int max_threads = 1;   ///< comm->maxThreads[algorithm][protocol]
  int threads = 1;       ///< threads per channel at this size
  double fraction() const { return static_cast<double>(channels) / max_channels; }
};
/// comm->nChannels as NCCL's ring search finds it on `c` (search.cc
/// ncclTopoCompute, init.cc, connect.cc; docs/engine.md "Channels"): the
/// speed s of the search's table (sm90 or older; intra-node table on one
/// node, inter-node table across nodes) that carries the most channels x s
/// on the GPU's usable intra-node bandwidth and, across nodes, on its NICs
/// (each channel uses one NIC), at most 16 channels; doubled when s >= 25
/// GB/s (at most 16), then doubled again (at most 32). A cluster's
/// `network.nccl_channels` (a run's forced NCCL_MIN/MAX_NCHANNELS) wins.
int nccl_comm_channels(const ClusterSpec& c, int nodes);
NcclChannels nccl_channels(Algorithm a, Protocol p, const ClusterSpec& c, NcclShape shape, double bytes);
/// nullopt when NCCL does not run the pair (nccl_pair_refusal says why).
/// hierarchical, direct and the broadcast ring are
/// gradwire's alpha-beta schedules: Simple only, cost {0, 1} (their latency
/// is the platform's per step). `link_bandwidth` is what one flow of the
/// algorithm gets on the platform (bytes/s), for LL's cap.
/// `ramp`: the per-size ramp's constants (the compiled ones unless a fit
/// tries others): efficiency x K / (K + fill), ramp_latency (launch and
/// stages) and proxy_time from the
/// row's pipeline (NcclPipeline), NVLS's (16 - 1) / 16 channels.
std::optional<NcclCost> nccl_cost(CollectiveOp op, Algorithm a, Protocol p, const ClusterSpec& c, NcclShape shape,
                                  double bytes, double link_bandwidth, const NcclRamp& ramp = nccl_ramp());

/// The algorithms of `op` that NCCL's rule chooses among: its rows with
/// nccl_rule, in the rows' order (all-reduce: ring, tree, nvls, nvlstree;
/// all-gather, reduce-scatter: ring, pat; broadcast: ring; all-to-all: direct).
std::vector<Algorithm> nccl_algorithms(CollectiveOp op);

/// tuning.cc's constants the algorithms' latency forms read
/// (collective_algorithms.cpp): baseLat[row][protocol] and
/// hwLat[class][row][protocol], microseconds (row: AlgorithmRow::nccl_row).
double nccl_base_latency_us(int row, Protocol p);
double nccl_hw_latency_us(NcclLinkClass k, int row, Protocol p);
/// tuning.cc's treeCorrectionFactor[p][log2(bytes / 64)] (1 from 256 MiB on).
double nccl_tree_correction(Protocol p, double bytes);
/// NCCL's log2i: floor(log2 v) for v >= 1, 0 below.
int nccl_log2i(double v);

}  // namespace gw
