// The commands that simulate, as the `gradwire` executable runs them: it
// links no SimGrid (SimGrid 3.32 as Debian builds it maps 20 ns-3 libraries:
// about 23 ms of loading and 33 MB before main, which `check`, `list` and
// the other commands do not need; docs/engine.md, "Start-up"), so these
// replace the process by gradwire-sim, the executable with every command
// (main.cpp and all cmd_*.cpp), with the same command line.
#include "commands.hpp"
#include "exec_beside.hpp"

namespace gw::cli {
namespace {

int run_in_gradwire_sim(int argc, char** argv) {
  return exec_beside("gradwire-sim", std::string("gradwire ") + argv[0], "the simulator",
                     std::vector<char*>(argv, argv + argc));
}

}  // namespace

int cmd_collective(int argc, char** argv) { return run_in_gradwire_sim(argc, argv); }
int cmd_simulate(int argc, char** argv) { return run_in_gradwire_sim(argc, argv); }
int cmd_sweep(int argc, char** argv) { return run_in_gradwire_sim(argc, argv); }
int cmd_plan(int argc, char** argv) { return run_in_gradwire_sim(argc, argv); }
int cmd_validate(int argc, char** argv) { return run_in_gradwire_sim(argc, argv); }

}  // namespace gw::cli
