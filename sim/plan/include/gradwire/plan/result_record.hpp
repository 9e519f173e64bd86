// One sweep point's results record, typed. PointEvaluator::evaluate fills it,
// the planner and the report read it; JSON appears only where records meet
// the results file (to_json / from_json in results_file.hpp), which writes the
// fields in the order below and leaves out the ones that are not set
// (docs/planning.md, "Results records"). Each member has its row in the
// record's field table (result_fields.hpp): a member without one is neither
// written nor read. Plain C++.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gradwire/model/memory.hpp"

namespace gw::plan {

/// Time-to-train (written when the scenario has a training target).
struct TrainingFigures {
  double samples = 0, convergence_factor = 0, iterations = 0, hours = 0;
  /// training.critical_batch when the scenario gives one (samples then follow
  /// the batch law, cost.hpp); written only when set.
  std::optional<double> critical_batch;
};

/// Cost of the run (written when the cluster is a catalog instance).
struct CostFigures {
  double on_demand = 0;        ///< USD, all nodes
  std::optional<double> spot;  ///< USD; written as null when the instance has no spot price
  double billed_seconds = 0, usd_per_hour = 0;
};

/// The band around the iteration time (docs/model.md, "The band") and what
/// it gives downstream; hours and on-demand cost at its low and high when the
/// record has a time-to-train and a cost.
struct BandFigures {
  double iteration_low = 0, iteration_high = 0;  ///< s
  double straggler_wait = 0;                     ///< s, the expected wait for the slowest rank
  std::optional<double> hours_low, hours_high, on_demand_low, on_demand_high;
};

using StringPairs = std::vector<std::pair<std::string, std::string>>;

/// What runs, in words: the compressor (`compression`, its `kind`) alone
/// without a scheme (`sharding` ""), the scheme alone for an uncompressed
/// sharded point, else "COMPRESSOR under SCHEME".
inline std::string configuration_label(const std::string& compression, const std::string& kind,
                                       const std::string& sharding) {
  if (sharding.empty()) return compression;
  return kind == "none" ? sharding : compression + " under " + sharding;
}

/// The fields of a record, in the order a record is written. index, of,
/// sweep, key and status are always written; every optional field only when set.
struct ResultRecord {
  std::size_t index = 0, of = 0;
  std::string sweep;                  ///< the sweep's identity
  std::string key;                    ///< the point's axis values, "k1=v1;k2=v2"
  StringPairs inputs;                 ///< (role, content hash); written when not empty
  std::optional<StringPairs> params;  ///< the axis values, (key, value)
  std::string status;                 ///< ok, error, invalid or no_fit
  /// The catalog instance: unset (not written), set to nullopt (written as
  /// null: a cluster spelled out) or set to its name.
  std::optional<std::optional<std::string>> instance;
  std::optional<int> nodes, gpus_per_node, world;
  std::optional<std::string> gpu;
  std::optional<double> node_bandwidth;  ///< B/s
  std::optional<std::string> cluster_key, model, compression, compression_kind, evaluator;
  /// The sharding scheme and activation checkpointing in words
  /// (scheme_label: "zero3 (fsdp1) + full activation checkpointing");
  /// written when not DDP without checkpointing.
  std::optional<std::string> sharding;
  std::optional<int> micro_batch, accumulation;
  std::optional<double> global_batch;
  /// How micro-batch and k follow a fixed training.global_batch ("k = 2, the
  /// smallest that fits in memory: k = 1 (micro-batch 32) needs ..."); written when set.
  std::optional<std::string> batch_split;
  std::optional<MemoryBreakdown> memory;  ///< per GPU, bytes
  std::optional<double> iteration, forward, backward, exposed_communication, encode, decode, optimizer,
      samples_per_second, wire_bytes_per_gpu;  ///< s, samples/s, bytes
  /// The collectives timed by the profile's fit measured on this cluster
  /// (IterationResult::measured_collectives); written only when there are some.
  std::optional<std::vector<std::string>> measured_collectives;
  std::optional<TrainingFigures> training;
  std::optional<CostFigures> cost;
  std::optional<BandFigures> band;
  std::optional<std::string> reason;  ///< why the status is not ok (written even when empty once set)

  /// The instance name, "" when there is none.
  std::string instance_name() const { return instance && *instance ? **instance : std::string(); }
  /// configuration_label of the record's fields.
  std::string configuration() const {
    return configuration_label(compression.value_or(""), compression_kind.value_or(""), sharding.value_or(""));
  }
};

}  // namespace gw::plan
