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

double allreduce_busbw_factor(int n) {
  require_ranks(n);
  return 2.0 * frac(n);
}
double allgather_busbw_factor(int n) {
  require_ranks(n);
  return frac(n);
}
double reducescatter_busbw_factor(int n) {
  require_ranks(n);
  return frac(n);
}
double alltoall_busbw_factor(int n) {
  require_ranks(n);
  return frac(n);
}
double broadcast_busbw_factor(int n) {
  require_ranks(n);
  return 1.0;
}

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

double ring_reducescatter_time(int n, double bytes, AlphaBeta ab) { return ring_allgather_time(n, bytes, ab); }

double nccl_time(double wire_latency, double bandwidth_time, NcclCost cost) {
  return std::max(cost.latency, wire_latency) + cost.ramp_latency + bandwidth_time / cost.efficiency;
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

int pat_steps(int n) {
  require_ranks(n);
  int d = 0;
  while ((1LL << d) < n) ++d;
  return d;
}

int pat_step_blocks(int n, int d) {
  require_ranks(n);
  if (d < 0 || d >= pat_steps(n)) throw std::invalid_argument("PAT step " + std::to_string(d) + " out of range");
  return std::min(1 << d, n - (1 << d));
}

double pat_time(int n, double bytes, AlphaBeta ab, NcclCost cost, bool per_step) {
  require_ranks(n);
  if (n == 1) return 0;
  return nccl_time((per_step ? pat_steps(n) : 1.0) * ab.alpha, frac(n) * bytes / ab.bandwidth, cost);
}

double pat_tuning_time(double bytes, AlphaBeta ab, NcclCost cost) {
  return nccl_time(ab.alpha, bytes / ab.bandwidth, cost);
}

double hierarchical_allreduce_time(int nodes, int gpus, double bytes, AlphaBeta intra, AlphaBeta inter) {
  require_ranks(nodes);
  require_ranks(gpus);
  return ring_reducescatter_time(gpus, bytes, intra) + ring_allreduce_time(nodes, bytes / gpus, inter) +
         ring_allgather_time(gpus, bytes, intra);
}

double direct_alltoall_time(int n, double bytes, AlphaBeta ab) {
  require_ranks(n);
  if (n == 1) return 0;
  return (n - 1) * ab.alpha + frac(n) * bytes / ab.bandwidth;
}

double hierarchical_alltoall_time(int nodes, int gpus, double bytes, AlphaBeta intra, AlphaBeta inter) {
  require_ranks(nodes);
  require_ranks(gpus);
  return direct_alltoall_time(gpus, bytes, intra) + direct_alltoall_time(nodes, bytes / gpus, inter);
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

int BinaryTree::height() const { return depth.empty() ? 0 : *std::max_element(depth.begin(), depth.end()); }

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

std::array<BinaryTree, 2> nccl_trees(const std::vector<int>& node_sizes) {
  const int m = static_cast<int>(node_sizes.size());
  require_ranks(m);
  std::vector<int> first(m + 1, 0);  // first position of each node
  for (int k = 0; k < m; ++k) {
    require_ranks(node_sizes[k]);
    first[k + 1] = first[k] + node_sizes[k];
  }
  const int n = first[m];
  const auto nodes = double_binary_tree(m);
  std::array<BinaryTree, 2> out;
  for (int t = 0; t < 2; ++t) {
    const BinaryTree& nt = nodes[t];
    BinaryTree& rt = out[t];
    rt.parent.assign(n, -1);
    rt.children.assign(n, {-1, -1});
    // Tree 0's chain runs from the node's first rank, tree 1's from its last.
    auto at = [&](int node, int j) { return t == 0 ? first[node] + j : first[node + 1] - 1 - j; };
    auto head = [&](int node) { return at(node, 0); };
    auto tail = [&](int node) { return at(node, node_sizes[node] - 1); };
    rt.root = head(nt.root);
    for (int k = 0; k < m; ++k) {
      for (int j = 1; j < node_sizes[k]; ++j) {
        rt.parent[at(k, j)] = at(k, j - 1);
        rt.children[at(k, j - 1)][0] = at(k, j);
      }
      for (int i = 0; i < 2; ++i) {
        const int child = nt.children[k][i];
        if (child < 0) continue;
        const int host = i == 0 ? head(k) : tail(k);  // first child on the head, second on the tail
        rt.parent[head(child)] = host;
        auto& slots = rt.children[host];
        (slots[0] < 0 ? slots[0] : slots[1]) = head(child);
      }
    }
    fill_depth(rt);
  }
  return out;
}

TreeLinks uniform_tree_links(AlphaBeta ab) { return {ab, ab, ab.bandwidth, ab.bandwidth}; }

namespace {

// Flows per round on one class of links, as difference arrays over rounds,
// and the number of flows each way.
struct RoundCounts {
  std::vector<int> out, in;
  int out_flows = 0, in_flows = 0;
  explicit RoundCounts(int rounds) : out(rounds + 1), in(rounds + 1) {}
  void clear() {
    std::fill(out.begin(), out.end(), 0);
    std::fill(in.begin(), in.end(), 0);
    out_flows = in_flows = 0;
  }
  // One flow out (or in) in rounds [first, first + k).
  void add_out(int first, int k) {
    ++out[first];
    --out[first + k];
    ++out_flows;
  }
  void add_in(int first, int k) {
    ++in[first];
    --in[first + k];
    ++in_flows;
  }
  // Folds the counts into `peak` (largest per round, either direction) and
  // `edges` (largest number of flows either way).
  void fold(std::vector<int>& peak, int& edges) const {
    int o = 0, i = 0;
    for (std::size_t r = 0; r < peak.size(); ++r) {
      o += out[r];
      i += in[r];
      peak[r] = std::max({peak[r], o, i});
    }
    edges = std::max({edges, out_flows, in_flows});
  }
};

// Per round, the largest flow counts of each link class (rank link,
// connection, node link, host path) with k chunks, and each class's largest
// number of edges.
struct RoundLoads {
  std::vector<int> rank, conn, node, staging, inter;
  int rank_edges = 0, conn_edges = 0, node_edges = 0, staging_edges = 0;
};

RoundLoads tree_round_loads(const std::array<BinaryTree, 2>& trees, const std::vector<int>& node_sizes, int h, int k) {
  const int rounds = k + 2 * h - 1;
  RoundLoads L;
  L.rank.assign(rounds, 0);
  L.conn = L.node = L.staging = L.rank;
  RoundCounts rank(rounds), conn(rounds), node(rounds), staging(rounds), inter(rounds);
  std::vector<int> node_of;
  for (int j = 0; j < static_cast<int>(node_sizes.size()); ++j) node_of.insert(node_of.end(), node_sizes[j], j);
  int v = 0;
  for (std::size_t j = 0; j < node_sizes.size(); ++j) {
    node.clear();
    staging.clear();
    for (int end = v + node_sizes[j]; v < end; ++v) {
      rank.clear();
      conn.clear();
      // One flow between v and `other` leaving v from round `out_first` and
      // entering v from round `in_first`.
      auto edge = [&](int other, int out_first, int in_first, bool count_staging) {
        rank.add_out(out_first, k);
        rank.add_in(in_first, k);
        if (node_of[other] != node_of[v]) {
          for (RoundCounts* c : {&conn, &node}) {
            c->add_out(out_first, k);
            c->add_in(in_first, k);
          }
          inter.add_out(out_first, k);
        } else if (count_staging) {  // the host path is shared both ways: count each edge once
          staging.add_out(out_first, k);
          staging.add_out(in_first, k);
        }
      };
      for (const auto& t : trees) {
        if (t.parent[v] >= 0) edge(t.parent[v], h - t.depth[v], h + t.depth[v] - 1, true);  // reduce up, broadcast down
        for (int c : t.children[v])
          if (c >= 0) edge(c, h + t.depth[c] - 1, h - t.depth[c], false);
      }
      rank.fold(L.rank, L.rank_edges);
      conn.fold(L.conn, L.conn_edges);
    }
    node.fold(L.node, L.node_edges);
    staging.fold(L.staging, L.staging_edges);
  }
  L.inter.assign(rounds, 0);
  for (int r = 0, x = 0; r < rounds; ++r) L.inter[r] = (x += inter.out[r]) > 0;
  return L;
}

// tree_round_loads, remembered: the engine, the choice (every protocol, its
// tuning and its run) and the closed form ask for the same trees and chunk
// count over and over (O(ranks x H) each: 1.3 M rank-rounds at 4,096 GPUs).
// The last few results, per thread; a pure function's cache.
const RoundLoads& cached_round_loads(const std::array<BinaryTree, 2>& trees, const std::vector<int>& node_sizes, int h,
                                     int k) {
  struct Entry {
    std::vector<int> sizes;
    int k;
    RoundLoads loads;
  };
  constexpr std::size_t kEntries = 8;
  thread_local std::vector<Entry> cache;
  for (const auto& e : cache)
    if (e.k == k && e.sizes == node_sizes) return e.loads;
  if (cache.size() >= kEntries) cache.erase(cache.begin());
  cache.push_back({node_sizes, k, tree_round_loads(trees, node_sizes, h, k)});
  return cache.back().loads;
}

// Work (ranks x rounds) up to which the per-round loads are listed (beyond:
// load_sum only, which costs ranks x (4H + 1) whatever the size).
constexpr long long kMaxListedWork = 1LL << 22;

double per_bandwidth(int flows, double bandwidth) { return flows == 0 ? 0.0 : flows / bandwidth; }

// A round's cost: the largest flows per bandwidth over the link classes.
double round_cost(const RoundLoads& L, int r, const TreeLinks& b) {
  return std::max({per_bandwidth(L.rank[r], b.intra.bandwidth), per_bandwidth(L.conn[r], b.connection),
                   per_bandwidth(L.node[r], b.inter.bandwidth), per_bandwidth(L.staging[r], b.staging)});
}

}  // namespace

TreeSchedule tree_allreduce_schedule(const std::vector<int>& node_sizes, double bytes, const TreeLinks& links) {
  TreeSchedule s;
  s.chunks = pipeline_chunks(bytes / 2);
  const auto trees = nccl_trees(node_sizes);
  const int n = static_cast<int>(trees[0].parent.size());
  if (n == 1) return s;
  s.height = std::max(trees[0].height(), trees[1].height());
  s.rounds = s.chunks + 2 * s.height - 1;
  const int h = s.height;
  // Every edge carries chunk j in rounds [start, start + K), start <= 2H - 1:
  // from K >= 2H on, rounds 2H-1 .. K-1 have every edge busy (the steady
  // round) and the rounds before and after do not depend on K. So the loads
  // of K0 = min(K, 2H + 1) chunks, with K - K0 steady rounds added, are K's.
  const int k0 = std::min(s.chunks, 2 * h + 1);
  const RoundLoads L = cached_round_loads(trees, node_sizes, h, k0);
  s.max_load = L.rank_edges;
  s.peak =
      std::max({per_bandwidth(L.rank_edges, links.intra.bandwidth), per_bandwidth(L.conn_edges, links.connection),
                per_bandwidth(L.node_edges, links.inter.bandwidth), per_bandwidth(L.staging_edges, links.staging)});
  const int steady = s.chunks - k0;
  s.load_sum = static_cast<double>(steady) * s.max_load;
  s.cost_sum = steady * s.peak;
  const bool crosses = std::find(L.inter.begin(), L.inter.end(), 1) != L.inter.end();
  s.inter_rounds = crosses ? steady : 0;  // the steady rounds carry every edge
  for (std::size_t r = 0; r < L.rank.size(); ++r) {
    s.load_sum += L.rank[r];
    s.cost_sum += round_cost(L, static_cast<int>(r), links);
    s.inter_rounds += L.inter[r];
  }
  if (static_cast<long long>(n) * s.rounds <= kMaxListedWork)
    s.loads = steady == 0 ? L.rank : cached_round_loads(trees, node_sizes, h, s.chunks).rank;
  return s;
}

TreeSchedule tree_allreduce_schedule(int n, double bytes) {
  require_ranks(n);
  return tree_allreduce_schedule(std::vector<int>(n, 1), bytes, uniform_tree_links({0, 1}));
}

double tree_allreduce_time(const std::vector<int>& node_sizes, double bytes, const TreeLinks& links, NcclCost cost,
                           bool per_step) {
  const TreeSchedule s = tree_allreduce_schedule(node_sizes, bytes, links);
  if (s.rounds == 0) return 0;
  if (per_step) {
    const double wire = s.inter_rounds * links.inter.alpha + (s.rounds - s.inter_rounds) * links.intra.alpha;
    return nccl_time(wire, s.cost_sum * (bytes / 2 / s.chunks), cost);
  }
  const double worst = node_sizes.size() > 1 ? links.inter.alpha : links.intra.alpha;
  return nccl_time(worst, s.peak * (bytes / 2), cost);
}

double tree_allreduce_time(int n, double bytes, AlphaBeta ab, NcclCost cost, bool per_step) {
  require_ranks(n);
  return tree_allreduce_time(std::vector<int>(n, 1), bytes, uniform_tree_links(ab), cost, per_step);
}

int nvlstree_node_degree(int nodes) {
  require_ranks(nodes);
  std::vector<int> degree(static_cast<std::size_t>(nodes), 0);
  for (const auto& t : double_binary_tree(nodes))
    for (int v = 0; v < nodes; ++v)
      if (t.parent[v] >= 0) {
        ++degree[v];
        ++degree[t.parent[v]];
      }
  return *std::max_element(degree.begin(), degree.end());
}

double nvlstree_allreduce_time(int nodes, int gpus, double bytes, const TreeLinks& links, NcclCost cost) {
  require_ranks(nodes);
  require_ranks(gpus);
  if (nodes * gpus == 1) return 0;
  const int d = nvlstree_node_degree(nodes);
  const double c = bytes / (2.0 * gpus);
  const int intra_flows = gpus > 1 ? 2 * gpus : 0;
  // The NVLS flows at the efficiency, the trees' (between nodes) at
  // efficiency x inter_node_ratio; a GPU's link carries both.
  const double e_intra = cost.efficiency, e_inter = cost.efficiency * cost.inter_node_ratio;
  const double gpu_link = (intra_flows / e_intra + d / e_inter) / links.intra.bandwidth;
  const double per_byte = std::max({gpu_link, per_bandwidth(d, links.connection) / e_inter,
                                    per_bandwidth(gpus * d, links.inter.bandwidth) / e_inter});
  const double alpha = nodes > 1 ? links.inter.alpha : links.intra.alpha;
  NcclCost applied = cost;
  applied.efficiency = 1;  // in per_byte
  return nccl_time(alpha, per_byte * c, applied);
}

double nvlstree_tuning_time(int nodes, double bytes, double intra_bandwidth, double inter_bandwidth, double alpha,
                            NcclCost cost) {
  require_ranks(nodes);
  const double inter = nodes <= 2 ? inter_bandwidth : inter_bandwidth / 2;
  return nccl_time(alpha, bytes / std::min(intra_bandwidth, inter), cost);
}

}  // namespace gw::collective
