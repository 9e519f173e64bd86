// run_in_child: fork, run the body in the child, send its result (or its
// exception) back through a socket. SimGrid allows one engine per process.
//
// What the child sends (on the socket of gw::fork_with_channel, read to its
// end): one tag byte, then its fields in gw::wire's encoding.
//   'R' result            'I' file line column key reason (gw::InputError)
//   'E' message (any other exception)
//   'M' (no fields)       the child ran out of memory (std::bad_alloc)
// The body's result is the caller's own encoding (the replay's: a typed
// message, replay/src/child_results.hpp).
//
// The child dies with its parent (gw::die_with_parent): a gradwire killed
// with SIGKILL leaves no simulation running. While it waits, the parent
// prints a progress line to stderr once the run takes long, when the command
// asked for it (enable_progress; docs/engine.md, "Process isolation").
#include <cxxabi.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <typeinfo>

#include "gradwire/core/child.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/core/wire.hpp"
#include "gradwire/engine/engine.hpp"

namespace gw::engine {

const char* ChildOutOfMemory::what() const noexcept { return "out of memory in the simulation child (std::bad_alloc)"; }

namespace {

std::string g_progress_label;  // empty: no progress lines

/// The child's end of the result socket, for its terminate handler.
int g_child_fd = -1;

/// The end of the child: no atexit handlers, no destructors of the parent's
/// objects.
[[noreturn]] void child_exit(int fd) {
  ::close(fd);
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(0);
}

bool handling_bad_alloc() {
  const std::type_info* t = abi::__cxa_current_exception_type();
  return t != nullptr && (*t == typeid(std::bad_alloc) || *t == typeid(std::bad_array_new_length));
}

/// A std::bad_alloc that escapes the body's own frames (thrown inside a
/// SimGrid actor, a noexcept function or a destructor) ends in
/// std::terminate: report it as out of memory rather than as SIGABRT.
[[noreturn]] void child_terminate() {
  if (handling_bad_alloc()) {
    write_all(g_child_fd, "M", 1);
    ::_exit(0);
  }
  std::abort();
}

/// SimGrid installs its own terminate handler when its engine starts (it logs
/// "Uncaught exception std::bad_alloc" and calls abort() from inside its catch
/// block, so the exception is still the current one here). The signal is
/// synchronous, raised by this thread.
void child_abort(int) {
  if (handling_bad_alloc()) {
    write_all(g_child_fd, "M", 1);
    ::_exit(0);
  }
  // SA_RESETHAND: returning lets abort() end the process as before.
}

[[noreturn]] void child_main(int fd, const std::function<std::string()>& body) {
  g_child_fd = fd;
  std::set_terminate(child_terminate);
  struct sigaction sa {};
  sa.sa_handler = child_abort;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;
  ::sigaction(SIGABRT, &sa, nullptr);
  wire::Writer out;
  try {
    std::string result = body();
    out.put('R');
    out.put(result);
  } catch (const InputError& e) {
    out.put('I');
    out.put(e.file());
    out.put(e.line());
    out.put(e.column());
    out.put(e.key());
    out.put(e.reason());
  } catch (const std::bad_alloc&) {
    out.take();             // frees what was written
    write_all(fd, "M", 1);  // nothing to allocate
    child_exit(fd);
  } catch (const std::exception& e) {
    out.take();
    out.put('E');
    out.put(e.what());
  } catch (...) {
    out.take();
    out.put('E');
    out.put("unknown exception in simulation child");
  }
  const std::string message = out.take();
  write_all(fd, message.data(), message.size());
  child_exit(fd);
}

/// First progress line after this many seconds (GRADWIRE_PROGRESS_AFTER),
/// negative: none.
double progress_after() {
  const char* v = std::getenv("GRADWIRE_PROGRESS_AFTER");
  if (v == nullptr || *v == '\0') return 2.0;
  if (std::strcmp(v, "off") == 0 || std::strcmp(v, "never") == 0) return -1;
  char* end = nullptr;
  const double s = std::strtod(v, &end);
  if (end == v || *end != '\0' || !std::isfinite(s) || s < 0) return 2.0;
  return s;
}

constexpr double kProgressEvery = 5.0;  // seconds between progress lines

void print_progress(double elapsed) {
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.0f", std::floor(elapsed));
  const std::string line = g_progress_label + ", " + secs + " s elapsed\n";
  write_all(2, line.data(), line.size());  // one write: whole lines in a shared log
}

/// Reads the child's whole result, printing progress lines meanwhile.
std::string read_result(int fd) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  const double first = g_progress_label.empty() ? -1 : progress_after();
  double next = first;  // seconds since t0 of the next progress line
  if (next == 0) {      // GRADWIRE_PROGRESS_AFTER=0: the first line at once
    print_progress(0);
    next = kProgressEvery;
  }
  std::string in;
  char buf[65536];
  for (;;) {
    int timeout_ms = -1;
    if (next >= 0) {
      const double left = next - std::chrono::duration<double>(clock::now() - t0).count();
      timeout_ms = left <= 0 ? 0 : static_cast<int>(std::ceil(left * 1000));
    }
    pollfd p{fd, POLLIN, 0};
    const int n = ::poll(&p, 1, timeout_ms);
    if (n < 0 && errno != EINTR) break;
    if (n == 0) {
      const double elapsed = std::chrono::duration<double>(clock::now() - t0).count();
      if (next >= 0 && elapsed >= next) {
        print_progress(elapsed);
        while (next <= elapsed) next += kProgressEvery;
      }
      continue;
    }
    if (n < 0) continue;  // EINTR
    const ssize_t r = ::read(fd, buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    in.append(buf, static_cast<std::size_t>(r));
  }
  return in;
}

}  // namespace

void enable_progress(std::string label) { g_progress_label = std::move(label); }

namespace {

/// What the child sent: its result, or its exception thrown again here.
std::string take_result(const std::string& in) {
  wire::Reader r(in, "simulation child's result");
  std::string out;
  switch (r.get<char>()) {
    case 'R':
      out = r.get<std::string>();
      break;
    case 'I': {
      auto file = r.get<std::string>();
      const int line = r.get<int>();
      const int column = r.get<int>();
      auto key = r.get<std::string>();
      auto reason = r.get<std::string>();
      r.finish();
      throw InputError(std::move(file), line, column, std::move(key), std::move(reason));
    }
    case 'E': {
      auto message = r.get<std::string>();
      r.finish();
      throw std::runtime_error(message);
    }
    case 'M':
      throw ChildOutOfMemory();
    default:
      r.fail("unknown tag");
  }
  r.finish();
  return out;
}

/// Why a child ended without a result.
std::string no_result(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "simulation child killed by signal " + std::to_string(sig) +
           (sig == SIGKILL ? " (SIGKILL: the kernel's out-of-memory killer, or another process)" : "");
  }
  return "simulation child exited with status " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
         " without a result";
}

}  // namespace

std::string run_in_child(const std::function<std::string()>& body) {
  // The child dies with its parent: a SIGKILLed gradwire leaves no simulation running.
  const Channel child = fork_with_channel([&body](int fd) { child_main(fd, body); }, "run_in_child");
  const std::string in = read_result(child.fd);
  ::close(child.fd);
  int status = 0;
  wait_for_child(child.pid, &status);
  if (in.empty()) throw std::runtime_error(no_result(status));
  return take_result(in);
}

}  // namespace gw::engine
