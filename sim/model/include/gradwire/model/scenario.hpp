// A gradwire scenario: the cluster, the training workload, the calibration
// profile and (for capacity planning) the training target and pricing.
// Plain C++: no SimGrid here. Loading is strict (gw::InputError with file,
// line, column and key path). The schema is documented in docs/scenarios.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gradwire/core/error.hpp"  // gw::InputError, thrown by the loaders
#include "gradwire/model/sharding_spec.hpp"
#include "gradwire/model/transports.hpp"

namespace gw {

/// Limits of a scenario (docs/scenarios.md): simulated GPUs, and the
/// per-GPU micro-batch and the accumulation steps. 2^20 = 1,048,576 GPUs:
/// the simulation of a data-parallel iteration grows linearly in the GPUs
/// (about 5 GB of memory at 2^20, measured: docs/engine.md, "Scale"), and
/// the engine says what a run needs before it runs and refuses one that
/// does not fit in the memory available (engine::simulation_memory_estimate).
inline constexpr int kMaxWorldSize = 1 << 20;
/// GPUs in one node, gradwire's node being one NVLink domain: 72, the largest
/// shipping domain (NVIDIA GB200 NVL72: 72 Blackwell GPUs behind one rack's
/// NVSwitch trays) and the most local ranks NCCL supports
/// (NCCL_MAX_LOCAL_RANKS 72, NVIDIA/nccl src/include/device.h at 5067397).
/// The engine routes every pair of a node's GPUs (g^2 routes a node, g per
/// GPU), so a domain of 576 (NVL576, announced) would take 8 times the
/// routes per GPU; it waits for NCCL and for a measurement.
inline constexpr int kMaxGpusPerNode = 72;
/// NICs in one node: one per GPU of the largest node (kMaxGpusPerNode).
inline constexpr int kMaxNicsPerNode = kMaxGpusPerNode;
inline constexpr int kMaxMicroBatch = 1 << 20;
inline constexpr int kMaxAccumulation = 1 << 20;

/// Plausible ranges of the physical quantities of scenarios and catalogs
/// (docs/scenarios.md, docs/hardening.md "Input rules and limits"): a value
/// outside is a typo or a unit slip, refused at its field.
inline constexpr double kMinLinkBandwidth = 1e6;   ///< B/s: 8 Mbps
inline constexpr double kMaxLinkBandwidth = 1e14;  ///< B/s: 800 Tbps
inline constexpr double kMaxLinkLatency = 1.0;     ///< s
inline constexpr double kMinComputeEfficiency = 0.01;
/// workload.compute_jitter: a normal micro-step C (1 + cv Z) stays positive
/// to 3.3 standard deviations at 0.3 (docs/model.md, "Stragglers").
inline constexpr double kMaxComputeJitter = 0.3;
inline constexpr double kMaxOptimizerStep = 60.0;  ///< s
inline constexpr double kMinCompressionRatio = 1e-6;

/// One kind of link: line-rate bandwidth in bytes/s, latency in seconds, and
/// the transport that carries it (transports.hpp). The transport's figures are
/// copied here when the scenario is read (fraction, per-connection limit,
/// connections), so that a profile's measured figures can replace them in one
/// place (resolve_cluster). The defaults (fraction 1, no limit) are the ideal
/// link the scenario's numbers describe.
struct LinkSpec {
  double bandwidth = 0;
  double latency = 0;
  Transport transport = Transport::GpuLink;
  double fraction = 1.0;      ///< achievable fraction of the line rate
  double per_connection = 0;  ///< B/s one connection reaches; 0 = no limit
  int connections = 1;        ///< connections per peer link (NSOCKS_PERTHREAD x SOCKET_NTHREADS)

