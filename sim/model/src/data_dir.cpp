#include "gradwire/model/data_dir.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace gw {
namespace {

namespace fs = std::filesystem;

std::string find_data_dir() {
  // GRADWIRE_DATA, the documented name, wins over its older alias.
  for (const char* name : {"GRADWIRE_DATA", "GRADWIRE_DATA_DIR"})
    if (const char* env = std::getenv(name); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  fs::path dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  // bin/gradwire -> bin/../share/gradwire; tests/<area>/test_x -> two levels up.
  for (int up = 0; !ec && up < 3 && !dir.empty(); ++up) {
    dir = dir.parent_path();
    const fs::path share = dir / "share" / "gradwire";
    if (fs::is_directory(share, ec)) {
      const fs::path real = fs::canonical(share, ec);
      if (!ec) return real.string();
    }
    ec.clear();
  }
  return ".";
}

}  // namespace

const std::string& data_dir() {
  static const std::string dir = find_data_dir();
  return dir;
}

std::optional<std::string> declared_schema(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  std::string line;
  for (int i = 0; i < 64 && std::getline(in, line); ++i) {
    if (line.rfind("schema:", 0) == 0) return line.substr(7);
  }
  return std::nullopt;
}

}  // namespace gw
