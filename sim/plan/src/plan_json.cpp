#include "gradwire/plan/plan_json.hpp"

#include <nlohmann/json.hpp>

#include "gradwire/core/output_schema.hpp"

namespace gw::plan {
namespace {

using ojson = nlohmann::ordered_json;

ojson number_or_null(std::optional<double> v) { return v ? ojson(*v) : ojson(nullptr); }

ojson exclusions_json(const Exclusions& e) {
  return {{"no_fit", e.no_fit},
          {"failed", e.failed},
          {"invalid", e.invalid},
          {"no_cost", e.no_cost},
          {"over_deadline", e.over_deadline},
          {"over_budget", e.over_budget},
          {"total", e.total()},
          {"text", describe(e)}};
}

ojson point_json(const PlanPoint& p) {
  ojson j{{"index", p.index},
          {"key", p.key},
          {"configuration", describe(p)},
          {"model", p.model},
          {"instance", p.instance.empty() ? ojson(nullptr) : ojson(p.instance)},
          {"cluster_key", p.cluster_key},
          {"nodes", p.nodes},
          {"gpus", p.world},
          {"compression", p.compression},
          {"compression_kind", p.compression_kind},
          {"micro_batch", p.micro_batch},
          {"accumulation", p.accumulation},
          {"global_batch", p.global_batch > 0 ? ojson(p.global_batch) : ojson(nullptr)},
          {"batch_split", p.batch_split.empty() ? ojson(nullptr) : ojson(p.batch_split)},
          {"iteration_s", p.iteration},
          {"time_to_train_hours", p.hours},
          {"cost_usd", p.priced ? ojson(p.cost) : ojson(nullptr)}};
  j["band"] = {{"low_hours", p.hours_low},
               {"high_hours", p.hours_high},
               {"cost_low_usd", p.priced ? ojson(p.cost_low) : ojson(nullptr)},
               {"cost_high_usd", p.priced ? ojson(p.cost_high) : ojson(nullptr)}};
  return j;
}

/// One comparable group: its front and recommendation (the text form's section).
ojson group_json(const std::vector<PlanPoint>& group, const PlanJsonRequest& req, const Exclusions& excluded,
                 bool* found) {
  ojson front = ojson::array();
  for (std::size_t i : pareto_front(group)) front.push_back(point_json(group[i]));
  const auto rec = recommend(group, req.budget, req.deadline_hours, excluded);
  ojson j{{"global_batch",
           !group.empty() && group.front().global_batch > 0 ? ojson(group.front().global_batch) : ojson(nullptr)},
          {"points", group.size()},
          {"pareto_front", front},
          {"rule", rec.rule},
          {"excluded", exclusions_json(rec.excluded)},
          {"found", rec.found},
          {"reason", rec.reason}};
  j["recommendation"] = rec.found ? point_json(rec.choice) : ojson(nullptr);
  j["baseline"] = rec.found && rec.baseline ? point_json(*rec.baseline) : ojson(nullptr);
  j["band_verdict"] = rec.found ? ojson(band_verdict(rec, group, req.budget, req.deadline_hours)) : ojson(nullptr);
  *found = *found || rec.found;
  return j;
}

}  // namespace

std::string plan_json(const PlanJsonRequest& req, const std::vector<PlanPoint>& points, const Exclusions& excluded,
                      bool* found) {
  bool any = false;
  std::string note;
  const auto groups = comparable_groups(points, &note);
  ojson j{{"schema", kPlanSchema},
          {"results", req.results},
          {"records", req.records},
          {"request",
           {{"budget_usd", number_or_null(req.budget)},
            {"deadline_hours", number_or_null(req.deadline_hours)},
            {"pricing", req.spot ? "spot" : "on-demand"}}},
          {"points", points.size()},
          {"priced", points.empty() || points.front().priced},
          {"note", note.empty() ? ojson(nullptr) : ojson(note)},
          {"excluded", exclusions_json(excluded)}};
  ojson out = ojson::array();
  // The file's exclusions are counted once, with the first group (as the text form).
  for (const auto& group : groups)
    out.push_back(group_json(group, req, &group == &groups.front() ? excluded : Exclusions{}, &any));
  j["groups"] = out;
  j["found"] = any;
  if (found != nullptr) *found = any;
  return j.dump(2, ' ', false, ojson::error_handler_t::replace);
}

}  // namespace gw::plan