  /// What flows can use: bandwidth x fraction.
  double usable_bandwidth() const { return bandwidth * fraction; }
  /// The rate one GPU's peer link reaches through its connections; 0 = no limit.
  double connection_limit() const { return per_connection > 0 ? per_connection * connections : 0.0; }
  bool host_staged() const { return transport_info(transport).host_staged; }
  /// What the node's one host path carries when copies are host-staged: the
  /// usable rate x the transport's host_path share (NCCL SHM through the CPU).
  double staged_bandwidth() const { return usable_bandwidth() * transport_info(transport).host_path; }
  bool operator==(const LinkSpec&) const = default;
};

/// A link of `bandwidth` and `latency` carried by `t`, with the table's figures.
LinkSpec make_link(double bandwidth, double latency, Transport t);

enum class FabricTopology { Switch, FatTree };

struct FabricSpec {
  FabricTopology topology = FabricTopology::Switch;
  /// Latency of one switch hop (added per traversed fabric link).
  double latency = 0;
  /// Fat-tree only: nodes attached to one leaf switch.
  int nodes_per_leaf = 0;
  /// Fat-tree only: leaf downlink capacity / leaf uplink capacity (>= 1).
  double oversubscription = 1.0;
  bool operator==(const FabricSpec&) const = default;
};

/// How ranks are laid out over nodes and leaves. "linear": rank r on node
/// r / gpus_per_node. "interleaved": consecutive nodes of the rank order go to
/// different leaves (round-robin), so that ring neighbours cross the spine.
enum class Placement { Linear, Interleaved };

struct NetworkModelSpec {
  /// SimGrid network model; CM02 (exact alpha-beta, no TCP factors) by default.
  std::string model = "CM02";
  bool crosstraffic = false;
  /// SimGrid network/TCP-gamma (window), bytes. Large by default so that flows
  /// are not window-limited.
  double tcp_gamma = 4.0 * 1024 * 1024 * 1024;
  /// NCCL's channels when the run forced them (NCCL_MIN_NCHANNELS =
  /// NCCL_MAX_NCHANNELS, as a published run states); 0: NCCL's own
  /// (nccl_comm_channels).
  int nccl_channels = 0;
  bool operator==(const NetworkModelSpec&) const = default;
};

struct ClusterSpec {
  int nodes = 1;
  int gpus_per_node = 1;
  std::string gpu;      ///< GPU type; resolves to a calibration profile
  LinkSpec intra_node;  ///< per-GPU link into the node's switch (NVLink/NVSwitch)
  /// True when the scenario left intra_node out: resolve_cluster() derives it
  /// from the calibration profile's all-reduce fit at gpus_per_node GPUs.
  bool intra_node_from_profile = false;
  int line = 0, column = 0;                ///< position of the cluster section, for errors
  int nic_count = 1;                       ///< NICs per node
  LinkSpec nic{0, 0, Transport::Network};  ///< one NIC
  FabricSpec fabric;
  NetworkModelSpec network;
  Placement placement = Placement::Linear;
  std::optional<std::string> instance;  ///< cloud instance this cluster was derived from
  /// A spelled-out cluster's own price (docs/planning.md, "Your own prices"):
  /// `cloud` (onprem or any name of the user's) and price_per_node_hour (or
  /// price_per_gpu_hour x gpus_per_node), USD per node hour. Unset: no price.
  std::string cloud;
  std::optional<double> price_per_node_hour;

