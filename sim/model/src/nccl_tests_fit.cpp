// Profile collective fits from nccl-tests logs (gradwire/model/nccl_tests_log.hpp).
#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

#include "gradwire/core/error.hpp"
#include "gradwire/model/fit.hpp"
#include "gradwire/model/nccl_tests_log.hpp"

namespace gw::nccl_tests {
namespace {

using Key = std::tuple<CollectiveOp, int, int>;  // op, ranks, nodes

Key key_of(const Log& log) {
  if (!log.op) {
    throw InputError(log.file, log.line, 1, "",
                     (log.binary.empty() ? std::string("the log does not say which collective it measured")
                                         : log.binary + " is not a collective gradwire simulates") +
                         " (" + collective_op_list() + ")");
  }
  if (log.world_size() < 2) throw InputError(log.file, log.line, 1, "", "the run has one rank: no collective to fit");
  return {*log.op, log.world_size(), log.nodes()};
}

void add_points(const Log& log, std::vector<CurvePoint>& points) {
  for (const auto& row : log.rows) {
    if (!(row.bytes > 0) || !(row.out_of_place.time > 0) || !(row.in_place.time > 0)) continue;
    const auto s = fit::summarize({row.out_of_place.time, row.in_place.time});
    points.push_back({row.bytes, s.median, s.spread, log.iters});
  }
}

}  // namespace

std::vector<CollectiveCost> collective_fits(const std::vector<Log>& logs) {
  std::map<Key, std::vector<CurvePoint>> points;
  std::map<Key, const Log*> first;
  for (const auto& log : logs) {
    const Key k = key_of(log);
    add_points(log, points[k]);
    first.emplace(k, &log);
  }
  std::vector<CollectiveCost> out;
  for (auto& [k, pts] : points) {
    CollectiveCost c;
    std::tie(c.op, c.gpus, c.nodes) = k;
    try {
      c.points = fit::normalize_points(pts);
      c.fit = fit::fit_alpha_beta(c.points);
    } catch (const std::invalid_argument& e) {
      const Log& log = *first[k];
      throw InputError(log.file, log.line, 1, "",
                       "cannot fit the times of " + log.describe() + " (" + std::to_string(pts.size()) +
                           " usable rows of sizes above 0 B): " + e.what());
    }
    out.push_back(std::move(c));
  }
  return out;
}

void add_collective_fits(Profile& profile, const std::vector<CollectiveCost>& fits, const std::vector<Log>& logs) {
  for (const auto& f : fits) {
    auto& list = profile.collectives;
    list.erase(
        std::remove_if(list.begin(), list.end(),
                       [&](const CollectiveCost& c) { return c.op == f.op && c.gpus == f.gpus && c.nodes == f.nodes; }),
        list.end());
    list.push_back(f);
    std::string files;
    for (const auto& log : logs) {
      if (log.op != f.op || log.world_size() != f.gpus || log.nodes() != f.nodes) continue;
      files += (files.empty() ? "" : ", ") + log.where() + (log.gpu().empty() ? "" : " (" + log.gpu() + ")");
      const auto skipped = std::count_if(log.notes.begin(), log.notes.end(),
                                         [](const Note& n) { return n.text.rfind("row skipped", 0) == 0; });
      if (skipped > 0) files += " with " + std::to_string(skipped) + " row(s) left out as not real measurements";
    }
    profile.notes.push_back(to_string(f.op) + " on " + std::to_string(f.gpus) + " GPUs, " + std::to_string(f.nodes) +
                            " node(s): fitted from nccl-tests logs " + files);
  }
}

}  // namespace gw::nccl_tests
