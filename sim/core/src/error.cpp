#include "gradwire/core/error.hpp"

namespace gw {

std::string format_input_error(const std::string& file, int line, int column,
                               const std::string& key, const std::string& reason) {
  std::string out = file.empty() ? std::string("<input>") : file;
  if (line > 0) {
    out.append(":").append(std::to_string(line));
    if (column > 0) out.append(":").append(std::to_string(column));
  }
  out.append(": ");
  if (!key.empty()) out.append(key).append(": ");
  out.append(reason);
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
