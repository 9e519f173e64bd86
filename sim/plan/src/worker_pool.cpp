#include "gradwire/plan/worker_pool.hpp"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
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

void write_all_stderr(const std::string& s) {
  const char* p = s.data();
  std::size_t left = s.size();
  while (left > 0) {
    ssize_t w = ::write(2, p, left);
    if (w < 0) {
      if (errno == EINTR && !g_stop) continue;
      return;
    }
    p += w;
    left -= static_cast<std::size_t>(w);
  }
}

// --- Workers ---------------------------------------------------------------------

std::optional<std::string> WorkerPool::Finished::line() const {
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !output.empty() && output.back() == '\n')
    return output.substr(0, output.size() - 1);
  return std::nullopt;
}

std::string WorkerPool::Finished::failure() const {
  return WIFSIGNALED(status) ? "the worker died with signal " + std::to_string(WTERMSIG(status))
                             : "the worker failed (exit " + std::to_string(WEXITSTATUS(status)) + ")";
}

WorkerPool::WorkerPool(Job job, int close_in_child) : job_(std::move(job)), close_in_child_(close_in_child) {}

WorkerPool::~WorkerPool() { terminate(); }

void WorkerPool::run_child(std::size_t index, int write_fd) {
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  for (const auto& w : workers_) ::close(w.fd);
  if (close_in_child_ >= 0) ::close(close_in_child_);
  // The worker ends with _exit whatever happens in it: an exception must
  // never unwind into the parent's code (this process is a copy of it).
  std::string line;
  try {
    line = job_(index);
  } catch (...) {
    ::_exit(4);  // not even an error record could be made: the parent records the failure
  }
  line += "\n";
  const char* p = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    ssize_t w = ::write(write_fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) ::_exit(3);
    p += w;
    left -= static_cast<std::size_t>(w);
  }
  ::_exit(0);
}

void WorkerPool::spawn(std::size_t index) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  const pid_t pid = gw::fork_dying_with_parent();  // a worker dies with the sweep
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(fds[0]);
    run_child(index, fds[1]);
  }
  ::close(fds[1]);
  workers_.push_back({pid, fds[0], index, {}});
}

bool WorkerPool::read_from(std::size_t k, Finished& out) {
  Worker& w = workers_[k];
  char buf[65536];
  const ssize_t n = ::read(w.fd, buf, sizeof buf);
  if (n < 0 && errno == EINTR) return false;
  if (n > 0) {
    w.buf.append(buf, static_cast<std::size_t>(n));
    return false;
  }
  ::close(w.fd);
  int status = 0;
  wait_for_child(w.pid, &status);
  out = {w.index, std::move(w.buf), status};
  workers_.erase(workers_.begin() + static_cast<std::ptrdiff_t>(k));
  return true;
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
    Finished f;
    if (pfds[k].revents != 0 && read_from(k, f)) done.push_back(std::move(f));
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
