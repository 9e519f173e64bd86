// Symmetry classes of a phase's flows and links, and the phase evaluated on
// them (symmetry.hpp; docs/engine.md, "Symmetry classes of flows and links").
#include "symmetry.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <cstdint>
#include <limits>
#include <map>
#include <unordered_map>
#include <utility>

namespace gw::engine::detail {

void PhaseNetwork::add_flow(double b, double lat, double bnd, const std::vector<int>& links) {
  bytes.push_back(b);
  latency.push_back(lat);
  bound.push_back(bnd);
  route_links.insert(route_links.end(), links.begin(), links.end());
  route_begin.push_back(route_links.size());
}

namespace {

// SimGrid 3.32's maxmin/precision (default 1e-5), and its surf/precision
// (1e-9): the solver's snapping thresholds (lmm::double_update,
// double_positive) and the remaining bytes under which a flow is over.
constexpr double kMaxminPrecision = 1e-5;
constexpr double kRemainsPrecision = 1e-5 * 1e-9;

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Order-dependent (the neighbours are sorted) and not self-cancelling.
std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  return splitmix(((h << 5) | (h >> 59)) ^ splitmix(v + 0x632be59bd9b4e019ULL));
}

// Compressed adjacency: items of row r are items[begin[r] .. begin[r+1]).
struct Csr {
  std::vector<std::size_t> begin;
  std::vector<int> items;
};

Csr flows_by_link(const PhaseNetwork& net) {
  const std::size_t links = net.capacity.size();
  Csr t;
  t.begin.assign(links + 1, 0);
  for (int l : net.route_links) ++t.begin[static_cast<std::size_t>(l) + 1];
  for (std::size_t l = 0; l < links; ++l) t.begin[l + 1] += t.begin[l];
  t.items.resize(net.route_links.size());
  std::vector<std::size_t> at(t.begin.begin(), t.begin.end() - 1);
  for (std::size_t f = 0; f < net.flows(); ++f)
    for (std::size_t k = net.route_begin[f]; k < net.route_begin[f + 1]; ++k)
      t.items[at[net.route_links[k]]++] = static_cast<int>(f);
  return t;
}

// The sorted colors of row r's neighbours.
void neighbour_colors(const std::vector<std::size_t>& begin, const std::vector<int>& items, std::size_t r,
                      const std::vector<int>& color, std::vector<int>& out) {
  out.clear();
  for (std::size_t k = begin[r]; k < begin[r + 1]; ++k) out.push_back(color[items[k]]);
  std::sort(out.begin(), out.end());
}

// One refinement of one side: new color = (old color, sorted neighbour
// colors), numbered in order of first appearance. Rows of old color -1
// (links no flow crosses) keep it. Returns the number of colors.
int refine_side(const std::vector<std::size_t>& begin, const std::vector<int>& items, const std::vector<int>& old,
                const std::vector<int>& nbr_color, std::vector<int>& out) {
  std::unordered_map<std::uint64_t, int> ids;
  std::vector<int> buf;
  out.assign(old.size(), -1);
  for (std::size_t r = 0; r < old.size(); ++r) {
    if (old[r] < 0) continue;
    neighbour_colors(begin, items, r, nbr_color, buf);
    std::uint64_t h = splitmix(static_cast<std::uint64_t>(old[r]));
    for (int c : buf) h = mix(h, static_cast<std::uint64_t>(c));
    out[r] = ids.emplace(h, static_cast<int>(ids.size())).first->second;
  }
  return static_cast<int>(ids.size());
}

// Flows by (bytes, latency, bound), links by capacity (-1: crossed by none).
int initial_colors(const PhaseNetwork& net, const Csr& by_link, std::vector<int>& fc, std::vector<int>& lc,
                   int* link_colors) {
  std::map<std::array<double, 3>, int> fids;
  fc.resize(net.flows());
  for (std::size_t f = 0; f < net.flows(); ++f)
    fc[f] =
        fids.emplace(std::array<double, 3>{net.bytes[f], net.latency[f], net.bound[f]}, static_cast<int>(fids.size()))
            .first->second;
  std::map<double, int> lids;
  lc.assign(net.capacity.size(), -1);
  for (std::size_t l = 0; l < net.capacity.size(); ++l)
    if (by_link.begin[l + 1] > by_link.begin[l])
      lc[l] = lids.emplace(net.capacity[l], static_cast<int>(lids.size())).first->second;
  *link_colors = static_cast<int>(lids.size());
  return static_cast<int>(fids.size());
}

// Every member of a class has its representative's own attributes and
// neighbour colors: the partition is equitable.
bool rows_agree(const std::vector<std::size_t>& begin, const std::vector<int>& items, const std::vector<int>& color,
                const std::vector<int>& nbr_color, int classes,
                const std::function<bool(std::size_t, std::size_t)>& same_attributes) {
  std::vector<std::size_t> rep(static_cast<std::size_t>(classes), std::numeric_limits<std::size_t>::max());
  std::vector<int> a, b;
  for (std::size_t r = 0; r < color.size(); ++r) {
    if (color[r] < 0) continue;
    auto& first = rep[static_cast<std::size_t>(color[r])];
    if (first == std::numeric_limits<std::size_t>::max()) {
      first = r;
      continue;
    }
    neighbour_colors(begin, items, first, nbr_color, a);
    neighbour_colors(begin, items, r, nbr_color, b);
    if (a != b || !same_attributes(first, r)) return false;
  }
  return true;
}

}  // namespace

