// The three units under the sweep, alone: the key-path and mixed-radix
// helpers, the ResultRecord's JSON round trip (real results files and a fresh
// sweep of a bundled study), and the signal guard of the worker pool.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <new>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "gradwire/core/atomic_file.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/model/key_path.hpp"
#include "gradwire/plan/sweep.hpp"
#include "gradwire/plan/worker_pool.hpp"

namespace gw::plan {
namespace {

namespace fs = std::filesystem;

// --- Key paths and mixed radix ------------------------------------------------

TEST(KeyPath, SplitsUnderAndOverlap) {
  EXPECT_EQ(split_key("cluster.nics.bandwidth"), (std::vector<std::string>{"cluster", "nics", "bandwidth"}));
  EXPECT_EQ(split_key("profile"), (std::vector<std::string>{"profile"}));
  EXPECT_TRUE(key_under("cluster.nodes", "cluster"));
  EXPECT_TRUE(key_under("cluster", "cluster"));
  EXPECT_TRUE(key_under("axes[2]", "axes"));
  EXPECT_FALSE(key_under("clusters", "cluster"));
  EXPECT_FALSE(key_under("cluster", "cluster.nodes"));
  EXPECT_TRUE(keys_overlap("cluster", "cluster.gpu"));
  EXPECT_TRUE(keys_overlap("cluster.gpu", "cluster"));
  EXPECT_FALSE(keys_overlap("cluster.gpu", "cluster.nodes"));
}

TEST(KeyPath, MarkAtFindsTheNodeOrItsDeepestAncestorWithoutInsertingAnything) {
  const YAML::Node root = YAML::Load("a:\n  b:\n    - x\n    - c: 1\n  d: 2\n");
  const auto c = mark_at(root, "a.b[1].c");
  EXPECT_EQ(c.line, 3);
  EXPECT_EQ(c.column, 9);
  const auto d = mark_at(root, "a.d");
  EXPECT_EQ(d.line, 4);
  EXPECT_EQ(d.column, 5);
  const auto missing = mark_at(root, "a.nope.deeper");
  EXPECT_EQ(missing.line, mark_at(root, "a").line) << "the deepest node that exists";
  EXPECT_EQ(mark_at(root, "").line, root.Mark().line);
  EXPECT_FALSE(root["a"]["nope"].IsDefined());
  EXPECT_EQ(YAML::Dump(root), YAML::Dump(YAML::Load("a:\n  b:\n    - x\n    - c: 1\n  d: 2\n"))) << "nothing inserted";
}

TEST(KeyPath, MixedRadixHasTheFirstDigitMostSignificant) {
  EXPECT_EQ(mixed_radix_digits({3, 2, 2}, 0), (std::vector<std::size_t>{0, 0, 0}));
  EXPECT_EQ(mixed_radix_digits({3, 2, 2}, 1), (std::vector<std::size_t>{0, 0, 1}));
  EXPECT_EQ(mixed_radix_digits({3, 2, 2}, 11), (std::vector<std::size_t>{2, 1, 1}));
  EXPECT_EQ(mixed_radix_digits({}, 0), (std::vector<std::size_t>{}));
  // Every index of a 4 x 3 x 5 space once, in order.
  std::size_t i = 0;
  for (std::size_t a = 0; a < 4; ++a)
    for (std::size_t b = 0; b < 3; ++b)
      for (std::size_t c = 0; c < 5; ++c)
        EXPECT_EQ(mixed_radix_digits({4, 3, 5}, i++), (std::vector<std::size_t>{a, b, c}));
}

// --- ResultRecord <-> JSON -------------------------------------------------------

std::vector<std::string> lines_of(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST(ResultRecordJson, RoundTripsEveryRecordOfTheResultsSeeds) {
  std::size_t checked = 0;
  for (const auto& e : fs::directory_iterator(std::string(GW_PLAN_TEST_DIR) + "/../fuzz/seeds/results")) {
    bool partial = false;
    const auto lines = read_results(e.path().string(), &partial);  // every seed is a valid results file
    for (const auto& l : lines) {
      // The seeds were written before records had a schema field: written
      // back with it first, the rest byte for byte.
      const std::string lead = R"({"schema":"gradwire-result/1",)";
      const std::string expected = l.text.rfind(lead, 0) == 0 ? l.text : lead + l.text.substr(1);
      int version = 0;
      const ResultRecord r = from_json(l.text, "seed", 1, &version);
      EXPECT_EQ(version, 1);
      EXPECT_EQ(to_json(r, version), expected) << e.path() << ":" << l.line;
      // The same record as gradwire-result/2 reads back to the same /1 line.
      EXPECT_EQ(to_json(from_json(to_json(r)), 1), expected) << e.path() << ":" << l.line;
      ++checked;
    }
  }
  EXPECT_GE(checked, 10u);
}

TEST(ResultRecordJson, RoundTripsAFreshSweepOfTheCompressionStudy) {
  const std::string dir = (fs::temp_directory_path() / ("gw-record-" + std::to_string(::getpid()))).string();
  fs::create_directories(dir);
  const auto spec = load_sweep(std::string(GW_PLAN_TEST_DIR) + "/../../scenarios/study-compression.yaml");
  RunOptions o;
  o.jobs = 2;
  o.out = dir + "/results.jsonl";
  o.progress = RunOptions::Progress::None;
  run_sweep(spec, o, closed_form_iteration, "closed form");
  const auto lines = lines_of(o.out);
  ASSERT_EQ(lines.size(), spec.points);
  std::set<std::string> statuses;
  for (const auto& line : lines) {
    const ResultRecord r = from_json(line);
    statuses.insert(r.status);
    EXPECT_EQ(to_json(r), line);
    if (r.status != "ok") continue;
    // The band (docs/model.md, "The band") contains the median, downstream too.
    ASSERT_TRUE(r.band.has_value()) << line;
    EXPECT_LE(r.band->iteration_low, *r.iteration);
    EXPECT_GE(r.band->iteration_high, *r.iteration);
    if (r.training) {
      EXPECT_LE(r.band->hours_low.value(), r.training->hours);
      EXPECT_GE(r.band->hours_high.value(), r.training->hours);
    }
    if (r.cost) {
      EXPECT_LE(r.band->on_demand_low.value(), r.cost->on_demand);
      EXPECT_GE(r.band->on_demand_high.value(), r.cost->on_demand);
    }
  }
  EXPECT_TRUE(statuses.count("ok"));
  fs::remove_all(dir);
}

/// A record of point `index` of `of`, sweep "s", key "k=v", with a status
/// and nothing else.
ResultRecord bare_record(std::size_t index, std::size_t of, const std::string& status) {
  ResultRecord r;
  r.index = index;
  r.of = of;
  r.sweep = "s";
  r.key = "k=v";
  r.status = status;
  return r;
}

TEST(ResultRecordJson, WritesOnlyTheFieldsThatAreSetInTheirOrder) {
  ResultRecord r = bare_record(3, 4, "error");
  r.reason = "";
  EXPECT_EQ(to_json(r),
            R"({"schema":"gradwire-result/2","index":3,"of":4,"sweep":"s","key":"k=v","status":"error","reason":""})");
  r.status = "invalid";  // (an ok record would need every figure)
  r.reason.reset();
  r.instance.emplace();  // a spelled-out cluster: null
  r.nodes = 2;
  r.global_batch = 64;
  r.cost = CostFigures{1.5, std::nullopt, 3600, 2};
  r.params = StringPairs{{"b", "1"}, {"iteration", "2"}};  // an axis named like a /1 field keeps its name
  r.iteration = 0.25;
  EXPECT_EQ(to_json(r), R"({"schema":"gradwire-result/2","index":3,"of":4,"sweep":"s","key":"k=v",)"
                        R"("params":{"b":"1","iteration":"2"},"status":"invalid",)"
                        R"("instance":null,"nodes":2,"global_batch":64.0,"iteration_s":0.25,)"
                        R"("cost":{"on_demand_usd":1.5,"spot_usd":null,"billed_s":3600.0,"usd_per_hour":2.0}})");
  EXPECT_EQ(to_json(from_json(to_json(r))), to_json(r));
  // The same record as gradwire-result/1 (a sweep resuming a /1 file): the /1 names, in the same order.
  const std::string v1 = to_json(r, 1);
  EXPECT_EQ(v1, R"({"schema":"gradwire-result/1","index":3,"of":4,"sweep":"s","key":"k=v",)"
                R"("params":{"b":"1","iteration":"2"},"status":"invalid",)"
                R"("instance":null,"nodes":2,"global_batch":64.0,"iteration":0.25,)"
                R"("cost":{"on_demand":1.5,"spot":null,"billed_seconds":3600.0,"usd_per_hour":2.0}})");
  int version = 0;
  const ResultRecord back = from_json(v1, "f", 1, &version);
  EXPECT_EQ(version, 1);
  EXPECT_EQ(to_json(back, version), v1);
  EXPECT_EQ(to_json(from_json(v1)), to_json(r));
  EXPECT_THROW(to_json(r, 3), std::invalid_argument);
}

TEST(ResultRecordJson, FromJsonChecksTheRecord) {
  try {
    from_json(R"({"index":5,"of":5,"sweep":"s","key":"k","status":"ok"})", "f.jsonl", 9);
    FAIL() << "index >= of accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 9);
    EXPECT_EQ(e.key(), "index");
  }
  EXPECT_THROW(from_json("[1]"), InputError);
  EXPECT_THROW(from_json("{"), InputError);
}

// measured_collectives (docs/model.md, "Collectives measured on the
// cluster"): written after the wire bytes only when set, read back, and a
// value that is not a list of strings is refused naming the field.
TEST(ResultRecordJson, MeasuredCollectivesAreWrittenWhenSetAndChecked) {
  ResultRecord r = bare_record(0, 1, "invalid");
  r.wire_bytes_per_gpu = 8;
  r.measured_collectives = std::vector<std::string>{"allreduce on 16 GPUs, 2 nodes"};
  const std::string line = to_json(r);
  EXPECT_NE(line.find(R"("wire_per_gpu_bytes":8.0,"measured_collectives":["allreduce on 16 GPUs, 2 nodes"])"),
            std::string::npos)
      << line;
  EXPECT_EQ(from_json(line).measured_collectives, r.measured_collectives);
  EXPECT_EQ(to_json(from_json(line)), line);
  r.measured_collectives.reset();
  EXPECT_EQ(to_json(r).find("measured_collectives"), std::string::npos);
  for (const char* bad :
       {R"("measured_collectives":"allreduce")", R"("measured_collectives":[3])", R"("measured_collectives":[])"}) {
    SCOPED_TRACE(bad);
    try {
      from_json(std::string(R"({"index":0,"of":1,"sweep":"s","key":"k","status":"invalid",)") + bad + "}", "f", 2);
      FAIL() << "accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.key(), "measured_collectives");
    }
  }
}

// Records written before the schema field read as gradwire-result/1; another
// schema is refused naming the field; the two forms of one record are the same.
TEST(ResultRecordJson, SchemaFieldIsOptionalAndChecked) {
  const std::string old = R"({"index":1,"of":2,"sweep":"s","key":"k","status":"error","reason":"x"})";
  const ResultRecord r = from_json(old);
  EXPECT_EQ(to_json(r, 1), R"({"schema":"gradwire-result/1",)" + old.substr(1));
  EXPECT_EQ(to_json(r), R"({"schema":"gradwire-result/2",)" + old.substr(1));
  try {
    from_json(R"({"schema":"gradwire-result/3",)" + old.substr(1), "f.jsonl", 4);
    FAIL() << "schema gradwire-result/3 accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 4);
    EXPECT_EQ(e.key(), "schema");
  }
  EXPECT_THROW(from_json(R"({"schema":1,)" + old.substr(1)), InputError);
  ResultLine a, b, c;
  a.text = old;
  b.text = to_json(r, 1);
  c.text = R"({"schema":"gradwire-result/1",)" + old.substr(1, old.size() - 5) + R"("y"})";
  EXPECT_TRUE(same_record(a, b));
  EXPECT_TRUE(same_record(b, a));
  EXPECT_FALSE(same_record(a, c));
  EXPECT_FALSE(same_record(b, c));
}

// An error in a record names the field as its line does: the /1 name in a
// gradwire-result/1 (or schema-less) record, the /2 name in a /2 one.
TEST(ResultRecordJson, ErrorsNameTheFieldOfTheRecordsVersion) {
  const std::string head = R"("index":0,"of":1,"sweep":"s","key":"k","status":"error","reason":"x",)";
  auto key_of = [](const std::string& line) {
    try {
      from_json(line, "f.jsonl", 2);
    } catch (const InputError& e) {
      return e.key();
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(key_of("{" + head + R"("band":{"iteration_low":"a"}})"), "band.iteration_low");
  EXPECT_EQ(key_of(R"({"schema":"gradwire-result/1",)" + head + R"("iteration":-1.0})"), "iteration");
  EXPECT_EQ(key_of(R"({"schema":"gradwire-result/2",)" + head + R"("iteration_s":-1.0})"), "iteration_s");
  EXPECT_EQ(key_of(R"({"schema":"gradwire-result/2",)" + head + R"("memory":{"capacity_bytes":1.0}})"),
            "memory.total_bytes");
  // A /1 name in a /2 record is a field /2 does not type: ignored, not read.
  const auto r = from_json(R"({"schema":"gradwire-result/2",)" + head + R"("iteration":1.0})");
  EXPECT_FALSE(r.iteration.has_value());
}

// A file holds records of one version: records_version names the first
// record of another.
TEST(ResultRecordJson, OneVersionPerFile) {
  ResultRecord r;
  r.of = 2;
  r.sweep = "s";
  r.status = "error";
  r.reason = "x";
  std::vector<ResultLine> lines{parse_result_line(to_json(r, 1), "a.jsonl", 1)};
  r.index = 1;
  lines.push_back(parse_result_line(to_json(r), "b.jsonl", 7));
  EXPECT_EQ(records_version({lines[0]}), 1);
  EXPECT_EQ(records_version({lines[1]}), 2);
  EXPECT_EQ(records_version({}), kResultVersion);
  try {
    records_version(lines);
    FAIL() << "a /1 and a /2 record in one file accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "b.jsonl");
    EXPECT_EQ(e.line(), 7);
    EXPECT_EQ(e.key(), "schema");
    EXPECT_NE(e.reason().find("a.jsonl:1"), std::string::npos) << e.reason();
  }
}

// --- The signal guard ------------------------------------------------------------

int g_custom = 0;
extern "C" void custom_handler(int) { g_custom = 1; }

void (*handler_of(int sig))(int) {
  struct sigaction now {};
  sigaction(sig, nullptr, &now);
  return now.sa_handler;
}

TEST(StopSignalGuard, TurnsSigtermIntoAStopRequestAndRestoresTheHandlersBefore) {
  struct sigaction custom {
  }, old_int{}, old_term{};
  custom.sa_handler = custom_handler;
  sigemptyset(&custom.sa_mask);
  sigaction(SIGINT, &custom, &old_int);
  sigaction(SIGTERM, &custom, &old_term);
  {
    const StopSignalGuard guard;
    EXPECT_FALSE(StopSignalGuard::stop_requested());
    EXPECT_NE(handler_of(SIGINT), custom_handler);
    EXPECT_NE(handler_of(SIGTERM), custom_handler);
    ::raise(SIGTERM);  // this process lives on: only a stop request
    EXPECT_TRUE(StopSignalGuard::stop_requested());
    EXPECT_EQ(g_custom, 0);
  }
  EXPECT_EQ(handler_of(SIGINT), custom_handler);
  EXPECT_EQ(handler_of(SIGTERM), custom_handler);
  {
    const StopSignalGuard again;
    EXPECT_FALSE(StopSignalGuard::stop_requested()) << "a new guard starts without a stop request";
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
}

TEST(WorkerPool, ReadsEachWorkersLineAndNamesAWorkerThatFailed) {
  WorkerPool pool(
      [](std::size_t index) -> std::string {
        if (index == 1) throw std::runtime_error("no line");
        return "point " + std::to_string(index);
      },
      -1);
  pool.spawn(0, 0);
  pool.spawn(1, 1);
  EXPECT_TRUE(pool.busy(0));
  EXPECT_THROW(pool.spawn(2, 0), std::logic_error) << "slot 0's worker is busy";
  std::map<std::size_t, WorkerPool::Finished> done;
  while (pool.running() > 0)
    for (auto& f : pool.collect(200)) done.emplace(f.index, std::move(f));
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].line(), std::optional<std::string>("point 0"));
  EXPECT_FALSE(done[1].line());
  EXPECT_EQ(done[1].failure(), "the worker failed (exit 4)");
  // A worker evaluates its slot's points one after another; slot 1's next
  // point gets a new worker.
  EXPECT_FALSE(pool.busy(0));
  pool.spawn(2, 0);
  pool.spawn(3, 1);
  pool.spawn(4, 2);
  done.clear();
  while (pool.running() > 0)
    for (auto& f : pool.collect(200)) done.emplace(f.index, std::move(f));
  ASSERT_EQ(done.size(), 3u);
  for (std::size_t i = 2; i <= 4; ++i)
    EXPECT_EQ(done[i].line(), std::optional<std::string>("point " + std::to_string(i)));
}

TEST(WorkerPool, AWorkerThatRunsOutOfMemoryOrIsKilledIsSaidInWords) {
  // A job whose std::bad_alloc escapes (not even an error record could be
  // made) ended as "the worker failed (exit 4)"; a SIGKILL named no sender.
  WorkerPool pool(
      [](std::size_t index) -> std::string {
        if (index == 0) throw std::bad_alloc();
        ::raise(SIGKILL);
        return "";
      },
      -1);
  pool.spawn(0, 0);
  pool.spawn(1, 1);
  std::map<std::size_t, WorkerPool::Finished> done;
  while (pool.running() > 0)
    for (auto& f : pool.collect(200)) done.emplace(f.index, std::move(f));
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].failure(),
            "the worker ran out of memory (std::bad_alloc): free memory, run fewer workers (-j) or raise the limit "
            "(ulimit -v)");
  EXPECT_EQ(done[1].failure(),
            "the worker died with signal 9 (SIGKILL: the kernel's out-of-memory killer, or another process)");
}

TEST(WorkerPool, OnePointPerWorkerGivesEveryPointAFreshWorker) {
  static int calls = 0;
  WorkerPool pool([](std::size_t index) { return std::to_string(index) + ":" + std::to_string(++calls); }, -1, true);
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < 3; ++i) {
    pool.spawn(i, 0);
    while (pool.running() > 0)
      for (auto& f : pool.collect(200)) lines.push_back(f.line().value_or("none"));
  }
  EXPECT_EQ(lines, (std::vector<std::string>{"0:1", "1:1", "2:1"})) << "each a copy of this process";
}

TEST(WorkerPool, AWorkerKeepsWhatItsEarlierJobsLeftAndEndsWithItsSlotsPoints) {
  // The same process runs a slot's jobs: its memory carries over (the
  // sweep's evaluator must give the same record whatever ran before).
  static int calls = 0;
  WorkerPool pool([](std::size_t index) { return std::to_string(index) + ":" + std::to_string(++calls); }, -1);
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < 3; ++i) {
    pool.spawn(i, 0);
    while (pool.running() > 0)
      for (auto& f : pool.collect(200)) lines.push_back(f.line().value_or("none"));
  }
  EXPECT_EQ(lines, (std::vector<std::string>{"0:1", "1:2", "2:3"}));
  EXPECT_EQ(calls, 0) << "the jobs ran in the worker, not here";
}

}  // namespace
}  // namespace gw::plan
