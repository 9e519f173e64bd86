#include "gradwire/plan/planner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "gradwire/core/units.hpp"

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

/// "31% cheaper than X", "about as expensive as X"; without X when `what` is empty.
std::string relative(double mine, double base, const char* less, const char* more, const std::string& what = "") {
  const double r = (mine - base) / base;
  if (std::fabs(r) < 0.005)
    return std::string("about as ") + (std::string(less) == "cheaper" ? "expensive" : "fast") +
           (what.empty() ? "" : " as " + what);
  return fmt("%.0f%% ", std::fabs(r) * 100) + (r < 0 ? less : more) + (what.empty() ? "" : " than " + what);
}

/// The counter of a point left out for its status or for lacking a
/// time-to-train; nullptr when it has one (priced or not: plan_points decides).
std::size_t* exclusion_of(const ResultRecord& r, Exclusions& e) {
  if (r.status == "no_fit") return &e.no_fit;
  if (r.status == "invalid") return &e.invalid;
  if (r.status != "ok") return &e.failed;
  if (!r.training) return &e.no_cost;
  return nullptr;
}

/// The record's price at `pricing`, if it has one.
std::optional<double> price_of(const ResultRecord& r, Pricing pricing) {
  if (!r.cost) return std::nullopt;
  return pricing == Pricing::Spot ? r.cost->spot : std::optional<double>(r.cost->on_demand);
}

PlanPoint plan_point(const ResultRecord& r, std::optional<double> price) {
  PlanPoint p;
  p.index = r.index;
  p.key = r.key;
  p.compression = r.compression.value_or("");
  p.compression_kind = r.compression_kind.value_or("");
  p.sharding = r.sharding.value_or("");
  p.instance = r.instance_name();
  p.cluster_key = r.cluster_key.value_or("");
  p.model = r.model.value_or("");
  p.nodes = r.nodes.value_or(0);
  p.world = r.world.value_or(0);
  p.micro_batch = r.micro_batch.value_or(0);
  p.accumulation = r.accumulation.value_or(0);
  p.iteration = r.iteration.value_or(0.0);
  p.hours = r.training->hours;
  p.cost = price.value_or(0.0);
  p.priced = price.has_value();
  p.global_batch = r.global_batch.value_or(0.0);
  p.batch_split = r.batch_split.value_or("");
  p.batch_law = r.training->critical_batch.has_value();
  p.measured_collectives = r.measured_collectives.value_or(std::vector<std::string>{});
  p.params = r.params.value_or(StringPairs{});
  // The band (records without one: the point itself); spot prices scale
  // like on-demand ones, so the band's cost ratio applies to both.
  const BandFigures band = r.band.value_or(BandFigures{});
  const double od = r.cost ? r.cost->on_demand : 0.0;
  p.hours_low = band.hours_low.value_or(p.hours);
  p.hours_high = band.hours_high.value_or(p.hours);
  p.cost_low = od > 0 ? p.cost * band.on_demand_low.value_or(od) / od : p.cost;
  p.cost_high = od > 0 ? p.cost * band.on_demand_high.value_or(od) / od : p.cost;
  return p;
}

std::string batch_text(double b) { return fmt("%.0f", b); }

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
  add(e.no_cost,
      "have no time-to-train and cost (a training target is needed, and a price: a catalog instance or "
      "the cluster's own price_per_gpu_hour / price_per_node_hour)");
  return out;
}

std::vector<PlanPoint> plan_points(const std::vector<ResultLine>& results, Pricing pricing, Exclusions* excluded) {
  std::vector<PlanPoint> priced, unpriced;
  Exclusions ignored;
  Exclusions& e = excluded != nullptr ? *excluded : ignored;
  for (const auto& l : results) {
    // Checked again here (types, finite and non-negative numbers, ...):
    // InputError at the record's FILE:LINE, never a raw JSON error or a
    // negative cost recommended.
    const ResultRecord r = from_json(l.text, l.file.empty() ? std::string("results") : l.file, l.line);
    if (std::size_t* counter = exclusion_of(r, e)) {
      ++*counter;
      continue;
    }
    const std::optional<double> price = price_of(r, pricing);
    (price ? priced : unpriced).push_back(plan_point(r, price));
  }
  if (priced.empty()) return unpriced;  // no price anywhere: ranked by time
  e.no_cost += unpriced.size();         // a point without a price is not compared with priced ones
  return priced;
}

