// Wall time of simulate_iteration (fork, platform, replay, JSON) against the
// number of GPUs, the model size and the accumulation steps k. Prints a table;
// the goal is that wall time does not grow with k and stays interactive
// (seconds) at thousands of GPUs with aggregated collectives.
//   bench_replay [max_gpus]   (default 512; 4096 takes minutes on 2 cores)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

#include "gradwire/model/model_desc.hpp"
#include "gradwire/core/options.hpp"
#include "gradwire/model/profile.hpp"
#include "gradwire/replay/replay.hpp"

int main(int argc, char** argv) {
  namespace po = boost::program_options;
  int max_gpus = 512;
  po::options_description opts("usage: bench_replay [MAX_GPUS]");
  opts.add_options()("help,h", "this help")(
      "max-gpus", po::value<int>(&max_gpus)->default_value(max_gpus),
      "largest cluster (8, 64, 512, ... up to it; 4096 takes minutes on 2 cores)");
  po::positional_options_description pos;
  pos.add("max-gpus", 1);
  try {
    if (!gw::parse_options(argc, argv, opts, pos)) return 0;
  } catch (const std::exception& e) {
    std::cerr << "bench_replay: " << e.what() << "\n" << opts << "\n";
    return 2;
  }
  if (max_gpus < 8) {
    std::cerr << "bench_replay: MAX_GPUS must be at least 8\n";
    return 2;
  }
  const gw::Profile profile = gw::load_profile("h100");
  std::printf("%-10s %6s %6s %10s %8s %12s %12s %10s\n", "model", "GPUs", "k", "buckets", "sim acts",
              "iteration(ms)", "samples/s", "wall (s)");
  for (const char* name : {"resnet50", "gpt2-xl", "llama2-7b"}) {
    const gw::ModelDesc model = gw::load_model(name);
    for (int gpus = 8; gpus <= max_gpus; gpus *= 8) {
      for (int k : {1, 1024}) {
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
        s.workload = w;
        const auto t0 = std::chrono::steady_clock::now();
        const auto r = gw::simulate_iteration(s, model, profile);
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::printf("%-10s %6d %6d %10zu %8ld %12.3f %12.1f %10.3f\n", name, gpus, k, r.buckets.size(),
                    r.simulated_activities, r.total * 1e3, r.samples_per_second, wall);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
