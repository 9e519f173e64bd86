// Subcommands of the `gradwire` CLI. Each lives in its own file and is a thin
// shell: parse options (Boost.Program_options), load, call the library, print.
// Each returns a process exit code (gw::kExitOk, kExitInput for bad input, ...).
#pragma once

namespace gw::cli {

int cmd_collective(int argc, char** argv);
int cmd_simulate(int argc, char** argv);
int cmd_calibrate(int argc, char** argv);
int cmd_sweep(int argc, char** argv);
int cmd_merge(int argc, char** argv);
int cmd_plan(int argc, char** argv);
int cmd_report(int argc, char** argv);
int cmd_check(int argc, char** argv);
int cmd_validate(int argc, char** argv);

}  // namespace gw::cli
