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
// A child that hands its parent a result gets a socket to it with
// fork_with_channel; send_frame / take_frame carry length-prefixed messages
// on it and write_all writes whole buffers. The simulation child
// (engine::run_in_child), the sweep's workers (plan::WorkerPool) and
// report's gnuplot all fork through this header: gradwire's forks, and the
// sockets and write loops between a child and its parent, are here only.
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

#include <csignal>
#include <cerrno>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

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

/// Writes all of data[0, size) to `fd`, again after a signal interrupts it
/// (unless `*stop` is set by then). A socket is written with MSG_NOSIGNAL: a
/// closed peer is an error, not SIGPIPE. False when not everything could be
/// written. Async-signal-safe.
bool write_all(int fd, const char* data, std::size_t size, const volatile std::sig_atomic_t* stop = nullptr) noexcept;

/// A child forked by fork_with_channel, and the parent's end of the socket
/// between the two.
struct Channel {
  pid_t pid = -1;
  int fd = -1;
};

/// Flushes every stdio stream (else buffered output would be written twice),
/// makes a socket pair and forks a child that dies with the calling process
/// (fork_dying_with_parent). The child closes the parent's end and runs
/// child(fd), fd its own end, then _exit(0) if that returns: nothing of the
/// parent's (its atexit handlers, its objects' destructors) runs in it.
/// Throws std::runtime_error "WHAT: socketpair: ..." or "WHAT: fork: ...".
Channel fork_with_channel(const std::function<void(int fd)>& child, const std::string& what);

/// Sends `payload` as one frame (its length, 8 bytes in this machine's order,
/// then its bytes); false when the other end is gone.
bool send_frame(int fd, std::string_view payload) noexcept;
/// The first whole frame in `buffer`, taken off its front; nullopt (buffer
/// untouched) until all of one has arrived.
std::optional<std::string> take_frame(std::string& buffer);

}  // namespace gw
