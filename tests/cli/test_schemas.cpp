// Documented, versioned outputs (issue 16, item 6): the real JSON outputs of
// the executable (simulate of every bundled scenario, sweep records, plan,
// collective) validate against docs/schemas/*.schema.json, whose objects
// forbid fields they do not document; each starts with its "schema" field;
// results records written before that field still read, resume and merge.
// The validator (schema_validator.hpp) is tested on documents that must fail.
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <algorithm>
#include <functional>
#include <set>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gradwire/core/output_schema.hpp"
#include "gradwire/plan/result_fields.hpp"
#include "gradwire/plan/results_file.hpp"
#include "run_util.hpp"
#include "schema_validator.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string kBin = GW_GRADWIRE_BIN;
const std::string kSource = GW_SOURCE_DIR;

gw::test::SchemaValidator schema(const std::string& name) {
  std::ifstream in(kSource + "/docs/schemas/" + name + ".schema.json");
  return gw::test::SchemaValidator(json::parse(in));
}

fs::path scratch(const std::string& name) { return gw::test::temp_scratch("gradwire-schemas", name); }

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

/// `text` is one JSON object whose first field is "schema": `name`, and valid against `v`.
void expect_valid(const gw::test::SchemaValidator& v, const std::string& text, const std::string& name,
                  const std::string& what) {
  const auto ordered = nlohmann::ordered_json::parse(text);
  ASSERT_TRUE(ordered.is_object()) << what;
  ASSERT_FALSE(ordered.empty()) << what;
  EXPECT_EQ(ordered.begin().key(), "schema") << what;
  EXPECT_EQ(ordered.begin().value(), name) << what;
  const auto errors = v.validate(json::parse(text));
  EXPECT_TRUE(errors.empty()) << what << ":\n" << join(errors);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(line);
  return out;
}

// The validator itself: each document below breaks one rule and must fail.
TEST(Schemas, ValidatorRejectsWhatTheSchemaForbids) {
  const auto v = gw::test::SchemaValidator(json::parse(R"({
    "$defs": {"p": {"type": "object", "properties": {"x": {"type": "integer", "minimum": 0}},
                    "required": ["x"], "additionalProperties": false}},
    "type": "object",
    "properties": {"schema": {"const": "s/1"}, "kind": {"type": "string", "enum": ["a", "b"]},
                   "n": {"type": ["number", "null"], "minimum": 1},
                   "list": {"type": "array", "items": {"$ref": "#/$defs/p"}},
                   "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1},
                   "opt": {"anyOf": [{"$ref": "#/$defs/p"}, {"type": "null"}]},
                   "map": {"type": "object", "additionalProperties": {"type": "string"}}},
    "required": ["schema", "kind"], "additionalProperties": false})"));
  const json good = json::parse(
      R"({"schema": "s/1", "kind": "a", "n": null, "list": [{"x": 0}], "opt": {"x": 2}, "map": {"k": "v"}, "tags": ["t"]})");
  EXPECT_TRUE(v.validate(good).empty()) << join(v.validate(good));
  const std::vector<std::pair<std::string, std::string>> bad{
      {"undocumented field", R"({"schema": "s/1", "kind": "a", "extra": 1})"},
      {"missing required", R"({"schema": "s/1"})"},
      {"wrong const", R"({"schema": "s/2", "kind": "a"})"},
      {"not in enum", R"({"schema": "s/1", "kind": "c"})"},
      {"wrong type", R"({"schema": "s/1", "kind": 3})"},
      {"below minimum", R"({"schema": "s/1", "kind": "a", "n": 0.5})"},
      {"double for an integer", R"({"schema": "s/1", "kind": "a", "list": [{"x": 1.0}]})"},
      {"item breaks its $ref", R"({"schema": "s/1", "kind": "a", "list": [{"x": 1, "y": 2}]})"},
      {"anyOf: neither", R"({"schema": "s/1", "kind": "a", "opt": {"x": -1}})"},
      {"additionalProperties schema", R"({"schema": "s/1", "kind": "a", "map": {"k": 1}})"},
      {"fewer items than minItems", R"({"schema": "s/1", "kind": "a", "tags": []})"},
  };
  for (const auto& [why, text] : bad) EXPECT_FALSE(v.validate(json::parse(text)).empty()) << why;
  // A keyword the validator does not implement is refused, not ignored.
  EXPECT_THROW(gw::test::SchemaValidator(json::parse(R"({"type": "string", "maxLength": 3})")).validate("abcd"),
               std::invalid_argument);
}

