#include "gradwire/model/scenario.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "gradwire/core/suggest.hpp"
#include "gradwire/model/catalog.hpp"
#include "gradwire/model/collective_algorithms.hpp"
#include "gradwire/model/compressors.hpp"
#include "gradwire/model/scenario_yaml.hpp"
#include "gradwire/model/sharding.hpp"

namespace gw {
namespace {

// Fails at `x` unless the link's transport limits each connection.
void require_connection_limit(const LinkSpec& l, const yaml::Node& x) {
  if (l.per_connection <= 0) {
    x.fail(std::string("only used by a transport with a per-connection limit (") +
           join_names(transport_names_with_connection_limit()) + ")");
  }
}

// `transport:` (a row of the table usable at `place`), `connections:` and
// `per_connection:` (only for a transport with a per-connection limit: how
// many connections, and the rate one reaches where the cloud documents
// another figure than the table's, e.g. EC2's 5 Gbps outside a cluster
// placement group) of a link section.
void parse_transport(const yaml::Node& n, TransportPlace place, LinkSpec& l) {
  if (auto t = n.optional("transport")) {
    const TransportInfo* row = find_transport(t->as_enum(transport_names(place)), place);
    l = make_link(l.bandwidth, l.latency, row->id);
  }
  if (auto x = n.optional("connections")) {
    require_connection_limit(l, *x);
    l.connections = static_cast<int>(x->as_int(1, 1024));
  }
  if (auto x = n.optional("per_connection")) {
    require_connection_limit(l, *x);
    l.per_connection = x->as_bandwidth(kMinLinkBandwidth, kMaxLinkBandwidth);
  }
}

}  // namespace

LinkSpec make_link(double bandwidth, double latency, Transport t) {
  const TransportInfo& row = transport_info(t);
  LinkSpec l;
  l.bandwidth = bandwidth;
  l.latency = latency;
  l.transport = t;
  l.fraction = row.fraction;
  l.per_connection = row.per_connection;
  l.connections = row.connections;
  return l;
}

std::vector<std::string> link_keys(std::vector<std::string> extra) {
  for (const char* k : {"bandwidth", "latency", "transport", "connections", "per_connection"}) extra.emplace_back(k);
  return extra;
}

LinkSpec parse_link(const yaml::Node& n, TransportPlace place, std::vector<std::string> extra_keys) {
  n.allow_keys(link_keys(std::move(extra_keys)));
  LinkSpec l = make_link(n.required("bandwidth").as_bandwidth(kMinLinkBandwidth, kMaxLinkBandwidth),
                         n.required("latency").as_time(0, kMaxLinkLatency),
                         place == TransportPlace::IntraNode ? Transport::GpuLink : Transport::Network);
  parse_transport(n, place, l);
  return l;
}

void override_link(const yaml::Node& n, TransportPlace place, std::vector<std::string> extra_keys, LinkSpec& l) {
  n.allow_keys(link_keys(std::move(extra_keys)));
  if (auto x = n.optional("bandwidth")) l.bandwidth = x->as_bandwidth(kMinLinkBandwidth, kMaxLinkBandwidth);
  if (auto x = n.optional("latency")) l.latency = x->as_time(0, kMaxLinkLatency);
  parse_transport(n, place, l);
}

namespace {

// nodes x gpus_per_node within the simulated GPUs; reported at gpus_per_node.
void check_world_size(const ClusterSpec& c, const yaml::Node& gpus_per_node) {
  if (static_cast<long long>(c.nodes) * c.gpus_per_node > kMaxWorldSize) {
    gpus_per_node.fail("nodes x gpus_per_node = " + std::to_string(static_cast<long long>(c.nodes) * c.gpus_per_node) +
                       " GPUs exceeds the " + std::to_string(kMaxWorldSize) + " simulated GPUs gradwire supports");
  }
}

void parse_fabric(const yaml::Node& fabric, ClusterSpec& c) {
  fabric.allow_keys({"topology", "latency", "nodes_per_leaf", "oversubscription"});
  std::string topo = fabric.required("topology").as_enum({"switch", "fat-tree"});
  c.fabric.latency = fabric.optional("latency") ? fabric.required("latency").as_time(0, kMaxLinkLatency) : 0.0;
  if (topo == "switch") {
    c.fabric.topology = FabricTopology::Switch;
    for (const char* k : {"nodes_per_leaf", "oversubscription"}) {
      if (auto x = fabric.optional(k)) x->fail(std::string("only valid with topology: fat-tree"));
    }
  } else {
    c.fabric.topology = FabricTopology::FatTree;
    auto npl = fabric.required("nodes_per_leaf");
    c.fabric.nodes_per_leaf = static_cast<int>(npl.as_int(1, kMaxWorldSize));
    if (c.nodes % c.fabric.nodes_per_leaf != 0) {
      npl.fail("nodes (" + std::to_string(c.nodes) + ") must be a multiple of nodes_per_leaf (" +
               std::to_string(c.fabric.nodes_per_leaf) + ")");
    }
    c.fabric.oversubscription =
        fabric.optional("oversubscription") ? fabric.required("oversubscription").as_double(1.0, 1024.0) : 1.0;
  }
}

// placement and network (both optional).
void parse_placement_network(const yaml::Node& n, ClusterSpec& c) {
  if (auto p = n.optional("placement")) {
    c.placement = p->as_enum({"linear", "interleaved"}) == "linear" ? Placement::Linear : Placement::Interleaved;
  }
  if (auto net = n.optional("network")) {
    net->allow_keys({"model", "crosstraffic", "tcp_gamma", "nccl_channels"});
    if (auto m = net->optional("model")) c.network.model = m->as_enum({"CM02", "LV08"});
    if (auto x = net->optional("crosstraffic")) c.network.crosstraffic = x->as_bool();
    if (auto g = net->optional("tcp_gamma")) c.network.tcp_gamma = g->as_size(1024, 1e15);
    if (auto x = net->optional("nccl_channels")) c.network.nccl_channels = static_cast<int>(x->as_int(1, 32));
  }
}

// A spelled-out cluster's own price (docs/planning.md, "Your own prices"):
// `cloud` names whose it is (onprem, or any name of the user's; not a catalog
// cloud), one of price_per_gpu_hour / price_per_node_hour (USD, > 0).
void parse_own_price(const yaml::Node& n, ClusterSpec& c) {
  auto gpu = n.optional("price_per_gpu_hour");
  auto node = n.optional("price_per_node_hour");
  if (gpu && node) node->fail("give price_per_gpu_hour or price_per_node_hour, not both");
  if (gpu) c.price_per_node_hour = gpu->as_double(1e-9, 1e6) * c.gpus_per_node;
  if (node) c.price_per_node_hour = node->as_double(1e-9, 1e8);
  if (auto cloud = n.optional("cloud")) {
    c.cloud = parse_cloud_name(*cloud);
    if (!c.price_per_node_hour) cloud->fail("a cloud of your own needs price_per_gpu_hour or price_per_node_hour");
  } else if (c.price_per_node_hour) {
    (gpu ? *gpu : *node).fail("a price of your own needs `cloud:` (onprem or a name of yours) beside it");
  }
}

// `cluster: {instance: NAME, nodes: N}` plus optional nics (any of count,
// bandwidth, latency), fabric, placement and network overrides; the GPUs,
// intra-node links and NICs come from the instance catalog (catalog.hpp).
ClusterSpec parse_instance_cluster(const yaml::Node& n) {
  n.expect_map();
  for (const char* k : {"gpus_per_node", "gpu", "intra_node"}) {
    if (auto x = n.optional(k)) {
      x->fail(std::string("set by the instance; remove it, or describe the cluster without `instance`"));
    }
  }
  n.allow_keys({"instance", "nodes", "nics", "fabric", "placement", "network"});
  auto inst = n.required("instance");
  const Catalog& catalog = default_catalog();
  const InstanceType* type = catalog.find(inst.as_string());
  if (type == nullptr) {
    std::vector<std::string> known;
    for (const auto& i : catalog.instances) known.push_back(i.name);
    inst.fail("no instance \"" + inst.as_string() + "\" in the catalog " + catalog.path +
              did_you_mean(inst.as_string(), known) + " (known: " + join_names(known) + ")");
  }
  ClusterSpec c = cluster_from_instance(*type, static_cast<int>(n.required("nodes").as_int(1, kMaxWorldSize)));
  // Too many GPUs is reported at gpus_per_node, which the instance sets: no
  // position in the file.
  check_world_size(c,
                   yaml::Node(YAML::Node(), n.file(), yaml::join(n.path(), "gpus_per_node"), YAML::Mark::null_mark()));
  c.line = n.line();
  c.column = n.column();
  if (auto fabric = n.optional("fabric")) parse_fabric(*fabric, c);  // fabric.latency: as given (0 if left out)
  parse_placement_network(n, c);
  if (auto nics = n.optional("nics")) {
    override_link(*nics, TransportPlace::Network, {"count"}, c.nic);
    if (auto x = nics->optional("count")) c.nic_count = static_cast<int>(x->as_int(1, kMaxNicsPerNode));
  }
  return c;
}

// One `compression:` parameter, refused when the kind does not take it.
void parse_compressor_param(const yaml::Node& comp, const CompressorParamInfo& p, const Compressor& row,
                            CompressionSpec& c) {
  auto x = comp.optional(p.key);
  if (!x) return;
  if (!p.every_kind && std::find(row.params.begin(), row.params.end(), p.id) == row.params.end()) {
    x->fail("not used by compression kind \"" + c.kind + "\" (only by " + join_names(compressors_with_param(p.id)) +
            ")");
  }
  double v = 0;
  switch (p.type) {
    case CompressorParamInfo::Boolean:
      v = x->as_bool() ? 1 : 0;
      break;
    case CompressorParamInfo::Integer:
      v = static_cast<double>(x->as_int(static_cast<std::int64_t>(p.min), static_cast<std::int64_t>(p.max)));
      break;
    case CompressorParamInfo::Number:
      v = x->as_double(p.min, p.max);
      break;
  }
  set_compressor_param(c, p.id, v);
}

// `compression:` from the compressor table: its kind, then the parameters
// (numbers first, then booleans) that kind takes.
CompressionSpec parse_compression(const yaml::Node& comp) {
  std::vector<std::string> keys{"kind", "implementation"};
  for (const auto& p : compressor_params()) keys.push_back(p.key);
  comp.allow_keys(keys);
  CompressionSpec c;
  c.kind = comp.required("kind").as_enum(compressor_names());
  if (auto impl = comp.optional("implementation")) c.implementation = impl->as_enum(compression_implementation_names());
  const Compressor& row = compressor(c.kind);
  for (const bool booleans : {false, true}) {
    for (const auto& p : compressor_params()) {
      if ((p.type == CompressorParamInfo::Boolean) == booleans) parse_compressor_param(comp, p, row, c);
    }
  }
  return c;
}

}  // namespace

std::string to_string(Precision p) {
  switch (p) {
    case Precision::FP32:
      return "fp32";
    case Precision::BF16:
      return "bf16";
    case Precision::FP16:
      return "fp16";
  }
  return "fp32";
}

const std::vector<std::string>& compression_implementation_names() {
  static const std::vector<std::string> names = {"pytorch", "gradwire"};
  return names;
}

double bytes_per_element(Precision p) { return p == Precision::FP32 ? 4.0 : 2.0; }

const std::vector<std::string>& compute_precision_names() {
  static const std::vector<std::string> names = {"fp32", "tf32", "fp16", "bf16", "amp-fp16", "amp-bf16"};
  return names;
}

std::string gemm_rate_of(const std::string& compute_precision) {
  if (compute_precision == "amp-fp16") return "fp16";
  if (compute_precision == "amp-bf16") return "bf16";
  return compute_precision;
}

double activation_element_bytes(const std::string& compute_precision) {
  return compute_precision == "fp32" || compute_precision == "tf32" ? 4.0 : 2.0;
}

std::string parse_compute_precision(const yaml::Node& n) { return n.as_enum(compute_precision_names()); }

std::string parse_cloud_name(const yaml::Node& n) {
  const std::string s = n.as_string();
  const bool ok = !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.';
  });
  if (!ok)
    n.fail("\"" + s +
           "\" is not a cloud name (aws, gcp, azure, onprem or a name of yours: 1-64 letters, digits, -, _ or .)");
  return s;
}

