// A cluster from a measurement (gradwire/model/cluster_fit.hpp).
#include "gradwire/model/cluster_fit.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <yaml-cpp/yaml.h>

#include "gradwire/core/error.hpp"
#include "gradwire/core/units.hpp"
#include "gradwire/model/closed_form.hpp"
#include "gradwire/model/fit.hpp"
#include "gradwire/model/scenario_refs.hpp"
#include "gradwire/model/scenario_yaml.hpp"

namespace gw {
namespace {

/// The smallest latency the bisection tells from none (below it the fit is 0).
constexpr double kMinFittedLatency = 1e-12;

NcclShape whole(const ClusterSpec& c) { return collective_shape(c, c.world_size()); }

double model_time(const ClusterSpec& c, CollectiveOp op, double bytes) {
  return choose_collective(op, Algorithm::Auto, Protocol::Auto, c, whole(c), bytes).time;
}

ClusterSpec with_nic(ClusterSpec c, double bandwidth, double latency) {
  c.nic.bandwidth = bandwidth;
  c.nic.latency = latency;
  return c;
}

/// The smallest x of [lo, hi] (lo > 0) where `ok` turns true, in log space;
/// `ok` false at lo and true at hi.
template <class Ok>
double bisect_log(double lo, double hi, Ok ok) {
  for (int i = 0; i < 200 && hi > lo * (1 + 1e-12); ++i) {
    const double mid = std::sqrt(lo * hi);
    (ok(mid) ? hi : lo) = mid;
  }
  return hi;
}

/// Bus bandwidth in nccl-tests' unit: "338.82 GB/s".
std::string busbw_text(CollectiveOp op, int ranks, double bytes, double seconds) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f GB/s", bytes / seconds * bus_bandwidth_factor(op, ranks) / 1e9);
  return buf;
}

/// The NIC line rate whose model time at `top` is the measured one.
double fit_bandwidth(const ClusterSpec& c, CollectiveOp op, const CurvePoint& top) {
  const auto fast_enough = [&](double bw) {
    return model_time(with_nic(c, bw, c.nic.latency), op, top.x) <= top.seconds;
  };
  const std::string at = " at " + units::format_size(top.x) + " (busbw " +
                         busbw_text(op, c.world_size(), top.x, top.seconds) + " measured)";
  if (!fast_enough(kMaxLinkBandwidth))
    throw std::invalid_argument("no NIC bandwidth up to " + units::format_bandwidth(kMaxLinkBandwidth) +
                                " gives the log's time" + at +
                                ": the model is held below it by the intra-node "
                                "link or the transport's connection limit");
  if (fast_enough(kMinLinkBandwidth))
    throw std::invalid_argument("the log's time" + at + " is longer than the model gives even with NICs of " +
                                units::format_bandwidth(kMinLinkBandwidth));
  return bisect_log(kMinLinkBandwidth, kMaxLinkBandwidth, fast_enough);
}

/// Median over `floor` of model time / measured time.
double floor_ratio(const ClusterSpec& c, CollectiveOp op, const std::vector<CurvePoint>& floor) {
  std::vector<double> ratios;
  for (const auto& p : floor) ratios.push_back(model_time(c, op, p.x) / p.seconds);
  return fit::median(ratios);
}

/// The NIC latency whose model times at `floor` match the measured ones in
/// the median; 0 (with *at_zero) where the model is slower without any.
double fit_latency(const ClusterSpec& c, CollectiveOp op, const std::vector<CurvePoint>& floor, bool* at_zero) {
  const auto slow_enough = [&](double lat) { return floor_ratio(with_nic(c, c.nic.bandwidth, lat), op, floor) >= 1; };
  *at_zero = slow_enough(0);
  if (*at_zero) return 0;
  if (!slow_enough(kMaxLinkLatency))
    throw std::invalid_argument("no NIC latency up to 1 s gives the log's smallest sizes' times");
  return bisect_log(kMinFittedLatency, kMaxLinkLatency, slow_enough);
}

bool settled(double before, double after) { return std::abs(after - before) <= 1e-9 * std::max(before, after); }

/// What fit_cluster_network reports about `c` (fitted or read back).
void describe_fit(ClusterFit& f, const std::vector<CurvePoint>& floor) {
  const NcclShape shape = whole(f.cluster);
  const auto pick = choose_collective(f.op, Algorithm::Auto, Protocol::Auto, f.cluster, shape, f.plateau_bytes);
  f.plateau_model = pick.time;
  f.plateau_pair = to_string(pick.algorithm) + "/" + to_string(pick.protocol);
  f.floor_ratio = floor_ratio(f.cluster, f.op, floor);
  // "No longer depends": doubling the rate gains under 1%. A pipeline's fill
  // still reads the NICs' chunk time where they are not its slowest stage
  // (NcclPipeline: up to 1 / (K + fill) of the time, 3% at NVLS+tree's 32
  // chunks of 8 GiB over 32 NIC heads).
  const ClusterSpec faster = with_nic(f.cluster, 2 * f.cluster.nic.bandwidth, f.cluster.nic.latency);
  f.bandwidth_lower_bound = model_time(faster, f.op, f.plateau_bytes) >= f.plateau_model * (1 - 1e-2);
}

std::vector<CurvePoint> floor_points(std::vector<CurvePoint> points) {
  points.resize(std::min<std::size_t>(kClusterFitFloorSizes, points.size() - 1));
  return points;
}

}  // namespace

