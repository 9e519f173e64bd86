// Process isolation: results, exceptions and InputError fields cross the pipe;
// the child dies with its parent; running out of memory is said as such.
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "engine_test_util.hpp"
#include "gradwire/core/child.hpp"
#include "gradwire/core/error.hpp"

namespace gw::engine {
namespace {

TEST(RunInChild, ReturnsTheBodysString) {
  EXPECT_EQ(run_in_child([] { return std::string("hello\0world", 11); }), std::string("hello\0world", 11));
  const std::string big(1 << 20, 'x');  // more than a pipe buffer
  EXPECT_EQ(run_in_child([&] { return big; }), big);
}

TEST(RunInChild, RunsInAnotherProcess) {
  int value = 1;
  const std::string out = run_in_child([&] {
    value = 2;
    return std::to_string(value);
  });
  EXPECT_EQ(out, "2");
  EXPECT_EQ(value, 1);
}

TEST(RunInChild, KeepsInputErrorFields) {
  try {
    run_in_child(
        []() -> std::string { throw InputError("cluster.yaml", 12, 7, "cluster.nic.bandwidth", "must be positive"); });
    FAIL() << "no exception";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "cluster.yaml");
    EXPECT_EQ(e.line(), 12);
    EXPECT_EQ(e.column(), 7);
    EXPECT_EQ(e.key(), "cluster.nic.bandwidth");
    EXPECT_EQ(e.reason(), "must be positive");
  }
}

TEST(RunInChild, OtherExceptionsBecomeRuntimeErrors) {
  try {
    run_in_child([]() -> std::string { throw std::invalid_argument("bad algorithm"); });
    FAIL() << "no exception";
  } catch (const InputError&) {
    FAIL() << "not an InputError";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "bad algorithm");
  }
}

TEST(RunInChild, ReportsAChildKilledBySignal) {
  try {
    run_in_child([]() -> std::string {
      std::raise(SIGKILL);
      return "unreachable";
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("signal 9"), std::string::npos) << e.what();
  }
}

TEST(RunInChild, SecondSimulationInOneProcessIsRefused) {
  EXPECT_THROW(run_in_child([] {
                 Simulation first(test::switch_cluster(2));
                 Simulation second(test::switch_cluster(2));
                 return std::string("two engines");
               }),
               std::runtime_error);
}

// SimGrid installs a SIGINT handler when its engine starts (it prints the
// actors and calls exit() inside the handler, which can crash mid-switch and
// print "Segmentation fault." when a ^C reaches a sweep's simulations). The
// engine keeps the process's own disposition instead: ignored stays ignored,
// default stays default, before and after a run.
TEST(RunInChild, TheSimulationLeavesSigintAsItFoundIt) {
  const auto disposition = [] {
    struct sigaction sa {};
    sigaction(SIGINT, nullptr, &sa);
    return sa.sa_handler == SIG_DFL   ? std::string("default")
           : sa.sa_handler == SIG_IGN ? std::string("ignore")
                                      : std::string("handler");
  };
  for (const auto start : {SIG_IGN, SIG_DFL}) {
    const std::string out = run_in_child([&] {
      std::signal(SIGINT, start);
      const std::string before = disposition();
      Simulation sim(test::switch_cluster(2));
      const std::string built = disposition();
      sim.add_actor("a", 0, [] { Simulation::sleep_for(1.0); });
      sim.run();
      return before + " " + built + " " + disposition();
    });
    const std::string want = start == SIG_IGN ? "ignore" : "default";
    EXPECT_EQ(out, want + " " + want + " " + want);
  }
}

TEST(RunInChild, SimulationResultsComeBack) {
  // A Simple ring all-reduce of 1 MiB on two GPUs (one per node): NCCL's
  // latency 8.4 + 2 x 14 us (both steps inter-node) over the one route
  // latency, + the launch floor (the per-size ramp; an RDMA-class NIC: no
  // proxy term, and the ring fills no pipeline), + S/B.
  auto req = test::request(CollectiveOp::AllReduce, Algorithm::Ring, test::MiB);
  req.protocol = Protocol::Simple;
  const auto run = test::run_collectives(test::switch_cluster(2), {req});
  ASSERT_EQ(run.times.size(), 1u);
  EXPECT_NEAR(run.times[0], 36.4e-6 + nccl_ramp().launch + test::MiB / run.bandwidth, 1e-12);
}

// --- Out of memory -------------------------------------------------------------

TEST(RunInChild, BadAllocInTheBodyIsOutOfMemory) {
  try {
    run_in_child([]() -> std::string { throw std::bad_alloc(); });
    FAIL() << "no exception";
  } catch (const ChildOutOfMemory& e) {
    EXPECT_NE(std::string(e.what()).find("simulation child"), std::string::npos) << e.what();
  }
}

TEST(RunInChild, BadAllocThatEndsInTerminateIsOutOfMemory) {
  // Through a noexcept frame: std::terminate, not the body's catch.
  EXPECT_THROW(run_in_child([]() -> std::string {
                 void (*volatile thrower)() = [] { throw std::bad_alloc(); };
                 [&]() noexcept { thrower(); }();
                 return "unreachable";
               }),
               ChildOutOfMemory);
}

TEST(RunInChild, BadAllocInASimGridActorIsOutOfMemory) {
  // SimGrid's own terminate handler logs the exception and aborts; the child
  // still reports out of memory, not "killed by signal 6".
  EXPECT_THROW(run_in_child([] {
                 Simulation sim(test::switch_cluster(2));
                 sim.add_actor("a", 0, [] { throw std::bad_alloc(); });
                 sim.run();
                 return std::string("unreachable");
               }),
               ChildOutOfMemory);
}

TEST(RunInChild, OtherAbortsStayAborts) {
  try {
    run_in_child([]() -> std::string { std::abort(); });
    FAIL() << "no exception";
  } catch (const ChildOutOfMemory&) {
    FAIL() << "an abort without bad_alloc reported as out of memory";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("signal 6"), std::string::npos) << e.what();
  }
}

