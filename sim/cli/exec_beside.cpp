#include "exec_beside.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "gradwire/core/error.hpp"

namespace gw::cli {

std::string exec_program(const std::string& program, const std::vector<char*>& args) {
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(program.c_str()));
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  ::execv(program.c_str(), argv.data());
  return std::strerror(errno);
}

int exec_beside(const std::string& exe_name, const std::string& who, const std::string& what,
                const std::vector<char*>& args) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::string exe = ec ? exe_name : (self.parent_path() / exe_name).string();
  if (ec || ::access(exe.c_str(), X_OK) != 0) {
    std::cerr << who << ": " << what << " is " << exe_name << " and there is none beside this gradwire (" << exe
              << "): build it (cmake --build build --target " << exe_name << ") or run it with the same options\n";
    return kExitInput;
  }
  const std::string why = exec_program(exe, args);
  std::cerr << who << ": cannot run " << exe << ": " << why << "\n";
  return kExitFailure;
}

}  // namespace gw::cli
