// The simulation child and the user: a killed gradwire leaves no simulation
// running, a long run says it is running (on stderr, stdout unchanged), and
// running out of memory is said in words (docs/engine.md, "Process isolation").
#include <gtest/gtest.h>
#include <sys/prctl.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "run_util.hpp"

namespace fs = std::filesystem;
using gw::test::run;

namespace {

const std::string kBin = GW_GRADWIRE_BIN;
const fs::path kSource = GW_SOURCE_ROOT;
const std::string kDefault = (kSource / "scenarios/default.yaml").string();

void write(const fs::path& p, const std::string& text) {
  std::ofstream f(p);
  f << text;
}

/// The bundled default scenario on 8192 nodes: 65,536 GPUs, minutes of simulation.
fs::path huge_scenario(const fs::path& dir) {
  std::string sc = gw::test::read_text(kDefault);
  sc.replace(sc.find("nodes: 4\n"), 9, "nodes: 8192\n");
  const fs::path p = dir / "huge.yaml";
  write(p, sc);
  return p;
}

/// Processes whose parent is `parent` (scanning /proc/*/stat).
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = gw::test::read_text(it->path() / "stat");
    const auto close = stat.rfind(')');  // the command name may hold spaces and parentheses
    if (close == std::string::npos) continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) == 2 && ppid == parent)
      out.push_back(static_cast<pid_t>(std::stoi(name)));
  }
  return out;
}

