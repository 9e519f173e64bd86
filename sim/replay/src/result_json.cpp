// The iteration result's public JSON (gradwire-iteration/2, `simulate
// --format json`; docs/outputs.md) as one table of its fields: the writer
// (result_to_json), the reader (result_from_json) and the schema test
// (iteration_json_fields against docs/schemas/gradwire-iteration-2.schema.json,
// tests/replay/test_result_fields.cpp) are all made from it. Adding a field:
// a row here, its property in the schema.
#include <nlohmann/json.hpp>

#include "gradwire/core/json_fields.hpp"
#include "gradwire/core/output_schema.hpp"
#include "gradwire/replay/replay.hpp"
#include "gradwire/replay/report.hpp"

namespace gw {
namespace {

using json_fields::array;
using json_fields::custom;
using json_fields::member;
using json_fields::object;
using nlohmann::json;
using R = IterationResult;

CommStep::Kind kind_from(const std::string& s) {
  if (s == "encode") return CommStep::Kind::Encode;
  if (s == "decode") return CommStep::Kind::Decode;
  return CommStep::Kind::Collective;
}

json_fields::Table<StepTiming> step_rows() {
  return {member("label", &StepTiming::label),
          custom<StepTiming>(
              "kind", "string", [](const StepTiming& s) { return json(to_string(s.kind)); },
              [](const json& j, StepTiming& s) { s.kind = kind_from(j.get<std::string>()); }),
          member("start_s", &StepTiming::start), member("end_s", &StepTiming::end),
          member("size_bytes", &StepTiming::bytes)};
}

json_fields::Table<BucketTiming> bucket_rows() {
  using B = BucketTiming;
  return {member("index", &B::index),
          member("tensors", &B::tensors),
          member("elements", &B::elements),
          member("size_bytes", &B::bytes),
          member("wire_per_gpu_bytes", &B::wire_bytes_per_gpu),
          member("ready_s", &B::ready),
          member("start_s", &B::start),
          member("end_s", &B::end),
          member("encode_s", &B::encode),
          member("decode_s", &B::decode),
          member("communication_s", &B::communication),
          array("steps", &B::steps, step_rows())};
}

// A member of BandTerms, as a row of the result.
template <double BandTerms::*M>
json_fields::Row<R> term(std::string key) {
  return custom<R>(
      std::move(key), "number", [](const R& r) { return json(r.band.*M); },
      [](const json& j, R& r) { r.band.*M = j.get<double>(); });
}

// Stragglers and the band (docs/model.md, "Stragglers", "The band"), seconds.
json_fields::Row<R> band_row() {
  return object<R>(
      "band",
      {member("low_s", &R::band_low), member("median_s", &R::total).write_only(),  // = critical_path.total_s
       member("high_s", &R::band_high),
       custom<R>(
           "quantiles", "array",
           [](const R&) {
             return json{kBandLowQuantile, kBandHighQuantile};
           },
           nullptr, "number"),
       member("compute_jitter", &R::compute_jitter), member("compute_jitter_source", &R::compute_jitter_source),
       member("compute_spread", &R::compute_spread), member("compute_spread_source", &R::compute_spread_source),
       member("residual_low", &R::residual_low), member("residual_high", &R::residual_high),
       member("residual_cases", &R::residual_cases), member("overlapped_compute_s", &R::overlapped_compute),
       object<R>("terms",
                 {term<&BandTerms::spread_low>("spread_low_s"), term<&BandTerms::spread_high>("spread_high_s"),
                  term<&BandTerms::jitter_low>("jitter_low_s"), term<&BandTerms::jitter_high>("jitter_high_s"),
                  term<&BandTerms::residual_low>("residual_low_s"), term<&BandTerms::residual_high>("residual_high_s"),
                  term<&BandTerms::interference_high>("interference_high_s")})});
}

// Added fields (docs/outputs.md, `codec_streams`): where a PyTorch hook's
// codec time ran, seconds; written only when some ran off the comm stream.
json_fields::Row<R> codec_streams_row() {
  const auto part = [](const CodecTime& t) { return json{{"encode_s", t.encode}, {"decode_s", t.decode}}; };
  const auto streams = [part](const R& r) {
    const CodecStreams c = codec_streams(r);
    return json{{"compute_stream", part(c.compute)}, {"comm_stream", part(c.comm)}, {"side_stream", part(c.side)}};
  };
  const auto stream = [](const char* key) {
    return object<R>(
        key, {custom<R>("encode_s", "number", nullptr, nullptr), custom<R>("decode_s", "number", nullptr, nullptr)});
  };
  json_fields::Row<R> row =
      object<R>("codec_streams", {stream("compute_stream"), stream("comm_stream"), stream("side_stream")});
  row.write = streams;
  row.read = nullptr;  // derived from the buckets' steps
  return std::move(row).when([](const R& r) { return codec_streams(r).off_comm_stream(); });
}

json_fields::Table<R> top_rows() {
  return {member("scenario", &R::scenario),
          member("model", &R::model),
          member("method", &R::method),
          object<R>("profile", {member("name", &R::profile_name), member("source", &R::profile_source),
                                member("detail", &R::profile_detail)}),
          member("world_size", &R::world_size),
          member("micro_batch", &R::micro_batch),
          member("accumulation", &R::accumulation),
          custom<R>(
              "no_sync", "boolean", [](const R&) { return json(false); },
              [](const json& j, R& r) { r.sync_every_micro_step = !j.get<bool>(); })
              .when([](const R& r) { return r.sync_every_micro_step; }),
          member("global_batch", &R::global_batch),
          member("overlap", &R::overlap),
          member("interference", &R::interference),
          object<R>("interference_detail",
                    {member("compute_under_nccl", &R::interference).write_only(),  // = interference
                     member("compute_under_codec", &R::interference_codec),
                     member("codec_under_compute", &R::codec_interference), member("source", &R::interference_source)}),
          member("compute_efficiency", &R::compute_efficiency),
          member("compute_efficiency_default", &R::compute_efficiency_default),
          member("compute_measured", &R::compute_measured).when([](const R& r) { return !r.compute_measured.empty(); }),
          member("measured_collectives", &R::measured_collectives).when([](const R& r) {
            return !r.measured_collectives.empty();
          }),
          member("compression", &R::compression),
          member("compute_precision", &R::compute_precision),
          member("allreduce_algorithm", &R::allreduce_algorithm),
          member("sharding", &R::sharding).when([](const R& r) { return !r.sharding.empty(); })};
}

json_fields::Table<R> figure_rows() {
  return {
      object<R>("critical_path",
                {member("forward_s", &R::forward), member("backward_s", &R::backward), member("encode_s", &R::encode),
                 member("decode_s", &R::decode), member("exposed_communication_s", &R::exposed_communication),
                 member("optimizer_s", &R::optimizer), member("input_wait_s", &R::input_wait),
                 member("straggler_wait_s", &R::straggler_wait), member("total_s", &R::total)}),
      // DDP's own overheads (docs/model.md, "DDP overheads"), seconds.
      object<R>("ddp_overheads",
                {member("on", &R::ddp_overheads), member("bucket_copy_in_s", &R::bucket_copy_in),
                 member("bucket_host_s", &R::bucket_host), member("bucket_copy_out_s", &R::bucket_copy_out),
                 member("collective_launch_s", &R::collective_launch), member("fixed_work_s", &R::fixed_work)}),
      codec_streams_row(), band_row(), member("samples_per_s", &R::samples_per_second),
      member("wire_per_gpu_bytes", &R::wire_bytes_per_gpu),
      member("error_feedback_per_gpu_bytes", &R::error_feedback_bytes),
      member("compressor_state_per_gpu_bytes", &R::state_bytes),
      object<R>("timeline", {member("folded_s", &R::folded), member("forward_start_s", &R::forward_start),
                             member("backward_start_s", &R::backward_start), member("backward_end_s", &R::backward_end),
                             member("optimizer_start_s", &R::optimizer_start)}),
      member("simulated_activities", &R::simulated_activities), member("simulated_actors", &R::simulated_actors),
      member("tensor_names", &R::tensor_names), member("tensor_end_s", &R::tensor_end),
      array("buckets", &R::buckets, bucket_rows())};
}

/// The table: every field of gradwire-iteration/2 but "schema" (first,
/// schema_first) and memory_per_gpu (from a MemoryBreakdown, result_to_json).
const json_fields::Table<R>& iteration_rows() {
  static const json_fields::Table<R> rows = [] {
    json_fields::Table<R> t = top_rows();
    for (auto& row : figure_rows()) t.push_back(std::move(row));
    return t;
  }();
  return rows;
}

// "schema" first, the other fields after it in their (sorted) order.
nlohmann::ordered_json with_schema_first(const json& j) {
  nlohmann::ordered_json out;
  out["schema"] = kIterationSchema;
  for (auto it = j.begin(); it != j.end(); ++it) out[it.key()] = nlohmann::ordered_json(it.value());
  return out;
}

}  // namespace

std::vector<json_fields::Info> iteration_json_fields() {
  std::vector<json_fields::Info> out;
  json_fields::describe(iteration_rows(), "", out);
  return out;
}

nlohmann::ordered_json result_json(const IterationResult& r, const MemoryBreakdown* memory) {
  json j = json_fields::write(iteration_rows(), r);
  if (memory != nullptr) {
    json m;
    for (const auto& [name, bytes] : memory_terms(*memory)) m[name + "_bytes"] = bytes;
    m["total_bytes"] = memory->total;
    m["capacity_bytes"] = memory->capacity;
    m["fits"] = memory->fits();
    j["memory_per_gpu"] = m;
  }
  return with_schema_first(j);
}

std::string result_to_json(const IterationResult& r, int indent, const MemoryBreakdown* memory) {
  return result_json(r, memory).dump(indent);
}

IterationResult result_from_json(const std::string& text) {
  IterationResult r;
  json_fields::read(iteration_rows(), json::parse(text), r);
  return r;
}

}  // namespace gw
