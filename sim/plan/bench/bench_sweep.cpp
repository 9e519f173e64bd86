// Sweep throughput: a sweep of 1,000 configurations of a 64-GPU cluster
// (8 x p4d.24xlarge: 8 compressors x 5 NIC bandwidths x 5 accumulation
// steps x 5 bucket sizes), run in forked workers with the SimGrid replay
// (the default: each point its own replay, an equal replay child's outcome
// reused; docs/engine.md) or the closed-form evaluator, the records appended
// durably. Prints the figures (goals: the whole sweep in at most 60 s on 2
// cores; issue 17: 10,000 points a minute with the simulation evaluator).
//
//   bench_sweep [-j N] [--model NAME] [--evaluator simulation|closed-form]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <string>
#include <unistd.h>

#include "gradwire/core/options.hpp"
#include "gradwire/plan/sweep.hpp"
#include "gradwire/replay/replay.hpp"

namespace {

/// The sweep: 8 compressors x 5 NIC bandwidths x 5 accumulation steps x 5 bucket sizes.
std::string sweep_text(const std::string& model) {
  return "name: bench-1000\n"
         "base:\n"
         "  cluster: {instance: p4d.24xlarge, nodes: 8}\n"
         "  workload: {model: " +
         model +
         ", micro_batch: 8, optimizer: {kind: adamw}}\n"
         "  training: {samples: 10000000}\n"
         "axes:\n"
         "  workload.compression:\n"
         "    - {kind: none}\n    - {kind: fp16}\n    - {kind: bf16}\n    - {kind: int8}\n"
         "    - {kind: powersgd, rank: 1}\n    - {kind: powersgd, rank: 4}\n"
         "    - {kind: topk, ratio: 0.01}\n    - {kind: sign}\n"
         "  cluster.nics.bandwidth: [10Gbps, 25Gbps, 50Gbps, 100Gbps, 200Gbps]\n"
         "  workload.accumulation: [1, 2, 4, 8, 16]\n"
         "  workload.bucket_size: [5MiB, 10MiB, 25MiB, 50MiB, 100MiB]\n";
}

/// The evaluator named `name`; false (after saying why) when there is none.
bool pick_evaluator(const std::string& name, gw::plan::Evaluator& evaluate) {
  if (name == "simulation") {
    evaluate = [](const gw::Scenario& s, const gw::ModelDesc& m, const gw::Profile& p) {
      gw::ReplayOptions o;
      o.share_durations = false;  // as gradwire sweep
      return gw::simulate_iteration(s, m, p, o);
    };
    return true;
  }
  if (name != "closed-form") {
    std::fprintf(stderr, "bench_sweep: unknown evaluator %s\n", name.c_str());
    return false;
  }
  evaluate = gw::plan::closed_form_iteration;
  return true;
}

struct Figures {
  std::size_t points = 0, ran = 0, failed = 0;
  double load_s = 0, run_s = 0, size = 0;
};

void print_figures(const std::string& evaluator, const std::string& model, int jobs, const Figures& f) {
  std::printf("sweep throughput (%s evaluator, %s, 8 x p4d.24xlarge = 64 GPUs, -j %d)\n", evaluator.c_str(),
              model.c_str(), jobs);
  std::printf("%-34s %12s\n", "figure", "value");
  std::printf("%-34s %12zu\n", "points", f.points);
  std::printf("%-34s %12.3f\n", "load + validate all points (s)", f.load_s);
  std::printf("%-34s %12.3f\n", "run (s)", f.run_s);
  std::printf("%-34s %12.1f\n", "points per second", static_cast<double>(f.ran) / f.run_s);
  std::printf("%-34s %12.3f\n", "per point, wall (ms)", 1e3 * f.run_s / static_cast<double>(f.ran));
  std::printf("%-34s %12zu\n", "failed points", f.failed);
  std::printf("%-34s %12.1f\n", "results file (KiB)", f.size / 1024.0);
  std::printf("%-34s %12s\n", "goal: total <= 60 s", f.load_s + f.run_s <= 60 ? "met" : "MISSED");
}

}  // namespace

int main(int argc, char** argv) {
  int jobs = 2;
  std::string model = "bert-base";
  std::string evaluator = "simulation";
  namespace po = boost::program_options;
  po::options_description opts("usage: bench_sweep [-j N] [--model NAME] [--evaluator simulation|closed-form]");
  opts.add_options()("help,h", "this help")("jobs,j", po::value<int>(&jobs)->default_value(jobs), "worker processes")(
      "model", po::value<std::string>(&model)->default_value(model), "model of the model zoo")(
      "evaluator", po::value<std::string>(&evaluator)->default_value(evaluator),
      "simulation (SimGrid replay) or closed-form");
  try {
    if (!gw::parse_options(argc, argv, opts)) return 0;
  } catch (const std::exception& e) {
    std::cerr << "bench_sweep: " << e.what() << "\n" << opts << "\n";
    return 2;
  }
  if (jobs < 1) {
    std::cerr << "bench_sweep: -j must be at least 1\n";
    return 2;
  }
  gw::plan::Evaluator evaluate;
  if (!pick_evaluator(evaluator, evaluate)) return 2;
  using clock = std::chrono::steady_clock;
  Figures f;
  auto t0 = clock::now();
  const auto spec = gw::plan::parse_sweep(sweep_text(model), "bench-1000.yaml");
  f.load_s = std::chrono::duration<double>(clock::now() - t0).count();

  char dir_template[] = "/tmp/gw-bench-sweep-XXXXXX";
  const char* dir = ::mkdtemp(dir_template);
  if (dir == nullptr) {
    std::perror("mkdtemp");
    return 1;
  }
  gw::plan::RunOptions o;
  o.jobs = jobs;
  o.out = std::string(dir) + "/results.jsonl";
  o.progress = gw::plan::RunOptions::Progress::None;
  t0 = clock::now();
  const auto sum = gw::plan::run_sweep(spec, o, evaluate, evaluator == "simulation" ? "simulation" : "closed form");
  f.run_s = std::chrono::duration<double>(clock::now() - t0).count();
  f.size = static_cast<double>(std::filesystem::file_size(o.out));
  f.points = spec.points;
  f.ran = sum.ran;
  f.failed = sum.failed;
  print_figures(evaluator, model, jobs, f);
  std::filesystem::remove_all(dir);
  return sum.failed == 0 ? 0 : 1;
}