ClusterSpec parse_cluster(const yaml::Node& n) {
  if (n.is_map() && n.has("instance")) return parse_instance_cluster(n);
  n.allow_keys({"nodes", "gpus_per_node", "gpu", "intra_node", "nics", "fabric", "placement", "network", "cloud",
                "price_per_gpu_hour", "price_per_node_hour"});
  ClusterSpec c;
  c.nodes = static_cast<int>(n.required("nodes").as_int(1, kMaxWorldSize));
  auto gpn = n.required("gpus_per_node");
  c.gpus_per_node = static_cast<int>(gpn.as_int(1, kMaxGpusPerNode));
  check_world_size(c, gpn);
  c.gpu = n.required("gpu").as_string();
  c.line = n.line();
  c.column = n.column();
  if (auto in = n.optional("intra_node")) {
    c.intra_node = parse_link(*in, TransportPlace::IntraNode);
  } else if (c.gpus_per_node > 1) {
    c.intra_node_from_profile = true;  // resolve_cluster() takes it from the profile
  } else {
    c.intra_node = LinkSpec{1e12, 0};  // unused with one GPU per node
  }
  auto nics = n.required("nics");
  c.nic = parse_link(nics, TransportPlace::Network, {"count"});
  c.nic_count = static_cast<int>(nics.required("count").as_int(1, kMaxNicsPerNode));

  parse_fabric(n.required("fabric"), c);
  parse_placement_network(n, c);
  parse_own_price(n, c);
  return c;
}

