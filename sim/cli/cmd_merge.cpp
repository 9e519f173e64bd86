// gradwire merge OUT SHARD...: merge the results files of sweep shards into
// one file, sorted by point index (identical to a single run's file).
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/core/options.hpp"
#include "gradwire/plan/results_file.hpp"
#include "gradwire/plan/sweep.hpp"

namespace po = boost::program_options;

namespace gw::cli {

int cmd_merge(int argc, char** argv) {
  po::options_description opts("options");
  opts.add_options()("help,h", "show this help");
  po::options_description hidden;
  hidden.add_options()("files", po::value<std::vector<std::string>>());
  po::positional_options_description pos;
  pos.add("files", -1);
  const CommandLine parsed = parse_command(
      argc, argv, bad_option_usage("gradwire merge", "usage: gradwire merge OUT SHARD...\n"), opts, hidden, pos,
      "gradwire merge OUT SHARD... : merge sweep shard results into OUT (sorted by index)\n\n",
      "\nExample: gradwire sweep scenarios/study-compression.yaml --shard 0/2 -o /tmp/shard0.jsonl && "
      "gradwire sweep scenarios/study-compression.yaml --shard 1/2 -o /tmp/shard1.jsonl\n"
      "Example: gradwire merge /tmp/all.jsonl /tmp/shard0.jsonl /tmp/shard1.jsonl\n");
  if (parsed.exit) return *parsed.exit;
  const po::variables_map& vm = parsed.vm;
  const auto args = vm.count("files") ? vm["files"].as<std::vector<std::string>>() : std::vector<std::string>{};
  if (args.size() < 2) {
    std::cerr << "gradwire merge: usage: gradwire merge OUT SHARD...\n";
    return kExitInput;
  }
  const std::vector<std::string> shards(args.begin() + 1, args.end());
  const auto [n, of, duplicates] = plan::merge_results(args[0], shards);
  std::cerr << "gradwire merge: " << n << " of " << of << " points -> " << args[0] << "\n";
  if (duplicates > 0)
    std::cerr << "gradwire merge: note: " << duplicates << (duplicates == 1 ? " record repeats" : " records repeat")
              << " an earlier record of its point (the same figures): each point is written once\n";
  if (n < of)
    std::cerr << "gradwire merge: warning: " << (of - n) << " points are missing (a shard not run or not finished)\n";
  return kExitOk;
}

}  // namespace gw::cli
