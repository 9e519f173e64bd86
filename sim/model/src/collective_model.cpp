// Closed forms of the simulated collectives (see collective_model.hpp and
// docs/engine.md).
#include "gradwire/model/collective_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gw::collective {
namespace {

void require_ranks(int n) {
  if (n < 1) throw std::invalid_argument("collective over " + std::to_string(n) + " ranks");
}

double frac(int n) { return static_cast<double>(n - 1) / n; }

}  // namespace

double allreduce_busbw_factor(int n) { require_ranks(n); return 2.0 * frac(n); }
double allgather_busbw_factor(int n) { require_ranks(n); return frac(n); }
double reducescatter_busbw_factor(int n) { require_ranks(n); return frac(n); }
double alltoall_busbw_factor(int n) { require_ranks(n); return frac(n); }
double broadcast_busbw_factor(int n) { require_ranks(n); return 1.0; }

double ring_allreduce_time(int n, double bytes, AlphaBeta ab) {
  require_ranks(n);
  if (n == 1) return 0;
  return 2.0 * (n - 1) * ab.alpha + 2.0 * frac(n) * bytes / ab.bandwidth;
}

double ring_allgather_time(int n, double bytes, AlphaBeta ab) {
  require_ranks(n);
  if (n == 1) return 0;
  return (n - 1) * ab.alpha + frac(n) * bytes / ab.bandwidth;
}

double ring_reducescatter_time(int n, double bytes, AlphaBeta ab) {
  return ring_allgather_time(n, bytes, ab);
}

double nccl_time(double wire_latency, double bandwidth_time, NcclCost cost) {
  return std::max(cost.latency, wire_latency) + bandwidth_time / cost.efficiency;
}

double ring_allreduce_time(int n, double bytes, AlphaBeta ab, NcclCost cost, bool per_step) {
  require_ranks(n);
  if (n == 1) return 0;
  return nccl_time((per_step ? 2.0 * (n - 1) : 1.0) * ab.alpha, 2.0 * frac(n) * bytes / ab.bandwidth, cost);
}

double ring_allgather_time(int n, double bytes, AlphaBeta ab, NcclCost cost, bool per_step) {
  require_ranks(n);
  if (n == 1) return 0;
  return nccl_time((per_step ? n - 1.0 : 1.0) * ab.alpha, frac(n) * bytes / ab.bandwidth, cost);
}

double ring_reducescatter_time(int n, double bytes, AlphaBeta ab, NcclCost cost, bool per_step) {
  return ring_allgather_time(n, bytes, ab, cost, per_step);
}

double nvls_allreduce_time(int n, double bytes, AlphaBeta ab, NcclCost cost) {
  require_ranks(n);
  if (n == 1) return 0;
  return nccl_time(ab.alpha, bytes / ab.bandwidth, cost);
}

double hierarchical_allreduce_time(int nodes, int gpus, double bytes, AlphaBeta intra,
                                   AlphaBeta inter) {
  require_ranks(nodes);
  require_ranks(gpus);
  return ring_reducescatter_time(gpus, bytes, intra) +
         ring_allreduce_time(nodes, bytes / gpus, inter) +
         ring_allgather_time(gpus, bytes, intra);
}

double direct_alltoall_time(int n, double bytes, AlphaBeta ab) {
  require_ranks(n);
  if (n == 1) return 0;
  return (n - 1) * ab.alpha + frac(n) * bytes / ab.bandwidth;
}

int pipeline_chunks(double bytes) {
  if (!(bytes > kPipelineChunkBytes)) return 1;
  return static_cast<int>(std::min(std::ceil(bytes / kPipelineChunkBytes), kMaxPipelineChunks));
}

double pipeline_broadcast_time(int n, double bytes, AlphaBeta ab) {
  require_ranks(n);
  if (n == 1) return 0;
  const int k = pipeline_chunks(bytes);
  return (k + n - 2) * (ab.alpha + bytes / k / ab.bandwidth);
}

int BinaryTree::height() const {
  return depth.empty() ? 0 : *std::max_element(depth.begin(), depth.end());
}

