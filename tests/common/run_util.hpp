// Running a real executable (gradwire, gradwire-calibrate) from the tests,
// the one helper every test area uses: run() forks and execs with separate
// stdout and stderr, a wall-clock limit, optional resource limits and a way
// to signal a run in flight; run_command() runs a shell command line and
// captures its stdout (append " 2>&1" for stderr too).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace gw::test {

struct RunResult {
  int exit_code = -1;  ///< exit status, or -1 when killed by a signal
  int signal = 0;      ///< the signal that killed it, 0 if none
  bool timed_out = false;
  std::string out, err;
  double seconds = 0;
  std::string all() const { return out + err; }
};

struct RunOptions {
  double timeout_s = 300;
  /// RLIMIT_AS for the child in bytes (0: none). Not used under ASan, whose
  /// shadow memory needs a huge address space.
  unsigned long long address_space = 0;
  std::vector<std::string> env;  ///< extra NAME=VALUE entries
  std::string cwd;               ///< the child's working directory (empty: the test's)
  /// Called (in the parent) every ~20 ms with the child's pid while it runs;
  /// return true once it has done its job (e.g. sent a signal).
  std::function<bool(pid_t)> while_running;
};

/// RunOptions with only a wall-clock limit.
inline RunOptions within(double seconds) {
  RunOptions o;
  o.timeout_s = seconds;
  return o;
}

/// Writes `text` to `p` as it is (binary), replacing it.
inline void write_text(const std::filesystem::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
}

inline std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline RunResult run(const std::vector<std::string>& args, const RunOptions& o = {}) {
  RunResult r;
  int out_pipe[2], err_pipe[2];
  if (::pipe(out_pipe) != 0 || ::pipe(err_pipe) != 0) return r;
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
    ::setpgid(0, 0);
    if (o.address_space > 0) {
      struct rlimit rl {
        o.address_space, o.address_space
      };
      ::setrlimit(RLIMIT_AS, &rl);
    }
    for (const auto& e : o.env) ::putenv(const_cast<char*>(e.c_str()));
    if (!o.cwd.empty() && ::chdir(o.cwd.c_str()) != 0) ::_exit(126);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  bool out_open = true, err_open = true, hook_done = !o.while_running;
  while (out_open || err_open) {
    pollfd fds[2] = {{out_pipe[0], static_cast<short>(out_open ? POLLIN : 0), 0},
                     {err_pipe[0], static_cast<short>(err_open ? POLLIN : 0), 0}};
    ::poll(fds, 2, 20);
    char buf[65536];
    for (int k = 0; k < 2; ++k) {
      if (fds[k].revents == 0) continue;
      const ssize_t n = ::read(fds[k].fd, buf, sizeof buf);
      if (n > 0) {
        (k == 0 ? r.out : r.err).append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        (k == 0 ? out_open : err_open) = false;
      }
    }
    if (!hook_done) hook_done = o.while_running(pid);
    const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (el > o.timeout_s && !r.timed_out) {
      r.timed_out = true;
      ::kill(-pid, SIGKILL);
    }
  }
  ::close(out_pipe[0]);
  ::close(err_pipe[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

/// The words of `text` split at spaces, for tests that spell a command's
/// arguments on one line (no quoting: an argument never holds a space).
inline std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t j = text.find(' ', i);
    const std::size_t end = j == std::string::npos ? text.size() : j;
    if (end > i) out.push_back(text.substr(i, end - i));
    i = end + 1;
  }
  return out;
}

/// `program` followed by words(args).
inline std::vector<std::string> argv_of(const std::string& program, const std::string& args) {
  std::vector<std::string> argv{program};
  for (auto& w : words(args)) argv.push_back(std::move(w));
  return argv;
}

struct CommandResult {
  int exit_code = -1;  ///< exit status, or -1 when it did not exit normally
  std::string out;     ///< what the command wrote on stdout
};

/// Runs `command` with /bin/sh and captures its stdout: only for what is
/// itself a shell command line (a --help example, `command -v`); run a
/// program with its arguments through run() above.
inline CommandResult run_command(const std::string& command) {
  CommandResult r;
  FILE* f = ::popen(command.c_str(), "r");
  if (f == nullptr) return r;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) r.out.append(buf.data(), n);
  const int status = ::pclose(f);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

/// Environment for a child process that runs MPI, in the sanitizer build: the
/// same ASAN_OPTIONS with leak detection off. Open MPI does not free what
/// MPI_Init allocates (in libmpi and in components it dlopens, which
/// LeakSanitizer cannot even name once they are unloaded), so every MPI
/// process would "leak"; gradwire's own code in those processes is covered
/// by the non-MPI runs of the same paths. Empty outside the sanitizer build.
inline std::vector<std::string> mpi_child_env() {
  const char* asan = std::getenv("ASAN_OPTIONS");
  if (asan == nullptr) return {};
  return {std::string("ASAN_OPTIONS=") + asan + ":detect_leaks=0"};
}

/// True when the text shows a crash rather than a clean refusal.
inline bool looks_like_crash(const std::string& text) {
  for (const char* bad :
       {"terminate called", "terminate", "Aborted", "Segmentation fault", "core dumped", "AddressSanitizer",
        "UndefinedBehaviorSanitizer", "runtime error:", "stack trace", "Stack trace", "#0 0x", "#1 0x"}) {
    if (text.find(bad) != std::string::npos) return true;
  }
  return false;
}

/// A fresh, empty directory `root`/`name` for one test (removed first if it exists).
inline std::filesystem::path fresh_dir(const std::filesystem::path& root, const std::string& name) {
  const auto dir = root / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

/// The folders temp_scratch made in this process, removed when it exits
/// normally (ctest runs each test in a process of its own, so every test
/// that did not remove its own would leave one behind). GW_KEEP_SCRATCH=1
/// keeps them, to look at a failure's files.
class ScratchRoots {
 public:
  static void add(const std::filesystem::path& root) { instance().roots_.push_back(root); }
  ScratchRoots(const ScratchRoots&) = delete;
  ScratchRoots& operator=(const ScratchRoots&) = delete;

 private:
  ScratchRoots() = default;
  ~ScratchRoots() {
    if (std::getenv("GW_KEEP_SCRATCH") != nullptr) return;
    std::error_code ec;
    for (const auto& r : roots_) std::filesystem::remove_all(r, ec);
  }
  static ScratchRoots& instance() {
    static ScratchRoots roots;
    return roots;
  }
  std::vector<std::filesystem::path> roots_;
};

/// fresh_dir in this process's own folder of the temporary directory,
/// TMP/`prefix`-PID (its parent_path(), removed when the process exits:
/// ScratchRoots).
inline std::filesystem::path temp_scratch(const std::string& prefix, const std::string& name) {
  const auto root = std::filesystem::temp_directory_path() / (prefix + "-" + std::to_string(::getpid()));
  if (!std::filesystem::exists(root)) ScratchRoots::add(root);
  return fresh_dir(root, name);
}

#ifdef GW_HARDENING_SCRATCH
/// A fresh, empty directory for one test (removed first if it exists).
inline std::filesystem::path scratch_dir(const std::string& name) { return fresh_dir(GW_HARDENING_SCRATCH, name); }
#endif

}  // namespace gw::test
