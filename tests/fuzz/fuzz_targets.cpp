#include "fuzz_targets.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "gradwire/model/catalog.hpp"
#include "gradwire/model/measured_compute.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/model/model_desc.hpp"
#include "gradwire/model/nccl_tests_log.hpp"
#include "gradwire/plan/planner.hpp"
#include "gradwire/plan/sweep.hpp"
#include "gradwire/model/profile.hpp"
#include "gradwire/model/scenario.hpp"
#include "gradwire/model/scenario_yaml.hpp"
#include "gradwire/core/units.hpp"
#include "gradwire/core/yaml_reader.hpp"

namespace gw::fuzz {
namespace {

std::string text_of(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// The per-process input file of as_file(), removed when the process exits.
struct InputFile {
  std::string path;
  InputFile() {
    const char* dir = std::getenv("TMPDIR");
    path = std::string(dir && *dir ? dir : "/tmp") + "/gw-fuzz-input-" + std::to_string(::getpid()) + ".yaml";
  }
  ~InputFile() { std::remove(path.c_str()); }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
};

/// The file loaders take a path: the input goes to one per-process file.
std::string as_file(const std::uint8_t* data, std::size_t size) {
  static const InputFile file;
  const std::string& path = file.path;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) throw std::runtime_error("fuzz harness: cannot write " + path);
  return path;
}

/// Any number a loader accepted must be a real one: never NaN or infinite.
void require_finite(double v, const char* what) {
  if (!std::isfinite(v)) throw std::logic_error(std::string("a loader accepted a non-finite ") + what);
}

}  // namespace

void scenario(const std::uint8_t* data, std::size_t size) {
  try {
    const Scenario s = parse_scenario(yaml::load_string(text_of(data, size), "fuzz-scenario.yaml"));
    require_finite(s.cluster.nic.bandwidth, "NIC bandwidth");
    require_finite(s.cluster.intra_node.bandwidth, "intra-node bandwidth");
    require_finite(s.cluster.fabric.oversubscription, "oversubscription");
    if (s.cluster.world_size() < 1) throw std::logic_error("a scenario with no GPU was accepted");
    if (s.workload) {
      require_finite(s.workload->bucket_size, "bucket size");
      require_finite(s.workload->compression.ratio, "compression ratio");
    }
  } catch (const InputError&) {
  }
}

void model(const std::uint8_t* data, std::size_t size) {
  try {
    const ModelDesc m = load_model_file(as_file(data, size));
    require_finite(m.forward_flops_per_sample, "forward FLOPs");
    require_finite(m.backward_flops_per_sample, "backward FLOPs");
    require_finite(m.activation_bytes_per_sample, "activation bytes");
    if (m.tensors.empty() || m.parameters < 1) throw std::logic_error("an empty model was accepted");
    (void)gradient_bytes(m);
  } catch (const InputError&) {
  }
}

void compute(const std::uint8_t* data, std::size_t size) {
  try {
    const MeasuredCompute m = load_measured_compute(as_file(data, size));
    if (m.tensors.empty() || m.parameters < 1 || m.micro_batch < 1)
      throw std::logic_error("an empty measured-compute document was accepted");
    require_finite(m.forward.median, "forward time");
    require_finite(m.backward.median, "backward time");
    // What prepare_iteration takes from it: per-tensor durations >= 0 that
    // add up to the measured backward.
    double sum = 0;
    for (double d : measured_tensor_backward(m)) {
      if (!(d >= 0)) throw std::logic_error("a negative per-tensor backward time was derived");
      sum += d;
    }
    if (std::fabs(sum - m.backward.median) > 1e-9 * std::max(1.0, m.backward.median))
      throw std::logic_error("per-tensor backward times do not add up to the backward pass");
  } catch (const InputError&) {
  }
}

void profile(const std::uint8_t* data, std::size_t size) {
  try {
    const Profile p = load_profile_file(as_file(data, size));
    for (const auto& [prec, f] : p.gemm_flops) require_finite(f, "GEMM throughput");
    for (const auto& [name, c] : p.codecs) {
      // Every accepted fit must evaluate to a finite time over the size range.
      for (double x : {1.0, 1e3, 1e6, 1e9}) {
        if (!c.encode.knots.empty()) require_finite(c.encode.evaluate(x), "codec encode time");
        if (!c.decode.knots.empty()) require_finite(c.decode.evaluate(x), "codec decode time");
      }
    }
    for (const auto& c : p.collectives) {
      for (double x : {1.0, 1e6, 1e9}) require_finite(c.fit.evaluate(x), "collective time");
    }
    (void)profile_to_yaml(p);
  } catch (const InputError&) {
  }
}

void catalog(const std::uint8_t* data, std::size_t size) {
  try {
    const Catalog c = load_catalog_file(as_file(data, size));
    for (const auto& i : c.instances) {
      require_finite(i.on_demand, "price");
      (void)cluster_from_instance(i, 2);
    }
  } catch (const InputError&) {
  }
}

void sweep(const std::uint8_t* data, std::size_t size) {
  try {
    const plan::SweepSpec spec =
        plan::parse_sweep(text_of(data, size), "fuzz-sweep.yaml", std::string(GW_SOURCE_DIR) + "/scenarios");
    if (spec.points > 0) {
      (void)plan::point_key(spec, spec.points - 1);
      (void)plan::point_scenario(spec, spec.points - 1);
    }
  } catch (const InputError&) {
  }
}

void units(const std::uint8_t* data, std::size_t size) {
  const std::string t = text_of(data, size);
  std::string why;
  if (auto v = units::parse_bandwidth(t, &why)) require_finite(*v, "bandwidth"), (void)units::format_bandwidth(*v);
  if (auto v = units::parse_time(t, &why)) require_finite(*v, "time"), (void)units::format_time(*v);
  if (auto v = units::parse_size(t, &why)) require_finite(*v, "size"), (void)units::format_size(*v);
  if (auto v = units::parse_number(t)) require_finite(*v, "number");
}

/// Everything plan and report do with accepted records, with checks on what
/// comes out: no point may carry a negative or non-finite time or cost.
void plan_all(const std::vector<plan::ResultLine>& lines) {
  for (const auto pricing : {plan::Pricing::OnDemand, plan::Pricing::Spot}) {
    const auto points = plan::plan_points(lines, pricing);
    for (const auto& p : points) {
      require_finite(p.iteration, "iteration time");
      require_finite(p.hours, "time to train");
      require_finite(p.cost, "cost");
      if (p.iteration < 0 || p.hours < 0 || p.cost < 0) throw std::logic_error("a negative time or cost was accepted");
      (void)plan::describe(p);
    }
    for (std::size_t i : plan::pareto_front(points)) {
      if (i >= points.size()) throw std::logic_error("pareto_front returned an index out of range");
    }
    (void)plan::recommend(points, std::nullopt, std::nullopt);
    (void)plan::recommend(points, 1000.0, std::nullopt);
    (void)plan::recommend(points, std::nullopt, 10.0);
    (void)plan::recommend(points, 1000.0, 10.0);
  }
}

void results(const std::uint8_t* data, std::size_t size) {
  // The file as plan, report, merge and a resumed sweep read it.
  try {
    bool partial = false;
    const auto lines = plan::read_results(as_file(data, size), &partial);
    plan_all(lines);
    (void)plan::canonical_results(lines);
  } catch (const InputError&) {
  }
  // Each line handed to the planner directly: plan_points checks records
  // again (a ResultLine may come from elsewhere than read_results).
  const std::string text = text_of(data, size);
  int lineno = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    plan::ResultLine r;
    r.text = text.substr(pos, nl - pos);
    r.file = "fuzz-results.jsonl";
    r.line = ++lineno;
    pos = nl + 1;
    try {
      plan_all({r});
    } catch (const InputError&) {
    }
  }
}

