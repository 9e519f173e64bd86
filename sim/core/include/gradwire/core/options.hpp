// Command-line parsing shared by every gradwire command and the benchmark
// binaries: Boost.Program_options plus the --help convention. Header-only; the caller links
// Boost::program_options.
#pragma once

#include <boost/program_options.hpp>
#include <functional>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "gradwire/core/error.hpp"

namespace gw {

/// Parses argv against `visible` and `hidden` (options --help does not list,
/// such as the targets of positional arguments). With -h/--help it prints
/// `help_head`, `visible` and `help_end` on stdout and returns nullopt (the
/// caller exits 0); an unknown option or a bad value throws
/// boost::program_options::error.
inline std::optional<boost::program_options::variables_map> parse_options(
    int argc, char** argv, const boost::program_options::options_description& visible,
    const boost::program_options::options_description& hidden,
    const boost::program_options::positional_options_description& pos, const char* help_head, const char* help_end) {
  namespace po = boost::program_options;
  po::options_description all;
  all.add(visible).add(hidden);
  po::variables_map vm;
  po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
  if (vm.count("help")) {
    std::cout << help_head << visible << help_end;
    return std::nullopt;
  }
  po::notify(vm);
  return vm;
}

/// The same with every option listed by --help and no head.
inline std::optional<boost::program_options::variables_map> parse_options(
    int argc, char** argv, const boost::program_options::options_description& opts,
    const boost::program_options::positional_options_description& pos = {}, const char* help_end = "\n") {
  return parse_options(argc, argv, opts, {}, pos, "", help_end);
}

/// What a command does with a bad option or value: says it (stderr) and
/// returns the command's exit code.
using BadOption = std::function<int(const std::string& message)>;

/// The usual report of a bad option: "COMMAND: MESSAGE", a newline and
/// `usage` (the options list, or a usage line) on stderr; exit 2 (bad input).
inline BadOption bad_option_usage(std::string command, std::string usage) {
  return [command = std::move(command), usage = std::move(usage)](const std::string& message) {
    std::cerr << command << ": " << message << "\n" << usage;
    return kExitInput;
  };
}
/// The same with `opts` (as --help lists them) for the usage.
inline BadOption bad_option_usage(std::string command, const boost::program_options::options_description& opts) {
  std::ostringstream usage;
  usage << opts;
  return bad_option_usage(std::move(command), usage.str());
}

/// A command's parsed command line: its options, or the exit code it returns
/// at once (0 after --help; `bad_option`'s after a bad option or value).
struct CommandLine {
  boost::program_options::variables_map vm;
  std::optional<int> exit;
};

/// parse_options for a command: its boost::program_options::error becomes
/// `bad_option(message)`'s exit code, so every command ends a bad command line alike.
inline CommandLine parse_command(int argc, char** argv, const BadOption& bad_option,
                                 const boost::program_options::options_description& visible,
                                 const boost::program_options::options_description& hidden,
                                 const boost::program_options::positional_options_description& pos,
                                 const char* help_head, const char* help_end) {
  CommandLine out;
  try {
    auto vm = parse_options(argc, argv, visible, hidden, pos, help_head, help_end);
    if (!vm) {
      out.exit = kExitOk;
      return out;
    }
    out.vm = std::move(*vm);
  } catch (const boost::program_options::error& e) {
    out.exit = bad_option(e.what());
  }
  return out;
}

/// The same with every option listed by --help and no head.
inline CommandLine parse_command(int argc, char** argv, const BadOption& bad_option,
                                 const boost::program_options::options_description& opts,
                                 const boost::program_options::positional_options_description& pos = {},
                                 const char* help_end = "\n") {
  return parse_command(argc, argv, bad_option, opts, {}, pos, "", help_end);
}

}  // namespace gw
