// The commands an executable's `--help` lists (the lines under
// "commands:"), for the tests that run every command (tests/cli,
// tests/install).
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "run_util.hpp"

namespace gw::test {

inline std::vector<std::string> listed_commands(const std::string& bin) {
  const auto r = run({bin, "--help"});
  std::vector<std::string> names;
  std::istringstream in(r.out);
  bool listing = false;
  for (std::string line; std::getline(in, line);) {
    if (line == "commands:") {
      listing = true;
    } else if (listing && line.rfind("  ", 0) == 0) {
      names.push_back(line.substr(2, line.find(' ', 2) - 2));
    } else if (listing) {
      break;
    }
  }
  return names;
}

}  // namespace gw::test