/// The rows a log reader keeps must be real measurements: finite, a time
/// above 0 for a size above 0, no faster than the plausible maximum, and no
/// row nccl-tests flagged with a #wrong count.
void check_kept_rows(const gw::nccl_tests::Log& log) {
  for (const auto& row : log.rows) {
    for (const auto* g : {&row.out_of_place, &row.in_place}) {
      require_finite(g->time, "nccl-tests time");
      require_finite(g->algbw, "nccl-tests algbw");
      const auto wrong = units::parse_integer(g->wrong);
      if (wrong && *wrong > 0) throw std::logic_error("a row with a non-zero #wrong was kept");
      if (row.bytes > 0 && !(g->time > 0 && row.bytes / g->time <= kMaxCollectiveBeta))
        throw std::logic_error("a row that cannot be a measurement was kept");
    }
  }
  for (const auto& n : log.notes) (void)gw::nccl_tests::format_note(log, n);
  (void)log.describe();
  (void)log.where();
}

/// The fits of the runs `ops` picks, each finite, into a profile.
void fit_runs(const std::vector<gw::nccl_tests::Log>& runs, const std::vector<CollectiveOp>& ops) {
  try {
    const auto picked = gw::nccl_tests::select_runs(runs, ops, "pick one");
    const auto fits = gw::nccl_tests::collective_fits(picked);
    for (const auto& f : fits) {
      for (double x : {1.0, 1e6, 1e9}) require_finite(f.fit.evaluate(x), "fitted collective time");
    }
    Profile p;
    gw::nccl_tests::add_collective_fits(p, fits, picked);
  } catch (const InputError&) {
  }
}

void nccl_tests(const std::uint8_t* data, std::size_t size) {
  // The name gives runs without their own "Collective test starting" line an
  // op where their rows agree with it.
  try {
    const auto runs = gw::nccl_tests::parse_runs(text_of(data, size), "fuzz-all_gather_perf.log");
    for (const auto& log : runs) check_kept_rows(log);
    fit_runs(runs, {});
    fit_runs(runs, {CollectiveOp::AllReduce});
  } catch (const InputError&) {
  }
}

const std::vector<Target>& targets() {
  static const std::vector<Target> all = {{"scenario", scenario}, {"model", model},     {"compute", compute},
                                          {"profile", profile},   {"catalog", catalog}, {"sweep", sweep},
                                          {"units", units},       {"results", results}, {"nccl_tests", nccl_tests}};
  return all;
}

}  // namespace gw::fuzz