// Every schema file is read by the validator (no keyword it does not check)
// and forbids undocumented fields in every object it describes.
TEST(Schemas, EverySchemaFileIsCheckedAndClosed) {
  for (const char* name : {"iteration", "gradwire-iteration-2", "result", "gradwire-result-2", "plan",
                           "gradwire-plan-2", "collective", "gradwire-collective-2", "validation"}) {
    std::ifstream in(kSource + "/docs/schemas/" + std::string(name) + ".schema.json");
    const json s = json::parse(in);
    EXPECT_EQ(s["$schema"], "https://json-schema.org/draft/2020-12/schema") << name;
    // An object schema without additionalProperties would let any field through.
    std::vector<std::string> open;
    std::function<void(const json&, const std::string&)> walk = [&](const json& node, const std::string& at) {
      if (node.is_object()) {
        if (node.contains("properties") && !node.contains("additionalProperties")) open.push_back(at);
        for (auto it = node.begin(); it != node.end(); ++it) walk(it.value(), at + "/" + it.key());
        if (node.contains("properties")) {
          for (auto it = node["properties"].begin(); it != node["properties"].end(); ++it) {
            EXPECT_TRUE(it.value().contains("description") || it.value().contains("$ref"))
                << name << at << "/" << it.key() << " has no description";
          }
        }
      } else if (node.is_array()) {
        for (std::size_t i = 0; i < node.size(); ++i) walk(node[i], at + "/" + std::to_string(i));
      }
    };
    walk(s, "");
    EXPECT_TRUE(open.empty()) << name << ": " << join(open);
    // Validating anything exercises every keyword of the schema's root.
    EXPECT_NO_THROW(gw::test::SchemaValidator(s).validate(json::object())) << name;
  }
}

TEST(Schemas, SimulateOfEveryBundledScenario) {
  const auto v = schema("gradwire-iteration-2");
  int n = 0;
  for (const auto& e : fs::directory_iterator(kSource + "/scenarios")) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() != ".yaml" || name.rfind("study-", 0) == 0) continue;
    const auto r = gw::test::run({kBin, "simulate", e.path().string(), "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
    expect_valid(v, r.out, "gradwire-iteration/2", name);
    ++n;
  }
  EXPECT_GE(n, 4);
}

