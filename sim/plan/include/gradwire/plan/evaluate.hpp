// One sweep point: a validated scenario turned into a results record (a
// ResultRecord; written by results_file.hpp's to_json) from its outcome
// (evaluate_scenario, scenario_outcome.hpp: the batch split, the memory
// check, the predicted iteration, the time-to-train and the cost). Plain C++
// (the replay is passed in as a function).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gradwire/model/catalog.hpp"
#include "gradwire/model/closed_form.hpp"
#include "gradwire/model/iteration_model.hpp"
#include "gradwire/model/model_desc.hpp"
#include "gradwire/model/memory.hpp"
#include "gradwire/plan/result_record.hpp"
#include "gradwire/plan/scenario_outcome.hpp"
#include "gradwire/model/profile.hpp"
#include "gradwire/model/scenario.hpp"

namespace gw::plan {

/// The closed-form evaluator lives in the model (gradwire/model/closed_form.hpp).
using gw::closed_form_collective_time;
using gw::closed_form_iteration;

/// The reason an error record gives for an exception: its what(), or, for a
/// std::bad_alloc (which says neither), what ran out and what to do.
std::string point_error_reason(const std::exception& e);

/// Loads models and profiles once per process and evaluates points.
class PointEvaluator {
 public:
  PointEvaluator(PointOptions options, Evaluator evaluator, std::string evaluator_name);
  /// Loads (and caches) what `scenario` needs; throws InputError for a missing model/profile.
  void preload(const Scenario& scenario);
  /// Files the sweep's points read, (role, content hash), written into every
  /// record as "inputs" so a resume can name the file that changed.
  void set_inputs(std::vector<std::pair<std::string, std::string>> inputs) { inputs_ = std::move(inputs); }
  /// The results record of a point. Never throws for a point that cannot be
  /// evaluated: the record says status "error", "no_fit" or "invalid" with
  /// the reason (and the fields filled before the point ended).
  ResultRecord evaluate(std::size_t index, std::size_t total, const std::string& sweep_id, const std::string& key,
                        const std::vector<std::pair<std::string, std::string>>& params, const Scenario& scenario);

 private:
  /// The fields of a point with a workload, from the batch split on.
  void evaluate_workload(const Scenario& scenario, ResultRecord& record);
  const ModelDesc& model(const std::string& name);
  const Profile& profile(const std::string& name);
  PointOptions options_;
  Evaluator evaluator_;
  std::string evaluator_name_;
  std::vector<std::pair<std::string, std::string>> inputs_;
  std::map<std::string, std::unique_ptr<ModelDesc>> models_;
  std::map<std::string, std::unique_ptr<Profile>> profiles_;
};

}  // namespace gw::plan
