// Wall time of simulate_iteration (fork, platform, replay, JSON) against the
// number of GPUs, the model, the compression and the accumulation steps k.
// Prints a table; the goal is that wall time does not grow with k and stays
// interactive (seconds) at thousands of GPUs with aggregated collectives.
//   bench_replay [max_gpus]   (default 512: 8, 64, 512; 4096 takes minutes on 2 cores)
//   bench_replay --gpus 4096 --model gpt2-xl --compression powersgd --k 1
//       one configuration (25 MiB buckets, overlap on), for docs/engine.md's figures
//   --full-simulation: every collective simulated in full (no memo), the "before"
//   bench_replay --gpus 16384 --model llama3-70b --sharding full_shard --k 1 --k 64   (or hsdp, ...)
//       a sharded optimizer step (workload.sharding; bf16, micro-batch 1; "buckets": units)
// "coll sim" / "coll memo": collectives simulated in full / replayed from the memo.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "gradwire/core/yaml_reader.hpp"
#include "gradwire/model/model_desc.hpp"
#include "gradwire/model/sharding.hpp"
#include "gradwire/core/options.hpp"
#include "gradwire/model/profile.hpp"
#include "gradwire/replay/replay.hpp"

namespace {

gw::Scenario bench_scenario(const std::string& name, int gpus, int k, const std::string& compression,
                            const std::string& sharding) {
  gw::Scenario s;
  s.name = "bench";
  s.cluster.nodes = gpus / 8;
  s.cluster.gpus_per_node = 8;
  s.cluster.gpu = "h100";
  s.cluster.intra_node = {450e9, 1e-6};
  s.cluster.nic_count = 8;
  s.cluster.nic = {50e9, 5e-6};
  s.cluster.fabric.latency = 1e-6;
  gw::WorkloadSpec w;
  w.model = name;
  w.micro_batch = 8;
  w.accumulation = k;
  w.optimizer.kind = "adam";
  w.compression.kind = compression;  // powersgd: rank 4 (the default)
  if (!sharding.empty()) {
    const auto doc = gw::yaml::load_string("sharding: " + sharding + "\n", "--sharding");
    w.sharding = gw::parse_sharding(doc.root().required("sharding"));
    w.precision = gw::Precision::BF16;
    w.micro_batch = 1;
  }
  s.workload = w;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  namespace po = boost::program_options;
  int max_gpus = 512;
  int gpus = 0;
  std::vector<std::string> models;
  std::string compression = "none";
  std::string sharding;
  std::vector<int> ks;
  gw::ReplayOptions options;
  po::options_description opts("usage: bench_replay [MAX_GPUS] [options]");
  opts.add_options()("help,h", "this help")(
      "max-gpus", po::value<int>(&max_gpus)->default_value(max_gpus),
      "largest cluster (8, 64, 512, ... up to it; 4096 takes minutes on 2 cores)")(
      "gpus", po::value<int>(&gpus), "only this cluster size (a multiple of 8)")(
      "model", po::value<std::vector<std::string>>(&models)->composing(),
      "resnet50, gpt2-xl, llama2-7b (default: all three)")(
      "compression", po::value<std::string>(&compression)->default_value(compression), "none or powersgd")(
      "sharding", po::value<std::string>(&sharding),
      "a workload.sharding scheme (zero1, zero2, zero3, full_shard, hsdp, ...) or mapping")(
      "k", po::value<std::vector<int>>(&ks)->composing(), "accumulation steps (default: 1 and 1024)")(
      "full-simulation", po::bool_switch(&options.full_simulation), "no memoised collectives, no symmetry classes");
  po::positional_options_description pos;
  pos.add("max-gpus", 1);
  try {
    if (!gw::parse_options(argc, argv, opts, pos)) return 0;
  } catch (const std::exception& e) {
    std::cerr << "bench_replay: " << e.what() << "\n" << opts << "\n";
    return 2;
  }
  if (max_gpus < 8 || (gpus != 0 && (gpus < 8 || gpus % 8 != 0))) {
    std::cerr << "bench_replay: GPU counts must be multiples of 8, at least 8\n";
    return 2;
  }
  if (models.empty()) models = {"resnet50", "gpt2-xl", "llama2-7b"};
  if (ks.empty()) ks = {1, 1024};
  std::vector<int> sizes;
  if (gpus != 0) {
    sizes = {gpus};
  } else {
    for (int n = 8; n <= max_gpus; n *= 8) sizes.push_back(n);
  }
  const gw::Profile profile = gw::load_profile("h100");
  std::printf("%-10s %-9s %6s %6s %8s %8s %9s %9s %13s %12s %10s\n", "model", "compress", "GPUs", "k", "buckets",
              "sim acts", "coll sim", "coll memo", "iteration(ms)", "samples/s", "wall (s)");
  gw::ReplayOptions::Stats stats;
  options.stats = &stats;
  for (const auto& name : models) {
    const gw::ModelDesc model = gw::load_model(name);
    for (int n : sizes) {
      for (int k : ks) {
        const gw::Scenario s = bench_scenario(name, n, k, compression, sharding);
        const auto t0 = std::chrono::steady_clock::now();
        const auto r = gw::simulate_iteration(s, model, profile, options);
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::printf("%-10s %-9s %6d %6d %8zu %8ld %9ld %9ld %13.3f %12.1f %10.3f\n", name.c_str(), compression.c_str(),
                    n, k, r.sharding.empty() ? r.buckets.size() : gw::shard_units(model).size(), r.simulated_activities,
                    stats.simulated, stats.replayed, r.total * 1e3, r.samples_per_second, wall);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
