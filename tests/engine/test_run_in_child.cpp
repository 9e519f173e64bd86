// Process isolation: results, exceptions and InputError fields cross the pipe.
#include <csignal>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "engine_test_util.hpp"
#include "gradwire/error.hpp"

namespace gw::engine {
namespace {

TEST(RunInChild, ReturnsTheBodysString) {
  EXPECT_EQ(run_in_child([] { return std::string("hello\0world", 11); }),
            std::string("hello\0world", 11));
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
    run_in_child([]() -> std::string {
      throw InputError("cluster.yaml", 12, 7, "cluster.nic.bandwidth", "must be positive");
    });
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
    return sa.sa_handler == SIG_DFL ? std::string("default")
                                    : sa.sa_handler == SIG_IGN ? std::string("ignore") : std::string("handler");
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
  // A ring all-reduce of 1 MiB on two GPUs: 2 alpha + S/B.
  const auto run = test::run_collectives(
      test::switch_cluster(2),
      {test::request(CollectiveOp::AllReduce, Algorithm::Ring, test::MiB)});
  ASSERT_EQ(run.times.size(), 1u);
  EXPECT_NEAR(run.times[0], 2 * run.alpha + test::MiB / run.bandwidth, 1e-12);
}

}  // namespace
}  // namespace gw::engine