bool routes_are_simple(const PhaseNetwork& net) {
  std::vector<int> r;
  for (std::size_t f = 0; f < net.flows(); ++f) {
    r.assign(net.route_links.begin() + static_cast<std::ptrdiff_t>(net.route_begin[f]),
             net.route_links.begin() + static_cast<std::ptrdiff_t>(net.route_begin[f + 1]));
    std::sort(r.begin(), r.end());
    if (r.empty() || std::adjacent_find(r.begin(), r.end()) != r.end()) return false;
  }
  return true;
}

PhaseClasses refine_classes(const PhaseNetwork& net, bool* equitable) {
  const Csr by_link = flows_by_link(net);
  PhaseClasses out;
  std::vector<int> fc, lc, next_fc, next_lc;
  int nf = initial_colors(net, by_link, fc, lc, &out.link_classes);
  int nl = out.link_classes;
  // Each round refines (a hash collision aside: then the check below fails),
  // so the counts settle within flows + links rounds. The links are refined
  // by the flows' new colors, which halves the rounds (30 -> 16 for NCCL's
  // tree over 32,768 GPUs). When neither side splits, the flows are uniform
  // in the links' colors and the links in the flows': equitable.
  for (std::size_t round = 0; round <= net.flows() + net.capacity.size(); ++round) {
    const int f2 = refine_side(net.route_begin, net.route_links, fc, lc, next_fc);
    fc.swap(next_fc);
    const int l2 = refine_side(by_link.begin, by_link.items, lc, fc, next_lc);
    lc.swap(next_lc);
    const bool settled = f2 == nf && l2 == nl;
    nf = f2;  // the counts of the colors fc and lc now hold, settled or not
    nl = l2;
    if (settled) break;
  }
  out.flow_class = std::move(fc);
  out.link_class = std::move(lc);
  out.flow_classes = nf;
  out.link_classes = nl;
  *equitable = rows_agree(net.route_begin, net.route_links, out.flow_class, out.link_class, nf,
                          [&](std::size_t x, std::size_t y) {
                            return net.bytes[x] == net.bytes[y] && net.latency[x] == net.latency[y] &&
                                   net.bound[x] == net.bound[y];
                          }) &&
               rows_agree(by_link.begin, by_link.items, out.link_class, out.flow_class, nl,
                          [&](std::size_t x, std::size_t y) { return net.capacity[x] == net.capacity[y]; });
  return out;
}

