// gradwire check: validate scenario files without simulating them.
#include <boost/program_options.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "gradwire/error.hpp"
#include "gradwire/scenario.hpp"

namespace po = boost::program_options;

namespace gw::cli {

int cmd_check(int argc, char** argv) {
  po::options_description opts("gradwire check SCENARIO... : validate scenario files");
  opts.add_options()("help,h", "show this help")("scenario", po::value<std::vector<std::string>>(), "scenario files");
  po::positional_options_description pos;
  pos.add("scenario", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(opts).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "gradwire check: " << e.what() << "\n" << opts;
    return kExitInput;
  }
  if (vm.count("help")) {
    std::cout << opts;
    return kExitOk;
  }
  if (!vm.count("scenario")) {
    std::cerr << "gradwire check: give at least one scenario file\n" << opts;
    return kExitInput;
  }
  int rc = kExitOk;
  for (const auto& path : vm["scenario"].as<std::vector<std::string>>()) {
    try {
      Scenario s = load_scenario(path);
      std::cout << path << ": ok (" << s.cluster.world_size() << " GPUs)\n";
    } catch (const InputError& e) {
      std::cerr << e.what() << "\n";
      rc = kExitInput;
    }
  }
  return rc;
}

}  // namespace gw::cli
