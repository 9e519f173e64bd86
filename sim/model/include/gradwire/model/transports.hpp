// Transports as data: how bytes move over a link of the cluster (NVLink,
// NVSwitch, PCIe with and without P2P, InfiniBand, RoCE, EFA, TCP sockets,
// GPUDirect-TCPX). One table (transports.cpp); every value carries its source
// there and in docs/model.md ("Transports"). Plain C++, no SimGrid.
//
// What a transport changes (the platform, sim/engine/src/platform.cpp, and
// the closed forms, closed_form.cpp, both read it through LinkSpec and
// topology.hpp):
//   - the link's usable bandwidth: line rate x achievable fraction;
//   - per-connection limits: a GPU's flows out of its node are capped at
//     per_connection x connections (one TCP connection reaches a fixed rate,
//     NCCL opens NCCL_NSOCKS_PERTHREAD x NCCL_SOCKET_NTHREADS of them);
//   - host staging (PCIe without P2P): every copy between two GPUs of a node
//     goes through host memory, one path the node's copies share, which
//     carries `host_path` of the link's usable rate (NCCL's SHM transport
//     through the CPU: 9 of the 12 GB/s a PCIe Gen3 x16 path reaches).
// The default of a link without `transport:` is the ideal row of its place
// (`gpu-link`, `network`): fraction 1, no limits, so that scenarios written
// before transports existed mean what they meant.
#pragma once

#include <string>
#include <vector>

namespace gw {

/// NCCL's hardware class of a path (NCCL src/graph/tuning.cc, NCCL_HW_NVLINK,
/// NCCL_HW_PCI, NCCL_HW_NET): the protocol model reads its latencies by class.
enum class NcclLinkClass { NVLink, PCI, Net };
std::string to_string(NcclLinkClass c);

enum class Transport {
  GpuLink,  ///< ideal GPU link: the default of intra_node
  Network,  ///< ideal NIC: the default of nics
  NVLink,
  NVSwitch,
  PcieP2P,
  PcieHost,  ///< PCIe without P2P: staged through host memory
  IB,
  RoCE,
  EFA,
  Socket,  ///< NCCL's NET/Socket: kernel TCP
  TCPX,    ///< GPUDirect-TCPX-style offload (header split, payload to GPU memory)
};

/// Where a transport can carry a cluster's traffic.
enum class TransportPlace { IntraNode, Network };

struct TransportInfo {
  Transport id;
  const char* name;   ///< the scenario's `transport:` value
  const char* label;  ///< as printed in the network line
  NcclLinkClass nccl_class;
  TransportPlace place;
  double fraction;        ///< achievable fraction of the line rate
  double per_connection;  ///< B/s one connection reaches; 0 = no limit
  int connections;        ///< connections a GPU's peer link opens by default
  bool host_staged;       ///< copies go through host memory
  double host_path;       ///< share of the usable rate the host path carries (1 unless host-staged)
  const char* source;     ///< where fraction and limits come from
};

/// Every row, in the order of the enum.
const std::vector<TransportInfo>& transports();
const TransportInfo& transport_info(Transport t);
/// The row named `name` at `place`, or nullptr.
const TransportInfo* find_transport(const std::string& name, TransportPlace place);
/// The names usable at `place` (for errors and --help).
std::vector<std::string> transport_names(TransportPlace place);
/// The names of the transports with a per-connection limit (for errors).
std::vector<std::string> transport_names_with_connection_limit();

}  // namespace gw
