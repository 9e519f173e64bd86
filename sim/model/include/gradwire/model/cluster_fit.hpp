// A cluster from a measurement (`gradwire calibrate --from-nccl-tests LOG
// --write-cluster FILE`, docs/calibrate.md "A cluster from a log"): the NICs'
// bandwidth and latency that make gradwire's NCCL cost model (closed_form.hpp,
// choose_collective under auto: the pair NCCL's rule picks per size) give
// back the large- and small-message ends of a multi-node nccl-tests curve,
// written as a scenario's `cluster:` block. Plain C++, no SimGrid.
#pragma once

#include <string>
#include <vector>

#include "gradwire/model/collectives.hpp"
#include "gradwire/model/nccl_tests_log.hpp"
#include "gradwire/model/profile.hpp"
#include "gradwire/model/scenario.hpp"

namespace gw {

/// Sizes whose times the latency fit matches: the smallest this many (above 0 B).
inline constexpr int kClusterFitFloorSizes = 4;

/// What the fit matched, for the notes and the written file's comments.
struct ClusterFit {
  ClusterSpec cluster;  ///< the base cluster with nic.bandwidth and nic.latency fitted
  CollectiveOp op = CollectiveOp::AllReduce;
  double plateau_bytes = 0;         ///< the largest measured size
  double plateau_measured = 0;      ///< its measured time, s
  double plateau_model = 0;         ///< the model's time there on the fitted cluster, s
  std::string plateau_pair;         ///< "ring/Simple": the pair NCCL's rule gives there
  std::vector<double> floor_bytes;  ///< the smallest sizes (the latency fit's)
  double floor_ratio = 1;           ///< median over them of model / measured time on the fitted cluster
  bool latency_at_zero = false;     ///< the model is slower there than the log even without NIC latency
  /// Faster NICs would not change the plateau (the intra-node link holds
  /// it): the rate is the least that gives it, a lower bound.
  bool bandwidth_lower_bound = false;
};

/// Fits `base`'s NIC line rate (per NIC: base.nic_count NICs of base.nic's
/// transport, whose achievable fraction and limits apply) and NIC latency so
/// that choose_collective(op, auto, auto) over all base.world_size() ranks
/// gives the time of the largest size of `points` (x = bytes, nccl-tests
/// "size") and, in the median over the kClusterFitFloorSizes smallest, their
/// times; alternately, until both settle. The fabric keeps base's latency.
/// Each is the least value that gives its end: the latency is 0
/// (latency_at_zero) where the model is already that slow without any
/// (NCCL's latency model alone), and the rate a lower bound
/// (bandwidth_lower_bound) where the plateau no longer depends on it (doubling
/// the rate gains under 1%). Throws std::invalid_argument when no NIC rate in
/// the schema's range [kMinLinkBandwidth, kMaxLinkBandwidth] gives the
/// plateau (the intra-node link or a connection cap holds the model below it).
ClusterFit fit_cluster_network(const ClusterSpec& base, CollectiveOp op, const std::vector<CurvePoint>& points);

/// One line on the fit: "2 x 8 h100; 8 NICs of 216.94 Gbps, latency 60.79 us;
/// allreduce busbw at 8.00 GiB: 338.09 GB/s measured, 338.09 GB/s modelled".
std::string fit_summary(const ClusterFit& fit);

/// How `cluster_from_logs` builds the cluster around the fit.
struct ClusterFitOptions {
  int nics = 0;                              ///< NICs per node; 0: one per GPU
  Transport transport = Transport::Network;  ///< the NICs' transport (transports.hpp)
  std::string profile;                       ///< the profile of the intra-node link; "": the log's GPU's
  std::string name;                          ///< the scenario's name; "": <gpu>-<nodes>x<gpus>-from-nccl-tests
};

/// The fit of a log and the scenario file that holds it.
struct ClusterFromLogs {
  ClusterFit fit;
  std::string name;
  std::string profile_path;  ///< the profile the intra-node link came from (an input)
  std::string yaml;          ///< `name:` and `cluster:`, after comments saying what was fitted from what
};

/// The cluster of nccl-tests runs (nccl_tests::select_runs' choice, one or
/// more logs): their one (op, ranks, nodes) group (pooled as
/// nccl_tests::collective_fits pools it), on two nodes or more with the same
/// ranks on each; cluster.gpu the class of the log's GPU name
/// (gpu_class_of_device), else of the profile's device; the intra-node link
/// as resolve_cluster derives it from the profile's all-reduce fit at the
/// ranks per node (written out, so that the file does not depend on a
/// profile); a switch fabric; the NICs fitted (fit_cluster_network).
/// Throws gw::InputError naming the run (file:line) for a run on one node
/// ("no network to fit"), several groups, uneven ranks per node, a GPU whose
/// class is not known, a profile without that fit, or a plateau no NIC rate
/// gives.
ClusterFromLogs cluster_from_logs(const std::vector<nccl_tests::Log>& logs, const ClusterFitOptions& options);

/// `c` as a scenario file: `name:` and a `cluster:` block (nodes,
/// gpus_per_node, gpu, intra_node unless one GPU per node, nics, fabric),
/// after `comments` (one '#' line each; control characters replaced by '?').
/// Bandwidths in Gbps and latencies in us, to 9 significant digits.
std::string cluster_yaml(const std::string& name, const ClusterSpec& c, const std::vector<std::string>& comments);

}  // namespace gw
