// The sweep's worker processes (docs/planning.md, "Running a sweep"): a few
// forked children that evaluate points one after another, each point's
// record read back through the worker's socket, all workers polled from one
// loop; SIGINT/SIGTERM turned into a stop request for the life of one RAII
// guard. POSIX (fork, socketpair, poll, sigaction).
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
  struct sigaction old_int_ {
  }, old_term_{};
};

/// Writes all of `s` to stderr with write(2) (retrying after a signal unless
/// a stop was requested).
void write_all_stderr(const std::string& s);

/// Worker processes, each evaluating points one after another: a worker is
/// forked for a slot when the slot has none, is sent a point's index
/// through its socket, runs `job(index)` and sends back
/// what it returns (length-prefixed), then waits for the next index. A job
/// that throws ends its worker with exit status 4 (kWorkerOutOfMemory for a
/// std::bad_alloc), a failed write with 3; the
/// point in flight is then reported with that status and the slot's next
/// point gets a new worker. Workers die with the parent (gw::fork_dying_with_parent) and
/// restore the default SIGINT/SIGTERM handlers. Whatever a job leaves in its
/// worker's memory is there for the worker's next jobs: a job must give the
/// same line whichever jobs its worker ran before (the sweep's evaluator
/// does: docs/planning.md, "Running a sweep").
/// The exit status of a worker whose job threw std::bad_alloc.
inline constexpr int kWorkerOutOfMemory = 5;
/// What to do when a point or its worker runs out of memory.
inline constexpr const char* kWorkerMemoryHint = "free memory, run fewer workers (-j) or raise the limit (ulimit -v)";

class WorkerPool {
 public:
  using Job = std::function<std::string(std::size_t index)>;
  /// A point that ended: its index, what its worker returned (plus a newline)
  /// or, when the worker ended first, everything it wrote; the worker's wait
  /// status (0 when a whole result came back).
  struct Finished {
    std::size_t index = 0;
    std::string output;
    int status = 0;
    /// The line returned (without its newline) when a whole result came
    /// back; nullopt when the worker ended without one.
    std::optional<std::string> line() const;
    /// Why a worker without a line failed ("the worker died with signal 9
    /// (SIGKILL: ...)", "the worker ran out of memory ...").
    std::string failure() const;
  };
  /// `close_in_child`: a descriptor the workers must not keep (the results
  /// file's lock: a worker outliving a killed parent must not hold it).
  /// `one_point`: each worker evaluates one point and exits (the slot's
  /// next point gets a new worker).
  WorkerPool(Job job, int close_in_child, bool one_point = false);
  ~WorkerPool();  ///< terminate()
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  /// Hands point `index` to the worker of `slot` (0, 1, ...: one worker per
  /// slot, which evaluates the slot's points one after another), forking it
  /// when the slot has none (throws std::logic_error when the slot's worker
  /// is busy, std::runtime_error when socketpair or fork fails).
  void spawn(std::size_t index, std::size_t slot);
  /// Points in flight.
  std::size_t running() const;
  /// Whether the worker of `slot` evaluates a point now.
  bool busy(std::size_t slot) const;
  /// Waits up to `timeout_ms` for output; returns the points that ended, in
  /// the order they were read (a worker that ended is reaped and removed). A
  /// poll interrupted by a signal returns nothing; another poll failure throws.
  std::vector<Finished> collect(int timeout_ms);
  /// SIGTERM to every worker, then each reaped.
  void terminate();

 private:
  struct Worker {
    pid_t pid;
    int fd;  ///< the parent's end of the worker's socket
    std::size_t slot = 0;
    bool busy = false;      ///< a point is in flight
    bool done = false;      ///< returned its one point (one_point): takes no more
    std::size_t index = 0;  ///< that point
    std::string buf;        ///< bytes read, not yet a whole result
  };
  Worker& start_worker(std::size_t slot);
  [[noreturn]] void run_worker(int fd);
  /// Reads from worker `k`; appends a point that ended to `done`; false when
  /// the worker ended (then reaped, not yet removed).
  bool read_from(Worker& w, std::vector<Finished>& done);
  Job job_;
  int close_in_child_;
  bool one_point_;
  std::vector<Worker> workers_;
};

}  // namespace gw::plan
