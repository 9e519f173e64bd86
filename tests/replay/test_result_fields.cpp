// The iteration result's JSON (gradwire-iteration/2) is made from one table
// of its fields (src/result_json.cpp): the schema that documents it,
// docs/schemas/gradwire-iteration-2.schema.json, is checked against that
// table in both directions (every field the table writes is in the schema
// with its type and its "required"; every property of the schema is a row,
// or one of the few fields written outside the table), and the writer and
// reader made from it round-trip a result.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "gradwire/core/json_fields.hpp"
#include "gradwire/model/memory.hpp"
#include "gradwire/replay/replay.hpp"

namespace gw {
namespace {

using nlohmann::json;

json iteration_schema() {
  std::ifstream in(std::string(GW_SOURCE_DIR) + "/docs/schemas/gradwire-iteration-2.schema.json");
  return json::parse(in);
}

struct SchemaField {
  const json* node;
  bool required;
};

/// Every property of the schema, by its path as json_fields::Info writes it.
void schema_fields(const json& node, const std::string& prefix, std::map<std::string, SchemaField>& out) {
  if (node.contains("properties")) {
    const json required = node.value("required", json::array());
    for (const auto& [key, sub] : node["properties"].items()) {
      const std::string path = prefix.empty() ? key : prefix + "/" + key;
      const bool req = std::find(required.begin(), required.end(), key) != required.end();
      out[path] = {&sub, req};
      schema_fields(sub, path, out);
    }
  }
  if (node.contains("items") && node["items"].is_object()) schema_fields(node["items"], prefix + "[]", out);
}

/// The JSON Schema type of a node: its "type", or its const's.
std::string type_in(const json& node) {
  if (node.contains("type") && node["type"].is_string()) return node["type"];
  if (node.contains("const")) return node["const"].is_boolean() ? "boolean" : node["const"].type_name();
  return "(none)";
}

/// Written outside the table: "schema" (schema_first), memory_per_gpu
/// (result_to_json, from a MemoryBreakdown: checked below), training and
/// cost (the simulate command's, after the iteration: tests/cli/test_schemas.cpp).
bool outside_table(const std::string& path) {
  for (const char* top : {"schema", "memory_per_gpu", "training", "cost"}) {
    const std::string t = top;
    if (path == t || path.rfind(t + "/", 0) == 0) return true;
  }
  return false;
}

TEST(ResultFields, EveryRowIsInTheSchemaWithItsTypeAndRequired) {
  const json schema = iteration_schema();
  std::map<std::string, SchemaField> documented;
  schema_fields(schema, "", documented);
  const auto rows = iteration_json_fields();
  ASSERT_GT(rows.size(), 90u);
  for (const auto& row : rows) {
    const auto it = documented.find(row.path);
    ASSERT_NE(it, documented.end()) << row.path << " is written but not in the schema";
    const json& node = *it->second.node;
    EXPECT_EQ(type_in(node), row.type) << row.path;
    if (!row.items.empty()) {
      ASSERT_TRUE(node.contains("items")) << row.path;
      EXPECT_EQ(type_in(node["items"]), row.items) << row.path;
    }
    EXPECT_EQ(it->second.required, row.always) << row.path << ": required in the schema iff always written";
  }
}

TEST(ResultFields, EverySchemaPropertyIsARow) {
  std::map<std::string, SchemaField> documented;
  schema_fields(iteration_schema(), "", documented);
  std::set<std::string> rows;
  for (const auto& row : iteration_json_fields()) rows.insert(row.path);
  for (const auto& [path, field] : documented) {
    if (!outside_table(path)) {
      EXPECT_TRUE(rows.count(path)) << path << " is in the schema but no row writes it";
    }
  }
}

// memory_per_gpu, the one object result_to_json writes outside the table,
// has exactly the schema's fields.
TEST(ResultFields, MemoryPerGpuHasTheSchemasFields) {
  MemoryBreakdown m;
  m.capacity = 80e9;
  const json written = json::parse(result_to_json(IterationResult{}, -1, &m)).at("memory_per_gpu");
  const json documented = iteration_schema()["properties"]["memory_per_gpu"];
  std::set<std::string> a, b;
  for (const auto& [k, v] : written.items()) a.insert(k);
  for (const auto& [k, v] : documented["properties"].items()) b.insert(k);
  EXPECT_EQ(a, b);
  EXPECT_EQ(documented["required"].size(), b.size());
}

// What the table writes, its reader reads back: every row but the derived
// ones (median = total, compute_under_nccl = interference, quantiles,
// codec_streams), which the writer makes again from what was read.
TEST(ResultFields, TheTablesWriterAndReaderRoundTrip) {
  IterationResult r;
  r.scenario = "s";
  r.method = "simulation";
  r.sync_every_micro_step = true;
  r.accumulation = 4;
  r.compute_measured = "measured on H200, 2026-01-01";
  r.measured_collectives = {"allreduce on 16 GPUs, 2 nodes"};
  r.total = 1.25;
  r.band.jitter_high = 0.5;
  r.interference = 0.0625;
  r.tensor_names = {"a", "b"};
  r.tensor_end = {0.25, 0.5};
  BucketTiming b;
  b.elements = 3;
  b.steps.push_back({"encode", CommStep::Kind::Encode, 0.125, 0.25, 0, false});
  b.steps.push_back({"decode", CommStep::Kind::Decode, 0.25, 0.375, 0, false});
  r.buckets = {b};
  const std::string text = result_to_json(r, -1);
  const json j = json::parse(text);
  EXPECT_EQ(j["no_sync"], false);
  EXPECT_EQ(j["band"]["median_s"], 1.25);
  EXPECT_EQ(j["interference_detail"]["compute_under_nccl"], 0.0625);
  EXPECT_EQ(j["buckets"][0]["steps"][1]["kind"], "decode");
  EXPECT_EQ(result_to_json(result_from_json(text), -1), text);
  const IterationResult plain;  // the conditional fields absent, and read back absent
  const std::string plain_text = result_to_json(plain, -1);
  EXPECT_EQ(json::parse(plain_text).count("no_sync"), 0u);
  EXPECT_EQ(json::parse(plain_text).count("compute_measured"), 0u);
  EXPECT_EQ(result_to_json(result_from_json(plain_text), -1), plain_text);
}

}  // namespace
}  // namespace gw
