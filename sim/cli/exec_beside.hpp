// Handing a command over to another gradwire executable: the one in this
// executable's directory (the build's bin/, or PREFIX/bin), run in this
// process's place (execv: the pid, signals, resource limits and an MPI
// launcher's ranks carry over). `gradwire calibrate` -> gradwire-calibrate;
// in `gradwire`, the commands that simulate -> gradwire-sim.
#pragma once

#include <string>
#include <vector>

namespace gw::cli {

/// Replaces this process by `program` (execv, no shell) with argv[0] its
/// path and then `args`, after flushing std::cout and std::cerr. Returns only
/// when the exec fails: why (strerror of its errno); each caller reports it.
std::string exec_program(const std::string& program, const std::vector<char*>& args);

/// Replaces this process by `exe_name` from this executable's directory,
/// with argv[0] its path and then `args`. Returns only when it cannot: after
/// one line on stderr ("WHO: WHAT is EXE_NAME and there is none beside this
/// gradwire (PATH): ...") it returns exit code 2; when the exec itself fails,
/// 1 after saying why.
int exec_beside(const std::string& exe_name, const std::string& who, const std::string& what,
                const std::vector<char*>& args);

}  // namespace gw::cli