ClusterFit fit_cluster_network(const ClusterSpec& base, CollectiveOp op, const std::vector<CurvePoint>& points) {
  const std::vector<CurvePoint> sorted = fit::normalize_points(points);
  if (sorted.size() < 2) throw std::invalid_argument("the fit needs two sizes or more (one for each end of the curve)");
  const CurvePoint& top = sorted.back();
  const std::vector<CurvePoint> floor = floor_points(sorted);
  ClusterFit f;
  f.op = op;
  f.cluster = with_nic(base, base.nic.bandwidth, 0);
  for (int round = 0; round < 50; ++round) {  // each end moves the other a little: alternate until both settle
    const ClusterSpec before = f.cluster;
    f.cluster.nic.bandwidth = fit_bandwidth(f.cluster, op, top);
    f.cluster.nic.latency = fit_latency(f.cluster, op, floor, &f.latency_at_zero);
    if (round > 0 && settled(before.nic.bandwidth, f.cluster.nic.bandwidth) &&
        settled(before.nic.latency, f.cluster.nic.latency))
      break;
  }
  f.plateau_bytes = top.x;
  f.plateau_measured = top.seconds;
  for (const auto& p : floor) f.floor_bytes.push_back(p.x);
  describe_fit(f, floor);
  return f;
}

std::string fit_summary(const ClusterFit& f) {
  const ClusterSpec& c = f.cluster;
  return std::to_string(c.nodes) + " x " + std::to_string(c.gpus_per_node) + " " + c.gpu + "; " +
         std::to_string(c.nic_count) + " NICs of " + units::format_bandwidth(c.nic.bandwidth) + ", latency " +
         units::format_time(c.nic.latency) + "; " + to_string(f.op) + " busbw at " +
         units::format_size(f.plateau_bytes) + ": " +
         busbw_text(f.op, c.world_size(), f.plateau_bytes, f.plateau_measured) + " measured, " +
         busbw_text(f.op, c.world_size(), f.plateau_bytes, f.plateau_model) + " modelled";
}

namespace {

std::string number(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 9);
  return std::string(buf, r.ptr);
}

std::string link_yaml(const LinkSpec& l, const std::string& count) {
  std::string s =
      "{" + count + "bandwidth: " + number(l.bandwidth * 8 / 1e9) + "Gbps, latency: " + number(l.latency * 1e6) + "us";
  if (l.transport != Transport::GpuLink && l.transport != Transport::Network)
    s += std::string(", transport: ") + transport_info(l.transport).name;
  return s + "}";
}

/// One comment line: printable, control characters (and line breaks) as '?'.
std::string comment_line(const std::string& text) {
  std::string out = "# ";
  for (std::size_t i = 0; i < text.size();) {
    const TextUnit u = text_unit_at(text, i);
    out += u.control ? std::string("?") : text.substr(i, u.length);
    i += u.length;
  }
  return out + "\n";
}

}  // namespace

