#include "gradwire/model/data_dir.hpp"

#include <cstdlib>
#include <filesystem>
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

}  // namespace gw
