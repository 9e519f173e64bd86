// Where the hooks' steps ran, as the user sees it (docs/model.md, "Where the
// hooks' kernels run"; docs/outputs.md, `codec_streams`): on
// scenarios/bert-large-powersgd.yaml (powerSGD_hook) and the same scenario
// with the fp16 hook, in the replay and in the closed form, the table's codec
// rows, the JSON's codec_streams and the trace's tracks all give each step's
// time to the stream the plan put it on, and their sums are the plan's.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "gradwire/model/closed_form.hpp"
#include "gradwire/model/model_desc.hpp"
#include "gradwire/model/profile.hpp"
#include "gradwire/model/scenario.hpp"
#include "gradwire/model/scenario_refs.hpp"
#include "gradwire/replay/replay.hpp"
#include "gradwire/replay/report.hpp"

namespace gw {
namespace {

struct Case {
  Scenario scenario;
  ModelDesc model;
  Profile profile;
};

Case bert_large(const std::string& compression) {
  const std::string path = std::string(GW_SOURCE_DIR) + "/scenarios/bert-large-powersgd.yaml";
  Case c{load_scenario(path), {}, {}};
  const ScenarioRefs refs = resolve_scenario_references(c.scenario, path, std::nullopt);
  c.model = *refs.model;
  c.profile = refs.profile;
  c.scenario.workload->compression.kind = compression;
  return c;
}

/// The closed form of the split: each bucket's codec steps summed by where
/// the plan puts them (the first on_compute_stream steps on the compute
/// stream, the last on_side_stream on the side stream, the rest on the comm
/// stream), at their planned seconds (no codec slow-down: g is unset).
CodecStreams planned(const IterationPlan& plan) {
  CodecStreams c;
  for (const auto& bc : plan.comm)
    for (std::size_t i = 0; i < bc.steps.size(); ++i) {
      const auto& s = bc.steps[i];
      if (s.kind == CommStep::Kind::Collective) continue;
      CodecTime& t = i < bc.on_compute_stream ? c.compute : i >= bc.steps.size() - bc.on_side_stream ? c.side : c.comm;
      (s.kind == CommStep::Kind::Encode ? t.encode : t.decode) += s.seconds;
    }
  return c;
}

void expect_rel(double got, double want, const std::string& what, double rel = 1e-9) {
  EXPECT_LE(std::abs(got - want), rel * std::max(std::abs(want), 1e-12)) << what << ": " << got << " vs " << want;
}

void expect_split(const CodecStreams& got, const CodecStreams& want, const std::string& where) {
  expect_rel(got.compute.encode, want.compute.encode, where + " compute encode");
  expect_rel(got.compute.decode, want.compute.decode, where + " compute decode");
  expect_rel(got.comm.encode, want.comm.encode, where + " comm encode");
  expect_rel(got.comm.decode, want.comm.decode, where + " comm decode");
  expect_rel(got.side.encode, want.side.encode, where + " side encode");
  expect_rel(got.side.decode, want.side.decode, where + " side decode");
}

/// The table's codec rows (label -> ms).
std::map<std::string, double> codec_rows(const std::string& table) {
  std::map<std::string, double> rows;
  std::istringstream in(table);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("  encode (", 0) != 0 && line.rfind("  decode (", 0) != 0 && line.rfind("  codecs,", 0) != 0)
      continue;
    std::string label = line.substr(0, 34);
    label.erase(label.find_last_not_of(' ') + 1);
    rows[label] = std::stod(line.substr(34, 12));
  }
  return rows;
}