std::vector<std::vector<PlanPoint>> comparable_groups(const std::vector<PlanPoint>& points, std::string* note) {
  std::map<double, std::vector<PlanPoint>> by_batch;
  bool law = true;
  for (const auto& p : points) {
    by_batch[p.global_batch].push_back(p);
    law = law && p.batch_law;
  }
  if (by_batch.size() <= 1 || law) {
    if (note != nullptr && by_batch.size() > 1)
      *note = "global batches " + batch_text(by_batch.begin()->first) + " to " + batch_text(by_batch.rbegin()->first) +
              " compared with the critical-batch law (training.critical_batch: more samples at a larger batch)";
    return {points};
  }
  std::string list;
  std::vector<std::vector<PlanPoint>> out;
  for (auto& [batch, group] : by_batch) {
    list += (list.empty() ? "" : ", ") + batch_text(batch);
    out.push_back(std::move(group));
  }
  if (note != nullptr)
    *note = "the points have " + std::to_string(by_batch.size()) + " different global batches (" + list +
            "), compared only within each: a larger batch may need more samples to converge, which these records "
            "do not state (fix training.global_batch, or give training.critical_batch to compare them; "
            "docs/planning.md)";
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

bool is_compression_key(const std::string& key) {
  return key == "workload.compression" || key.rfind("workload.compression.", 0) == 0;
}

bool is_compared_key(const std::string& key) {
  return is_compression_key(key) || key == "workload.accumulation" || key == "workload.micro_batch";
}

std::string describe(const PlanPoint& p) {
  std::string where = p.instance.empty() ? std::to_string(p.world) + " GPUs (own cluster)"
                                         : std::to_string(p.nodes) + " x " + p.instance;
  std::string batch;
  if (p.global_batch > 0)
    batch = " (micro-batch " + std::to_string(p.micro_batch) + ", global batch " + batch_text(p.global_batch) + ")";
  // The swept keys the words do not name (the model, the bandwidth, the bucket size, ...).
  std::string rest;
  for (const auto& [key, value] : p.params) {
    // "cluster": a whole cluster per value, named by its instance (or "own cluster") and size.
    const bool scheme = key == "workload.sharding" || key.rfind("workload.sharding.", 0) == 0 ||
                        key == "workload.activation_checkpointing";
    const bool named = is_compression_key(key) || (scheme && !p.sharding.empty()) || key == "workload.accumulation" ||
                       key == "cluster.nodes" || key == "cluster" ||
                       (key == "cluster.instance" && !p.instance.empty()) ||
                       (key == "workload.micro_batch" && p.global_batch > 0);
    if (!named) rest += (rest.empty() ? "; " : ", ") + key + "=" + value;
  }
  return configuration_label(p.compression, p.compression_kind, p.sharding) +
         ", k = " + std::to_string(p.accumulation) + batch + " on " + where + rest;
}

namespace {

std::string rule_of(bool priced, std::optional<double> budget, std::optional<double> deadline) {
  const char* best = priced ? "the cheapest" : "the fastest";
  const std::string unpriced = priced ? "" : " (no price is known: ranked by time)";
  if (deadline && budget)
    return std::string(best) + " configuration that finishes within " + units::format_hours(*deadline) +
           " and costs at most $" + fmt("%.2f", *budget) + unpriced;
  if (deadline)
    return std::string(best) + " configuration that finishes within " + units::format_hours(*deadline) + unpriced;
  if (budget) return "the fastest configuration that costs at most $" + fmt("%.2f", *budget) + unpriced;
  return priced ? "the cheapest configuration (no deadline or budget given)"
                : "the fastest configuration (no price is known: ranked by time)";
}

/// The swept values a baseline must share with the point it is compared with.
StringPairs held_fixed(const PlanPoint& p) {
  StringPairs out;
  for (const auto& kv : p.params)
    if (!is_compared_key(kv.first)) out.push_back(kv);
  return out;
}

/// The uncompressed point of the choice's cluster, model and global batch with
/// the smallest k (k = 1 when the sweep has it), equal to the choice on every
/// swept key but the compressor and the batch split: a 13% saving at another
/// bucket size is not the compressor's.
std::optional<PlanPoint> baseline_of(const std::vector<PlanPoint>& points, const PlanPoint& best) {
  std::optional<PlanPoint> base;
  const StringPairs fixed = held_fixed(best);
  for (const auto& p : points) {
    if (p.cluster_key != best.cluster_key || p.model != best.model || p.compression_kind != "none" ||
        p.global_batch != best.global_batch || held_fixed(p) != fixed)
      continue;
    if (!base || p.accumulation < base->accumulation || (p.accumulation == base->accumulation && p.index < base->index))
      base = p;
  }
  return base;
}

std::string summary(const PlanPoint& p) {
  return describe(p) + ": " + units::format_hours(p.hours) + (p.priced ? ", $" + fmt("%.2f", p.cost) : std::string());
}

std::string nothing_meets(const std::vector<PlanPoint>& points, const Exclusions& excluded) {
  const auto fastest =
      *std::min_element(points.begin(), points.end(), [](const auto& a, const auto& b) { return better(a, b, false); });
  std::string s = "nothing meets the constraints (" + nothing_qualifies(excluded) + "): the fastest configuration (" +
                  describe(fastest) + ") takes " + units::format_hours(fastest.hours);
  if (!fastest.priced) return s;
  const auto cheapest =
      *std::min_element(points.begin(), points.end(), [](const auto& a, const auto& b) { return better(a, b, true); });
  return s + " for $" + fmt("%.2f", fastest.cost) + ", the cheapest (" + describe(cheapest) + ") costs $" +
         fmt("%.2f", cheapest.cost) + " in " + units::format_hours(cheapest.hours);
}

/// Where the qualifying points' collectives come from, when a profile fit
/// measured on a cluster timed some (docs/model.md, "Collectives measured on
/// the cluster"): the choice's, and a warning when the points compared mix
/// measured and modelled collectives (the model is often optimistic where
/// the link is not the bottleneck, so such a comparison can lean towards the
/// modelled points). "" when every point is modelled.
std::string measured_provenance(const std::vector<const PlanPoint*>& points, const PlanPoint& best) {
  std::size_t measured = 0;
  for (const PlanPoint* p : points) measured += p->measured_collectives.empty() ? 0 : 1;
  if (measured == 0) return "";
  std::string s;
  if (!best.measured_collectives.empty()) {
    s = "; its collectives are measured on this cluster (";
    for (std::size_t i = 0; i < best.measured_collectives.size(); ++i)
      s += (i ? "; " : "") + best.measured_collectives[i];
    s += ")";
  }
  if (measured < points.size()) {
    s += "; of the " + std::to_string(points.size()) + " points compared, " + std::to_string(measured) +
         " with collectives measured on their cluster and " + std::to_string(points.size() - measured) +
         " with modelled ones: the network model is often optimistic where the link is not the bottleneck, so "
         "the comparison may favour the modelled points";
  }
  return s;
}

}  // namespace

Recommendation recommend(const std::vector<PlanPoint>& points, std::optional<double> budget,
                         std::optional<double> deadline, const Exclusions& excluded) {
  Recommendation r;
  r.excluded = excluded;
  const bool priced = points.empty() || points.front().priced;
  const bool by_cost = priced && (deadline.has_value() || !budget.has_value());
  r.rule = rule_of(priced, budget, deadline);
  if (!priced && budget) {
    r.reason =
        "no price is known (no catalog instance, no price_per_gpu_hour / price_per_node_hour on the "
        "cluster): no point can be held to a budget";
    return r;
  }
  const PlanPoint* best = nullptr;
  std::vector<const PlanPoint*> qualifying;
  for (const auto& p : points) {
    if (deadline && p.hours > *deadline) {
      ++r.excluded.over_deadline;
      continue;
    }
    if (budget && p.cost > *budget) {
      ++r.excluded.over_budget;
      continue;
    }
    qualifying.push_back(&p);
    if (best == nullptr || better(p, *best, by_cost)) best = &p;
  }
  if (best == nullptr) {
    r.reason = points.empty() ? nothing_qualifies(r.excluded) : nothing_meets(points, r.excluded);
    return r;
  }
  r.found = true;
  r.choice = *best;
  r.baseline = baseline_of(points, *best);
  std::string s = summary(*best);
  const std::string base_k = r.baseline ? "k = " + std::to_string(r.baseline->accumulation) : "";
  if (!r.baseline) {
    s += " (the sweep has no uncompressed point of this cluster, global batch and other swept values to compare "
         "with)";
  } else if (r.baseline->index == best->index) {
    s += "; the uncompressed " + base_k + " baseline is itself the best choice on this cluster";
  } else {
    const std::string base = "uncompressed " + base_k;
    s += priced ? "; " + relative(best->cost, r.baseline->cost, "cheaper", "more expensive", base) + ", " +
                      relative(best->hours, r.baseline->hours, "faster", "slower")
                : "; " + relative(best->hours, r.baseline->hours, "faster", "slower", base);
  }
  if (!best->batch_split.empty()) s += "; " + best->batch_split;
  s += measured_provenance(qualifying, *best);
  r.reason = s;
  return r;
}

std::string band_verdict(const Recommendation& rec, const std::vector<PlanPoint>& points, std::optional<double> budget,
                         std::optional<double> deadline) {
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
                                      : units::format_hours(high) + " vs " + units::format_hours(low);
  return std::string("band: the recommendation ") + (high <= low ? "holds" : "does not hold") +
         " across the band (its high " + what + " vs the runner-up's low, " + describe(*runner) + ": " + figures + ")";
}

}  // namespace gw::plan