namespace {

/// workload.sharding and workload.activation_checkpointing (sharding.hpp).
void parse_sharding_keys(const yaml::Node& n, WorkloadSpec& w) {
  if (auto sh = n.optional("sharding")) {
    w.sharding = parse_sharding(*sh);
    w.sharding_line = sh->line();
    w.sharding_column = sh->column();
  }
  auto a = n.optional("activation_checkpointing");
  if (!a) return;
  w.activation_checkpointing = parse_activation_checkpointing(*a);
  // DDP's plan has no recompute (docs/model.md, section 7c): only the sharded schedule adds it.
  if (w.activation_checkpointing != ActivationCheckpointing::None && w.sharding.scheme == ShardingScheme::Ddp)
    a->fail(
        "activation checkpointing is simulated with a sharding scheme (workload.sharding: zero1, zero2 or zero3), "
        "not under ddp yet");
}

}  // namespace

WorkloadSpec parse_workload(const yaml::Node& n) {
  // Packed by hand: clang-format puts a list of more than 20 names one a line.
  // clang-format off
  n.allow_keys({"model", "micro_batch", "accumulation", "no_sync", "precision", "bucket_size", "first_bucket_size",
                "overlap", "optimizer", "compression", "interference", "allreduce_algorithm", "compute_efficiency",
                "compute", "compute_precision", "ddp_overheads", "gradient_as_bucket_view", "input_rate",
                "compute_jitter", "sharding", "activation_checkpointing"});
  // clang-format on
  WorkloadSpec w;
  w.model = n.required("model").as_string();
  // micro_batch may be left out when training.global_batch sets it (parse_scenario checks).
  w.micro_batch_given = n.has("micro_batch");
  if (auto m = n.optional("micro_batch")) w.micro_batch = static_cast<int>(m->as_int(1, kMaxMicroBatch));
  if (auto a = n.optional("accumulation")) {
    w.accumulation = static_cast<int>(a->as_int(1, kMaxAccumulation));
    w.accumulation_given = true;
  }
  if (auto o = n.optional("no_sync")) w.no_sync = o->as_bool();
  if (auto p = n.optional("precision")) {
    std::string s = p->as_enum({"fp32", "bf16", "fp16"});
    w.precision = s == "fp32" ? Precision::FP32 : (s == "bf16" ? Precision::BF16 : Precision::FP16);
  }
  if (auto c = n.optional("compute_precision")) {
    w.compute_precision = parse_compute_precision(*c);
    w.compute_precision_line = c->line();
    w.compute_precision_column = c->column();
  }
  if (auto b = n.optional("bucket_size")) w.bucket_size = b->as_size(1024, 64.0 * (1ull << 30));
  if (auto b = n.optional("first_bucket_size")) w.first_bucket_size = b->as_size(1024, 64.0 * (1ull << 30));
  if (auto o = n.optional("overlap")) w.overlap = o->as_bool();
  if (auto o = n.optional("ddp_overheads")) w.ddp_overheads = o->as_bool();
  if (auto o = n.optional("gradient_as_bucket_view")) w.gradient_as_bucket_view = o->as_bool();
  if (auto r = n.optional("input_rate")) w.input_rate = r->as_double(1e-3, 1e9);
  if (auto f = n.optional("interference")) w.interference = f->as_double(0.0, 10.0);
  if (auto f = n.optional("compute_jitter")) w.compute_jitter = f->as_double(0.0, kMaxComputeJitter);
  if (auto f = n.optional("compute_efficiency")) {
    w.compute_efficiency = f->as_double(kMinComputeEfficiency, 1.0);
  }
  if (auto c = n.optional("compute")) {
    if (n.optional("compute_efficiency"))
      c->fail("give either compute (a measured-compute file) or compute_efficiency, not both");
    w.compute = c->as_string();
  }
  if (auto a = n.optional("allreduce_algorithm")) w.allreduce_algorithm = a->as_enum(scenario_algorithm_names());
  if (auto opt = n.optional("optimizer")) {
    opt->allow_keys({"kind", "step_time"});
    if (auto k = opt->optional("kind"))
      w.optimizer.kind = k->as_enum({"sgd", "momentum", "adam", "adamw", "lamb", "lars"});
    if (auto t = opt->optional("step_time")) w.optimizer.step_time = t->as_time(0, kMaxOptimizerStep);
  }
  if (auto comp = n.optional("compression")) w.compression = parse_compression(*comp);
  parse_sharding_keys(n, w);
  return w;
}