std::string cluster_yaml(const std::string& name, const ClusterSpec& c, const std::vector<std::string>& comments) {
  std::string out;
  for (const auto& line : comments) out += comment_line(line);
  YAML::Emitter quoted;
  quoted << YAML::DoubleQuoted << name;
  out += std::string("name: ") + quoted.c_str() + "\n";
  out += "cluster:\n";
  out += "  nodes: " + std::to_string(c.nodes) + "\n";
  out += "  gpus_per_node: " + std::to_string(c.gpus_per_node) + "\n";
  out += "  gpu: " + c.gpu + "\n";
  if (c.gpus_per_node > 1) out += "  intra_node: " + link_yaml(c.intra_node, "") + "\n";
  out += "  nics: " + link_yaml(c.nic, "count: " + std::to_string(c.nic_count) + ", ") + "\n";
  out += "  fabric: {topology: switch, latency: " + number(c.fabric.latency * 1e6) + "us}\n";
  return out;
}

namespace {

/// The one group of `logs` to fit, across two nodes or more.
CollectiveCost network_run(const std::vector<nccl_tests::Log>& logs) {
  const auto fits = nccl_tests::collective_fits(logs);  // InputError: op unknown, one rank, no usable rows
  const nccl_tests::Log& first = logs.front();
  if (fits.size() != 1) {
    std::string found;
    for (const auto& f : fits)
      found += (found.empty() ? "" : "; ") + to_string(f.op) + " on " + std::to_string(f.gpus) + " ranks, " +
               std::to_string(f.nodes) + " node(s)";
    throw InputError(first.file, first.line, 1, "",
                     "a cluster is fitted to the runs of one collective on one configuration; found " + found +
                         ": choose with --collectives OP, or give one configuration's logs");
  }
  const CollectiveCost& run = fits.front();
  if (run.nodes < 2)
    throw InputError(first.file, first.line, 1, "",
                     first.describe() +
                         (first.ranks.empty() ? std::string(" (no \"#  Rank\" lines name the hosts)") : "") +
                         ": no network to fit; a cluster is fitted to a log across nodes");
  if (run.gpus % run.nodes != 0)
    throw InputError(first.file, first.line, 1, "",
                     first.describe() + ": the ranks are not the same on every node (" + std::to_string(run.gpus) +
                         " on " + std::to_string(run.nodes) + "); gradwire's clusters have equal nodes");
  return run;
}

/// cluster.gpu: the log's GPU class, else the profile's.
std::string gpu_class(const nccl_tests::Log& log, const Profile* profile) {
  std::string gpu = gpu_class_of_device(log.gpu(), 0);
  if (gpu.empty() && profile != nullptr) gpu = gpu_class_of_device(profile->device, profile->memory_bytes);
  if (gpu.empty() || gpu == "cpu")
    throw InputError(log.file, log.line, 1, "",
                     "the log's GPU (\"" + log.gpu() + "\") is not a GPU class gradwire knows" +
                         (profile ? " and neither is profile " + profile->name + "'s" : std::string()) +
                         ": name a profile of it (--profile)");
  return gpu;
}

/// nodes x gpus_per_node of `gpu`, the intra-node link from `profile`, a
/// switch fabric and `o`'s NICs (their rate and latency still to fit).
ClusterSpec base_cluster(const CollectiveCost& run, const std::string& gpu, const Profile& profile,
                         const ClusterFitOptions& o, const nccl_tests::Log& log) {
  Scenario s;
  s.file = log.file;
  ClusterSpec& c = s.cluster;
  c.nodes = run.nodes;
  c.gpus_per_node = run.gpus / run.nodes;
  c.gpu = gpu;
  c.nic_count = o.nics > 0 ? o.nics : c.gpus_per_node;
  c.nic = make_link(kMinLinkBandwidth, 0, o.transport);
  c.intra_node = LinkSpec{1e12, 0};  // as the scenario parser sets it for one GPU per node (unused)
  if (c.gpus_per_node == 1) return c;
  if (profile.collective(CollectiveOp::AllReduce, c.gpus_per_node) == nullptr)
    throw InputError(log.file, log.line, 1, "",
                     "profile " + profile.name + " (" + profile.path + ") has no all-reduce fit at " +
                         std::to_string(c.gpus_per_node) +
                         " GPUs to take the intra-node link from: name one that has (--profile)");
  c.intra_node_from_profile = true;
  c.intra_node = resolve_cluster(s, profile).intra_node;  // as a scenario without intra_node gets it
  c.intra_node_from_profile = false;
  return c;
}

std::vector<std::string> fit_comments(const ClusterFromLogs& r, const std::vector<nccl_tests::Log>& logs,
                                      const Profile& profile, const ClusterFitOptions& o) {
  const ClusterFit& f = r.fit;
  const ClusterSpec& c = f.cluster;
  const int ranks = c.world_size();
  std::vector<std::string> out = {
      "A cluster fitted to nccl-tests (gradwire calibrate --from-nccl-tests --write-cluster; docs/calibrate.md,",
      "\"A cluster from a log\"). Logs:"};
  for (const auto& log : logs)
    out.push_back("  " + log.where() + ": " + log.describe() + (log.gpu().empty() ? "" : ", " + log.gpu()));
  out.push_back("nics.bandwidth: the " + to_string(f.op) + " time at " + units::format_size(f.plateau_bytes) +
                " (busbw " + busbw_text(f.op, ranks, f.plateau_bytes, f.plateau_measured) + " measured, " +
                busbw_text(f.op, ranks, f.plateau_bytes, f.plateau_model) + " modelled, " + f.plateau_pair + ")");
  out.push_back("nics.latency: the median time of the " + std::to_string(f.floor_bytes.size()) + " smallest sizes (" +
                units::format_size(f.floor_bytes.front()) + " .. " + units::format_size(f.floor_bytes.back()) +
                "; model / measured " + number(f.floor_ratio) + ")" +
                (f.latency_at_zero ? ": 0, the model is slower there even without NIC latency" : ""));
  out.push_back("per node: " + std::to_string(c.nic_count) + " NICs" +
                (o.nics > 0 ? " (--nics)" : " (assumed one per GPU; --nics N)") + " x " +
                units::format_bandwidth(c.nic.bandwidth) + " = " + units::format_bandwidth(c.node_bandwidth()) +
                ", usable " + units::format_bandwidth(c.usable_node_bandwidth()) + " (transport " +
                transport_info(c.nic.transport).name + "; --nic-transport); the latency includes the switch");
  if (f.bandwidth_lower_bound)
    out.push_back("the plateau is held by the intra-node link, not the NICs: their rate is the least that gives it");
  if (c.gpus_per_node > 1)
    out.push_back("intra_node: from profile " + profile.name + "'s all-reduce fit at " +
                  std::to_string(c.gpus_per_node) + " GPUs (not in the log)");
  return out;
}

}  // namespace

