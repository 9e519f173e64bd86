#include "gradwire/replay/report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "gradwire/core/output_schema.hpp"
#include "gradwire/core/units.hpp"
#include "gradwire/model/scenario.hpp"

namespace gw {
namespace {

constexpr std::size_t kTableBuckets = 12;

std::string ms(double s) { return fmt::format("{:12.3f}", s * 1e3); }

std::string share(double part, double total) {
  return total > 0 ? fmt::format("{:6.1f}%", 100 * part / total) : "      -";
}

std::string csv_quote(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string memory_table(const MemoryBreakdown& m) {
  std::string o = "\nmemory per GPU (docs/planning.md, \"Memory model\"):\n";
  for (const auto& [name, bytes] : memory_terms(m)) {
    std::string label = name;
    std::replace(label.begin(), label.end(), '_', ' ');
    o += fmt::format("  {:<30}{:>12}\n", label, units::format_size(bytes));
  }
  o += fmt::format("  {:<30}{:>12} of {} per GPU: {}\n", "total", units::format_size(m.total),
                   units::format_size(m.capacity),
                   m.fits() ? "fits" : "DOES NOT FIT (simulated anyway: --allow-oversubscribed-memory)");
  return o;
}

// The band under the total (docs/model.md, "The band") and what it rests on.
std::string band_lines(const IterationResult& r) {
  std::string o = fmt::format("{:<34}{}{}{}   (low / median / high, ms; {:g}%-{:g}%)\n", "band", ms(r.band_low),
                              ms(r.total), ms(r.band_high), 100 * kBandLowQuantile, 100 * kBandHighQuantile);
  o += fmt::format("  measured spread: {}\n",
                   r.compute_spread > 0 ? fmt::format("{:.3g} ({})", r.compute_spread, r.compute_spread_source)
                                        : std::string("none (the profile has no repeats for this rate)"));
  o += fmt::format("  compute jitter:  {}\n",
                   r.compute_jitter > 0
                       ? fmt::format("cv {:.3g} ({}); slowest of {} ranks{}", r.compute_jitter, r.compute_jitter_source,
                                     r.world_size, r.band.jitter_high > 0 ? "" : "; its spread is in the residuals")
                       : std::string("0 (set workload.compute_jitter)"));
  o += fmt::format(
      "  model residuals: {:+.1f}% .. {:+.1f}% (time error: split-conformal 10-90% band of the leave-one-case-out "
      "errors of {} validation cases)\n",
      100 * r.residual_low, 100 * r.residual_high, r.residual_cases);
  o += fmt::format(
      "  interference:    compute {:g} under NCCL, {:g} under codecs ({}); {:.3f} ms of backward "
      "overlapped\n",
      r.interference, r.interference_codec, r.interference_source, r.overlapped_compute * 1e3);
  return o;
}

// The codec rows under the backward: all on the comm stream, or, when a
// PyTorch hook ran some elsewhere, one row per stream and their sum. Steps
// off the compute stream overlap the backward only with overlap on and a hook
// that returns before they end (not PowerSGD's: docs/model.md, "The PowerSGD
// hook blocks the backward").
template <class Row>
void codec_rows(const IterationResult& r, const Row& row) {
  const CodecStreams c = codec_streams(r);
  const std::string comm = r.hook_blocks_host ? "comm stream, host waits"
                           : r.overlap        ? "comm stream, overlapped"
                                              : "comm stream, after bwd";
  if (!c.off_comm_stream()) {
    row("  encode (" + comm + ")", r.encode, false);
    row("  decode (" + comm + ")", r.decode, false);
    return;
  }
  const std::string side = r.hook_blocks_host ? "side stream, host waits" : "side stream, overlapped";
  const auto part = [&](const std::string& name, double s) {
    if (s > 0) row(name, s, false);
  };
  part("  encode (compute stream, in bwd)", c.compute.encode);
  part("  decode (compute stream, in bwd)", c.compute.decode);
  part("  encode (" + comm + ")", c.comm.encode);
  part("  decode (" + comm + ")", c.comm.decode);
  part("  encode (" + side + ")", c.side.encode);
  part("  decode (" + side + ")", c.side.decode);
  row("  codecs, all streams", r.encode + r.decode, false);
}

}  // namespace

StepStream step_stream(const BucketTiming& b, const StepTiming& s) {
  if (s.side_stream) return StepStream::Side;
  if (s.kind != CommStep::Kind::Collective && s.end <= b.ready && s.start < b.start) return StepStream::Compute;
  return StepStream::Comm;
}

CodecStreams codec_streams(const IterationResult& r) {
  CodecStreams c;
  for (const auto& b : r.buckets)
    for (const auto& s : b.steps) {
      if (s.kind == CommStep::Kind::Collective) continue;
      const StepStream where = step_stream(b, s);
      CodecTime& t = where == StepStream::Compute ? c.compute : where == StepStream::Side ? c.side : c.comm;
      (s.kind == CommStep::Kind::Encode ? t.encode : t.decode) += s.end - s.start;
    }
  return c;
}

std::vector<std::pair<std::string, double>> memory_terms(const MemoryBreakdown& m) {
  return {{"parameters", m.parameters},
          {"gradients", m.gradients},
          {"optimizer_states", m.optimizer_states},
          {"activations", m.activations},
          {"error_feedback", m.error_feedback},
          {"compressor_state", m.compressor_state},
          {"gather_buffer", m.gather_buffer},
          {"buckets", m.buckets},
          {"reserve", m.reserve}};
}

namespace {

/// The buckets' timeline (DDP; a sharded result has none).
std::string bucket_table(const IterationResult& r) {
  std::string o;
  o += fmt::format("\nbuckets: {} (times in ms from the start of the iteration)\n", r.buckets.size());
  o += fmt::format("{:>6}{:>8}{:>12}{:>12}{:>11}{:>11}{:>11}{:>10}{:>10}\n", "bucket", "tensors", "size", "wire/GPU",
                   "ready", "start", "end", "encode", "decode");
  for (std::size_t i = 0; i < r.buckets.size() && i < kTableBuckets; ++i) {
    const auto& b = r.buckets[i];
    o += fmt::format("{:>6}{:>8}{:>12}{:>12}{:>11.3f}{:>11.3f}{:>11.3f}{:>10.3f}{:>10.3f}\n", b.index, b.tensors,
                     units::format_size(b.bytes), units::format_size(b.wire_bytes_per_gpu), b.ready * 1e3,
                     b.start * 1e3, b.end * 1e3, b.encode * 1e3, b.decode * 1e3);
  }
  if (r.buckets.size() > kTableBuckets)
    o += fmt::format("  ... {} more (--format json lists every bucket)\n", r.buckets.size() - kTableBuckets);
  return o;
}

}  // namespace

std::string format_table(const IterationResult& r, const MemoryBreakdown* memory) {
  std::string o;
  o += fmt::format("scenario: {}   model: {}   GPUs: {}\n", r.scenario.empty() ? "-" : r.scenario, r.model,
                   r.world_size);
  o += fmt::format("profile: {} ({})\n", r.profile_name.empty() ? "-" : r.profile_name,
                   r.profile_detail.empty() ? "hand-made costs" : r.profile_detail);
  o += fmt::format(
      "compression: {}   all-reduce: {}   overlap: {}   compute: {}   micro-batch: {}   "
      "accumulation: {}{}   global batch: {:g}   interference: {:g}\n",
      r.compression, r.allreduce_algorithm, r.overlap ? "on" : "off", r.compute_precision, r.micro_batch,
      r.accumulation, r.sync_every_micro_step ? " (no_sync off: every micro-step synchronizes)" : "", r.global_batch,
      r.interference);
  if (!r.measured_collectives.empty()) {
    o += fmt::format("collectives measured on this cluster (the profile's measured times, not the network model): {}\n",
                     fmt::join(r.measured_collectives, "; "));
  }
  if (!r.compute_measured.empty()) {
    o += fmt::format("compute: {} (forward, per-tensor backward, optimizer; {:.3g} of the profile's GEMM rate)\n",
                     r.compute_measured, r.compute_efficiency);
  } else {
    o += fmt::format("compute efficiency: {:g} of the profile's {} GEMM rate{}\n", r.compute_efficiency,
                     gemm_rate_of(r.compute_precision),
                     r.compute_efficiency_default
                         ? " (default assumption for this kind of model; set workload.compute_efficiency)"
                         : " (from the scenario)");
  }
  if (!r.sharding.empty())
    o += fmt::format(
        "sharding: {} (per-unit all-gathers and reduce-scatters on one NCCL stream, the optimizer on the shard; "
        "docs/model.md, section 7c)\n",
        r.sharding);
  o += fmt::format("method: {}\n\n", r.method);
  o += fmt::format("{:<34}{:>12}{:>8}\n", "phase", "time (ms)", "share");
  const auto row = [&](const std::string& name, double s, bool in_total) {
    o += fmt::format("{:<34}{}{}\n", name, ms(s), in_total ? share(s, r.total) : "");
  };
  row("forward", r.forward, true);
  row("backward", r.backward, true);
  codec_rows(r, row);
  if (r.ddp_overheads) {
    row("  DDP bucket copy-in (autograd)", r.bucket_copy_in, true);
    if (r.bucket_host > 0) row("  DDP bucket host work (autograd)", r.bucket_host, true);
    row("  DDP launches (comm stream)", r.collective_launch, false);
  }
  if (r.straggler_wait > 0) row("straggler wait (slowest rank)", r.straggler_wait, true);
  row("exposed communication", r.exposed_communication, true);
  if (r.ddp_overheads) row("DDP bucket copy-out (exposed)", r.bucket_copy_out, true);
  row("optimizer", r.optimizer, true);
  if (r.ddp_overheads) row("DDP fixed work (launches)", r.fixed_work, true);
  if (r.input_wait > 0) row("input pipeline wait", r.input_wait, true);
  row("total", r.total, true);
  o += band_lines(r);
  o += "\n";
  o += fmt::format("samples/s (global):            {:.1f}\n", r.samples_per_second);
  o += fmt::format("bytes on the wire per GPU:     {} per iteration\n", units::format_size(r.wire_bytes_per_gpu));
  if (r.error_feedback_bytes > 0)
    o += fmt::format("error-feedback memory per GPU: {}\n", units::format_size(r.error_feedback_bytes));
  if (r.state_bytes > 0)
    o += fmt::format("compressor state per GPU:      {} (PowerSGD P and Q)\n", units::format_size(r.state_bytes));
  if (r.sharding.empty()) o += bucket_table(r);
  if (memory != nullptr) o += memory_table(*memory);
  return o;
}

std::string csv_header(bool with_memory) {
  std::string memory;
  if (with_memory) {
    for (const auto& term : memory_terms(MemoryBreakdown{})) memory += ",memory_" + term.first + "_bytes";
    memory += ",memory_total_bytes,memory_capacity_bytes,memory_fits";
  }
  return "scenario,model,profile,profile_source,world_size,micro_batch,accumulation,global_batch,"
         "compression,allreduce_algorithm,overlap,forward_s,backward_s,encode_s,decode_s,"
         "exposed_communication_s,optimizer_s,total_s,samples_per_second,wire_bytes_per_gpu,"
         "error_feedback_bytes_per_gpu,buckets" +
         memory +
         ",ddp_bucket_copy_in_s,ddp_bucket_copy_out_s,ddp_collective_launch_s,ddp_fixed_work_s,input_wait_s"
         ",straggler_wait_s,compute_jitter,band_low_s,band_median_s,band_high_s\n";
}

std::string csv_row(const IterationResult& r, const MemoryBreakdown* m) {
  std::string memory;
  if (m != nullptr) {
    for (const auto& term : memory_terms(*m)) memory += fmt::format(",{:.17g}", term.second);
    memory += fmt::format(",{:.17g},{:.17g},{}", m->total, m->capacity, m->fits() ? "true" : "false");
  }
  return fmt::format(
             "{},{},{},{},{},{},{},{:g},{},{},{},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.6g},{:.6g},{:.6g},"
             "{}",
             csv_quote(r.scenario), csv_quote(r.model), csv_quote(r.profile_name), csv_quote(r.profile_source),
             r.world_size, r.micro_batch, r.accumulation, r.global_batch, r.compression, r.allreduce_algorithm,
             r.overlap ? "true" : "false", r.forward, r.backward, r.encode, r.decode, r.exposed_communication,
             r.optimizer, r.total, r.samples_per_second, r.wire_bytes_per_gpu, r.error_feedback_bytes,
             r.buckets.size()) +
         memory +
         fmt::format(",{:.9g},{:.9g},{:.9g},{:.9g},{:.9g}", r.bucket_copy_in, r.bucket_copy_out, r.collective_launch,
                     r.fixed_work, r.input_wait) +
         fmt::format(",{:.9g},{:.6g},{:.9g},{:.9g},{:.9g}\n", r.straggler_wait, r.compute_jitter, r.band_low, r.total,
                     r.band_high);
}

namespace {

// The trace's process and tracks (thread ids).
constexpr int kPid = 0, kCompute = 1, kComm = 2, kCodec = 3, kHookCompute = 4, kHookSide = 5;

// The track a bucket's step is drawn on: NCCL's for a collective (its bytes
// in `args`), else the codec track of the step's stream (step_stream), the
// stream in `args` when it is not the comm stream.
int step_track(const BucketTiming& b, const StepTiming& s, nlohmann::json& args) {
  if (s.kind == CommStep::Kind::Collective) {
    args["bytes"] = s.bytes;
    return kComm;
  }
  switch (step_stream(b, s)) {
    case StepStream::Compute:
      args["stream"] = "compute";
      return kHookCompute;
    case StepStream::Side:
      args["stream"] = "side";
      return kHookSide;
    case StepStream::Comm:
      break;
  }
  return kCodec;
}

using nlohmann::json;

/// The trace's events as they are added: thread names, complete spans and
/// instants, in the order of the file.
struct TraceEvents {
  json events = json::array();
  void meta(const char* what, int tid, const std::string& name) {
    events.push_back({{"ph", "M"}, {"pid", kPid}, {"tid", tid}, {"name", what}, {"args", {{"name", name}}}});
  }
  void span(int tid, const std::string& name, double start, double end, json args) {
    if (!(end > start)) return;
    events.push_back({{"ph", "X"},
                      {"pid", kPid},
                      {"tid", tid},
                      {"name", name},
                      {"cat", tid == kCompute ? "compute"
                              : tid == kComm  ? "communication"
                                              : "codec"},
                      {"ts", start * 1e6},
                      {"dur", (end - start) * 1e6},
                      {"args", std::move(args)}});
  }
};

// The backward's tensors on the compute track: each from the previous one's
// end, marked when it started beside communication (interference, docs/
// model.md section 7: slowed by its figure); where a blocking hook
// (PowerSGD's synchronize) held the host, the wait from the bucket's ready
// time to the tensor's recorded end is drawn apart (docs/model.md, "The
// PowerSGD hook blocks the backward").
void backward_spans(const IterationResult& r, TraceEvents& tr) {
  // The bucket each tensor completes (buckets hold consecutive tensors).
  std::vector<const BucketTiming*> completes(r.tensor_end.size(), nullptr);
  std::size_t last = 0;
  for (const auto& b : r.buckets)
    if ((last += static_cast<std::size_t>(b.tensors)) > 0 && last <= completes.size()) completes[last - 1] = &b;
  double t = r.backward_start;
  for (std::size_t j = 0; j < r.tensor_end.size(); ++j) {
    const std::string name = j < r.tensor_names.size() ? r.tensor_names[j] : std::to_string(j);
    const CommActivity beside = comm_activity_at(r, r.buckets.size(), t, r.overlap);
    json args = json::object();
    if (beside != CommActivity::Idle) {
      args["beside"] = beside == CommActivity::Codec ? "codec" : "NCCL";
      args["slowed_by"] = beside == CommActivity::Codec ? r.interference_codec : r.interference;
    }
    const BucketTiming* b = completes[j];
    const double end = b != nullptr && b->ready >= t && b->ready < r.tensor_end[j] ? b->ready : r.tensor_end[j];
    tr.span(kCompute, "backward " + name, t, end, std::move(args));
    if (end < r.tensor_end[j])
      tr.span(kCompute, fmt::format("bucket {}: hook holds the host (torch.cuda.synchronize)", b->index), end,
              r.tensor_end[j], {{"note", "the PowerSGD hook waits for its bucket's last step"}});
    t = r.tensor_end[j];
  }
}

// The compute stream: folded micro-steps, forward, each tensor's backward
// (with the interference it met), DDP's work, the optimizer and the waits.
void compute_spans(const IterationResult& r, TraceEvents& tr) {
  if (r.folded > 0 && r.sync_every_micro_step)
    tr.span(kCompute, fmt::format("{} micro-steps, each synchronizing (folded; no_sync off)", r.accumulation - 1), 0,
            r.folded, {{"note", "each runs as the micro-step below up to the optimizer, added analytically"}});
  else if (r.folded > 0)
    tr.span(kCompute, fmt::format("{} micro-steps under no_sync (folded)", r.accumulation - 1), 0, r.folded,
            {{"note", "forward + backward without communication, added analytically"}});
  tr.span(kCompute, "forward", r.forward_start, r.backward_start, json::object());
  backward_spans(r, tr);
  if (r.bucket_copy_out > 0)
    tr.span(kCompute, "DDP bucket copy-out (exposed)", r.optimizer_start - r.bucket_copy_out, r.optimizer_start,
            json::object());
  tr.span(kCompute, "optimizer", r.optimizer_start, r.optimizer_start + r.optimizer, json::object());
  if (r.fixed_work > 0)
    tr.span(kCompute, "DDP fixed work (zero_grad, optimizer launches)", r.optimizer_start + r.optimizer,
            r.optimizer_start + r.optimizer + r.fixed_work, json::object());
  if (r.input_wait > 0)
    tr.span(kCompute, "input pipeline wait", r.total - r.input_wait, r.total,
            {{"note", "workload.input_rate: the loader delivers micro_batch x accumulation samples no faster"}});
  if (r.straggler_wait > 0) {
    tr.span(kCompute, fmt::format("waiting for the slowest of {} ranks", r.world_size), r.backward_end,
            r.backward_end + r.straggler_wait,
            {{"note", "stragglers: expected delay of the slowest rank's compute (docs/model.md)"},
             {"compute_jitter", r.compute_jitter}});
  }
}

// Each bucket's ready instant and its steps on their tracks.
void bucket_spans(const IterationResult& r, TraceEvents& tr) {
  for (const auto& b : r.buckets) {
    if (b.ready > 0)
      tr.events.push_back({{"ph", "i"},
                           {"pid", kPid},
                           {"tid", kComm},
                           {"s", "t"},
                           {"ts", b.ready * 1e6},
                           {"name", fmt::format("bucket {} ready", b.index)}});
    for (const auto& s : b.steps) {
      json args = {{"bucket", b.index}, {"tensors", b.tensors}, {"bucket_bytes", b.bytes}};
      const int track = step_track(b, s, args);
      tr.span(track,
              track == kComm ? fmt::format("bucket {}: {} ({})", b.index, s.label, units::format_size(s.bytes))
                             : fmt::format("bucket {}: {}", b.index, s.label),
              s.start, s.end, std::move(args));
    }
  }
}

}  // namespace

std::string chrome_trace(const IterationResult& r) {
  TraceEvents tr;
  tr.meta("process_name", 0, "rank 0 (representative of " + std::to_string(r.world_size) + " identical ranks)");
  tr.meta("thread_name", kCompute, "compute stream");
  tr.meta("thread_name", kComm, "communication (NCCL)");
  tr.meta("thread_name", kCodec, "codecs (comm stream)");
  const CodecStreams streams = codec_streams(r);
  if (streams.compute.encode + streams.compute.decode > 0)
    tr.meta("thread_name", kHookCompute, "hook steps (compute stream)");
  if (streams.side.encode + streams.side.decode > 0) tr.meta("thread_name", kHookSide, "hook steps (side stream)");
  compute_spans(r, tr);
  bucket_spans(r, tr);
  json doc = {{"traceEvents", tr.events},
              {"displayTimeUnit", "ms"},
              {"otherData",
               {{"schema", kTraceSchema},
                {"scenario", r.scenario},
                {"model", r.model},
                {"profile", r.profile_name},
                {"profile_detail", r.profile_detail},
                {"total_s", r.total}}}};
  return doc.dump(1);
}

}  // namespace gw
