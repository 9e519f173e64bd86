// NCCL's cost structure, defined once: the algorithms and protocols, the
// hardware class of a route, and NCCL's tuning model (latency per collective
// and the fraction of the link bandwidth each algorithm x protocol delivers).
// Constants from NVIDIA/nccl 2.20.3, src/graph/tuning.cc (ncclTopoTuneModel,
// ncclTopoGetAlgoTime); docs/engine.md ("NCCL's cost model") lists each one.
// The engine (sim/engine) and the closed forms (closed_form.hpp) read the
// costs from here; the choice of the pair per size is closed_form.hpp's
// choose_collective(). Plain C++, no SimGrid.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gradwire/model/collectives.hpp"
#include "gradwire/model/scenario.hpp"

namespace gw {

/// ring, tree (double binary tree, all-reduce), nvls (NVLink SHARP on one
/// NVSwitch node, all-reduce), hierarchical (gradwire's sequential
/// intra/inter/intra all-reduce; not NCCL's), direct (all-to-all), auto (the
/// pair NCCL's rule picks per size).
enum class Algorithm { Ring, Tree, NVLS, Hierarchical, Direct, Auto };
/// NCCL's protocols; auto: the one NCCL's rule picks.
enum class Protocol { LL, LL128, Simple, Auto };

std::string to_string(Algorithm a);
std::string to_string(Protocol p);
/// Case-insensitive, as NCCL_ALGO / NCCL_PROTO; throws std::invalid_argument.
Algorithm parse_algorithm(const std::string& s);
Protocol parse_protocol(const std::string& s);
/// The names parse_algorithm / parse_protocol accept: auto, then the others
/// in the enums' order (for strict readers and messages).
std::vector<std::string> algorithm_names();
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

/// Compute capability of a GPU type (70 v100, 75 rtx-2080ti, 80 a100-*, 86
/// a10g, 89 l4, 90 h100/h200, 100 b200); 0 for a type gradwire does not know.
int gpu_compute_capability(const std::string& gpu);
/// NVLS: compute capability >= 90 and an NVSwitch node (4 or more GPUs on
/// NVLink: HGX boards; a 2-GPU NVLink bridge has no switch; an intra-node
/// link declared `transport: nvlink`, point to point, has none), one node.
bool nvls_available(const ClusterSpec& c, int nodes);

/// Where a collective runs: its ranks and the nodes they span.
struct NcclShape {
  int ranks = 1;
  int nodes = 1;
};

/// NCCL's model of one (op, algorithm, protocol) on `c`:
///   time = latency + bytes-on-the-links / (link bandwidth x efficiency)
/// latency: NCCL's base + per-hop latencies (seconds); efficiency: the
/// fraction of the link bandwidth the pair delivers at `bytes` (NCCL's
/// per-protocol factors, LL's bandwidth cap, the tree's size correction).
struct NcclCost {
  double latency = 0;
  double efficiency = 1;
};
/// nullopt when NCCL does not run the pair (tree beyond all-reduce, nvls
/// without NVSwitch multicast or beyond one node, nvls with LL/LL128, LL128
/// where NCCL leaves it off). hierarchical, direct and the broadcast ring are
/// gradwire's alpha-beta schedules: Simple only, cost {0, 1} (their latency
/// is the platform's per step). `link_bandwidth` is what one flow of the
/// algorithm gets on the platform (bytes/s), for LL's cap.
std::optional<NcclCost> nccl_cost(CollectiveOp op, Algorithm a, Protocol p, const ClusterSpec& c, NcclShape shape,
                                  double bytes, double link_bandwidth);

/// The algorithms of `op` that NCCL's rule chooses among (all-reduce: ring,
/// tree, nvls; all-gather, reduce-scatter: ring; broadcast: ring; all-to-all:
/// direct).
std::vector<Algorithm> nccl_algorithms(CollectiveOp op);

}  // namespace gw
