// Files in and out, with the rules of docs/hardening.md ("Outputs" and
// "Inputs"):
//
//  * An output is written atomically: to a temporary file in the target's own
//    directory (created exclusively, never following a link), flushed to disk,
//    then renamed over the target. A reader never sees a half-written file and
//    an interrupted run leaves the old file intact.
//  * Only a regular file, or a path that does not exist yet, is ever
//    replaced. A symbolic link is resolved and its target is written (the link
//    itself stays); a dangling link is refused. A directory, character or
//    block device, FIFO or socket is refused (gw::InputError, exit 2), and so
//    is a path that names one of the command's inputs. Standard output is
//    written with "-" where a command supports it, never through /dev/stdout.
//  * An input must be a regular file (or a link to one) no larger than the
//    cap of its kind; it is opened without blocking, so a FIFO is refused
//    instead of waiting forever.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gw {

/// Size caps of the inputs (docs/hardening.md, "Limits").
inline constexpr std::size_t kMaxYamlBytes = std::size_t{64} << 20;  ///< scenarios, models, profiles, catalogs, sweeps
inline constexpr std::size_t kMaxResultsBytes = std::size_t{4} << 30;  ///< sweep results files (JSON lines)

/// Reads the input file `path` (a regular file, or a link to one, of at most
/// `max_bytes`). Anything else (missing, a directory, a FIFO, a device, too
/// large, unreadable) throws gw::InputError(path, 0, 0, "", reason).
std::string read_input_file(const std::string& path, std::size_t max_bytes);

/// True when `a` and `b` name the same existing file (same device and inode),
/// or the same path once links and dots are resolved.
bool same_file(const std::string& a, const std::string& b);

/// Checks that `path` may be written as an output under the rules above and
/// returns the path that will really be replaced (the target of a link).
/// `inputs` are the files the command reads; an output naming one of them is
/// refused. Throws gw::InputError(path, 0, 0, "", reason) (exit 2).
std::string checked_output_path(const std::string& path, const std::vector<std::string>& inputs = {});

/// Writes `content` to `path` atomically after checked_output_path(path,
/// inputs). A refused path throws gw::InputError; an I/O failure (disk full,
/// ...) throws std::runtime_error. Either way no temporary file is left and
/// the target is unchanged.
void write_file_atomic(const std::string& path, std::string_view content, const std::vector<std::string>& inputs = {});

/// Appends one or more records (full lines, a newline added after the last
/// if missing) to `path` with a single write(2) on an O_APPEND descriptor
/// followed by fsync. A write that fails part way (a full disk, the file
/// size limit) is cut back to the size before and throws std::runtime_error.
/// A crash can at worst leave a final partial line, which readers of such
/// files must ignore.
/// The file must be a regular file or not exist yet (then it is created).
void append_line_durable(const std::string& path, std::string_view line);

/// Reads a whole regular file into a string (no size cap; for files the
/// program itself wrote). Throws std::runtime_error if it cannot.
std::string read_file(const std::string& path);

}  // namespace gw
