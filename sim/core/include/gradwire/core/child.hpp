// Child processes that die with their parent (docs/engine.md, "One process
// per simulation"). A forked child of gradwire (the simulation child, a sweep
// worker, gnuplot) must not outlive a gradwire that was killed with SIGKILL:
// nothing would read its result and it would keep a core busy for minutes.
//
//   const pid_t parent = ::getpid();      // before fork()
//   const pid_t pid = ::fork();
//   if (pid == 0) { gw::die_with_parent(parent); ... }
//
// or, the same in one call: `const pid_t pid = gw::fork_dying_with_parent();`
//
// Linux only (prctl). The death signal is sent when the *thread* that forked
// exits, so fork from a thread that lives as long as the process (the main
// thread in gradwire). It survives execve (gnuplot keeps it) except for
// set-user-ID programs.
#pragma once

#include <signal.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace gw {

/// Exit status of a child whose parent was already gone when it started.
inline constexpr int kExitOrphan = 125;

/// Call first thing in a forked child: SIGKILL this process when `parent`
/// (getpid() of the parent, taken before fork) dies; if it already died
/// between fork and here (the child was then adopted by another process),
/// exit at once.
inline void die_with_parent(pid_t parent) noexcept {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(kExitOrphan);
}

/// fork() whose child dies with the calling process (die_with_parent); returns
/// what fork() returns.
inline pid_t fork_dying_with_parent() noexcept {
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) die_with_parent(parent);
  return pid;
}

/// Waits for child `pid` to end (waitpid, retried when a signal interrupts
/// it) and stores its status in `*status` (when not null); false (status
/// untouched) when waitpid fails otherwise (no such child).
inline bool wait_for_child(pid_t pid, int* status) noexcept {
  while (::waitpid(pid, status, 0) < 0) {
    if (errno != EINTR) return false;
  }
  return true;
}

}  // namespace gw
