// The sweep's worker processes (docs/planning.md, "Running a sweep"): one
// forked child per point, its record read back through a pipe, all children
// polled from one loop; SIGINT/SIGTERM turned into a stop request for the
// life of one RAII guard. POSIX (fork, pipe, poll, sigaction).
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gw::plan {

/// While it lives, SIGINT and SIGTERM only request a stop (stop_requested();
/// installed without SA_RESTART, so a blocking poll returns EINTR); the
/// handlers in place before are restored by the destructor.
class StopSignalGuard {
 public:
  StopSignalGuard();
  ~StopSignalGuard();
  StopSignalGuard(const StopSignalGuard&) = delete;
  StopSignalGuard& operator=(const StopSignalGuard&) = delete;
  /// True once SIGINT or SIGTERM arrived under the current guard.
  static bool stop_requested();

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

/// Writes all of `s` to stderr with write(2) (retrying after a signal unless
/// a stop was requested).
void write_all_stderr(const std::string& s);

/// Worker processes, each evaluating one point. A worker runs `job(index)`
/// and writes what it returns, plus a newline, to its pipe; a job that throws
/// ends the worker with exit status 4, a failed write with 3. Workers die
/// with the parent (gw::fork_dying_with_parent) and restore the default
/// SIGINT/SIGTERM handlers.
class WorkerPool {
 public:
  using Job = std::function<std::string(std::size_t index)>;
  /// A worker that ended: its point, everything it wrote, its wait status.
  struct Finished {
    std::size_t index = 0;
    std::string output;
    int status = 0;
    /// The line written (without its newline) when the worker exited 0 after
    /// a whole line; nullopt otherwise.
    std::optional<std::string> line() const;
    /// Why a worker without a line failed ("the worker died with signal 9").
    std::string failure() const;
  };

  /// `close_in_child`: a descriptor the workers must not keep (the results
  /// file's lock: a worker outliving a killed parent must not hold it).
  WorkerPool(Job job, int close_in_child);
  ~WorkerPool();   ///< terminate()
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  /// Forks a worker for point `index` (throws std::runtime_error when pipe or fork fails).
  void spawn(std::size_t index);
  std::size_t running() const { return workers_.size(); }
  /// Waits up to `timeout_ms` for output; returns the workers that ended, in
  /// the order they were reaped (reaped and removed from the pool). A poll
  /// interrupted by a signal returns nothing; another poll failure throws.
  std::vector<Finished> collect(int timeout_ms);
  /// SIGTERM to every running worker, then each reaped.
  void terminate();

 private:
  struct Worker {
    pid_t pid;
    int fd;
    std::size_t index;
    std::string buf;
  };
  [[noreturn]] void run_child(std::size_t index, int write_fd);
  /// Reads from worker `k`; true when it ended (then reaped into `out`).
  bool read_from(std::size_t k, Finished& out);
  Job job_;
  int close_in_child_;
  std::vector<Worker> workers_;
};

}  // namespace gw::plan
