// The transport table (gradwire/model/transports.hpp). Sources, one per value:
//
// [topo]   NCCL src/graph/topo.h (NVIDIA/nccl, v2.19-v2.21): the bandwidth NCCL's
//          topology search assumes per link: SM70/SM80_NVLINK_BW 20.0 GB/s and
//          SM90_NVLINK_BW 20.6 GB/s per NVLink (line rate 25 GB/s per direction
//          for NVLink 2, 3 and 4: NVIDIA V100/A100/H100 datasheets), PCI_BW 12.0
//          GB/s for "PCI Gen3 x16" (line rate 8 GT/s x 16 x 128/130 = 15.75 GB/s,
//          PCIe 3.0 base specification), NET_BW 12.0 GB/s for "100Gbit" (12.5
//          GB/s). Fractions: 20/25 = 0.80, 12/15.75 = 0.762, 12/12.5 = 0.96.
//          https://github.com/NVIDIA/nccl/blob/v2.21.5-1/src/graph/topo.h
// [sock]   NCCL src/transport/net_socket.cc: a NET/Socket peer connection opens
//          NCCL_NSOCKS_PERTHREAD x NCCL_SOCKET_NTHREADS TCP sockets, 2 threads x 8
//          sockets when the NIC is AWS's ENA (vendor 0x1d0f; already in the 2019
//          file, NVIDIA/nccl@06abb3b, else 1 x 1); the 2022 file (NVIDIA/nccl@28189e2)
//          adds 4 threads x 1 socket on GCP's gVNIC (vendor 0x1ae0) and otherwise
//          runs no helper thread and one socket. A message is split over the
//          sockets in pieces of at least 64 KiB (MIN_CHUNKSIZE).
//          https://github.com/NVIDIA/nccl/blob/v2.21.5-1/src/transport/net_socket.cc
// [flow]   Amazon EC2 User Guide, "Amazon EC2 instance network bandwidth":
//          single-flow (one 5-tuple TCP connection) traffic reaches up to 10 Gbps
//          between instances in one cluster placement group (the table's figure)
//          and 5 Gbps between instances that are not (a cluster states it with
//          `nics.per_connection`, scenario.cpp). No GCP per-flow figure was found.
//          https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-instance-network-bandwidth.html
// [shm]    NCCL src/transport/shm.cc: without P2P between two GPUs of a node,
//          NCCL's SHM transport stages every copy in pinned host memory (the
//          sender writes it over its PCIe link, the receiver reads it over its
//          own); all such copies of the node go through the host's memory path.
//          https://github.com/NVIDIA/nccl/blob/v2.21.5-1/src/transport/shm.cc
// [shmbw]  The rate of that host path: NCCL's SHM traffic through the CPU
//          reaches 9 GB/s (6 across sockets) where a path inside the PCIe
//          switch reaches 12 (PCI_BW, Gen3 x16): S. Jeaugey (NCCL), 2020-10-14,
//          https://github.com/NVIDIA/nccl/issues/406 . Measured the same way
//          on another box (NCCL 2.4.8, Gen3 x16, P2P disabled, 2 GPUs): all-
//          reduce 3.9 GB/s busbw, 2 x 3.9 = 7.8 GB/s through the host both
//          ways, against broadcast's 10.31 one way (0.76); "some CPUs do not
//          handle bidirectional traffic well" (NCCL maintainer, ibid.):
//          https://github.com/NVIDIA/nccl/issues/384 . Every collective on a
//          ring of more than one copy sends both ways through the host; only a
//          one-way transfer (broadcast or reduce on 2 GPUs) would reach 12.
#include "gradwire/model/transports.hpp"

#include <stdexcept>

