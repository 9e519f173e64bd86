// Memory of one simulation, estimated before it runs (engine.hpp;
// docs/engine.md, "Scale"): refused when it exceeds what the machine has.
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "gradwire/core/error.hpp"
#include "gradwire/core/units.hpp"
#include "gradwire/engine/engine.hpp"

namespace gw::engine {
namespace {

// Peak RSS of `gradwire simulate` (its simulation child) on the bundled
// default scenario (ResNet-50, 8 A100s and 4 NICs per node, one switch)
// with `nodes` raised: 36 MB at 64 GPUs (loading SimGrid), 90 MB at 16,384,
// 331 MB at 65,536, 650 MB at 131,072, 2,598 MB at 524,288 and 5,170 MB at
// 1,048,576 (docs/engine.md, "Scale"; docs/measurements/scale-2026-12-03/):
// about 4.9 kB per GPU. The constants round both parts up, so the estimate
// is above every size measured (by 2-35%).
constexpr double kFixedBytes = 40e6;
constexpr double kBytesPerGpu = 5.0e3;
// Each GPU also holds a route to every other GPU of its node (platform.cpp's
// bypass routes), which kBytesPerGpu covers for 8-GPU nodes. Larger nodes
// add about 0.24 kB a route beyond those 7, measured the same way on H200
// clusters of 72-GPU nodes: 215 MB at 9,216 GPUs and 749 MB at 36,864,
// against 56 and 194 MB with 8-GPU nodes (201 MB at 9,216 with 64); 0.3 kB
// keeps the estimate above them (by 20-25%).
constexpr double kBytesPerRouteBeyond8 = 300;
// From this estimate on, simulate and collective say it before they run.
constexpr double kAnnounceBytes = 512.0 * 1024 * 1024;

// A field of /proc/meminfo in bytes ("MemAvailable:   123 kB").
std::optional<double> meminfo(const std::string& field) {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) != 0) continue;
    std::istringstream rest(line.substr(field.size() + 1));
    double kib = 0;
    if (rest >> kib) return kib * 1024;
  }
  return std::nullopt;
}

// A number in a cgroup v2 file of this process's group ("max" or absent: nullopt).
std::optional<double> cgroup_value(const std::string& file) {
  std::ifstream in("/sys/fs/cgroup/" + file);
  double v = 0;
  if (in >> v) return v;
  return std::nullopt;
}

std::optional<double> available_now() {
  std::optional<double> avail = meminfo("MemAvailable");
  const auto max = cgroup_value("memory.max"), used = cgroup_value("memory.current");
  if (max && used && (!avail || *max - *used < *avail)) avail = *max > *used ? *max - *used : 0.0;
  return avail;
}

}  // namespace

double simulation_memory_estimate(const ClusterSpec& cluster) {
  const double routes_beyond_8 = std::max(0, cluster.gpus_per_node - 8);
  return kFixedBytes +
         (kBytesPerGpu + kBytesPerRouteBeyond8 * routes_beyond_8) * static_cast<double>(cluster.world_size());
}

std::optional<double> simulation_memory_bound() {
  const char* env = std::getenv("GRADWIRE_MAX_MEMORY");
  if (env == nullptr || *env == '\0') return available_now();
  std::string why;
  const auto bytes = units::parse_size(env, &why);
  if (!bytes || *bytes <= 0)
    throw InputError(
        "GRADWIRE_MAX_MEMORY", 0, 0, "",
        "\"" + std::string(env) + "\" is not a size of memory (e.g. 8GiB)" + (why.empty() ? "" : ": " + why));
  return bytes;
}

void check_simulation_memory(const ClusterSpec& cluster) {
  const double need = simulation_memory_estimate(cluster);
  const auto bound = simulation_memory_bound();
  if (!bound || need <= *bound) return;
  const bool set = std::getenv("GRADWIRE_MAX_MEMORY") != nullptr && *std::getenv("GRADWIRE_MAX_MEMORY") != '\0';
  throw std::runtime_error(
      "simulating " + std::to_string(cluster.world_size()) + " GPUs needs about " + units::format_size(need) +
      " of memory (estimate; docs/engine.md, \"Scale\"), more than the " + units::format_size(*bound) +
      (set ? " GRADWIRE_MAX_MEMORY allows" : " available (set GRADWIRE_MAX_MEMORY to try anyway)"));
}

void announce_simulation_memory(const std::string& label, const ClusterSpec& cluster) {
  const double need = simulation_memory_estimate(cluster);
  if (need >= kAnnounceBytes)
    std::cerr << label << ": about " << units::format_size(need)
              << " of memory (estimate; docs/engine.md, \"Scale\")\n";
}

}  // namespace gw::engine