/// `after`: what the rows of the steps off the compute stream say of them,
/// "overlapped" or, where the hook holds the host until they end (PowerSGD's
/// synchronize), "host waits".
void check_table(const IterationResult& r, const CodecStreams& c, const std::string& after, const std::string& where) {
  const auto rows = codec_rows(format_table(r));
  const auto at = [&](const std::string& label) { return rows.count(label) ? rows.at(label) : 0.0; };
  const double ms = 0.0005 + 1e-9;  // the table rounds to 1 us
  EXPECT_NEAR(at("  encode (compute stream, in bwd)"), c.compute.encode * 1e3, ms) << where;
  EXPECT_NEAR(at("  encode (comm stream, " + after + ")"), c.comm.encode * 1e3, ms) << where;
  EXPECT_NEAR(at("  decode (comm stream, " + after + ")"), c.comm.decode * 1e3, ms) << where;
  EXPECT_NEAR(at("  decode (side stream, " + after + ")"), c.side.decode * 1e3, ms) << where;
  EXPECT_GT(c.comm.encode + c.side.decode, 0) << where;
  double sum = 0;
  for (const auto& [label, value] : rows)
    if (label.rfind("  codecs,", 0) != 0) sum += value;
  EXPECT_NEAR(sum, (r.encode + r.decode) * 1e3, ms * static_cast<double>(rows.size())) << where;
  ASSERT_TRUE(rows.count("  codecs, all streams")) << where;
  EXPECT_NEAR(rows.at("  codecs, all streams"), (r.encode + r.decode) * 1e3, ms) << where;
}

void check_json(const IterationResult& r, const CodecStreams& c, const std::string& where) {
  const auto j = nlohmann::json::parse(result_to_json(r));
  ASSERT_TRUE(j.contains("codec_streams")) << where;
  const auto& s = j.at("codec_streams");
  const auto field = [&](const char* stream, const char* what) { return s.at(stream).at(what).get<double>(); };
  expect_rel(field("compute_stream", "encode_s"), c.compute.encode, where + " json");
  expect_rel(field("comm_stream", "encode_s"), c.comm.encode, where + " json");
  expect_rel(field("comm_stream", "decode_s"), c.comm.decode, where + " json");
  expect_rel(field("side_stream", "decode_s"), c.side.decode, where + " json");
  double encode = 0, decode = 0;
  for (const char* stream : {"compute_stream", "comm_stream", "side_stream"}) {
    encode += field(stream, "encode_s");
    decode += field(stream, "decode_s");
  }
  // The result's encode and decode, which `seconds` writes.
  expect_rel(encode, r.encode, where + " json encode sum");
  expect_rel(decode, r.decode, where + " json decode sum");
}

// Every codec span lands on its stream's track: a compute-stream step ends by
// its bucket's ready time, a side-stream step starts after its bucket's last
// collective, a comm-stream one in between; the tracks' durations are the
// split and their counts the plan's.
void check_trace(const IterationResult& r, const IterationPlan& plan, const CodecStreams& c, const std::string& where) {
  const auto trace = nlohmann::json::parse(chrome_trace(r));
  std::map<int, std::string> tracks;
  std::map<int, double> seconds;
  std::map<int, int> spans;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "thread_name")
      tracks[e.at("tid").get<int>()] = e.at("args").at("name").get<std::string>();
    if (e.at("ph") != "X" || e.at("cat") != "codec") continue;
    const int tid = e.at("tid").get<int>();
    const auto& b = r.buckets.at(e.at("args").at("bucket").get<std::size_t>());
    const double start = e.at("ts").get<double>() * 1e-6, end = start + e.at("dur").get<double>() * 1e-6;
    double last_collective = b.start;
    for (const auto& st : b.steps)
      if (st.kind == CommStep::Kind::Collective) last_collective = std::max(last_collective, st.end);
    const std::string& track = tracks.at(tid);
    if (track == "hook steps (compute stream)") {
      EXPECT_LE(end, b.ready * (1 + 1e-12)) << where << " bucket " << b.index;
    } else if (track == "hook steps (side stream)") {
      EXPECT_GE(start, last_collective * (1 - 1e-12)) << where << " bucket " << b.index;
    } else {
      EXPECT_EQ(track, "codecs (comm stream)") << where;
      EXPECT_GE(start, b.start * (1 - 1e-12)) << where << " bucket " << b.index;
    }
    seconds[tid] += end - start;
    ++spans[tid];
  }
  int compute_steps = 0, side_steps = 0;
  for (const auto& bc : plan.comm) {
    for (std::size_t i = 0; i < bc.on_compute_stream; ++i) compute_steps += bc.steps[i].seconds > 0;
    for (std::size_t i = bc.steps.size() - bc.on_side_stream; i < bc.steps.size(); ++i)
      side_steps += bc.steps[i].seconds > 0;
  }
  ASSERT_EQ(tracks.at(4), "hook steps (compute stream)") << where;
  ASSERT_EQ(tracks.at(5), "hook steps (side stream)") << where;
  EXPECT_EQ(spans[4], compute_steps) << where;
  EXPECT_EQ(spans[5], side_steps) << where;
  EXPECT_GT(compute_steps, 0) << where;
  EXPECT_GT(side_steps, 0) << where;
  expect_rel(seconds[4], c.compute.encode + c.compute.decode, where + " compute track", 1e-6);
  expect_rel(seconds[5], c.side.encode + c.side.decode, where + " side track", 1e-6);
  expect_rel(seconds[3], c.comm.encode + c.comm.decode, where + " comm track", 1e-6);
}

