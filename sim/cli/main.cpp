// gradwire: one subcommand per stage of the pipeline (calibrate -> profile ->
// simulate -> sweep/plan -> report). This table is the main of two
// executables (sim/cli/CMakeLists.txt): gradwire-sim, with every command, and
// gradwire, without SimGrid, whose simulating commands exec gradwire-sim.
#include <signal.h>

#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "commands.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/core/suggest.hpp"

namespace {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(int, char**);
};

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"calibrate", "measure kernels, NCCL collectives and compute on this machine's GPUs into a profile",
       gw::cli::cmd_calibrate},
      {"check", "validate scenario files (exit 2 with file, line and field on the first error)", gw::cli::cmd_check},
      {"collective", "simulate one collective over a size sweep (nccl-tests style table)", gw::cli::cmd_collective},
      {"simulate", "predict one training iteration of a scenario, with a breakdown and a trace", gw::cli::cmd_simulate},
      {"sweep", "run a cartesian sweep of scenarios in parallel, resumably", gw::cli::cmd_sweep},
      {"merge", "merge the results files of sweep shards", gw::cli::cmd_merge},
      {"plan", "recommend a configuration under a budget and/or a deadline", gw::cli::cmd_plan},
      {"report", "render plots and an HTML report from sweep results", gw::cli::cmd_report},
      {"validate", "compare predictions with published measurements (validation/)", gw::cli::cmd_validate},
      {"model", "export a PyTorch model to a gradwire model file (needs ./setup.sh --with-torch)", gw::cli::cmd_model},
      {"list", "list the bundled models, profiles, instances and compressors", gw::cli::cmd_list},
  };
  return table;
}

/// "; did you mean \"simulate\"?" for a mistyped command name, or "".
std::string command_suggestion(const char* name) {
  std::vector<std::string> names;
  for (const auto& c : commands()) names.push_back(c.name);
  return gw::did_you_mean(name, names);
}

void usage(std::ostream& os) {
  os << "usage: gradwire <command> [options]\n\ncommands:\n";
  for (const auto& c : commands()) {
    std::string name = c.name;
    name.resize(12, ' ');
    os << "  " << name << c.summary << "\n";
  }
  os << "\n`gradwire help <command>` (or `gradwire <command> --help`) describes a command's options.\n";
}

// gradwire help [COMMAND]: the overview, or COMMAND's --help.
int help(int argc, char** argv) {
  if (argc < 3) {
    usage(std::cout);
    return gw::kExitOk;
  }
  for (const auto& c : commands()) {
    if (std::strcmp(argv[2], c.name) == 0) {
      char flag[] = "--help";
      char* args[] = {argv[2], flag, nullptr};
      return c.run(2, args);
    }
  }
  std::cerr << "gradwire help: unknown command \"" << argv[2] << "\"" << command_suggestion(argv[2]) << "\n\n";
  usage(std::cerr);
  return gw::kExitInput;
}

}  // namespace

int main(int argc, char** argv) {
  // Past the file size limit (ulimit -f) a write fails with EFBIG, reported
  // in words with the partial file removed, instead of SIGXFSZ killing the
  // process with a core dump. Children forked or exec'd keep it ignored.
  ::signal(SIGXFSZ, SIG_IGN);
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    usage(argc < 2 ? std::cerr : std::cout);
    return argc < 2 ? gw::kExitInput : gw::kExitOk;
  }
  if (std::strcmp(argv[1], "help") == 0) return help(argc, argv);
  if (std::strcmp(argv[1], "--version") == 0) {
    std::cout << "gradwire " << GW_VERSION << "\n";
    return gw::kExitOk;
  }
  for (const auto& c : commands()) {
    if (std::strcmp(argv[1], c.name) == 0) {
      try {
        return c.run(argc - 1, argv + 1);
      } catch (const gw::InputError& e) {
        std::cerr << "gradwire " << c.name << ": " << e.what() << "\n";
        return gw::kExitInput;
      } catch (const std::bad_alloc& e) {
        // Say it in words: "error: std::bad_alloc" does not tell a user what to do.
        std::cerr << "gradwire " << c.name << ": " << gw::out_of_memory_words(e) << ": " << gw::kOutOfMemoryHint
                  << "\n";
        return gw::kExitFailure;
      } catch (const std::exception& e) {
        std::cerr << "gradwire " << c.name << ": error: " << e.what() << "\n";
        return gw::kExitFailure;
      }
    }
  }
  std::cerr << "gradwire: unknown command \"" << argv[1] << "\"" << command_suggestion(argv[1]) << "\n\n";
  usage(std::cerr);
  return gw::kExitInput;
}
