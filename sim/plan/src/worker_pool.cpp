#include "gradwire/plan/worker_pool.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <new>
#include <stdexcept>

#include "gradwire/core/child.hpp"

namespace gw::plan {
namespace {

volatile sig_atomic_t g_stop = 0;
extern "C" void on_stop_signal(int) { g_stop = 1; }

}  // namespace

// --- Signals -------------------------------------------------------------------

StopSignalGuard::StopSignalGuard() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: poll returns EINTR
  g_stop = 0;
  sigaction(SIGINT, &sa, &old_int_);
  sigaction(SIGTERM, &sa, &old_term_);
}

StopSignalGuard::~StopSignalGuard() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
}

bool StopSignalGuard::stop_requested() { return g_stop != 0; }

void write_all_stderr(const std::string& s) { gw::write_all(2, s.data(), s.size(), &g_stop); }

// --- Workers ---------------------------------------------------------------------

namespace {

using Length = std::uint64_t;  ///< each index sent

/// Reads one index; false at the end of the stream (the parent closed it).
bool read_index(int fd, Length& index) {
  char* p = reinterpret_cast<char*>(&index);
  std::size_t got = 0;
  while (got < sizeof index) {
    const ssize_t r = ::read(fd, p + got, sizeof index - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) ::_exit(3);
    if (r == 0) {
      if (got == 0) return false;
      ::_exit(3);  // half an index
    }
    got += static_cast<std::size_t>(r);
  }
  return true;
}

}  // namespace

std::optional<std::string> WorkerPool::Finished::line() const {
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !output.empty() && output.back() == '\n')
    return output.substr(0, output.size() - 1);
  return std::nullopt;
}

std::string WorkerPool::Finished::failure() const {
  if (WIFSIGNALED(status))
    return "the worker died with signal " + std::to_string(WTERMSIG(status)) +
           (WTERMSIG(status) == SIGKILL ? " (SIGKILL: the kernel's out-of-memory killer, or another process)" : "");
  if (WEXITSTATUS(status) == kWorkerOutOfMemory)
    return std::string("the worker ran out of memory (std::bad_alloc): ") + kWorkerMemoryHint;
  return "the worker failed (exit " + std::to_string(WEXITSTATUS(status)) + ")";
}

WorkerPool::WorkerPool(Job job, int close_in_child, bool one_point)
    : job_(std::move(job)), close_in_child_(close_in_child), one_point_(one_point) {}

WorkerPool::~WorkerPool() { terminate(); }

void WorkerPool::run_worker(int fd) {
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  for (const auto& w : workers_) ::close(w.fd);
  if (close_in_child_ >= 0) ::close(close_in_child_);
  // The worker ends with _exit whatever happens in it: an exception must
  // never unwind into the parent's code (this process is a copy of it).
  Length index = 0;
  while (read_index(fd, index)) {
    std::string line;
    try {
      line = job_(static_cast<std::size_t>(index));
    } catch (const std::bad_alloc&) {
      ::_exit(kWorkerOutOfMemory);  // said in words by Finished::failure()
    } catch (...) {
      ::_exit(4);  // not even an error record could be made: the parent records the failure
    }
    if (!gw::send_frame(fd, line)) ::_exit(3);
    if (one_point_) break;
  }
  ::_exit(0);
}

WorkerPool::Worker& WorkerPool::start_worker(std::size_t slot) {
  // A worker dies with the sweep (gw::fork_with_channel).
  const Channel c = gw::fork_with_channel([this](int fd) { run_worker(fd); }, "sweep worker");
  return workers_.emplace_back(Worker{c.pid, c.fd, slot, false, false, 0, {}});
}

void WorkerPool::spawn(std::size_t index, std::size_t slot) {
  const Length n = index;
  const char* bytes = reinterpret_cast<const char*>(&n);
  auto it = std::find_if(workers_.begin(), workers_.end(), [&](const Worker& w) { return w.slot == slot && !w.done; });
  if (it != workers_.end() && it->busy) throw std::logic_error("WorkerPool::spawn: the slot's worker is busy");
  // The slot's worker, else a new one (one that ended meanwhile is reaped by
  // collect(); the point goes to a new worker).
  Worker* w = it != workers_.end() && gw::write_all(it->fd, bytes, sizeof n) ? &*it : nullptr;
  if (w == nullptr) {
    if (it != workers_.end()) it->slot = static_cast<std::size_t>(-1);  // ended: no longer the slot's
    w = &start_worker(slot);
    // A new worker killed before it took its point (the OOM killer, a
    // user's kill -9, whenever it lands): the point is still its own, and
    // collect() reaps it and records the failure as for a worker that died
    // during its point (resume runs it again). SIGKILL makes sure that a
    // worker the write failed for for another reason ends too.
    if (!gw::write_all(w->fd, bytes, sizeof n)) ::kill(w->pid, SIGKILL);
  }
  w->busy = true;
  w->index = index;
}

std::size_t WorkerPool::running() const {
  std::size_t n = 0;
  for (const auto& w : workers_) n += w.busy ? 1 : 0;
  return n;
}

bool WorkerPool::busy(std::size_t slot) const {
  for (const auto& w : workers_)
    if (w.slot == slot && w.busy) return true;
  return false;
}

bool WorkerPool::read_from(Worker& w, std::vector<Finished>& done) {
  char buf[65536];
  const ssize_t n = ::read(w.fd, buf, sizeof buf);
  if (n < 0 && errno == EINTR) return true;
  if (n > 0) {
    w.buf.append(buf, static_cast<std::size_t>(n));
    while (w.busy) {
      std::optional<std::string> line = gw::take_frame(w.buf);
      if (!line) break;
      done.push_back({w.index, std::move(*line) + "\n", 0});
      w.busy = false;
      w.done = one_point_;
    }
    return true;
  }
  ::close(w.fd);
  int status = 0;
  wait_for_child(w.pid, &status);
  if (w.busy) done.push_back({w.index, std::move(w.buf), status});
  return false;
}

std::vector<WorkerPool::Finished> WorkerPool::collect(int timeout_ms) {
  std::vector<pollfd> pfds;
  for (const auto& w : workers_) pfds.push_back({w.fd, POLLIN, 0});
  std::vector<Finished> done;
  const int rc = ::poll(pfds.data(), pfds.size(), timeout_ms);
  if (rc < 0) {
    if (errno == EINTR) return done;
    throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
  }
  for (std::size_t k = pfds.size(); k-- > 0;) {
    if (pfds[k].revents != 0 && !read_from(workers_[k], done))
      workers_.erase(workers_.begin() + static_cast<std::ptrdiff_t>(k));
  }
  return done;
}

void WorkerPool::terminate() {
  for (const auto& w : workers_) ::kill(w.pid, SIGTERM);
  for (const auto& w : workers_) {
    ::close(w.fd);
    wait_for_child(w.pid, nullptr);
  }
  workers_.clear();
}

}  // namespace gw::plan