TrainingSpec parse_training(const yaml::Node& n) {
  n.allow_keys({"samples", "tokens", "epochs", "dataset_size", "convergence_factor", "global_batch", "critical_batch",
                "reference_batch"});
  TrainingSpec t;
  if (auto x = n.optional("samples")) t.samples = x->as_double(1, 1e18);
  if (auto x = n.optional("tokens")) t.tokens = x->as_double(1, 1e18);
  if (auto x = n.optional("epochs")) t.epochs = x->as_double(1e-6, 1e6);
  if (auto x = n.optional("dataset_size")) t.dataset_size = x->as_double(1, 1e15);
  if (auto x = n.optional("convergence_factor")) t.convergence_factor = x->as_double(0.01, 100);
  if (auto x = n.optional("global_batch")) {
    t.global_batch = x->as_int(1, 1LL << 40);
    t.global_batch_line = x->line();
    t.global_batch_column = x->column();
  }
  if (auto x = n.optional("reference_batch")) {
    t.reference_batch = x->as_double(1, 1e15);
    if (!n.optional("critical_batch")) x->fail("reference_batch is only used with critical_batch");
  }
  if (auto x = n.optional("critical_batch")) {
    if (!t.samples_batch())
      x->fail("critical_batch needs the batch the samples are given at: training.reference_batch or global_batch");
    t.critical_batch = x->as_double(1, 1e12);
  }
  int targets = (t.samples ? 1 : 0) + (t.tokens ? 1 : 0) + (t.epochs ? 1 : 0);
  if (targets != 1) n.fail("give exactly one training target: samples, tokens, or epochs with dataset_size");
  if (t.epochs && !t.dataset_size) n.required("dataset_size");
  if (t.dataset_size && !t.epochs) n.required("dataset_size").fail("dataset_size is only used with epochs");
  return t;
}

Scenario parse_scenario(const yaml::Document& doc) {
  auto root = doc.root();
  root.allow_keys({"name", "cluster", "workload", "profile", "training"});
  Scenario s;
  s.file = doc.file();
  s.name = root.optional("name") ? root.required("name").as_name() : std::string();
  s.cluster = parse_cluster(root.required("cluster"));
  if (auto w = root.optional("workload")) s.workload = parse_workload(*w);
  if (auto p = root.optional("profile")) s.profile = p->as_string();
  if (auto t = root.optional("training")) s.training = parse_training(*t);
  if (s.workload && !s.workload->micro_batch_given && !(s.training && s.training->global_batch))
    root.required("workload").required("micro_batch");  // "missing": the global batch would set it
  return s;
}

Scenario load_scenario(const std::string& path) { return parse_scenario(yaml::load_file(path)); }

}  // namespace gw
