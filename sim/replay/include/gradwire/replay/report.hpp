// Human and machine forms of a predicted iteration: the breakdown table, CSV
// (one header row, one row per result) and a Chrome/Perfetto trace.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "gradwire/model/iteration_model.hpp"
#include "gradwire/model/memory.hpp"

namespace gw {

/// The terms of a per-GPU memory breakdown, in the order every output lists
/// them: (field name without unit, bytes), e.g. ("optimizer_states", 5.4e10).
std::vector<std::pair<std::string, double>> memory_terms(const MemoryBreakdown& memory);

/// The stream a step of a bucket ran on (docs/model.md, "Where the hooks'
/// kernels run"): Side for a step marked StepTiming::side_stream; Compute for
/// a codec step that ended by the bucket's ready time and started before the
/// comm stream took the bucket (a PyTorch hook's steps before its first
/// collective: the closed form and the replay run them after the bucket's
/// last tensor, and the bucket is ready after them); Comm otherwise.
enum class StepStream { Compute, Comm, Side };
StepStream step_stream(const BucketTiming& bucket, const StepTiming& step);

/// Codec seconds of one stream, all buckets.
struct CodecTime {
  double encode = 0, decode = 0;
};
/// The result's encode and decode split by the stream they ran on
/// (step_stream); the three parts add to IterationResult::encode / decode.
struct CodecStreams {
  CodecTime compute, comm, side;
  /// Some codec time ran off the comm stream (a PyTorch hook).
  bool off_comm_stream() const { return compute.encode + compute.decode + side.encode + side.decode > 0; }
};
CodecStreams codec_streams(const IterationResult& result);

/// Readable breakdown: the profile used, forward, backward, encode, decode
/// (per stream when a hook ran some off the comm stream), exposed communication, optimizer, total, samples/s, bytes on
/// the wire; with `memory`, the per-GPU memory and whether it fits.
std::string format_table(const IterationResult& result, const MemoryBreakdown* memory = nullptr);
/// CSV header and row (same fields as the JSON summary); with memory, the
/// memory_*_bytes, memory_capacity_bytes and memory_fits columns follow.
std::string csv_header(bool with_memory = false);
std::string csv_row(const IterationResult& result, const MemoryBreakdown* memory = nullptr);
/// Trace-event JSON (chrome://tracing, ui.perfetto.dev): compute,
/// communication and codec tracks of the representative rank, times in us;
/// a hook's steps on the compute stream and on its side stream have their
/// own tracks ("hook steps (compute stream)", "hook steps (side stream)"),
/// present when such steps are.
std::string chrome_trace(const IterationResult& result);

}  // namespace gw
