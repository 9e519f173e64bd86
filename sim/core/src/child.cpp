#include "gradwire/core/child.hpp"

#include <sys/socket.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace gw {
namespace {

using FrameLength = std::uint64_t;

}  // namespace

bool write_all(int fd, const char* data, std::size_t size, const volatile std::sig_atomic_t* stop) noexcept {
  while (size > 0) {
    ssize_t w = ::send(fd, data, size, MSG_NOSIGNAL);
    if (w < 0 && errno == ENOTSOCK) w = ::write(fd, data, size);
    if (w < 0 && errno == EINTR && (stop == nullptr || *stop == 0)) continue;
    if (w <= 0) return false;
    data += w;
    size -= static_cast<std::size_t>(w);
  }
  return true;
}

Channel fork_with_channel(const std::function<void(int fd)>& child, const std::string& what) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0)
    throw std::runtime_error(what + ": socketpair: " + std::strerror(errno));
  std::fflush(nullptr);
  const pid_t pid = fork_dying_with_parent();
  if (pid < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(what + ": fork: " + std::strerror(err));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child(fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  return {pid, fds[0]};
}

bool send_frame(int fd, std::string_view payload) noexcept {
  const FrameLength n = payload.size();
  return write_all(fd, reinterpret_cast<const char*>(&n), sizeof n) && write_all(fd, payload.data(), payload.size());
}

std::optional<std::string> take_frame(std::string& buffer) {
  FrameLength n = 0;
  if (buffer.size() < sizeof n) return std::nullopt;
  std::memcpy(&n, buffer.data(), sizeof n);
  if (buffer.size() - sizeof n < n) return std::nullopt;
  std::string frame = buffer.substr(sizeof n, n);
  buffer.erase(0, sizeof n + n);
  return frame;
}

}  // namespace gw
