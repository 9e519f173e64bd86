// Plain logic of the MPI calibration; see gradwire/calibrate/ranks.hpp.
#include "gradwire/calibrate/ranks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

namespace gw::calibrate::ranks {
namespace {

void check_shape(std::size_t buffer, int ranks, int repeats) {
  if (ranks < 1 || repeats < 1) throw std::invalid_argument("timings of no ranks or no repeats");
  if (buffer != static_cast<std::size_t>(ranks) * static_cast<std::size_t>(repeats)) {
    throw std::invalid_argument("gathered timings: " + std::to_string(buffer) + " values for " + std::to_string(ranks) +
                                " ranks x " + std::to_string(repeats) + " repeats");
  }
}

}  // namespace

std::vector<double> max_over_ranks(const std::vector<std::vector<double>>& per_rank) {
  if (per_rank.empty() || per_rank.front().empty()) throw std::invalid_argument("timings of no ranks or no repeats");
  std::vector<double> out = per_rank.front();
  for (std::size_t r = 1; r < per_rank.size(); ++r) {
    if (per_rank[r].size() != out.size()) {
      throw std::invalid_argument("rank " + std::to_string(r) + " has " + std::to_string(per_rank[r].size()) +
                                  " timings, rank 0 has " + std::to_string(out.size()));
    }
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = std::max(out[i], per_rank[r][i]);
  }
  return out;
}

std::vector<double> max_over_ranks(const std::vector<double>& gathered, int ranks, int repeats) {
  check_shape(gathered.size(), ranks, repeats);
  std::vector<std::vector<double>> per_rank;
  for (int r = 0; r < ranks; ++r) {
    const auto b = gathered.begin() + static_cast<std::ptrdiff_t>(r) * repeats;
    per_rank.emplace_back(b, b + repeats);
  }
  return max_over_ranks(per_rank);
}

std::vector<double> rank_imbalance(const std::vector<double>& gathered, int ranks, int repeats) {
  check_shape(gathered.size(), ranks, repeats);
  std::vector<double> out;
  for (int i = 0; i < repeats; ++i) {
    double lo = gathered[static_cast<std::size_t>(i)], hi = lo;
    for (int r = 1; r < ranks; ++r) {
      const double t =
          gathered[static_cast<std::size_t>(r) * static_cast<std::size_t>(repeats) + static_cast<std::size_t>(i)];
      lo = std::min(lo, t);
      hi = std::max(hi, t);
    }
    out.push_back(hi > 0 ? (hi - lo) / hi : 0.0);
  }
  return out;
}

int distinct_hosts(const std::vector<std::string>& rank_hosts) {
  return static_cast<int>(std::set<std::string>(rank_hosts.begin(), rank_hosts.end()).size());
}

std::string hosts_summary(const std::vector<std::string>& rank_hosts) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<int>> ranks_of;
  for (std::size_t r = 0; r < rank_hosts.size(); ++r) {
    auto& v = ranks_of[rank_hosts[r]];
    if (v.empty()) order.push_back(rank_hosts[r]);
    v.push_back(static_cast<int>(r));
  }
  std::ostringstream os;
  os << order.size() << (order.size() == 1 ? " node: " : " nodes: ");
  for (std::size_t h = 0; h < order.size(); ++h) {
    const auto& v = ranks_of[order[h]];
    if (h > 0) os << ", ";
    os << order[h] << " (" << (v.size() == 1 ? "rank " : "ranks ");
    // Runs of consecutive ranks as a-b.
    for (std::size_t i = 0; i < v.size();) {
      std::size_t j = i;
      while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
      if (i > 0) os << ",";
      os << v[i];
      if (j > i) os << "-" << v[j];
      i = j + 1;
    }
    os << ")";
  }
  return os.str();
}

int local_device(int local_rank, int local_size, int visible_gpus, const std::string& host) {
  if (visible_gpus < 1) throw std::runtime_error("no CUDA GPU visible to this rank");
  if (visible_gpus == 1) return 0;
  if (local_size > visible_gpus) {
    throw std::runtime_error(
        "host " + host + " runs " + std::to_string(local_size) + " ranks but has " + std::to_string(visible_gpus) +
        " GPUs visible: start one rank per GPU (e.g. mpirun -npernode " + std::to_string(visible_gpus) + ")");
  }
  return local_rank;
}

// Index of op in gw::collective_ops(): what travels in a command.
static int op_index(CollectiveOp op) {
  const auto& ops = collective_ops();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].op == op) return static_cast<int>(i);
  }
  throw std::invalid_argument("unknown collective op");
}

std::array<double, kCommandDoubles> encode(const Command& c) {
  return {static_cast<double>(c.kind), static_cast<double>(op_index(c.op)), c.bytes, static_cast<double>(c.warmup),
          static_cast<double>(c.repeats)};
}

Command decode(const std::array<double, kCommandDoubles>& d) {
  auto whole = [&](double v, double lo, double hi) {
    if (!(v >= lo && v <= hi) || v != std::floor(v)) {
      throw std::runtime_error("malformed calibration command from rank 0");
    }
    return static_cast<int>(v);
  };
  Command c;
  c.kind = static_cast<Command::Kind>(whole(d[0], 0, 2));
  c.op = collective_ops()
             .at(static_cast<std::size_t>(whole(d[1], 0, static_cast<double>(collective_ops().size() - 1))))
             .op;
  if (!(d[2] >= 0 && d[2] <= 1e15)) throw std::runtime_error("malformed calibration command from rank 0");
  c.bytes = d[2];
  c.warmup = whole(d[3], 0, 1e6);
  c.repeats = whole(d[4], 0, 1e6);
  if (c.kind == Command::kCollective && c.repeats < 1)
    throw std::runtime_error("malformed calibration command from rank 0");
  return c;
}

int launcher_world_size(const std::function<const char*(const char*)>& get) {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE"}) {
    const char* v = get(var);
    if (v == nullptr || *v == '\0') continue;
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    if (end != nullptr && *end == '\0' && n >= 1 && n <= 10'000'000) return static_cast<int>(n);
  }
  return 0;
}

}  // namespace gw::calibrate::ranks
