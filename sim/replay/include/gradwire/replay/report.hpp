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

/// Readable breakdown: the profile used, forward, backward, encode, decode,
/// exposed communication, optimizer, total, samples/s, bytes on the wire;
/// with `memory`, the per-GPU memory and whether it fits.
std::string format_table(const IterationResult& result, const MemoryBreakdown* memory = nullptr);
/// CSV header and row (same fields as the JSON summary); with memory, the
/// memory_*_bytes, memory_capacity_bytes and memory_fits columns follow.
std::string csv_header(bool with_memory = false);
std::string csv_row(const IterationResult& result, const MemoryBreakdown* memory = nullptr);
/// Trace-event JSON (chrome://tracing, ui.perfetto.dev): compute,
/// communication and codec tracks of the representative rank, times in us.
std::string chrome_trace(const IterationResult& result);

}  // namespace gw
