// Outputs are written atomically: to a temporary file in the same directory,
// flushed to disk, then renamed over the target. A reader never sees a
// half-written file, and an interrupted run leaves the old file intact.
#pragma once

#include <string>
#include <string_view>

namespace gw {

/// Writes `content` to `path` atomically. Throws std::runtime_error on failure
/// (and leaves no temporary file behind).
void write_file_atomic(const std::string& path, std::string_view content);

/// Appends one record (a full line, newline added if missing) to `path` with a
/// single write(2) on an O_APPEND descriptor followed by fsync. A crash can at
/// worst leave a final partial line, which readers of such files must ignore.
void append_line_durable(const std::string& path, std::string_view line);

/// Reads a whole file into a string; throws std::runtime_error if it cannot.
std::string read_file(const std::string& path);

}  // namespace gw