// --- Dying with the parent -----------------------------------------------------

/// Waits up to `seconds` for `pid` (a child of this process) to end; its wait
/// status, or -1 when it still runs (it is then killed and reaped).
int wait_for_end(pid_t pid, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return -1;
}

// The test process adopts orphans (a subreaper), so it can wait for the
// simulation child of a parent it killed.
TEST(RunInChild, TheChildDiesWhenItsParentIsKilled) {
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t parent = ::fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {  // the "gradwire": runs a child that reports its pid, then sleeps
    ::close(fds[0]);
    try {
      run_in_child([&] {
        const pid_t me = ::getpid();
        (void)!::write(fds[1], &me, sizeof me);
        ::sleep(60);
        return std::string("slept");
      });
    } catch (...) {
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  pid_t child = 0;
  ASSERT_EQ(::read(fds[0], &child, sizeof child), static_cast<ssize_t>(sizeof child));
  ::close(fds[0]);
  ASSERT_EQ(::kill(parent, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(parent, &status, 0), parent);
  const int child_status = wait_for_end(child, 5);  // adopted by this process
  ASSERT_NE(child_status, -1) << "the child outlived its SIGKILLed parent by 5 s";
  EXPECT_TRUE(WIFSIGNALED(child_status) && WTERMSIG(child_status) == SIGKILL);
}

TEST(DieWithParent, AChildWhoseParentIsAlreadyGoneExits) {
  // The race that PR_SET_PDEATHSIG alone misses: the parent dies between
  // fork() and the prctl() call.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  const pid_t test_pid = ::getpid();
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t parent = ::fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {
    const pid_t me = ::getpid();
    const pid_t child = ::fork();
    if (child == 0) {
      while (::getppid() != test_pid) ::usleep(1000);  // the parent has died
      gw::die_with_parent(me);
      ::_exit(0);  // not reached when die_with_parent sees the orphan
    }
    (void)!::write(fds[1], &child, sizeof child);
    ::_exit(0);
  }
  ::close(fds[1]);
  pid_t child = 0;
  ASSERT_EQ(::read(fds[0], &child, sizeof child), static_cast<ssize_t>(sizeof child));
  ::close(fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(parent, &status, 0), parent);
  const int child_status = wait_for_end(child, 10);
  ASSERT_NE(child_status, -1);
  ASSERT_TRUE(WIFEXITED(child_status));
  EXPECT_EQ(WEXITSTATUS(child_status), gw::kExitOrphan);
}

}  // namespace
}  // namespace gw::engine
