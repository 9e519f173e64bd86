// run_in_child: fork, run the body in the child, send its result (or its
// exception) back through a pipe. SimGrid allows one engine per process.
//
// Wire format, child -> parent: one tag byte, then length-prefixed fields.
//   'R' result            'I' file line column key reason (gw::InputError)
//   'E' message (any other exception)
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "gradwire/engine.hpp"
#include "gradwire/error.hpp"

namespace gw::engine {
namespace {

void put_field(std::string& out, const std::string& field) {
  const std::uint64_t n = field.size();
  out.append(reinterpret_cast<const char*>(&n), sizeof n);
  out += field;
}

std::string get_field(const std::string& in, std::size_t& pos) {
  std::uint64_t n = 0;
  if (pos + sizeof n > in.size()) throw std::runtime_error("simulation child: truncated result");
  std::memcpy(&n, in.data() + pos, sizeof n);
  pos += sizeof n;
  if (pos + n > in.size()) throw std::runtime_error("simulation child: truncated result");
  std::string field = in.substr(pos, n);
  pos += n;
  return field;
}

void write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t w = ::write(fd, data.data() + done, data.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      return;
    }
    done += static_cast<std::size_t>(w);
  }
}

[[noreturn]] void child_main(int fd, const std::function<std::string()>& body) {
  std::string out;
  try {
    std::string result = body();
    out = "R";
    put_field(out, result);
  } catch (const InputError& e) {
    out = "I";
    put_field(out, e.file());
    put_field(out, std::to_string(e.line()));
    put_field(out, std::to_string(e.column()));
    put_field(out, e.key());
    put_field(out, e.reason());
  } catch (const std::exception& e) {
    out = "E";
    put_field(out, e.what());
  } catch (...) {
    out = "E";
    put_field(out, "unknown exception in simulation child");
  }
  write_all(fd, out);
  ::close(fd);
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(0);  // no atexit handlers, no destructors of the parent's objects
}

}  // namespace

std::string run_in_child(const std::function<std::string()>& body) {
  int fds[2];
  if (::pipe(fds) != 0)
    throw std::runtime_error(std::string("run_in_child: pipe: ") + std::strerror(errno));
  std::fflush(stdout);  // else buffered output would be written twice
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string("run_in_child: fork: ") + std::strerror(err));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_main(fds[1], body);
  }
  ::close(fds[1]);
  std::string in;
  char buf[65536];
  for (;;) {
    const ssize_t r = ::read(fds[0], buf, sizeof buf);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    in.append(buf, static_cast<std::size_t>(r));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (in.empty()) {
    if (WIFSIGNALED(status))
      throw std::runtime_error("simulation child killed by signal " +
                               std::to_string(WTERMSIG(status)));
    throw std::runtime_error("simulation child exited with status " +
                             std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                             " without a result");
  }
  std::size_t pos = 1;
  switch (in[0]) {
    case 'R': return get_field(in, pos);
    case 'I': {
      std::string file = get_field(in, pos);
      const int line = std::stoi(get_field(in, pos));
      const int column = std::stoi(get_field(in, pos));
      std::string key = get_field(in, pos);
      std::string reason = get_field(in, pos);
      throw InputError(std::move(file), line, column, std::move(key), std::move(reason));
    }
    case 'E': throw std::runtime_error(get_field(in, pos));
    default: throw std::runtime_error("simulation child: malformed result");
  }
}

}  // namespace gw::engine
