#include "gradwire/core/error.hpp"

#include <cstdio>

namespace gw {

TextUnit text_unit_at(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return i < text.size() ? static_cast<unsigned char>(text[i]) : 0u; };
  const auto continuation = [&](std::size_t i) { return (byte(i) & 0xC0u) == 0x80u; };
  const unsigned c = byte(at);
  if (c < 0x80) return {1, c < 0x20 || c == 0x7F};
  if (c >= 0xC2 && c <= 0xDF && continuation(at + 1)) return {2, c == 0xC2 && byte(at + 1) <= 0x9F};  // C1
  if (c >= 0xE0 && c <= 0xEF && continuation(at + 1) && continuation(at + 2)) {
    return {3, c == 0xE2 && byte(at + 1) == 0x80 && (byte(at + 2) == 0xA8 || byte(at + 2) == 0xA9)};  // U+2028/9
  }
  if (c >= 0xF0 && c <= 0xF4 && continuation(at + 1) && continuation(at + 2) && continuation(at + 3)) return {4, false};
  // Not UTF-8: a lone byte. 0x80..0x9F are the C1 controls in Latin-1 (yaml-cpp
  // writes "\N" and "\x85" as the byte 0x85).
  return {1, c >= 0x80 && c <= 0x9F};
}

std::string out_of_memory_words(const std::exception& e) {
  const std::string what = e.what();
  return what.rfind("out of memory", 0) == 0 ? what : "out of memory (" + what + ")";
}

namespace {

/// `text` with its control characters spelled out (\n, \r, \t, \xHH, and
/// \u0085-style for the C1 controls and the line and paragraph separators),
/// so that a message quoting a hostile value stays one line and cannot move
/// the cursor or clear a terminal (issue 29, item 7).
std::string escape_controls(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  char buf[16];
  for (std::size_t i = 0; i < text.size();) {
    const TextUnit u = text_unit_at(text, i);
    const auto c = static_cast<unsigned char>(text[i]);
    if (!u.control) {
      out.append(text, i, u.length);
    } else if (c == '\n' || c == '\r' || c == '\t') {
      out += c == '\n' ? "\\n" : c == '\r' ? "\\r" : "\\t";
    } else if (u.length == 1) {
      std::snprintf(buf, sizeof buf, "\\x%02X", static_cast<unsigned>(c));
      out += buf;
    } else if (u.length == 2) {
      std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(static_cast<unsigned char>(text[i + 1])));
      out += buf;
    } else {
      out += static_cast<unsigned char>(text[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029";
    }
    i += u.length;
  }
  return out;
}

}  // namespace

std::string format_input_error(const std::string& file, int line, int column, const std::string& key,
                               const std::string& reason) {
  std::string out = file.empty() ? std::string("<input>") : escape_controls(file);
  if (line > 0) {
    out.append(":").append(std::to_string(line));
    if (column > 0) out.append(":").append(std::to_string(column));
  }
  out.append(": ");
  if (!key.empty()) out.append(escape_controls(key)).append(": ");
  out.append(escape_controls(reason));
  return out;
}

InputError::InputError(std::string file, int line, int column, std::string key, std::string reason)
    : std::runtime_error(format_input_error(file, line, column, key, reason)),
      file_(std::move(file)),
      line_(line),
      column_(column),
      key_(std::move(key)),
      reason_(std::move(reason)) {}

}  // namespace gw
