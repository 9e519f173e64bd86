#include "gradwire/plan/planner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gw::plan {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

bool better(const PlanPoint& a, const PlanPoint& b, bool by_cost) {
  if (by_cost) {
    if (a.cost != b.cost) return a.cost < b.cost;
    if (a.hours != b.hours) return a.hours < b.hours;
  } else {
    if (a.hours != b.hours) return a.hours < b.hours;
    if (a.cost != b.cost) return a.cost < b.cost;
  }
  return a.index < b.index;
}

std::string relative(double mine, double base, const char* less, const char* more) {
  const double r = (mine - base) / base;
  if (std::fabs(r) < 0.005) return std::string("about as ") + (std::string(less) == "cheaper" ? "expensive" : "fast");
  return fmt("%.0f%% ", std::fabs(r) * 100) + (r < 0 ? less : more);
}

}  // namespace

std::vector<PlanPoint> plan_points(const std::vector<ResultLine>& results, Pricing pricing) {
  std::vector<PlanPoint> out;
  for (const auto& l : results) {
    // Checked again here (types, finite and non-negative numbers, ...):
    // InputError at the record's FILE:LINE, never a raw JSON error or a
    // negative cost recommended.
    const ResultRecord r = from_json(l.text, l.file.empty() ? std::string("results") : l.file, l.line);
    if (r.status != "ok" || !r.training || !r.cost) continue;
    const std::optional<double> price = pricing == Pricing::Spot ? r.cost->spot : r.cost->on_demand;
    if (!price) continue;
    PlanPoint p;
    p.index = r.index;
    p.key = r.key;
    p.compression = r.compression.value_or("");
    p.compression_kind = r.compression_kind.value_or("");
    p.instance = r.instance_name();
    p.cluster_key = r.cluster_key.value_or("");
    p.model = r.model.value_or("");
    p.nodes = r.nodes.value_or(0);
    p.world = r.world.value_or(0);
    p.micro_batch = r.micro_batch.value_or(0);
    p.accumulation = r.accumulation.value_or(0);
    p.iteration = r.iteration.value_or(0.0);
    p.hours = r.training->hours;
    p.cost = *price;
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<std::size_t> pareto_front(const std::vector<PlanPoint>& points) {
  std::vector<std::size_t> order(points.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return better(points[a], points[b], false); });
  std::vector<std::size_t> front;
  double best_cost = INFINITY;
  for (std::size_t i : order) {
    if (points[i].cost < best_cost) {
      front.push_back(i);
      best_cost = points[i].cost;
    }
  }
  return front;
}

std::string describe(const PlanPoint& p) {
  std::string where = p.instance.empty() ? std::to_string(p.world) + " GPUs"
                                         : std::to_string(p.nodes) + " x " + p.instance;
  return p.compression + ", k = " + std::to_string(p.accumulation) + " on " + where;
}

Recommendation recommend(const std::vector<PlanPoint>& points, std::optional<double> budget,
                         std::optional<double> deadline) {
  Recommendation r;
  const bool by_cost = deadline.has_value() || !budget.has_value();
  if (deadline && budget) {
    r.rule = "the cheapest configuration that finishes within " + fmt("%g", *deadline) + " h and costs at most $" +
             fmt("%.2f", *budget);
  } else if (deadline) {
    r.rule = "the cheapest configuration that finishes within " + fmt("%g", *deadline) + " h";
  } else if (budget) {
    r.rule = "the fastest configuration that costs at most $" + fmt("%.2f", *budget);
  } else {
    r.rule = "the cheapest configuration (no deadline or budget given)";
  }
  const PlanPoint* best = nullptr;
  for (const auto& p : points) {
    if (deadline && p.hours > *deadline) continue;
    if (budget && p.cost > *budget) continue;
    if (best == nullptr || better(p, *best, by_cost)) best = &p;
  }
  if (best == nullptr) {
    if (points.empty()) {
      r.reason = "no point of the results has a time-to-train and a cost (a training target and an instance are needed)";
      return r;
    }
    const auto fastest = *std::min_element(points.begin(), points.end(),
                                           [](const auto& a, const auto& b) { return better(a, b, false); });
    const auto cheapest = *std::min_element(points.begin(), points.end(),
                                            [](const auto& a, const auto& b) { return better(a, b, true); });
    r.reason = "nothing meets the constraints: the fastest configuration (" + describe(fastest) + ") takes " +
               fmt("%.3g", fastest.hours) + " h for $" + fmt("%.2f", fastest.cost) + ", the cheapest (" +
               describe(cheapest) + ") costs $" + fmt("%.2f", cheapest.cost) + " in " + fmt("%.3g", cheapest.hours) +
               " h";
    return r;
  }
  r.found = true;
  r.choice = *best;
  for (const auto& p : points) {
    if (p.cluster_key == best->cluster_key && p.model == best->model && p.compression_kind == "none" &&
        p.accumulation == 1 && (!r.baseline || p.index < r.baseline->index))
      r.baseline = p;
  }
  std::string s = describe(*best) + ": " + fmt("%.3g", best->hours) + " h, $" + fmt("%.2f", best->cost);
  if (!r.baseline) {
    s += " (the sweep has no uncompressed k = 1 point of this cluster to compare with)";
  } else if (r.baseline->index == best->index) {
    s += "; the uncompressed k = 1 baseline is itself the best choice on this cluster";
  } else {
    s += "; " + relative(best->cost, r.baseline->cost, "cheaper", "more expensive") + " than uncompressed k = 1, " +
         relative(best->hours, r.baseline->hours, "faster", "slower");
  }
  r.reason = s;
  return r;
}

}  // namespace gw::plan
