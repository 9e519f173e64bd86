#include "gradwire/core/signal_cleanup.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <stdexcept>

namespace gw {
namespace {

constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

// The directory to remove, copied once before the handlers are installed.
char g_dir[4096];
volatile sig_atomic_t g_armed = 0;

/// Unlinks the regular files of the open directory `fd` (getdents64: no
/// allocation, unlike readdir).
void unlink_regular_files(int fd) {
  alignas(8) char buf[8192];
  for (;;) {
    const long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
    if (n <= 0) return;
    for (long at = 0; at < n;) {
      struct Entry {
        ino64_t ino;
        off64_t off;
        unsigned short reclen;
        unsigned char type;
        char name[1];
      };
      const auto* e = reinterpret_cast<const Entry*>(buf + at);
      at += e->reclen;
      struct stat st {};
      const bool regular =
          e->type == DT_REG ||
          (e->type == DT_UNKNOWN && ::fstatat(fd, e->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode));
      if (regular) ::unlinkat(fd, e->name, 0);
    }
  }
}

extern "C" void remove_dir_then_die(int sig) {
  if (g_armed) {
    // A child still writing (gnuplot, killed with us by its death signal) can
    // add a file between the unlinks and rmdir: try again a few times.
    for (int attempt = 0; attempt < 50; ++attempt) {
      const int fd = ::open(g_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0) break;  // gone already
      unlink_regular_files(fd);
      ::close(fd);
      if (::rmdir(g_dir) == 0 || errno != ENOTEMPTY) break;
      const struct timespec pause { 0, 2000000 };  // 2 ms
      ::nanosleep(&pause, nullptr);
    }
  }
  // End as the signal would have: default action, delivered once this
  // handler returns (the signal is blocked while it runs).
  ::signal(sig, SIG_DFL);
  ::kill(::getpid(), sig);
}

}  // namespace

RemoveDirOnSignal::RemoveDirOnSignal(const std::string& dir) {
  if (dir.size() >= sizeof g_dir) throw std::length_error("temporary directory path too long: " + dir);
  std::memcpy(g_dir, dir.c_str(), dir.size() + 1);
  g_armed = 1;
  struct sigaction sa {};
  sa.sa_handler = remove_dir_then_die;
  sigemptyset(&sa.sa_mask);
  for (int s : kStopSignals) sigaddset(&sa.sa_mask, s);  // one cleanup at a time
  for (std::size_t i = 0; i < 3; ++i) ::sigaction(kStopSignals[i], &sa, &old_[i]);
}

RemoveDirOnSignal::~RemoveDirOnSignal() {
  for (std::size_t i = 0; i < 3; ++i) ::sigaction(kStopSignals[i], &old_[i], nullptr);
  g_armed = 0;
}

StopSignalsHeld::StopSignalsHeld() {
  sigset_t stop;
  sigemptyset(&stop);
  for (int s : kStopSignals) sigaddset(&stop, s);
  ::pthread_sigmask(SIG_BLOCK, &stop, &old_);
}

StopSignalsHeld::~StopSignalsHeld() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

}  // namespace gw
