// Errors and exit codes shared by every gradwire tool.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace gw {

/// Process exit codes used by every CLI.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;        ///< a run-time failure (I/O, no GPU, ...)
inline constexpr int kExitInput = 2;          ///< bad input: file, line and field are named
inline constexpr int kExitNoFit = 3;          ///< valid input that does not fit in GPU memory (simulate)
inline constexpr int kExitInterrupted = 130;  ///< stopped by SIGINT/SIGTERM, finished work kept

/// Bad input. Names the file, the 1-based line and column (0 when unknown), the
/// key path inside the document (e.g. "cluster.nics.bandwidth") and the reason.
/// what() is "FILE:LINE:COL: KEY: REASON", the form every CLI prints.
class InputError : public std::runtime_error {
 public:
  InputError(std::string file, int line, int column, std::string key, std::string reason);

  const std::string& file() const noexcept { return file_; }
  int line() const noexcept { return line_; }
  int column() const noexcept { return column_; }
  const std::string& key() const noexcept { return key_; }
  const std::string& reason() const noexcept { return reason_; }

 private:
  std::string file_;
  int line_;
  int column_;
  std::string key_;
  std::string reason_;
};

/// The character that starts at byte `at` of `text`: its length in bytes (a
/// UTF-8 sequence, or 1 for a byte that does not start one) and whether it is
/// a control character or line break: C0 controls, DEL, the C1 controls
/// (U+0080..U+009F, or a lone byte 0x80..0x9F) and U+2028, U+2029.
struct TextUnit {
  std::size_t length;
  bool control;
};
TextUnit text_unit_at(std::string_view text, std::size_t at);

/// A std::bad_alloc in words: its own what() when that already starts with
/// "out of memory" (the simulation child's, engine::ChildOutOfMemory), else
/// "out of memory (WHAT)" ("out of memory (std::bad_alloc)"). Every command
/// ends it with what to do (kOutOfMemoryHint, or the sweep's own).
std::string out_of_memory_words(const std::exception& e);
inline constexpr const char* kOutOfMemoryHint = "free memory or raise the limit (ulimit -v)";

/// Formats the canonical message "FILE:LINE:COL: KEY: REASON" (parts omitted when empty/0),
/// always one line: control characters in any part are spelled out ("\n", "\x1B").
std::string format_input_error(const std::string& file, int line, int column, const std::string& key,
                               const std::string& reason);

}  // namespace gw