// simulate of a scenario with a training target: an instance (priced, with a
// spot price) and a cluster of its own without a price (cost null). The
// time-to-train in hours is the iterations times the iteration in seconds.
TEST(Schemas, SimulateWithTrainingAndCost) {
  const auto v = schema("gradwire-iteration-2");
  const fs::path d = scratch("training");
  const std::string workload =
      "workload:\n  model: resnet50\n  micro_batch: 32\n  precision: fp32\n"
      "  optimizer: {kind: sgd}\ntraining: {samples: 1000000}\n";
  std::ofstream(d / "priced.yaml") << "cluster: {instance: p4d.24xlarge, nodes: 2}\n" << workload;
  std::ofstream(d / "own.yaml") << "cluster:\n  nodes: 2\n  gpus_per_node: 8\n  gpu: a100-80gb\n"
                                   "  intra_node: {bandwidth: 300GB/s, latency: 1us}\n"
                                   "  nics: {count: 1, bandwidth: 100Gbps, latency: 5us}\n"
                                   "  fabric: {topology: switch, latency: 1us}\n"
                                << workload;
  for (const char* name : {"priced.yaml", "own.yaml"}) {
    const auto r = gw::test::run({kBin, "simulate", (d / name).string(), "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
    expect_valid(v, r.out, "gradwire-iteration/2", name);
    const json j = json::parse(r.out);
    const auto& t = j["training"];
    EXPECT_NEAR(t["hours"].get<double>(),
                t["iterations"].get<double>() * j["critical_path"]["total_s"].get<double>() / 3600,
                1e-9 * t["hours"].get<double>())
        << name;
    EXPECT_EQ(j["cost"].is_null(), std::string(name) == "own.yaml") << name;
  }
  const json priced =
      json::parse(gw::test::run({kBin, "simulate", (d / "priced.yaml").string(), "--format", "json"}).out);
  EXPECT_GE(priced["cost"]["billed_s"].get<double>(), priced["training"]["hours"].get<double>() * 3600)
      << "billed time";
  EXPECT_NEAR(priced["cost"]["on_demand_usd"].get<double>(),
              priced["cost"]["billed_s"].get<double>() / 3600 * priced["cost"]["usd_per_hour"].get<double>(), 0.01);
}

// A collective timed by a measured curve (a profile calibrated from the
// bundled A3 Mega log, on its own cluster): the fields it adds ("measured",
// each row's "source") are documented.
TEST(Schemas, CollectiveWithAMeasuredCurve) {
  const auto v = schema("gradwire-collective-2");
  const fs::path d = scratch("measured-curve");
  const std::string profile = (d / "a3mega.yaml").string();
  const auto cal = gw::test::run({kBin, "calibrate", "--from-nccl-tests",
                                  kSource + "/tests/data/nccl-tests/a3mega-2x8-h100-all_reduce_perf.log", "--profile",
                                  "h100", "--out", profile});
  ASSERT_EQ(cal.exit_code, 0) << cal.err;
  std::ifstream cluster(kSource + "/validation/clusters/h100-a3-mega-2x8.yaml");
  std::ofstream(d / "scenario.yaml") << cluster.rdbuf() << "profile: " << profile << "\n";
  const auto r =
      gw::test::run({kBin, "collective", (d / "scenario.yaml").string(), "--sizes", "4GiB:16GiB", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_valid(v, r.out, "gradwire-collective/2", "measured curve");
  const json doc = json::parse(r.out);
  EXPECT_TRUE(doc.contains("measured"));
  EXPECT_EQ(doc["results"].back()["source"], "modelled");
}

TEST(Schemas, CollectiveOfEveryOp) {
  const auto v = schema("gradwire-collective-2");
  for (const char* op : {"allreduce", "allgather", "reducescatter", "broadcast", "alltoall"}) {
    const auto r = gw::test::run({kBin, "collective", kSource + "/scenarios/resnet50-8xa100.yaml", "--op", op,
                                  "--sizes", "1KiB:1MiB", "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << op << ": " << r.err;
    expect_valid(v, r.out, "gradwire-collective/2", op);
    // Bandwidths in B/s: algbw = size / time.
    const json doc = json::parse(r.out);  // kept alive for the loop (a range over a temporary's member dangles)
    for (const auto& row : doc.at("results")) {
      EXPECT_NEAR(row["algbw_bytes_per_s"].get<double>() * row["time_us"].get<double>() * 1e-6,
                  row["size_bytes"].get<double>(), 1e-9 * row["size_bytes"].get<double>())
          << op;
    }
  }
}

// validate --format json (each kind and both) and collective --compare
// --format json: objects with their schema, valid against validation.schema.json,
// holding what was asked (two cases of each kind, copied with the clusters they name).
TEST(Schemas, ValidateAndCompare) {
  const auto v = schema("validation");
  const fs::path d = scratch("validate");
  fs::copy(kSource + "/validation/clusters", d / "clusters", fs::copy_options::recursive);
  fs::create_directories(d / "collectives");
  fs::create_directories(d / "iterations");
  for (const char* c : {"a7a-pcie-2080ti-nop2p-allreduce.yaml", "a7b-pcie-2080ti-nop2p-allgather.yaml"})
    fs::copy_file(kSource + "/validation/collectives/" + c, d / "collectives" / c);
  for (const char* c : {"b1-resnet50-1x1.yaml", "b1-resnet50-1x2.yaml"})
    fs::copy_file(kSource + "/validation/iterations/" + c, d / "iterations" / c);
  for (const std::string kind : {"collectives", "iterations"}) {
    const auto r = gw::test::run({kBin, "validate", kind, "--cases", (d / kind).string(), "--format", "json"});
    ASSERT_EQ(r.exit_code, 0) << kind << ": " << r.err;
    expect_valid(v, r.out, "gradwire-validation/1", kind);
    const json doc = json::parse(r.out);
    EXPECT_EQ(doc.size(), 2u) << kind << ": the schema and the kind asked for";
    EXPECT_EQ(doc[kind]["cases"].size(), 2u) << kind;
  }
  const auto c = json::parse(
      gw::test::run({kBin, "validate", "collectives", "--cases", (d / "collectives").string(), "--format", "json"})
          .out);
  const auto& point = c["collectives"]["cases"][0]["points"][0];
  EXPECT_NEAR(point["predicted_busbw_bytes_per_s"].get<double>() * point["predicted_time_s"].get<double>(),
              point["size_bytes"].get<double>() * 2 * (2 - 1) / 2, 1e-6 * point["size_bytes"].get<double>())
      << "all-reduce on 2 GPUs: busbw = size / time x 2(n-1)/n";
  const auto compare =
      gw::test::run({kBin, "collective", kSource + "/validation/clusters/rtx2080ti-pcie-1x2.yaml", "--compare",
                     kSource + "/tests/data/nccl-tests/rtx2080ti-1x2-all_gather_perf.log", "--format", "json"});
  ASSERT_EQ(compare.exit_code, 0) << compare.err;
  expect_valid(v, compare.out, "gradwire-compare/1", "collective --compare");
  EXPECT_EQ(json::parse(compare.out)["case"]["op"], "allgather");
}

// A sweep with ok, no_fit and unpriced points (a spelled-out cluster), then
// the bundled accumulation study (instances, prices, a fixed global batch):
// every record and every plan of them.
TEST(Schemas, SweepRecordsAndPlans) {
  const auto rv = schema("gradwire-result-2");
  const auto pv = schema("gradwire-plan-2");
  const fs::path d = scratch("sweep");
  std::ofstream(d / "base.yaml") << "cluster:\n  nodes: 2\n  gpus_per_node: 8\n  gpu: a100-80gb\n"
                                    "  intra_node: {bandwidth: 300GB/s, latency: 1us}\n"
                                    "  nics: {count: 1, bandwidth: 100Gbps, latency: 5us}\n"
                                    "  fabric: {topology: switch, latency: 1us}\n"
                                    "workload:\n  model: gpt2\n  micro_batch: 8\n  precision: fp32\n"
                                    "  optimizer: {kind: adamw}\ntraining: {samples: 1000000}\n";
  std::ofstream(d / "sweep.yaml") << "base: base.yaml\naxes:\n  workload.micro_batch: [8, 4096]\n"
                                     "  workload.compression: [{kind: none}, {kind: powersgd, rank: 4}]\n";
  const std::string own = (d / "own.jsonl").string();
  auto r = gw::test::run({kBin, "sweep", (d / "sweep.yaml").string(), "--out", own, "-j", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string study = (d / "study.jsonl").string();
  r = gw::test::run({kBin, "sweep", kSource + "/scenarios/study-accumulation.yaml", "--out", study, "-j", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::set<std::string> statuses;
  for (const auto& file : {own, study}) {
    for (const auto& line : lines_of(gw::test::read_text(file))) {
      expect_valid(rv, line, "gradwire-result/2", file);
      statuses.insert(json::parse(line)["status"].get<std::string>());
    }
  }
  EXPECT_TRUE(statuses.count("ok") && statuses.count("no_fit")) << "the sweep should cover ok and no_fit";
  // Plans: unpriced (ranked by time), priced, and one where nothing qualifies
  // (exit 1, still a valid document).
  r = gw::test::run({kBin, "plan", own, "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  expect_valid(pv, r.out, "gradwire-plan/2", "unpriced plan");
  EXPECT_FALSE(json::parse(r.out)["priced"].get<bool>());
  EXPECT_GT(json::parse(r.out)["excluded"]["no_fit"].get<int>(), 0);
  r = gw::test::run({kBin, "plan", study, "--format", "json", "--deadline", "1000h", "--budget", "100000"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  expect_valid(pv, r.out, "gradwire-plan/2", "priced plan");
  const json plan = json::parse(r.out);
  EXPECT_TRUE(plan["priced"].get<bool>());
  EXPECT_EQ(plan["request"]["deadline_hours"], 1000.0);
  EXPECT_EQ(plan["request"]["budget_usd"], 100000.0);
  ASSERT_FALSE(plan["groups"].empty());
  ASSERT_TRUE(plan["groups"][0]["recommendation"].is_object());
  const auto& rec = plan["groups"][0]["recommendation"];
  EXPECT_LE(rec["band"]["low_hours"].get<double>(), rec["time_to_train_hours"].get<double>());
  EXPECT_GE(rec["band"]["high_hours"].get<double>(), rec["time_to_train_hours"].get<double>());
  EXPECT_LE(rec["band"]["cost_low_usd"].get<double>(), rec["cost_usd"].get<double>());
  EXPECT_LE(rec["time_to_train_hours"].get<double>(), 1000.0) << "within the deadline";
  r = gw::test::run({kBin, "plan", study, "--format", "json", "--deadline", "1s"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  expect_valid(pv, r.out, "gradwire-plan/2", "plan with nothing qualifying");
  const json none = json::parse(r.out);
  EXPECT_FALSE(none["found"].get<bool>());
  EXPECT_TRUE(none["groups"][0]["recommendation"].is_null());
  EXPECT_GT(none["groups"][0]["excluded"]["over_deadline"].get<int>(), 0);
}

/// `line` (a gradwire-result/2 record) as gradwire-result/1 writes it.
std::string as_v1(const std::string& line) { return gw::plan::to_json(gw::plan::from_json(line), 1); }

// gradwire-result/1 records, with the schema field or from before it (the
// same records under their /1 names), are read, planned, resumed (the file
// goes on in /1, ending byte for byte as a /1 sweep) and merged with each
// other; a merge of /1 and /2 shards is refused in one line; a later schema
// is refused naming the field.
TEST(Schemas, ResultV1RecordsStillWork) {
  const fs::path d = scratch("old");
  const std::string sweep = kSource + "/scenarios/study-accumulation.yaml";
  const std::string full = (d / "full.jsonl").string();
  auto r = gw::test::run({kBin, "sweep", sweep, "--out", full, "-j", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto lines = lines_of(gw::test::read_text(full));
  ASSERT_GE(lines.size(), 2u);
  const std::string lead = "{\"schema\":\"gradwire-result/1\",";
  const auto v1v = schema("result");
  std::vector<std::string> v1;
  for (const auto& l : lines) {
    v1.push_back(as_v1(l));
    EXPECT_NE(v1.back(), l);
    expect_valid(v1v, v1.back(), "gradwire-result/1", "a /1 record");
  }
  auto old = [&](const std::string& line) {  // before the schema field
    EXPECT_EQ(line.rfind(lead, 0), 0u) << line;
    return "{" + line.substr(lead.size());
  };
  // Files of every record, /1 and older: plan reads them as the /2 one.
  std::string v1_text, old_text;
  for (const auto& l : v1) {
    v1_text += l + "\n";
    old_text += old(l) + "\n";
  }
  const fs::path v1_file = d / "v1.jsonl", old_file = d / "old.jsonl";
  std::ofstream(v1_file) << v1_text;
  std::ofstream(old_file) << old_text;
  const auto plan_new = gw::test::run({kBin, "plan", full, "--deadline", "1000h"});
  for (const auto& f : {v1_file, old_file}) {
    const auto plan_old = gw::test::run({kBin, "plan", f.string(), "--deadline", "1000h"});
    EXPECT_EQ(plan_old.exit_code, plan_new.exit_code) << plan_old.err;
    EXPECT_EQ(plan_old.out.substr(plan_old.out.find('\n')), plan_new.out.substr(plan_new.out.find('\n')));
  }
  // Resume a /1 file holding the first point only: the rest is written in
  // /1 too, and the file is the /1 sweep byte for byte.
  const fs::path part = d / "part.jsonl";
  std::ofstream(part) << v1[0] << "\n";
  r = gw::test::run({kBin, "sweep", sweep, "--out", part.string(), "-j", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(gw::test::read_text(part), v1_text);
  // Resume a file from before the schema field: its record kept as written, the rest /1.
  std::ofstream(part, std::ios::trunc) << old(v1[0]) << "\n";
  r = gw::test::run({kBin, "sweep", sweep, "--out", part.string(), "-j", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto resumed = lines_of(gw::test::read_text(part));
  ASSERT_EQ(resumed.size(), lines.size());
  EXPECT_EQ(resumed[0], old(v1[0]));
  for (std::size_t i = 1; i < lines.size(); ++i) EXPECT_EQ(resumed[i], v1[i]);
  // Merge: an old shard and a /1 one overlapping on every point.
  const fs::path merged = d / "merged.jsonl";
  r = gw::test::run({kBin, "merge", merged.string(), old_file.string(), v1_file.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(gw::test::read_text(merged)).size(), lines.size());
  // A /1 shard and a /2 one: refused in one line naming the /2 record and
  // the /1 one, nothing written.
  const fs::path mixed = d / "mixed.jsonl";
  r = gw::test::run({kBin, "merge", mixed.string(), v1_file.string(), full});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("full.jsonl:1:1: schema"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("v1.jsonl:1"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(mixed));
  // A file with a /1 and a /2 record is not resumed.
  std::ofstream(part, std::ios::trunc) << v1[0] << "\n" << lines[1] << "\n";
  r = gw::test::run({kBin, "sweep", sweep, "--out", part.string(), "-j", "2"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("part.jsonl:2:1: schema"), std::string::npos) << r.err;
  // A record of a later schema is refused, naming the field.
  const fs::path future = d / "future.jsonl";
  std::ofstream(future) << "{\"schema\":\"gradwire-result/3\"," << old(v1[0]).substr(1) << "\n";
  r = gw::test::run({kBin, "plan", future.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("future.jsonl:1:1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("schema"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gradwire-result/2"), std::string::npos) << r.err;
}

}  // namespace

// --- The sweep record's field table (result_fields.hpp) and its schemas ------------

namespace {

using gw::plan::FieldType;
using gw::plan::RecordField;

/// The schema's "type" a row of `type` has (without null).
std::string json_type(FieldType type) {
  switch (type) {
    case FieldType::Count:
      return "integer";
    case FieldType::Number:
      return "number";
    case FieldType::String:
      return "string";
    case FieldType::StringList:
      return "array";
    case FieldType::StringMap:
    case FieldType::Object:
      return "object";
  }
  return "";
}

/// Every row of `rows` a record of `version` has is a property of `object`
/// (a schema object) under the version's name, of the row's type, nullable as
/// the row, required exactly when written always; every property of `object`
/// (but the record's "schema") is such a row.
void expect_schema_is_table(const json& object, const std::vector<RecordField>& rows, int version,
                            const std::string& at) {
  const json& props = object.at("properties");
  const json required = object.value("required", json::array());
  std::set<std::string> names;
  for (const auto& row : rows) {
    if (row.since > version) continue;
    const std::string name = version == 1 ? row.v1_name : row.name;
    names.insert(name);
    ASSERT_TRUE(props.contains(name)) << at << name << ": a row of the table, not in the schema";
    const json& p = props[name];
    const json want = row.nullable ? json::array({json_type(row.type), "null"}) : json(json_type(row.type));
    EXPECT_EQ(p.value("type", json()), want) << at << name;
    const bool listed = std::find(required.begin(), required.end(), name) != required.end();
    EXPECT_EQ(listed, row.written_always) << at << name << ": required in the schema iff always written";
    if (row.type == FieldType::Count || row.type == FieldType::Number)
      EXPECT_GE(p.value("minimum", -1.0), 0.0) << at << name << ": the reader refuses negative numbers";
    if (row.type == FieldType::StringMap) EXPECT_EQ(p.at("additionalProperties").at("type"), "string") << at << name;
    if (row.type == FieldType::StringList) {
      EXPECT_EQ(p.at("items").at("type"), "string") << at << name;
      EXPECT_EQ(p.value("minItems", 0), 1) << at << name;
    }
    if (row.type == FieldType::Object) expect_schema_is_table(p, row.fields, version, at + name + ".");
  }
  for (auto it = props.begin(); it != props.end(); ++it) {
    if (at.empty() && it.key() == "schema") continue;
    EXPECT_TRUE(names.count(it.key())) << at << it.key() << ": in the schema, not a row of the table";
  }
}

std::ifstream schema_file(const std::string& name) {
  return std::ifstream(kSource + "/docs/schemas/" + name + ".schema.json");
}

}  // namespace

// The committed schemas of both record versions say what the field table
// says, both ways (a field added to one and not the other fails here).
TEST(Schemas, ResultSchemasAreTheFieldTable) {
  auto v2 = schema_file("gradwire-result-2");
  auto v1 = schema_file("result");
  const json s2 = json::parse(v2), s1 = json::parse(v1);
  EXPECT_EQ(s2["properties"]["schema"]["const"], gw::kResultSchema);
  EXPECT_EQ(s1["properties"]["schema"]["const"], gw::kResultSchemaV1);
  expect_schema_is_table(s2, gw::plan::result_fields(), 2, "");
  expect_schema_is_table(s1, gw::plan::result_fields(), 1, "");
}

namespace {

/// A record line with every row of `rows` set to a value of its type (the
/// figures distinct, so a field written under another's name would show);
/// built from the table, so a new row is covered without a change here.
nlohmann::ordered_json every_field(const std::vector<RecordField>& rows, double& x) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& row : rows) {
    const std::string name = row.name;
    auto& v = j[name];
    switch (row.type) {
      case FieldType::Count:
        v = name == "index" ? 3 : name == "of" ? 8 : static_cast<int>(x += 1);
        break;
      case FieldType::Number:
        v = (x += 1.5);
        break;
      case FieldType::String:
        v = name == "status" ? "ok" : name + " text";
        break;
      case FieldType::StringMap:
        v = {{name + " key", "value"}};
        break;
      case FieldType::StringList:
        v = {name + " item"};
        break;
      case FieldType::Object:
        v = every_field(row.fields, x);
        break;
    }
  }
  return j;
}

/// Every row (of `version`) is a key of `j`, and `j` has no other.
void expect_every_row_written(const nlohmann::ordered_json& j, const std::vector<RecordField>& rows, int version,
                              const std::string& at) {
  std::size_t n = 0;
  for (const auto& row : rows) {
    const std::string name = version == 1 ? row.v1_name : row.name;
    ASSERT_TRUE(j.contains(name)) << at << name;
    ++n;
    if (row.type == FieldType::Object) expect_every_row_written(j[name], row.fields, version, at + name + ".");
  }
  EXPECT_EQ(j.size(), n + (at.empty() ? 1 : 0)) << at << ": fields no row describes";  // + "schema"
}

}  // namespace

// Writer and reader are the table: a line with every row of the table set
// reads and writes back to itself, in both versions (under the version's
// names, every row written, no other field); it is valid against its schema.
TEST(Schemas, EveryTableFieldIsWrittenAndRead) {
  double x = 0;
  nlohmann::ordered_json full{{"schema", gw::kResultSchema}};
  full.update(every_field(gw::plan::result_fields(), x));
  const std::string line = full.dump();
  const auto record = gw::plan::from_json(line, "full", 1);
  EXPECT_EQ(gw::plan::to_json(record), line);
  for (int version : {1, 2}) {
    const std::string written = gw::plan::to_json(record, version);
    expect_every_row_written(nlohmann::ordered_json::parse(written), gw::plan::result_fields(), version, "");
    int read_version = 0;
    const auto back = gw::plan::from_json(written, "full", 1, &read_version);
    EXPECT_EQ(read_version, version);
    EXPECT_EQ(gw::plan::to_json(back, version), written);
  }
  expect_valid(schema("gradwire-result-2"), line, "gradwire-result/2", "every field");
}