namespace gw {
namespace {

constexpr double kNvlinkFraction = 20.0 / 25.0;  // [topo]
constexpr double kPcieFraction = 12.0 / 15.75;   // [topo]
constexpr double kNetFraction = 12.0 / 12.5;     // [topo]
constexpr double kTcpFlow = 10e9 / 8;            // [flow], B/s
constexpr double kShmThroughCpu = 9.0 / 12.0;    // [shmbw]

const char* const kIdeal = "the link as given: no transport overhead (the default)";
const char* const kNvl = "fraction: NCCL topo.h SMxx_NVLINK_BW 20 of 25 GB/s per link";
const char* const kPci = "fraction: NCCL topo.h PCI_BW 12 of 15.75 GB/s (Gen3 x16)";
const char* const kNet = "fraction: NCCL topo.h NET_BW 12 of 12.5 GB/s (100 Gbit)";

using P = TransportPlace;
using C = NcclLinkClass;

const std::vector<TransportInfo> kTable = {
    {Transport::GpuLink, "gpu-link", "GPU link", C::NVLink, P::IntraNode, 1.0, 0, 1, false, 1.0, kIdeal},
    {Transport::Network, "network", "network", C::Net, P::Network, 1.0, 0, 1, false, 1.0, kIdeal},
    {Transport::NVLink, "nvlink", "NVLink", C::NVLink, P::IntraNode, kNvlinkFraction, 0, 1, false, 1.0, kNvl},
    {Transport::NVSwitch, "nvswitch", "NVSwitch", C::NVLink, P::IntraNode, kNvlinkFraction, 0, 1, false, 1.0, kNvl},
    {Transport::PcieP2P, "pcie", "PCIe P2P", C::PCI, P::IntraNode, kPcieFraction, 0, 1, false, 1.0, kPci},
    {Transport::PcieHost, "pcie-host", "PCIe via host memory", C::PCI, P::IntraNode, kPcieFraction, 0, 1, true,
     kShmThroughCpu,
     "fraction: NCCL topo.h PCI_BW; staging: NCCL shm.cc; host path 9 of 12 GB/s: NVIDIA/nccl#406, #384"},
    {Transport::IB, "ib", "InfiniBand", C::Net, P::Network, kNetFraction, 0, 1, false, 1.0, kNet},
    {Transport::RoCE, "roce", "RoCE", C::Net, P::Network, kNetFraction, 0, 1, false, 1.0, kNet},
    {Transport::EFA, "efa", "EFA", C::Net, P::Network, kNetFraction, 0, 1, false, 1.0, kNet},
    {Transport::Socket, "socket", "TCP sockets", C::Net, P::Network, kNetFraction, kTcpFlow, 1, false, 1.0,
     "fraction: NCCL topo.h NET_BW; 10 Gbps per TCP flow: EC2 user guide; 1 x 1 sockets: NCCL net_socket.cc"},
    {Transport::TCPX, "tcpx", "GPUDirect-TCPX", C::Net, P::Network, kNetFraction, 0, 1, false, 1.0, kNet},
};

}  // namespace

std::string to_string(NcclLinkClass c) {
  switch (c) {
    case NcclLinkClass::NVLink:
      return "NVLink";
    case NcclLinkClass::PCI:
      return "PCI";
    case NcclLinkClass::Net:
      return "Net";
  }
  return "Net";
}

const std::vector<TransportInfo>& transports() { return kTable; }

const TransportInfo& transport_info(Transport t) {
  for (const auto& row : kTable) {
    if (row.id == t) return row;
  }
  throw std::logic_error("transport missing from the table");
}

const TransportInfo* find_transport(const std::string& name, TransportPlace place) {
  for (const auto& row : kTable) {
    if (row.name == name && row.place == place) return &row;
  }
  return nullptr;
}

namespace {

template <class Keep>
std::vector<std::string> names_where(Keep keep) {
  std::vector<std::string> names;
  for (const auto& row : kTable) {
    if (keep(row)) names.emplace_back(row.name);
  }
  return names;
}

}  // namespace

std::vector<std::string> transport_names(TransportPlace place) {
  return names_where([&](const TransportInfo& row) { return row.place == place; });
}

std::vector<std::string> transport_names_with_connection_limit() {
  return names_where([](const TransportInfo& row) { return row.per_connection > 0; });
}

}  // namespace gw