  int world_size() const { return nodes * gpus_per_node; }
  /// Aggregate NIC line rate of one node (NCCL stripes its channels over all NICs).
  double node_bandwidth() const { return nic.bandwidth * nic_count; }
  /// What flows can use of it: count x line rate x the transport's achievable fraction.
  double usable_node_bandwidth() const { return nic.usable_bandwidth() * nic_count; }
  /// True when both links are the ideal defaults (no `transport:`).
  bool ideal_transports() const {
    return intra_node.transport == Transport::GpuLink && nic.transport == Transport::Network;
  }
  /// Every field, so that equal clusters build equal platforms (the replay
  /// shares recorded collective durations between equal clusters).
  bool operator==(const ClusterSpec&) const = default;
};

enum class Precision { FP32, BF16, FP16 };
std::string to_string(Precision p);
/// Bytes per element of a gradient in this precision.
double bytes_per_element(Precision p);

/// Compute precisions (workload.compute_precision, and a measured-compute
/// document's compute_precision): the math the forward and backward pass run
/// in. fp32, tf32, fp16, bf16, amp-fp16, amp-bf16 (PyTorch autocast: 16-bit
/// GEMMs and activations, fp32 master weights). docs/scenarios.md.
const std::vector<std::string>& compute_precision_names();
/// The profile GEMM rate a compute precision runs at: amp-fp16 -> fp16,
/// amp-bf16 -> bf16, the others their own.
std::string gemm_rate_of(const std::string& compute_precision);
/// Bytes of one activation element: 4 for fp32 and tf32 (TF32 keeps fp32
/// storage), 2 for fp16, bf16 and both AMP modes.
double activation_element_bytes(const std::string& compute_precision);

/// Gradient compression applied to each bucket (see docs/model.md). The
/// kinds, the parameters each takes and their ranges: the compressor table
/// (gradwire/model/compressors.hpp).
struct CompressionSpec {
  std::string kind = "none";          ///< a compressor table name
  double ratio = 0.01;                ///< topk / randomk: fraction of elements kept
  int rank = 4;                       ///< powersgd
  std::int64_t chunk = 1024;          ///< int8 / sign: elements per scale
  bool error_feedback = true;         ///< keep a residual buffer (memory counted)
  double min_compression_rate = 2.0;  ///< powersgd: skip layers that would not pay
  /// Whose code runs the compressor (compression_implementation_names()):
  /// "pytorch" (DDP's communication hooks, or the common open implementation
  /// where PyTorch has none; their kernels costed from the profile's
  /// bandwidth, GEMM rate and launches) or "gradwire" (the project's CUDA
  /// kernels, the profile's measured codec costs). docs/model.md, section 5.
  std::string implementation = "pytorch";
};

/// The values of compression.implementation: pytorch, gradwire.
const std::vector<std::string>& compression_implementation_names();

struct OptimizerSpec {
  std::string kind = "adam";  ///< sgd, momentum, adam, adamw, lamb, lars
  /// Time of one optimizer step; when absent it is derived from the profile's
  /// memory bandwidth and the bytes the optimizer touches.
  std::optional<double> step_time;
};

struct WorkloadSpec {
  std::string model;     ///< model name (models/<name>.yaml) or path
  int micro_batch = 1;   ///< samples per GPU per micro-step
  int accumulation = 1;  ///< gradient accumulation steps k
  /// workload.no_sync: the k-1 micro-steps before the last run under DDP's
  /// no_sync() (true, the default) or each all-reduces its gradients as
  /// the last one does (false: accumulation without no_sync). No effect at k = 1.
  bool no_sync = true;
  Precision precision = Precision::FP32;  ///< gradient precision
  /// workload.compute_precision (a compute_precision_names() entry). Empty:
  /// the rate follows the gradient precision (compute_precision_for).
  std::string compute_precision;
  int compute_precision_line = 0;                ///< where the key is, for errors found
  int compute_precision_column = 0;              ///< against the profile (0: not given)
  double bucket_size = 25.0 * 1024 * 1024;       ///< DDP bucket_cap_mb
  double first_bucket_size = 1.0 * 1024 * 1024;  ///< DDP's small first bucket
  bool overlap = true;                           ///< overlap bucket all-reduce with backward
  /// DDP's own overheads (docs/model.md, "DDP overheads"): bucket copies,
  /// per-collective launch, per-iteration fixed work. Off: the plain model.
  bool ddp_overheads = true;
  /// DDP(gradient_as_bucket_view=...): true makes the gradients views of the
  /// buckets, so no copies in or out. PyTorch's default is false.
  bool gradient_as_bucket_view = false;
  /// Input pipeline bound: samples per second one GPU's data loader delivers
  /// (workload.input_rate); the iteration takes at least
  /// micro_batch x accumulation / input_rate. Absent: unbounded.
  std::optional<double> input_rate;
  OptimizerSpec optimizer;
  CompressionSpec compression;
  /// Slow-down of compute while communication or codecs run beside it
  /// (fraction, 0 = none). Absent: the profile's measured figures, else 0
  /// (docs/model.md, section 7).
  std::optional<double> interference;
  /// Stragglers: coefficient of variation of one rank's micro-step compute
  /// (workload.compute_jitter, 0 .. 0.3). Absent: from the measured-compute
  /// document's spread when there is one, else 0 (docs/model.md, "Stragglers").
  std::optional<double> compute_jitter;
  /// Fraction of the profile's achieved GEMM rate that a whole forward and
  /// backward pass reaches (kernels other than GEMMs, memory-bound layers,
  /// launch gaps). When absent, default_compute_efficiency() of the model.
  std::optional<double> compute_efficiency;
  /// A measured-compute document (gradwire-compute/1, a path relative to the
  /// scenario): forward, per-tensor backward and optimizer times measured on a
  /// device, used instead of compute_efficiency (docs/model.md). Empty: none.
  std::string compute;
  /// Collective algorithm used for all-reduce (ring, tree, hierarchical, auto).
  std::string allreduce_algorithm = "auto";
  /// workload.sharding (docs/model.md, section 7c): DDP unless given; any
  /// other scheme runs the sharded iteration (sharded_iteration.hpp).
  ShardingSpec sharding;
  int sharding_line = 0, sharding_column = 0;  ///< where the key is (0: not given)
  /// workload.activation_checkpointing: its memory and recompute cost.
  ActivationCheckpointing activation_checkpointing = ActivationCheckpointing::None;
  /// Whether the file gave micro_batch / accumulation (with
  /// training.global_batch the missing one follows, resolve_global_batch).
  bool micro_batch_given = true;
  bool accumulation_given = false;
};

/// Training target and pricing, for time-to-train and cost.
struct TrainingSpec {
  std::optional<double> samples;       ///< total samples to process
  std::optional<double> tokens;        ///< or total tokens (sequence models)
  std::optional<double> epochs;        ///< or epochs x dataset_size
  std::optional<double> dataset_size;  ///< samples per epoch
  double convergence_factor = 1.0;     ///< extra iterations factor (compression)
  /// training.global_batch: the batch the optimizer sees, fixed; micro_batch x
  /// accumulation x world must equal it (resolve_global_batch, memory.hpp).
  std::optional<long long> global_batch;
  int global_batch_line = 0, global_batch_column = 0;
  /// training.critical_batch (B_noise of McCandlish et al. 2018): the samples
  /// the target names are those at the reference batch R (training.reference_batch,
  /// else global_batch); at a batch B they become
  /// samples x (1 + B / B_noise) / (1 + R / B_noise). Unset: a point at another
  /// global batch is not compared (docs/planning.md).
  std::optional<double> critical_batch;
  std::optional<double> reference_batch;
  /// The batch the target's samples are given at: reference_batch, else global_batch.
  std::optional<double> samples_batch() const {
    if (reference_batch) return reference_batch;
    if (global_batch) return static_cast<double>(*global_batch);
    return std::nullopt;
  }
};

struct Scenario {
  std::string name;
  std::string file;  ///< where it was loaded from
  ClusterSpec cluster;
  std::optional<WorkloadSpec> workload;
  /// Calibration profile: a name (calibrate/profiles/<name>.yaml) or a path.
  /// When empty, the profile named after cluster.gpu is used.
  std::string profile;
  std::optional<TrainingSpec> training;
};

struct Profile;

/// The cluster with every profile-derived part filled in. A link whose
/// transport the profile measured (Profile::transports) takes the profile's
/// fraction, latency and per-connection rate over the table's. When intra_node was
/// left out, the per-GPU intra-node link is set so that a ring all-reduce over
/// the gpus_per_node GPUs of a node reproduces the profile's measured (or
/// datasheet) all-reduce fit t = alpha + S / beta at that GPU count:
/// bandwidth = beta x 2(G-1)/G (the bus bandwidth), and, a GPU-to-GPU route
/// inside a node crossing two such links, latency = alpha / (4 (G-1)).
/// Throws gw::InputError (at the cluster section) when the profile has no
/// all-reduce fit for that GPU count.
ClusterSpec resolve_cluster(const Scenario& scenario, const Profile& profile);

/// Loads and validates a scenario file. Throws gw::InputError.
Scenario load_scenario(const std::string& path);
/// parse_scenario (an already loaded YAML document) and the section parsers
/// are in gradwire/model/scenario_yaml.hpp, which brings in yaml-cpp.

}  // namespace gw
