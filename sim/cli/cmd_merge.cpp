// gradwire merge OUT SHARD...: merge the results files of sweep shards into
// one file, sorted by point index (identical to a single run's file).
#include <iostream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "gradwire/error.hpp"
#include "gradwire/plan/sweep.hpp"

namespace gw::cli {

int cmd_merge(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::cout << "gradwire merge OUT SHARD... : merge sweep shard results into OUT (sorted by index)\n";
    return kExitOk;
  }
  if (args.size() < 2) {
    std::cerr << "gradwire merge: usage: gradwire merge OUT SHARD...\n";
    return kExitInput;
  }
  const std::vector<std::string> shards(args.begin() + 1, args.end());
  const auto [n, of] = plan::merge_results(args[0], shards);
  std::cerr << "gradwire merge: " << n << " of " << of << " points -> " << args[0] << "\n";
  if (n < of) std::cerr << "gradwire merge: warning: " << (of - n) << " points are missing (a shard not run or not finished)\n";
  return kExitOk;
}

}  // namespace gw::cli
