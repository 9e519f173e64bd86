// Choosing a configuration from sweep results (docs/planning.md, "Plan's rule"):
// the Pareto front of (time-to-train, cost) and one recommendation.
//
//   deadline only      : the cheapest point finishing within the deadline
//   budget only        : the fastest point costing at most the budget
//   deadline and budget: the cheapest point meeting both
//   neither            : the cheapest point
// Ties go to the faster point, then to the lower index. The choice is compared
// with the uncompressed point of the smallest k (k = 1) that matches it on
// every other swept key (same cluster, model, global batch, bucket size, ...)
// when the sweep has one. Plain C++.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gradwire/plan/results_file.hpp"

namespace gw::plan {

struct PlanPoint {
  std::size_t index = 0;
  std::string key;
  std::string compression;       ///< label: "PowerSGD rank 4"
  std::string compression_kind;  ///< "powersgd"
  std::string sharding;          ///< the record's scheme label; "" for DDP without checkpointing
  std::string instance;          ///< empty when the cluster was spelled out
  std::string cluster_key;
  std::string model;
  int nodes = 0, world = 0, micro_batch = 0, accumulation = 0;
  double iteration = 0;  ///< s
  double hours = 0;      ///< time to train
  double cost = 0;       ///< USD at the chosen pricing
  /// The band (docs/model.md, "The band"): time-to-train and on-demand cost
  /// at the low and high iteration time; hours and cost when not recorded.
  double hours_low = 0, hours_high = 0, cost_low = 0, cost_high = 0;
  double global_batch = 0;  ///< samples per optimizer step (0: not recorded)
  std::string batch_split;  ///< how micro-batch and k follow a fixed global batch ("" when not fixed)
  bool priced = true;       ///< false: no price is known, cost is 0 and points rank by time
  bool batch_law = false;   ///< samples follow training.critical_batch (comparable across batches)
  /// The record's measured_collectives: collectives timed by the profile's
  /// fit measured on this cluster (docs/model.md); empty: all modelled.
  std::vector<std::string> measured_collectives;
  /// The point's swept keys and values (the record's params; empty for a
  /// record without them).
  StringPairs params;
};

/// Whether a swept key sets the compressor (workload.compression and its fields).
bool is_compression_key(const std::string& key);
/// The swept keys a baseline may differ in from the point it is compared with:
/// the compressor's and how the batch is split (workload.accumulation,
/// workload.micro_batch). Every other swept key must match (docs/planning.md).
bool is_compared_key(const std::string& key);

enum class Pricing { OnDemand, Spot };

/// Why points of a results file were left out of the plan, each point counted
/// once: by its status (no_fit, error, invalid), for lacking a time-to-train
/// or a price, then (recommend) over the deadline, else over the budget.
struct Exclusions {
  std::size_t no_fit = 0, failed = 0, invalid = 0, no_cost = 0, over_deadline = 0, over_budget = 0;
  std::size_t total() const { return no_fit + failed + invalid + no_cost + over_deadline + over_budget; }
};
/// "8 need more memory than the GPUs have, 4 failed"; empty when none.
std::string describe(const Exclusions& e);

/// The points of a results file that have a time-to-train and a cost at
/// `pricing` (status ok, a training target, an instance or a price of the
/// cluster's own; a spot price for Spot); the others are counted in
/// `excluded` when given. When no point has a price, the points with a
/// time-to-train are returned unpriced (priced false), to be ranked by time.
std::vector<PlanPoint> plan_points(const std::vector<ResultLine>& results, Pricing pricing,
                                   Exclusions* excluded = nullptr);

/// Indices (into `points`) of the Pareto-optimal points, by increasing time:
/// no other point is both at least as fast and at least as cheap, and better in one.
std::vector<std::size_t> pareto_front(const std::vector<PlanPoint>& points);

struct Recommendation {
  bool found = false;
  PlanPoint choice;
  std::optional<PlanPoint> baseline;  ///< uncompressed, smallest k, every other swept key the same
  std::string rule;                   ///< the rule that was applied
  std::string reason;                 ///< one sentence for people
  Exclusions excluded;                ///< plan_points' counts and the constraints'
};

/// `excluded`: plan_points' counts; the points over the deadline or the budget
/// are added. When nothing qualifies the reason names why every point was left out.
Recommendation recommend(const std::vector<PlanPoint>& points, std::optional<double> budget,
                         std::optional<double> deadline_hours, const Exclusions& excluded = {});

/// One sentence: whether the recommendation holds across the band, i.e. its
/// high (cost by the cheapest rules, hours by the fastest) is at most the
/// runner-up's low under the same rule and constraints. Empty when not found.
std::string band_verdict(const Recommendation& rec, const std::vector<PlanPoint>& points, std::optional<double> budget,
                         std::optional<double> deadline_hours);

/// "PowerSGD rank 4, k = 4 (micro-batch 8, global batch 1024) on 16 x p4d.24xlarge;
/// workload.bucket_size=25MiB" (the batch part when the record has a global
/// batch; after ';' every swept key the words before do not name, as KEY=VALUE).
std::string describe(const PlanPoint& p);

/// The points split into groups that may be compared: one group when every
/// point has one global batch, or when every point's samples follow the
/// critical-batch law (training.critical_batch); else one group per global
/// batch, in increasing batch, and `note` says why they are kept apart.
std::vector<std::vector<PlanPoint>> comparable_groups(const std::vector<PlanPoint>& points, std::string* note);

}  // namespace gw::plan
