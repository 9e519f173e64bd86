#include "gradwire/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace gw {
namespace {

std::runtime_error sys_error(const std::string& what, const std::string& path) {
  return std::runtime_error(path + ": " + what + ": " + std::strerror(errno));
}

void write_all(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw sys_error("write failed", path);
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

void write_file_atomic(const std::string& path, std::string_view content) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw sys_error("cannot create temporary file " + tmp, path);
  try {
    write_all(fd, content, tmp);
    if (::fsync(fd) != 0) throw sys_error("fsync failed", tmp);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    ::unlink(tmp.c_str());
    throw sys_error("close failed", tmp);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    auto err = sys_error("cannot rename " + tmp + " into place", path);
    ::unlink(tmp.c_str());
    throw err;
  }
}

void append_line_durable(const std::string& path, std::string_view line) {
  std::string rec(line);
  if (rec.empty() || rec.back() != '\n') rec += '\n';
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw sys_error("cannot open for appending", path);
  try {
    write_all(fd, rec, path);
    if (::fsync(fd) != 0) throw sys_error("fsync failed", path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open the file for reading");
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

}  // namespace gw