ClusterFromLogs cluster_from_logs(const std::vector<nccl_tests::Log>& logs, const ClusterFitOptions& o) {
  if (logs.empty()) throw std::invalid_argument("no nccl-tests run to fit");
  const CollectiveCost run = network_run(logs);
  const nccl_tests::Log& log = logs.front();
  std::optional<Profile> named;
  if (!o.profile.empty()) named = load_profile(o.profile);
  const std::string gpu = gpu_class(log, named ? &*named : nullptr);
  const Profile profile = named ? *named : load_profile(gpu);
  ClusterFromLogs r;
  r.profile_path = profile.path;
  try {
    r.fit = fit_cluster_network(base_cluster(run, gpu, profile, o, log), run.op, run.points);
  } catch (const std::invalid_argument& e) {
    throw InputError(log.file, log.line, 1, "", log.describe() + ": " + e.what());
  }
  r.name = o.name.empty()
               ? gpu + "-" + std::to_string(run.nodes) + "x" + std::to_string(run.gpus / run.nodes) + "-from-nccl-tests"
               : o.name;
  // What is written is what a reader gets (9 digits): report on that cluster.
  try {
    r.fit.cluster = parse_scenario(yaml::load_string(cluster_yaml(r.name, r.fit.cluster, {}), "cluster")).cluster;
  } catch (const InputError& e) {
    throw std::runtime_error(std::string("the cluster made here would not load, so nothing is written: ") + e.what());
  }
  describe_fit(r.fit, floor_points(fit::normalize_points(run.points)));
  r.yaml = cluster_yaml(r.name, r.fit.cluster, fit_comments(r, logs, profile, o));
  return r;
}

}  // namespace gw