namespace {

// The first tree: parent of r clears r's lowest set bit and sets the next one
// (or only clears it when the result would leave [0, n)); children of r are
// r -+ half its lowest set bit, the upper one lowered until it fits.
BinaryTree nccl_btree(int n) {
  BinaryTree t;
  t.root = 0;
  t.parent.assign(n, -1);
  t.children.assign(n, {-1, -1});
  for (int r = 1; r < n; ++r) {
    const int low = r & -r;
    int up = (r ^ low) | (low << 1);
    if (up >= n) up = r ^ low;
    t.parent[r] = up;
  }
  for (int r = 1; r < n; ++r) {
    auto& c = t.children[t.parent[r]];
    (c[0] < 0 ? c[0] : c[1]) = r;
  }
  return t;
}

void fill_depth(BinaryTree& t) {
  const int n = static_cast<int>(t.parent.size());
  t.depth.assign(n, -1);
  t.depth[t.root] = 0;
  std::vector<int> stack{t.root};
  while (!stack.empty()) {
    const int v = stack.back();
    stack.pop_back();
    for (int c : t.children[v]) {
      if (c < 0) continue;
      t.depth[c] = t.depth[v] + 1;
      stack.push_back(c);
    }
  }
}

// Relabels every position p of `t` as map(p).
template <class Map>
BinaryTree relabel(const BinaryTree& t, Map map) {
  const int n = static_cast<int>(t.parent.size());
  BinaryTree out;
  out.root = map(t.root);
  out.parent.assign(n, -1);
  out.children.assign(n, {-1, -1});
  for (int p = 0; p < n; ++p) {
    const int q = map(p);
    out.parent[q] = t.parent[p] < 0 ? -1 : map(t.parent[p]);
    for (int i = 0; i < 2; ++i) {
      const int c = t.children[p][i];
      out.children[q][i] = c < 0 ? -1 : map(c);
    }
  }
  return out;
}

}  // namespace

std::array<BinaryTree, 2> double_binary_tree(int n) {
  require_ranks(n);
  BinaryTree first = nccl_btree(n);
  BinaryTree second = (n % 2 == 0) ? relabel(first, [n](int p) { return n - 1 - p; })
                                   : relabel(first, [n](int p) { return (p + 1) % n; });
  fill_depth(first);
  fill_depth(second);
  return {std::move(first), std::move(second)};
}

namespace {

// The loads of the schedule with k chunks, one per round (k + 2h - 1 rounds),
// and the largest number of edges at one rank.
std::vector<int> tree_round_loads(const std::array<BinaryTree, 2>& trees, int n, int h, int k, int& max_load) {
  const int rounds = k + 2 * h - 1;
  std::vector<int> loads(rounds, 0);
  // Per rank: flows leaving and entering it per round, as difference arrays.
  std::vector<int> out(rounds + 1), in(rounds + 1);
  for (int r = 0; r < n; ++r) {
    std::fill(out.begin(), out.end(), 0);
    std::fill(in.begin(), in.end(), 0);
    int out_edges = 0, in_edges = 0;
    auto add = [&](std::vector<int>& v, int first) { ++v[first]; --v[first + k]; };
    for (const auto& t : trees) {
      if (t.parent[r] >= 0) {
        const int d = t.depth[r];
        add(out, h - d);        // reduce: r -> parent
        add(in, h + d - 1);     // broadcast: parent -> r
        ++out_edges;
        ++in_edges;
      }
      for (int c : t.children[r]) {
        if (c < 0) continue;
        const int d = t.depth[c];
        add(in, h - d);         // reduce: child -> r
        add(out, h + d - 1);    // broadcast: r -> child
        ++out_edges;
        ++in_edges;
      }
    }
    max_load = std::max({max_load, out_edges, in_edges});
    int o = 0, i = 0;
    for (int round = 0; round < rounds; ++round) {
      o += out[round];
      i += in[round];
      loads[round] = std::max({loads[round], o, i});
    }
  }
  return loads;
}

// Work (ranks x rounds) up to which the per-round loads are listed (beyond:
// load_sum only, which costs ranks x (4H + 1) whatever the size).
constexpr long long kMaxListedWork = 1LL << 22;

}  // namespace

TreeSchedule tree_allreduce_schedule(int n, double bytes) {
  require_ranks(n);
  TreeSchedule s;
  s.chunks = pipeline_chunks(bytes / 2);
  if (n == 1) return s;
  const auto trees = double_binary_tree(n);
  s.height = std::max(trees[0].height(), trees[1].height());
  s.rounds = s.chunks + 2 * s.height - 1;
  const int h = s.height;
  // Every edge carries chunk j in rounds [start, start + K), start <= 2H - 1:
  // from K >= 2H on, rounds 2H-1 .. K-1 have every edge busy (max_load) and
  // the rounds before and after do not depend on K. So the loads of K0 =
  // min(K, 2H + 1) chunks, with K - K0 steady rounds added, are K's.
  const int k0 = std::min(s.chunks, 2 * h + 1);
  const std::vector<int> loads = tree_round_loads(trees, n, h, k0, s.max_load);
  s.load_sum = static_cast<double>(s.chunks - k0) * s.max_load;
  for (int l : loads) s.load_sum += l;
  if (static_cast<long long>(n) * s.rounds <= kMaxListedWork) s.loads = k0 == s.chunks ? loads : tree_round_loads(trees, n, h, s.chunks, s.max_load);
  return s;
}

double tree_allreduce_time(int n, double bytes, AlphaBeta ab, NcclCost cost, bool per_step) {
  const TreeSchedule s = tree_allreduce_schedule(n, bytes);
  if (n == 1) return 0;
  return nccl_time((per_step ? s.rounds : 1) * ab.alpha, s.load_sum * (bytes / 2 / s.chunks) / ab.bandwidth, cost);
}

}  // namespace gw::collective
