// Human and machine forms of a predicted iteration: the breakdown table, CSV
// (one header row, one row per result) and a Chrome/Perfetto trace.
#pragma once

#include <string>

#include "gradwire/model/iteration_model.hpp"

namespace gw {

/// Readable breakdown: the profile used, forward, backward, encode, decode,
/// exposed communication, optimizer, total, samples/s, bytes on the wire.
std::string format_table(const IterationResult& result);
/// CSV header and row (same fields as the JSON summary).
std::string csv_header();
std::string csv_row(const IterationResult& result);
/// Trace-event JSON (chrome://tracing, ui.perfetto.dev): compute,
/// communication and codec tracks of the representative rank, times in us.
std::string chrome_trace(const IterationResult& result);

}  // namespace gw
