// Subcommands of the `gradwire` CLI. Each lives in its own file and is a thin
// shell: parse options (gw::parse_options), load, call the library, print.
// Each returns a process exit code (gw::kExitOk, kExitInput for bad input, ...).
#pragma once

#include <string>

#include "gradwire/plan/sweep_spec.hpp"

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
int cmd_list(int argc, char** argv);
int cmd_model(int argc, char** argv);

// Shared by the commands that run or validate a sweep.

/// A validation progress callback: quiet for short validations, then a line
/// every 2 s on stderr ("WHO: FILE: validated N of M points"). cmd_check.cpp.
plan::ValidationProgress validation_progress(const std::string& who, const std::string& file);

/// `gradwire sweep` with its options as given (empty `out`: the default
/// results file; `jobs` 0: one per CPU; empty `shard`: all points; empty
/// `evaluator`: the sweep file's); prints the summary on stderr unless
/// `quiet` and returns the exit code. Throws std::invalid_argument for a bad
/// option value and InputError for bad input. cmd_sweep.cpp.
int run_sweep_command(const std::string& sweep_file, const std::string& out, int jobs, const std::string& shard,
                      const std::string& progress, const std::string& evaluator, bool quiet);

}  // namespace gw::cli