TEST(HookStreams, TableJsonAndTraceShowWhereEachHookStepRan) {
  for (const char* kind : {"powersgd", "fp16"}) {
    const Case c = bert_large(kind);
    const PreparedIteration prepared = prepare_iteration(c.scenario, c.model, c.profile);
    ASSERT_EQ(prepared.plan.codec_interference, 0.0) << "the closed form below assumes no codec slow-down";
    const CodecStreams want = planned(prepared.plan);
    EXPECT_GT(want.compute.encode, 0) << kind;
    EXPECT_GT(want.side.decode, 0) << kind;
    const IterationResult simulated = simulate_iteration(c.scenario, c.model, c.profile);
    const IterationResult closed = closed_form_iteration(c.scenario, c.model, c.profile);
    for (const IterationResult* r : {&simulated, &closed}) {
      const std::string where = std::string(kind) + ", " + r->method;
      const CodecStreams got = codec_streams(*r);
      expect_split(got, want, where);
      expect_rel(got.compute.encode + got.comm.encode + got.side.encode, r->encode, where + " encode sum");
      expect_rel(got.compute.decode + got.comm.decode + got.side.decode, r->decode, where + " decode sum");
      // PowerSGD's hook holds the host until its bucket's chain ends
      // (docs/model.md, "The PowerSGD hook blocks the backward").
      check_table(*r, got, std::string(kind) == "powersgd" ? "host waits" : "overlapped", where);
      check_json(*r, got, where);
      check_trace(*r, prepared.plan, got, where);
    }
  }
}

// Without a PyTorch hook (int8 has none: its open implementation runs on the
// comm stream) every codec step is on the comm stream: the table keeps its two
// rows, the JSON has no codec_streams and the trace no hook tracks.
TEST(HookStreams, CodecsWithoutAHookStayOnTheCommStream) {
  const Case c = bert_large("int8");
  const IterationResult r = closed_form_iteration(c.scenario, c.model, c.profile);
  ASSERT_GT(r.encode, 0);
  const CodecStreams got = codec_streams(r);
  EXPECT_FALSE(got.off_comm_stream());
  expect_rel(got.comm.encode, r.encode, "int8 encode");
  expect_rel(got.comm.decode, r.decode, "int8 decode");
  const auto rows = codec_rows(format_table(r));
  EXPECT_EQ(rows.size(), 2u);
  EXPECT_TRUE(rows.count("  encode (comm stream, overlapped)"));
  EXPECT_FALSE(nlohmann::json::parse(result_to_json(r)).contains("codec_streams"));
  EXPECT_EQ(chrome_trace(r).find("hook steps"), std::string::npos);
}

// Without overlap the buckets run after the backward: the comm stream's codec
// rows say so (they are exposed, not overlapped).
TEST(HookStreams, WithoutOverlapTheCommStreamCodecsRunAfterTheBackward) {
  Case c = bert_large("int8");
  c.scenario.workload->overlap = false;
  const IterationResult r = closed_form_iteration(c.scenario, c.model, c.profile);
  ASSERT_GT(r.encode, 0);
  ASSERT_GE(r.buckets.front().start, r.backward_end);
  const auto rows = codec_rows(format_table(r));
  EXPECT_EQ(rows.size(), 2u);
  EXPECT_TRUE(rows.count("  encode (comm stream, after bwd)"));
  EXPECT_TRUE(rows.count("  decode (comm stream, after bwd)"));
}

}  // namespace
}  // namespace gw
