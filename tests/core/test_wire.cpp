// gw::wire (gradwire/core/wire.hpp), the encoding of what a forked child
// hands its parent, and the socket between them (gradwire/core/child.hpp):
// every value comes back bit for bit, and a message cut short, of another
// kind or version, or with bytes left over is refused with a message saying
// which.
#include "gradwire/core/wire.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "gradwire/core/child.hpp"

namespace {

struct Point {
  double x = 0;
  std::string name;
  std::vector<int> tags;
};

template <class S, class F>
requires std::same_as<std::remove_const_t<S>, Point>
void wire_fields(S& p, F&& f) { f(p.x), f(p.name), f(p.tags); }

std::string what_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const gw::wire::Malformed& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

TEST(Wire, EveryDoubleComesBackBitForBit) {
  const double nan_payload = std::bit_cast<double>(std::uint64_t{0x7ff8000000012345});
  const std::vector<double> values{0.1 + 0.2,
                                   -0.0,
                                   std::numeric_limits<double>::infinity(),
                                   -std::numeric_limits<double>::infinity(),
                                   std::numeric_limits<double>::quiet_NaN(),
                                   nan_payload,
                                   std::numeric_limits<double>::denorm_min(),
                                   std::numeric_limits<double>::max(),
                                   1.0 / 3.0};
  gw::wire::Writer w;
  w.put(values);
  const std::string bytes = w.take();
  EXPECT_EQ(bytes.size(), 8 + 8 * values.size()) << "compact: a count and 8 bytes a double";
  gw::wire::Reader r(bytes, "test");
  const auto back = r.get<std::vector<double>>();
  r.finish();
  ASSERT_EQ(back.size(), values.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    EXPECT_EQ(std::bit_cast<std::uint64_t>(back[i]), std::bit_cast<std::uint64_t>(values[i])) << i;
}

TEST(Wire, StringsMapsStructsAndIntegersRoundTrip) {
  std::map<std::string, double> m{{std::string("a\0b\n\xff", 5), 2.5}, {"", -1}};
  const Point p{7.25, std::string("x\0y", 3), {-1, 0, std::numeric_limits<int>::max()}};
  gw::wire::Writer w;
  w.put(m);
  w.put(p);
  w.put(true);
  w.put(std::numeric_limits<std::int64_t>::min());
  w.put('Z');
  const std::string bytes = w.take();
  gw::wire::Reader r(bytes, "test");
  EXPECT_EQ(r.get<decltype(m)>(), m);
  const auto q = r.get<Point>();
  EXPECT_EQ(q.x, p.x);
  EXPECT_EQ(q.name, p.name);
  EXPECT_EQ(q.tags, p.tags);
  EXPECT_TRUE(r.get<bool>());
  EXPECT_EQ(r.get<std::int64_t>(), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(r.get<char>(), 'Z');
  EXPECT_NO_THROW(r.finish());
}

TEST(Wire, ABadValueIsRefused) {
  gw::wire::Writer w;
  w.put(std::uint64_t{1} << 60);  // a count far beyond the bytes that follow
  w.put('x');
  const std::string huge = w.take();
  EXPECT_NE(what_of([&] {
              gw::wire::Reader(huge, "m").get<std::string>();
            }).find("m: a count of 1152921504606846976 exceeds"),
            std::string::npos);
  EXPECT_NE(what_of([&] { gw::wire::Reader(huge, "m").get<std::vector<double>>(); }).find("exceeds the 1 bytes left"),
            std::string::npos);
  const std::string two("\2", 1);
  EXPECT_EQ(what_of([&] { gw::wire::Reader(two, "m").get<bool>(); }), "m: a bool is neither 0 nor 1");
  EXPECT_EQ(what_of([&] { gw::wire::Reader("abc", "m").get<double>(); }),
            "m: truncated (8 bytes needed at byte 0 of 3)");
  gw::wire::Reader left("ab", "m");
  left.get<char>();
  EXPECT_EQ(what_of([&] { left.finish(); }), "m: 1 bytes left over");
}

TEST(Wire, AMessageIsCheckedWhole) {
  const std::string payload("\0pay\1load", 9);
  const std::string m = gw::wire::seal("TEST", 3, payload);
  EXPECT_EQ(gw::wire::open(m, "TEST", 3, "m"), payload);
  // Every shorter prefix is refused, and says it is truncated.
  for (std::size_t n = 0; n < m.size(); ++n)
    EXPECT_NE(what_of([&] { gw::wire::open(m.substr(0, n), "TEST", 3, "m"); }).find("m: truncated ("),
              std::string::npos)
        << n;
  EXPECT_EQ(what_of([&] { gw::wire::open(m + "x", "TEST", 3, "m"); }), "m: 1 bytes after the 9-byte payload");
  EXPECT_EQ(what_of([&] { gw::wire::open(m, "TEST", 4, "m"); }), "m: version 3, this gradwire reads version 4");
  EXPECT_EQ(what_of([&] { gw::wire::open(m, "OTHR", 3, "m"); }), "m: not a OTHR message");
  EXPECT_EQ(what_of([&] { gw::wire::open(gw::wire::seal("TEST", 3, ""), "TEST", 3, "m"); }), "(nothing thrown)");
}

// Frames on a stream: none until all of one has arrived, then each whole.
TEST(ChildProcess, FramesAreTakenWholeAndInOrder) {
  std::string all;
  for (const std::string& s : std::vector<std::string>{"first", "", std::string(70000, 'y')}) {
    const std::uint64_t n = s.size();
    all.append(reinterpret_cast<const char*>(&n), sizeof n);
    all += s;
  }
  std::string buffer;
  std::vector<std::string> got;
  for (char c : all) {  // one byte at a time: every split point
    buffer += c;
    while (auto f = gw::take_frame(buffer)) got.push_back(*f);
  }
  EXPECT_EQ(got, (std::vector<std::string>{"first", "", std::string(70000, 'y')}));
  EXPECT_TRUE(buffer.empty());
}

// A child of fork_with_channel sends frames its parent reads; it ends with
// _exit(0) when its function returns, and a write to a child that is gone
// fails instead of raising SIGPIPE.
TEST(ChildProcess, ForkWithChannelCarriesFramesBothWays) {
  const gw::Channel c = gw::fork_with_channel(
      [](int fd) {
        char b = 0;
        if (::read(fd, &b, 1) != 1) ::_exit(3);
        gw::send_frame(fd, std::string("got ") + b);
        gw::send_frame(fd, std::string(1 << 20, 'z'));  // more than a socket buffer
      },
      "test child");
  ASSERT_GT(c.pid, 0);
  ASSERT_TRUE(gw::write_all(c.fd, "q", 1));
  std::string buffer;
  std::vector<std::string> frames;
  char chunk[4096];
  for (ssize_t n; (n = ::read(c.fd, chunk, sizeof chunk)) > 0;) {
    buffer.append(chunk, static_cast<std::size_t>(n));
    while (auto f = gw::take_frame(buffer)) frames.push_back(*f);
  }
  int status = -1;
  ASSERT_TRUE(gw::wait_for_child(c.pid, &status));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(frames, (std::vector<std::string>{"got q", std::string(1 << 20, 'z')}));
  EXPECT_FALSE(gw::write_all(c.fd, "late", 4)) << "the child's end is closed: an error, not SIGPIPE";
  ::close(c.fd);
}

}  // namespace