/// Runs gradwire with `args` (after the binary), waits for its first child
/// (a simulation child, a sweep worker), kills gradwire alone with SIGKILL,
/// and expects that child to end within 5 s.
void expect_child_dies_with_gradwire(const std::string& name, const std::vector<std::string>& args) {
  // This test process adopts orphans (a subreaper): the simulation child of
  // the gradwire it kills becomes its child, so it can wait for it.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  const fs::path dir = gw::test::scratch_dir("process-kill-" + name);
  const pid_t gradwire = ::fork();
  ASSERT_GE(gradwire, 0);
  if (gradwire == 0) {
    ::setpgid(0, 0);
    const std::string out = (dir / "out.txt").string(), err = (dir / "err.txt").string();
    if (!std::freopen(out.c_str(), "w", stdout) || !std::freopen(err.c_str(), "w", stderr)) ::_exit(126);
    std::vector<char*> argv{const_cast<char*>(kBin.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(kBin.c_str(), argv.data());
    ::_exit(127);
  }
  // Its simulation child, recorded while gradwire lives.
  pid_t child = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (child == 0 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60)) {
    const auto kids = children_of(gradwire);
    if (!kids.empty()) {
      child = kids.front();
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  if (child == 0) {
    ::kill(-gradwire, SIGKILL);
    ::waitpid(gradwire, nullptr, 0);
    FAIL() << "gradwire " << name << " started no child within 60 s: " << gw::test::read_text(dir / "err.txt");
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // simulating now (it runs for minutes)
  int status = 0;
  ASSERT_EQ(::waitpid(gradwire, &status, WNOHANG), 0)
      << "gradwire ended early: " << gw::test::read_text(dir / "err.txt");
  ASSERT_EQ(::kill(gradwire, SIGKILL), 0);  // the parent only, as `kill -9 PID` does
  ASSERT_EQ(::waitpid(gradwire, &status, 0), gradwire);

  // The child is now ours: it must end within a few seconds.
  int child_status = 0;
  bool ended = false;
  const auto t1 = std::chrono::steady_clock::now();
  while (!ended && std::chrono::steady_clock::now() - t1 < std::chrono::seconds(5)) {
    if (::waitpid(child, &child_status, WNOHANG) == child) {
      ended = true;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  if (!ended) {
    ::kill(-gradwire, SIGKILL);  // the child kept gradwire's process group
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
  }
  EXPECT_TRUE(ended) << name << ": the child " << child << " still ran 5 s after its parent was killed";
  if (ended) {
    EXPECT_TRUE(WIFSIGNALED(child_status) && WTERMSIG(child_status) == SIGKILL);
  }
}

TEST(Process, AKilledSimulateLeavesNoSimulationRunning) {
  const fs::path dir = gw::test::scratch_dir("process-kill-input");
  expect_child_dies_with_gradwire("simulate", {"simulate", huge_scenario(dir).string()});
}

TEST(Process, AKilledSweepLeavesNoWorkerRunning) {
  // A sweep worker simulating 65,536 GPUs (minutes); f2c0d4f left it running.
  const fs::path dir = gw::test::scratch_dir("process-kill-sweep-input");
  write(dir / "s.sweep.yaml",
        "base: " + huge_scenario(dir).string() + "\nevaluator: simulation\naxes:\n  workload.accumulation: [1]\n");
  expect_child_dies_with_gradwire("sweep", {"sweep", "-j", "1", "--progress", "none", "--out",
                                            (dir / "r.jsonl").string(), (dir / "s.sweep.yaml").string()});
}

gw::test::RunOptions progress_after(const std::string& value) {
  gw::test::RunOptions o;
  o.timeout_s = 120;
  o.env = {"GRADWIRE_PROGRESS_AFTER=" + value};
  return o;
}

TEST(Process, SimulatePrintsProgressOnStderrAndTheSameStdout) {
  for (const std::string format : {"table", "json", "csv"}) {
    const std::vector<std::string> args = {kBin, "simulate", kDefault, "--format", format};
    const auto at_once = run(args, progress_after("0"));
    const auto never = run(args, progress_after("off"));
    ASSERT_EQ(at_once.exit_code, 0) << at_once.all();
    ASSERT_EQ(never.exit_code, 0) << never.all();
    EXPECT_EQ(at_once.out, never.out) << format;  // byte for byte
    EXPECT_EQ(at_once.err.rfind("gradwire simulate: simulating 32 GPUs, 0 s elapsed\n", 0), 0u) << at_once.err;
    EXPECT_EQ(never.err, "");
  }
}

TEST(Process, CollectivePrintsProgressOnStderrAndTheSameStdout) {
  const std::vector<std::string> args = {kBin, "collective", "--scenario", kDefault, "--sizes", "8B:1MiB"};
  const auto at_once = run(args, progress_after("0"));
  const auto never = run(args, progress_after("off"));
  ASSERT_EQ(at_once.exit_code, 0) << at_once.all();
  ASSERT_EQ(never.exit_code, 0) << never.all();
  EXPECT_FALSE(at_once.out.empty());
  EXPECT_EQ(at_once.out, never.out);
  EXPECT_EQ(at_once.err.rfind("gradwire collective: simulating 32 GPUs, 0 s elapsed\n", 0), 0u) << at_once.err;
  EXPECT_EQ(never.err, "");
}

TEST(Process, SweepWorkersPrintNoSimulationProgress) {
  // Progress belongs to the command a user waits for; a sweep has its own
  // (--progress), and its workers' simulations stay quiet.
  const fs::path dir = gw::test::scratch_dir("process-sweep");
  write(dir / "s.sweep.yaml",
        "base: " + kDefault + "\nevaluator: simulation\naxes:\n  workload.accumulation: [1, 2]\n");
  const auto r = run({kBin, "sweep", "-j", "1", "--progress", "none", "--out", (dir / "r.jsonl").string(),
                      (dir / "s.sweep.yaml").string()},
                     progress_after("0"));
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.err.find("simulating"), std::string::npos) << r.err;
}

#ifndef GW_SANITIZED  // ASan's shadow memory needs a huge address space
/// The address space gradwire needs to start at all (its shared libraries:
/// about 64 MiB without CUDA, about 1 GiB when the build links cuBLAS and
/// NCCL), to 8 MiB; the limits below are that plus what the test wants.
unsigned long long startup_address_space() {
  static const unsigned long long base = [] {
    for (unsigned long long mb = 16; mb <= 16384; mb += 8) {
      gw::test::RunOptions o;
      o.timeout_s = 30;
      o.address_space = mb << 20;
      if (run({kBin, "--version"}, o).exit_code == 0) return mb << 20;
    }
    return 0ull;
  }();
  return base;
}

TEST(Process, OutOfMemoryInTheSimulationChildIsSaidInWords) {
  // 65,536 GPUs in 192 MiB of address space beyond what gradwire needs to
  // start: the simulation child's platform does not fit.
  const fs::path dir = gw::test::scratch_dir("process-oom-child");
  gw::test::RunOptions o;
  o.timeout_s = 120;
  ASSERT_GT(startup_address_space(), 0u);
  o.address_space = startup_address_space() + (192ull << 20);
  const fs::path trace = dir / "huge.trace.json";
  const auto r = run({kBin, "simulate", huge_scenario(dir).string(), "--trace", trace.string()}, o);
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(fs::exists(trace)) << "no trace, not even a partial one";
  EXPECT_NE(r.err.find("gradwire simulate: out of memory in the simulation child (std::bad_alloc): "),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("error:"), std::string::npos) << r.err;
  EXPECT_FALSE(gw::test::looks_like_crash(r.err)) << r.err;
}

TEST(Process, OutOfMemoryInASweepPointIsOneLineNamingThePointAndAHint) {
  // The same 65,536 GPUs as a sweep point: its record said only "out of
  // memory in the simulation child (std::bad_alloc)" and the sweep "1 point
  // ended in an error"; now that line names the point, what ran out and what
  // to do, and the file keeps the other point's record (a rerun retries).
  const fs::path dir = gw::test::scratch_dir("process-oom-sweep");
  write(dir / "s.yaml", "base: " + kDefault + "\nevaluator: simulation\naxes:\n  cluster.nodes: [1, 8192]\n");
  gw::test::RunOptions o;
  o.timeout_s = 180;
  ASSERT_GT(startup_address_space(), 0u);
  o.address_space = startup_address_space() + (192ull << 20);
  const fs::path out = dir / "r.jsonl";
  const auto r =
      run({kBin, "sweep", (dir / "s.yaml").string(), "-j", "1", "--progress", "none", "--out", out.string()}, o);
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_NE(r.err.find(out.string() +
                       ": 1 point ended in an error (status \"error\" records); rerun to retry them; "
                       "sweep point 1 (cluster.nodes=8192): out of memory in the simulation child (std::bad_alloc): "
                       "free memory, run fewer workers (-j) or raise the limit (ulimit -v)\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("error:"), std::string::npos) << r.err;
  EXPECT_FALSE(gw::test::looks_like_crash(r.err)) << r.err;
  const std::string records = gw::test::read_text(out);
  EXPECT_NE(records.find("\"index\":0,"), std::string::npos) << records;
  EXPECT_NE(records.find("\"status\":\"ok\""), std::string::npos) << records;
  EXPECT_NE(records.find("\"status\":\"error\""), std::string::npos) << records;
}

TEST(Process, OutOfMemoryInGradwireItselfIsSaidInWords) {
  // A 6 MB model description read in 40 MiB of address space beyond what
  // gradwire needs to start.
  const fs::path dir = gw::test::scratch_dir("process-oom-parent");
  {
    std::ofstream f(dir / "big-model.yaml");
    f << "schema: gradwire-model/1\nname: big\ntensors:\n";
    for (int i = 0; i < 80000; ++i)
      f << "  - {name: t" << i << ".bias, shape: [10], numel: 10, dtype: fp32, forward_flops: 10}\n";
  }
  gw::test::RunOptions o;
  o.timeout_s = 120;
  ASSERT_GT(startup_address_space(), 0u);
  o.address_space = startup_address_space() + (40ull << 20);
  const auto r = run({kBin, "check", "--kind", "model", (dir / "big-model.yaml").string()}, o);
  EXPECT_EQ(r.exit_code, 1) << r.all();
  EXPECT_EQ(r.err.rfind("gradwire check: out of memory (std::bad_alloc): ", 0), 0u) << r.err;
  EXPECT_FALSE(gw::test::looks_like_crash(r.err)) << r.err;
}
#endif

}  // namespace
