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

/// The counter of a point left out for its status or for lacking a cost;
/// nullptr when it has a time-to-train and a price.
std::size_t* exclusion_of(const ResultRecord& r, Pricing pricing, Exclusions& e) {
  if (r.status == "no_fit") return &e.no_fit;
  if (r.status == "invalid") return &e.invalid;
  if (r.status != "ok") return &e.failed;
  if (!r.training || !r.cost) return &e.no_cost;
  const std::optional<double> price = pricing == Pricing::Spot ? r.cost->spot : r.cost->on_demand;
  return price ? nullptr : &e.no_cost;
}

/// Why nothing qualified: "all 12 points need more memory than the GPUs have"
/// or "no point qualifies: 8 need more memory than the GPUs have, 4 failed".
std::string nothing_qualifies(const Exclusions& e) {
  const std::size_t n = e.total();
  if (n == 0) return "the results hold no point";
  const std::string counts = describe(e);
  for (std::size_t part : {e.no_fit, e.failed, e.invalid, e.no_cost, e.over_deadline, e.over_budget}) {
    if (part == n) {
      // Every point for the same reason: "all 12 points need ...".
      if (n > 1) return "all " + std::to_string(n) + " points " + counts.substr(counts.find(' ') + 1);
    }
  }
  return "no point qualifies: " + counts;
}

}  // namespace

std::string describe(const Exclusions& e) {
  std::string out;
  const auto add = [&](std::size_t n, const char* what) {
    if (n == 0) return;
    out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + what;
  };
  add(e.no_fit, "need more memory than the GPUs have");
  add(e.over_deadline, "finish after the deadline");
  add(e.over_budget, "cost more than the budget");
  add(e.failed, "failed");
  add(e.invalid, "are invalid");
  add(e.no_cost, "have no time-to-train and cost (a training target and a priced instance are needed)");
  return out;
}

std::vector<PlanPoint> plan_points(const std::vector<ResultLine>& results, Pricing pricing, Exclusions* excluded) {
  std::vector<PlanPoint> out;
  Exclusions ignored;
  for (const auto& l : results) {
    // Checked again here (types, finite and non-negative numbers, ...):
    // InputError at the record's FILE:LINE, never a raw JSON error or a
    // negative cost recommended.
    const ResultRecord r = from_json(l.text, l.file.empty() ? std::string("results") : l.file, l.line);
    if (std::size_t* counter = exclusion_of(r, pricing, excluded != nullptr ? *excluded : ignored)) {
      ++*counter;
      continue;
    }
    const double price = *(pricing == Pricing::Spot ? r.cost->spot : r.cost->on_demand);
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
    p.cost = price;
    // The band (records without one: the point itself); spot prices scale
    // like on-demand ones, so the band's cost ratio applies to both.
    const BandFigures band = r.band.value_or(BandFigures{});
    const double od = r.cost->on_demand;
    p.hours_low = band.hours_low.value_or(p.hours);
    p.hours_high = band.hours_high.value_or(p.hours);
    p.cost_low = od > 0 ? price * band.on_demand_low.value_or(od) / od : price;
    p.cost_high = od > 0 ? price * band.on_demand_high.value_or(od) / od : price;
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
                         std::optional<double> deadline, const Exclusions& excluded) {
  Recommendation r;
  r.excluded = excluded;
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
    if (deadline && p.hours > *deadline) {
      ++r.excluded.over_deadline;
      continue;
    }
    if (budget && p.cost > *budget) {
      ++r.excluded.over_budget;
      continue;
    }
    if (best == nullptr || better(p, *best, by_cost)) best = &p;
  }
  if (best == nullptr) {
    if (points.empty()) {
      r.reason = nothing_qualifies(r.excluded);
      return r;
    }
    const auto fastest = *std::min_element(points.begin(), points.end(),
                                           [](const auto& a, const auto& b) { return better(a, b, false); });
    const auto cheapest = *std::min_element(points.begin(), points.end(),
                                            [](const auto& a, const auto& b) { return better(a, b, true); });
    r.reason = "nothing meets the constraints (" + nothing_qualifies(r.excluded) + "): the fastest configuration (" + describe(fastest) + ") takes " +
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

std::string band_verdict(const Recommendation& rec, const std::vector<PlanPoint>& points,
                         std::optional<double> budget, std::optional<double> deadline) {
  if (!rec.found) return "";
  const bool by_cost = deadline.has_value() || !budget.has_value();
  const PlanPoint* runner = nullptr;
  for (const auto& p : points) {
    if (p.index == rec.choice.index || (deadline && p.hours > *deadline) || (budget && p.cost > *budget)) continue;
    if (runner == nullptr || better(p, *runner, by_cost)) runner = &p;
  }
  const char* what = by_cost ? "cost" : "time-to-train";
  if (runner == nullptr) return std::string("band: no runner-up to compare with (one configuration qualifies)");
  const double high = by_cost ? rec.choice.cost_high : rec.choice.hours_high;
  const double low = by_cost ? runner->cost_low : runner->hours_low;
  const std::string figures = by_cost ? "$" + fmt("%.2f", high) + " vs $" + fmt("%.2f", low)
                                      : fmt("%.3g", high) + " h vs " + fmt("%.3g", low) + " h";
  return std::string("band: the recommendation ") + (high <= low ? "holds" : "does not hold") +
         " across the band (its high " + what + " vs the runner-up's low, " + describe(*runner) + ": " + figures +
         ")";
}

}  // namespace gw::plan