namespace {

// The quotient system: one variable per flow class, one constraint per link
// class, a(Y, X) flows of class X on each link of class Y.
struct Quotient {
  std::vector<double> bytes, penalty, bound, start;        // per flow class
  std::vector<double> capacity;                            // per link class
  std::vector<std::vector<std::pair<int, int>>> on_link;   // Y -> (X, a)
  std::vector<std::vector<std::pair<int, int>>> links_of;  // X -> (Y, a)
};

Quotient build_quotient(const PhaseNetwork& net, const PhaseClasses& pc) {
  const auto nf = static_cast<std::size_t>(pc.flow_classes);
  const auto nl = static_cast<std::size_t>(pc.link_classes);
  Quotient q;
  q.bytes.resize(nf);
  q.penalty.resize(nf);
  q.bound.resize(nf);
  q.start.resize(nf);
  q.capacity.resize(nl);
  q.on_link.resize(nl);
  q.links_of.resize(nf);
  std::vector<char> flow_seen(nf, 0), link_seen(nl, 0);
  const Csr by_link = flows_by_link(net);
  for (std::size_t l = 0; l < net.capacity.size(); ++l) {
    const int y = pc.link_class[l];
    if (y < 0 || link_seen[static_cast<std::size_t>(y)]) continue;
    link_seen[static_cast<std::size_t>(y)] = 1;
    q.capacity[y] = net.capacity[l];
    std::map<int, int> count;
    for (std::size_t k = by_link.begin[l]; k < by_link.begin[l + 1]; ++k) ++count[pc.flow_class[by_link.items[k]]];
    for (auto [x, a] : count) {
      q.on_link[y].emplace_back(x, a);
      q.links_of[x].emplace_back(y, a);
    }
  }
  for (std::size_t f = 0; f < net.flows(); ++f) {
    const auto x = static_cast<std::size_t>(pc.flow_class[f]);
    if (flow_seen[x]) continue;
    flow_seen[x] = 1;
    q.bytes[x] = net.bytes[f];
    // CM02: penalty = route latency, the variable disabled until it has
    // passed; a route without latency has penalty 1 from the start.
    q.penalty[x] = net.latency[f] > 0 ? net.latency[f] : 1.0;
    q.start[x] = net.latency[f];
    q.bound[x] = net.bound[f];
  }
  return q;
}

// SimGrid's lmm::double_update.
void snap_update(double& v, double delta, double precision) {
  v -= delta;
  if (v < precision) v = 0;
}

// SimGrid 3.32's max-min solve (lmm/maxmin.cpp, System::solve) on the
// quotient: the constraints of least remaining / usage saturate, their
// unfixed variables get level / penalty, the others' remaining and usage
// drop, until no constraint is left. `level` receives each active class's
// saturation level (its value times its penalty).
void solve(const Quotient& q, const std::vector<char>& active, std::vector<double>& value, std::vector<double>& level) {
  const std::size_t nl = q.capacity.size();
  std::vector<double> remaining(q.capacity), usage(nl, 0.0);
  std::vector<char> light(nl, 0), fixed(q.bytes.size(), 0);
  for (std::size_t y = 0; y < nl; ++y) {
    for (auto [x, a] : q.on_link[y])
      if (active[x]) usage[y] += a / q.penalty[x];
    light[y] = usage[y] > 0 ? 1 : 0;
  }
  std::fill(value.begin(), value.end(), 0.0);
  std::vector<int> vars;
  for (;;) {
    double min_usage = -1;
    for (std::size_t y = 0; y < nl; ++y)
      if (light[y] && (min_usage < 0 || remaining[y] / usage[y] < min_usage)) min_usage = remaining[y] / usage[y];
    if (min_usage < 0) return;
    vars.clear();
    for (std::size_t y = 0; y < nl; ++y) {
      if (!light[y] || remaining[y] / usage[y] != min_usage) continue;
      for (auto [x, a] : q.on_link[y])
        if (active[x] && !fixed[x]) {
          fixed[x] = 1;
          vars.push_back(x);
        }
    }
    for (int x : vars) {
      value[x] = min_usage / q.penalty[x];
      level[x] = min_usage;
      for (auto [y, a] : q.links_of[x]) {
        snap_update(remaining[y], a * value[x], q.capacity[y] * kMaxminPrecision);
        snap_update(usage[y], a / q.penalty[x], kMaxminPrecision);
        if (!(usage[y] > kMaxminPrecision) || !(remaining[y] > q.capacity[y] * kMaxminPrecision)) light[y] = 0;
      }
    }
  }
}

// Every active class moves (a flow with no rate would wait for an event the
// solver of the full simulation produces differently) and stays under its
// bound (SimGrid then never applies it).
const char* rates_unusable(const Quotient& q, const std::vector<char>& active, const std::vector<double>& value,
                           const std::vector<double>& level) {
  for (std::size_t x = 0; x < q.bytes.size(); ++x) {
    if (!active[x]) continue;
    if (!(value[x] > 0)) return "a flow gets no rate";
    if (q.bound[x] > 0 && q.bound[x] * q.penalty[x] < level[x]) return "a flow reaches its rate bound";
  }
  return nullptr;
}

// The fluid run: classes start once their latency has passed, the solver
// gives the rates, the next event is a start or an end; returns the last end
// (or a negative time, with `why`, when the rates are unusable).
double run_classes(const Quotient& q, const char** why) {
  const std::size_t n = q.bytes.size();
  std::vector<double> remains(q.bytes), value(n), level(n);
  std::vector<char> active(n, 0), done(n, 0);
  std::size_t left = n;
  double t = 0;
  while (left > 0) {
    double next_start = std::numeric_limits<double>::infinity();
    for (std::size_t x = 0; x < n; ++x) {
      if (!done[x] && !active[x] && q.start[x] <= t) active[x] = 1;
      if (!done[x] && !active[x]) next_start = std::min(next_start, q.start[x]);
    }
    solve(q, active, value, level);
    if ((*why = rates_unusable(q, active, value, level)) != nullptr) return -1;
    double next = next_start;
    for (std::size_t x = 0; x < n; ++x)
      if (active[x]) next = std::min(next, t + remains[x] / value[x]);
    for (std::size_t x = 0; x < n; ++x) {
      if (!active[x]) continue;
      const bool ends = t + remains[x] / value[x] <= next;
      snap_update(remains[x], value[x] * (next - t), kRemainsPrecision);
      if (ends || remains[x] <= 0) {
        active[x] = 0;
        done[x] = 1;
        --left;
      }
    }
    t = next;
  }
  return t;
}

}  // namespace

