#include "gradwire/validate/nccl_log.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "gradwire/model/collectives.hpp"
#include "gradwire/model/fit.hpp"

namespace gw::validate {

CollectiveCase case_from_log(const nccl_tests::Log& log, CollectiveOp op, int world, const std::string& cluster_file,
                             const std::string& algorithm) {
  CollectiveCase c;
  c.file = log.file;
  c.name = std::filesystem::path(log.file).filename().string();
  c.devset = "log";
  c.source = log.file;
  c.confidence = "high";
  c.cluster_file = cluster_file;
  c.op = to_string(op);
  c.algorithm = algorithm;
  const double factor = bus_bandwidth_factor(op, world);
  double last = 0;
  for (const auto& row : log.rows) {
    if (!(row.bytes > last) || !(row.out_of_place.time > 0)) continue;
    PublishedPoint p;
    p.bytes = row.bytes;
    // The time calibrate --from-nccl-tests records for the size (the median
    // of the two runs), so that a profile made from the log gives it back.
    p.time = row.in_place.time > 0 ? fit::summarize({row.out_of_place.time, row.in_place.time}).median
                                   : row.out_of_place.time;
    p.busbw = row.bytes / *p.time * factor;
    c.points.push_back(p);
    last = row.bytes;
  }
  return c;
}

std::string render_comparison(const CaseResult& r) {
  std::string out = fmt::format("# {:>12} {:>12} {:>12} {:>10} {:>10} {:>8}\n", "size", "measured", "predicted",
                                "measured", "predicted", "error");
  out += fmt::format("# {:>12} {:>12} {:>12} {:>10} {:>10} {:>8}\n", "(B)", "time (us)", "time (us)", "busbw GB/s",
                     "busbw GB/s", "(busbw)");
  for (const auto& p : r.points)
    out += fmt::format("  {:>12.0f} {:>12.2f} {:>12.2f} {:>10.2f} {:>10.2f} {:>+7.1f}%\n", p.published.bytes,
                       p.published.time.value_or(0) * 1e6, p.predicted_time * 1e6, p.published.busbw / 1e9,
                       p.predicted_busbw / 1e9, 100 * p.error.value_or(0));
  auto pct = [](const std::optional<double>& x) { return x ? fmt::format("{:.1f}%", 100 * *x) : std::string("-"); };
  out += fmt::format("# median |error| below 1 MiB: {}, from 1 MiB: {}; worst: {} at {:.0f} B ({} points, {} GPUs)\n",
                     pct(r.median_small), pct(r.median_large), pct(r.worst), r.worst_bytes, r.points.size(), r.gpus);
  return out;
}

}  // namespace gw::validate
