#include "gradwire/core/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <stdexcept>

#include "gradwire/core/error.hpp"

namespace gw {
namespace {

namespace fs = std::filesystem;

std::string errno_text() { return std::strerror(errno); }

std::runtime_error sys_error(const std::string& what, const std::string& path) {
  return std::runtime_error(path + ": " + what + ": " + errno_text());
}

InputError refused(const std::string& path, const std::string& reason) { return InputError(path, 0, 0, "", reason); }

void write_all(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EFBIG) throw sys_error("write failed (the file size limit, ulimit -f, is reached)", path);
      throw sys_error("write failed", path);
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

/// What a file of this mode is, for a message ("a directory").
std::string kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISFIFO(m)) return "a FIFO (named pipe)";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISLNK(m)) return "a symbolic link";
  return "not a regular file";
}

std::string cap_text(std::size_t bytes) {
  if (bytes >= (std::size_t{1} << 30) && bytes % (std::size_t{1} << 30) == 0)
    return std::to_string(bytes >> 30) + " GiB";
  if (bytes >= (std::size_t{1} << 20) && bytes % (std::size_t{1} << 20) == 0)
    return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

std::atomic<unsigned> g_tmp_counter{0};

}  // namespace

std::string read_input_file(const std::string& path, std::size_t max_bytes) {
  if (path.empty()) throw refused(path, "an empty file name");
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) throw refused(path, "cannot open the file for reading: the file does not exist");
    throw refused(path, "cannot open the file for reading: " + errno_text());
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const std::string why = errno_text();
    ::close(fd);
    throw refused(path, "cannot read the file: " + why);
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw refused(path, "is a directory, not a file");
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw refused(path, "is " + kind_of(st.st_mode) + ", not a regular file; inputs must be regular files");
  }
  if (static_cast<unsigned long long>(st.st_size) > max_bytes) {
    ::close(fd);
    throw refused(path, "the file is larger than " + cap_text(max_bytes) + "; refusing to load it");
  }
  std::string text;
  text.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string why = errno_text();
      ::close(fd);
      throw refused(path, "cannot read the file: " + why);
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > max_bytes) {  // grew while being read
      ::close(fd);
      throw refused(path, "the file is larger than " + cap_text(max_bytes) + "; refusing to load it");
    }
  }
  ::close(fd);
  return text;
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  std::error_code ea, eb;
  const fs::path ca = fs::weakly_canonical(fs::absolute(a), ea), cb = fs::weakly_canonical(fs::absolute(b), eb);
  return !ea && !eb && ca == cb;
}

std::string checked_output_path(const std::string& path, const std::vector<std::string>& inputs) {
  if (path.empty()) throw refused(path, "an empty output path");
  if (path == "-") throw refused(path, "this output cannot go to standard output; give a file name");
  std::string target = path;
  struct stat lst {
  }, st{};
  if (::lstat(path.c_str(), &lst) != 0) {
    if (errno != ENOENT) throw refused(path, "cannot examine the output: " + errno_text());
    fs::path parent = fs::path(path).parent_path();
    if (parent.empty()) parent = ".";
    struct stat pst {};
    if (::stat(parent.c_str(), &pst) != 0 || !S_ISDIR(pst.st_mode))
      throw refused(path, "the directory " + parent.string() + " does not exist");
  } else if (::stat(path.c_str(), &st) != 0) {
    throw refused(path, S_ISLNK(lst.st_mode)
                            ? "is a symbolic link to a file that does not exist; refusing to write through it"
                            : "cannot examine the output: " + errno_text());
  } else if (!S_ISREG(st.st_mode)) {
    std::string why = "is " + kind_of(st.st_mode) + "; an output may only replace a regular file";
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
      why += " (use - for standard output where the command allows it)";
    throw refused(path, why);
  } else if (S_ISLNK(lst.st_mode)) {
    // A link to a regular file: the file it points to is replaced, the link stays.
    char* real = ::realpath(path.c_str(), nullptr);
    if (real == nullptr) throw refused(path, "cannot resolve the symbolic link: " + errno_text());
    target = real;
    std::free(real);
  }
  for (const auto& in : inputs)
    if (!in.empty() && same_file(target, in))
      throw refused(path, "is an input of this command (" + in + "); refusing to write over it, choose another output");
  return target;
}

void write_file_atomic(const std::string& path, std::string_view content, const std::vector<std::string>& inputs) {
  const std::string target = checked_output_path(path, inputs);
  struct stat old {};
  const bool replacing = ::stat(target.c_str(), &old) == 0;
  const std::string tmp =
      target + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(g_tmp_counter.fetch_add(1));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == EACCES || errno == EROFS || errno == EPERM || errno == ENOENT || errno == ENOTDIR)
      throw refused(path, "cannot create a file in its directory: " + errno_text());
    throw sys_error("cannot create temporary file " + tmp, path);
  }
  try {
    if (replacing) (void)::fchmod(fd, old.st_mode & 07777);  // keep the file's permissions
    write_all(fd, content, tmp);
    if (::fsync(fd) != 0) throw sys_error("fsync failed", tmp);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    const auto err = sys_error("close failed", tmp);
    ::unlink(tmp.c_str());
    throw err;
  }
  // The target may have changed since the check: never rename over anything
  // but a regular file.
  struct stat now {};
  if (::lstat(target.c_str(), &now) == 0 && !S_ISREG(now.st_mode)) {
    ::unlink(tmp.c_str());
    throw refused(path, "is now " + kind_of(now.st_mode) + "; an output may only replace a regular file");
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    const auto err = sys_error("cannot rename " + tmp + " into place", path);
    ::unlink(tmp.c_str());
    throw err;
  }
}

void append_line_durable(const std::string& path, std::string_view line) {
  std::string rec(line);
  if (rec.empty() || rec.back() != '\n') rec += '\n';
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0) throw sys_error("cannot open for appending", path);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw refused(path, "is not a regular file; records are only appended to regular files");
  }
  try {
    write_all(fd, rec, path);
    if (::fsync(fd) != 0) throw sys_error("fsync failed", path);
  } catch (...) {
    // No partial record left (a full disk or the file size limit stopped
    // the write part way): back to the size before.
    (void)!::ftruncate(fd, st.st_size);
    ::close(fd);
    throw;
  }
  ::close(fd);
}

std::string read_file(const std::string& path) {
  return read_input_file(path, std::numeric_limits<std::size_t>::max());
}

}  // namespace gw