SymmetricPhase evaluate_by_classes(const PhaseNetwork& net, std::size_t max_flow_classes, PartitionStore* store) {
  SymmetricPhase out;
  if (net.flows() == 0) {
    out.why_not = "no flows";
    return out;
  }
  PartitionStore::Known fresh;
  const PartitionStore::Known* known = &fresh;
  if (store != nullptr) {
    known = &store->classes_of(net);
  } else {
    fresh.simple = routes_are_simple(net);
    if (fresh.simple) fresh.classes = refine_classes(net, &fresh.equitable);
  }
  if (!known->simple) {
    out.why_not = "a route is empty or crosses a link twice";
    return out;
  }
  return evaluate_on_classes(net, known->classes, known->equitable, max_flow_classes);
}

SymmetricPhase evaluate_on_classes(const PhaseNetwork& net, const PhaseClasses& pc, bool equitable,
                                   std::size_t max_flow_classes) {
  SymmetricPhase out;
  out.flow_classes = pc.flow_classes;
  out.link_classes = pc.link_classes;
  if (!equitable) {
    out.why_not = "the partition is not equitable";
    return out;
  }
  if (static_cast<std::size_t>(pc.flow_classes) > max_flow_classes) {
    out.why_not = "too many flow classes";
    return out;
  }
  const char* why = nullptr;
  const double d = run_classes(build_quotient(net, pc), &why);
  if (why != nullptr) {
    out.why_not = why;
    return out;
  }
  out.exact = true;
  out.duration = d;
  return out;
}

const PartitionStore::Known& PartitionStore::classes_of(const PhaseNetwork& net) {
  Entry e;
  int link_colors = 0;
  initial_colors(net, flows_by_link(net), e.flow_colors, e.link_colors, &link_colors);
  std::uint64_t h = net.flows();
  for (auto b : net.route_begin) h = (h ^ b) * 0x100000001b3ULL;
  const std::vector<int>* parts[] = {&net.route_links, &e.flow_colors, &e.link_colors};
  for (const std::vector<int>* v : parts)
    for (int x : *v) h = (h ^ static_cast<std::uint32_t>(x)) * 0x100000001b3ULL;
  for (const auto& old : entries_[h])
    if (old.route_begin == net.route_begin && old.route_links == net.route_links && old.flow_colors == e.flow_colors &&
        old.link_colors == e.link_colors) {
      ++reused_;
      return old.known;
    }
  const std::size_t ints = 3 * net.flows() + net.route_links.size() + e.link_colors.size();
  if (key_ints_ + ints > max_key_ints_) {  // full: start again
    entries_.clear();
    key_ints_ = 0;
  }
  key_ints_ += ints;
  e.known.simple = routes_are_simple(net);
  if (e.known.simple) e.known.classes = refine_classes(net, &e.known.equitable);
  e.route_begin = net.route_begin;
  e.route_links = net.route_links;
  return entries_[h].emplace_back(std::move(e)).known;
}

}  // namespace gw::engine::detail
