#include <nlohmann/json.hpp>

#include "gradwire/core/output_schema.hpp"
#include "gradwire/replay/replay.hpp"
#include "gradwire/replay/report.hpp"

namespace gw {
namespace {

using nlohmann::json;

CommStep::Kind kind_from(const std::string& s) {
  if (s == "encode") return CommStep::Kind::Encode;
  if (s == "decode") return CommStep::Kind::Decode;
  return CommStep::Kind::Collective;
}

// DDP's own overheads (docs/model.md, "DDP overheads"), seconds.
json ddp_overheads_json(const IterationResult& r) {
  return {{"on", r.ddp_overheads},
          {"bucket_copy_in_s", r.bucket_copy_in},
          {"bucket_copy_out_s", r.bucket_copy_out},
          {"collective_launch_s", r.collective_launch},
          {"fixed_work_s", r.fixed_work}};
}

void ddp_overheads_from_json(const json& j, IterationResult& r) {
  if (!j.contains("ddp_overheads")) return;
  const auto& d = j.at("ddp_overheads");
  r.ddp_overheads = d.at("on").get<bool>();
  r.bucket_copy_in = d.at("bucket_copy_in_s").get<double>();
  r.bucket_copy_out = d.at("bucket_copy_out_s").get<double>();
  r.collective_launch = d.at("collective_launch_s").get<double>();
  r.fixed_work = d.at("fixed_work_s").get<double>();
}

// Stragglers and the band (docs/model.md, "Stragglers", "The band"), seconds.
json band_json(const IterationResult& r) {
  return {{"low_s", r.band_low},
          {"median_s", r.total},
          {"high_s", r.band_high},
          {"quantiles", {kBandLowQuantile, kBandHighQuantile}},
          {"compute_jitter", r.compute_jitter},
          {"compute_jitter_source", r.compute_jitter_source},
          {"compute_spread", r.compute_spread},
          {"compute_spread_source", r.compute_spread_source},
          {"residual_low", r.residual_low},
          {"residual_high", r.residual_high},
          {"residual_cases", r.residual_cases},
          {"overlapped_compute_s", r.overlapped_compute},
          {"terms",
           {{"spread_low_s", r.band.spread_low},
            {"spread_high_s", r.band.spread_high},
            {"jitter_low_s", r.band.jitter_low},
            {"jitter_high_s", r.band.jitter_high},
            {"residual_low_s", r.band.residual_low},
            {"residual_high_s", r.band.residual_high},
            {"interference_high_s", r.band.interference_high}}}};
}

void band_from_json(const json& j, IterationResult& r) {
  if (!j.contains("band")) return;
  const auto& b = j.at("band");
  r.band_low = b.at("low_s").get<double>();
  r.band_high = b.at("high_s").get<double>();
  r.compute_jitter = b.at("compute_jitter").get<double>();
  r.compute_jitter_source = b.at("compute_jitter_source").get<std::string>();
  r.compute_spread = b.at("compute_spread").get<double>();
  r.compute_spread_source = b.at("compute_spread_source").get<std::string>();
  r.residual_low = b.at("residual_low").get<double>();
  r.residual_high = b.at("residual_high").get<double>();
  r.residual_cases = b.at("residual_cases").get<int>();
  r.overlapped_compute = b.at("overlapped_compute_s").get<double>();
  const auto& t = b.at("terms");
  r.band = {t.at("spread_low_s").get<double>(),  t.at("spread_high_s").get<double>(),
            t.at("jitter_low_s").get<double>(),  t.at("jitter_high_s").get<double>(),
            t.at("residual_low_s").get<double>(), t.at("residual_high_s").get<double>(),
            t.at("interference_high_s").get<double>()};
}

// Added fields (docs/outputs.md, `codec_streams`): where a PyTorch hook's
// codec time ran, seconds.
json codec_streams_json(const CodecStreams& c) {
  const auto part = [](const CodecTime& t) { return json{{"encode_s", t.encode}, {"decode_s", t.decode}}; };
  return {{"compute_stream", part(c.compute)}, {"comm_stream", part(c.comm)}, {"side_stream", part(c.side)}};
}

// The per-bucket timings and their steps (result_from_json).
void buckets_from_json(const json& buckets, IterationResult& r) {
  for (const auto& b : buckets) {
    BucketTiming bt;
    bt.index = b.at("index").get<int>();
    bt.tensors = b.at("tensors").get<int>();
    bt.elements = b.at("elements").get<std::int64_t>();
    bt.bytes = b.at("size_bytes").get<double>();
    bt.wire_bytes_per_gpu = b.at("wire_per_gpu_bytes").get<double>();
    bt.ready = b.at("ready_s").get<double>();
    bt.start = b.at("start_s").get<double>();
    bt.end = b.at("end_s").get<double>();
    bt.encode = b.at("encode_s").get<double>();
    bt.decode = b.at("decode_s").get<double>();
    bt.communication = b.at("communication_s").get<double>();
    for (const auto& st : b.at("steps")) {
      StepTiming x;
      x.label = st.at("label").get<std::string>();
      x.kind = kind_from(st.at("kind").get<std::string>());
      x.start = st.at("start_s").get<double>();
      x.end = st.at("end_s").get<double>();
      x.bytes = st.at("size_bytes").get<double>();
      bt.steps.push_back(std::move(x));
    }
    r.buckets.push_back(std::move(bt));
  }
}

// "schema" first, the other fields after it in their (sorted) order.
nlohmann::ordered_json with_schema_first(const json& j) {
  nlohmann::ordered_json out;
  out["schema"] = kIterationSchema;
  for (auto it = j.begin(); it != j.end(); ++it) out[it.key()] = nlohmann::ordered_json(it.value());
  return out;
}

}  // namespace

nlohmann::ordered_json result_json(const IterationResult& r, const MemoryBreakdown* memory) {
  json j;
  j["scenario"] = r.scenario;
  j["model"] = r.model;
  j["method"] = r.method;
  j["profile"] = {{"name", r.profile_name}, {"source", r.profile_source}, {"detail", r.profile_detail}};
  j["world_size"] = r.world_size;
  j["micro_batch"] = r.micro_batch;
  j["accumulation"] = r.accumulation;
  if (r.sync_every_micro_step) j["no_sync"] = false;
  j["global_batch"] = r.global_batch;
  j["overlap"] = r.overlap;
  j["interference"] = r.interference;
  j["interference_detail"] = {{"compute_under_nccl", r.interference},
                              {"compute_under_codec", r.interference_codec},
                              {"codec_under_compute", r.codec_interference},
                              {"source", r.interference_source}};
  j["compute_efficiency"] = r.compute_efficiency;
  j["compute_efficiency_default"] = r.compute_efficiency_default;
  if (!r.compute_measured.empty()) j["compute_measured"] = r.compute_measured;
  if (!r.measured_collectives.empty()) j["measured_collectives"] = r.measured_collectives;
  j["compression"] = r.compression;
  j["compute_precision"] = r.compute_precision;
  j["allreduce_algorithm"] = r.allreduce_algorithm;
  j["critical_path"] = {{"forward_s", r.forward},
                        {"backward_s", r.backward},
                        {"encode_s", r.encode},
                        {"decode_s", r.decode},
                        {"exposed_communication_s", r.exposed_communication},
                        {"optimizer_s", r.optimizer},
                        {"input_wait_s", r.input_wait},
                        {"straggler_wait_s", r.straggler_wait},
                        {"total_s", r.total}};
  j["ddp_overheads"] = ddp_overheads_json(r);
  if (const CodecStreams c = codec_streams(r); c.off_comm_stream()) j["codec_streams"] = codec_streams_json(c);
  j["band"] = band_json(r);
  j["samples_per_s"] = r.samples_per_second;
  j["wire_per_gpu_bytes"] = r.wire_bytes_per_gpu;
  j["error_feedback_per_gpu_bytes"] = r.error_feedback_bytes;
  j["compressor_state_per_gpu_bytes"] = r.state_bytes;
  j["timeline"] = {{"folded_s", r.folded},
                   {"forward_start_s", r.forward_start},
                   {"backward_start_s", r.backward_start},
                   {"backward_end_s", r.backward_end},
                   {"optimizer_start_s", r.optimizer_start}};
  j["simulated_activities"] = r.simulated_activities;
  j["simulated_actors"] = r.simulated_actors;
  j["tensor_names"] = r.tensor_names;
  j["tensor_end_s"] = r.tensor_end;
  json buckets = json::array();
  for (const auto& b : r.buckets) {
    json steps = json::array();
    for (const auto& s : b.steps)
      steps.push_back({{"label", s.label}, {"kind", to_string(s.kind)}, {"start_s", s.start},
                       {"end_s", s.end}, {"size_bytes", s.bytes}});
    buckets.push_back({{"index", b.index},
                       {"tensors", b.tensors},
                       {"elements", b.elements},
                       {"size_bytes", b.bytes},
                       {"wire_per_gpu_bytes", b.wire_bytes_per_gpu},
                       {"ready_s", b.ready},
                       {"start_s", b.start},
                       {"end_s", b.end},
                       {"encode_s", b.encode},
                       {"decode_s", b.decode},
                       {"communication_s", b.communication},
                       {"steps", steps}});
  }
  j["buckets"] = buckets;
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
  const json j = json::parse(text);
  IterationResult r;
  r.scenario = j.at("scenario").get<std::string>();
  r.model = j.at("model").get<std::string>();
  r.method = j.at("method").get<std::string>();
  r.profile_name = j.at("profile").at("name").get<std::string>();
  r.profile_source = j.at("profile").at("source").get<std::string>();
  r.profile_detail = j.at("profile").at("detail").get<std::string>();
  r.world_size = j.at("world_size").get<int>();
  r.micro_batch = j.at("micro_batch").get<int>();
  r.accumulation = j.at("accumulation").get<int>();
  if (j.contains("no_sync")) r.sync_every_micro_step = !j.at("no_sync").get<bool>();
  r.global_batch = j.at("global_batch").get<double>();
  r.overlap = j.at("overlap").get<bool>();
  r.interference = j.at("interference").get<double>();
  if (j.contains("interference_detail")) {
    const auto& d = j.at("interference_detail");
    r.interference_codec = d.at("compute_under_codec").get<double>();
    r.codec_interference = d.at("codec_under_compute").get<double>();
    r.interference_source = d.at("source").get<std::string>();
  }
  r.compute_efficiency = j.at("compute_efficiency").get<double>();
  r.compute_efficiency_default = j.at("compute_efficiency_default").get<bool>();
  if (j.contains("compute_measured")) r.compute_measured = j.at("compute_measured").get<std::string>();
  if (j.contains("measured_collectives"))
    r.measured_collectives = j.at("measured_collectives").get<std::vector<std::string>>();
  r.compression = j.at("compression").get<std::string>();
  r.compute_precision = j.at("compute_precision").get<std::string>();
  r.allreduce_algorithm = j.at("allreduce_algorithm").get<std::string>();
  const auto& s = j.at("critical_path");
  r.forward = s.at("forward_s").get<double>();
  r.backward = s.at("backward_s").get<double>();
  r.encode = s.at("encode_s").get<double>();
  r.decode = s.at("decode_s").get<double>();
  r.exposed_communication = s.at("exposed_communication_s").get<double>();
  r.optimizer = s.at("optimizer_s").get<double>();
  r.total = s.at("total_s").get<double>();
  r.input_wait = s.at("input_wait_s").get<double>();
  r.straggler_wait = s.at("straggler_wait_s").get<double>();
  ddp_overheads_from_json(j, r);
  band_from_json(j, r);
  r.samples_per_second = j.at("samples_per_s").get<double>();
  r.wire_bytes_per_gpu = j.at("wire_per_gpu_bytes").get<double>();
  r.error_feedback_bytes = j.at("error_feedback_per_gpu_bytes").get<double>();
  r.state_bytes = j.at("compressor_state_per_gpu_bytes").get<double>();
  const auto& t = j.at("timeline");
  r.folded = t.at("folded_s").get<double>();
  r.forward_start = t.at("forward_start_s").get<double>();
  r.backward_start = t.at("backward_start_s").get<double>();
  r.backward_end = t.at("backward_end_s").get<double>();
  r.optimizer_start = t.at("optimizer_start_s").get<double>();
  r.simulated_activities = j.at("simulated_activities").get<long>();
  r.simulated_actors = j.at("simulated_actors").get<int>();
  r.tensor_names = j.at("tensor_names").get<std::vector<std::string>>();
  r.tensor_end = j.at("tensor_end_s").get<std::vector<double>>();
  buckets_from_json(j.at("buckets"), r);
  return r;
}

}  // namespace gw
