// Command-line parsing shared by the benchmark binaries: Boost.Program_options
// plus the --help convention. Header-only; the caller links
// Boost::program_options.
#pragma once

#include <boost/program_options.hpp>
#include <iostream>
#include <optional>

namespace gw {

/// Parses argv against `opts` (and the positional names in `pos`). With
/// -h/--help it prints `opts` and `help_end` and returns nullopt (the caller
/// exits 0); an unknown option or a bad value throws
/// boost::program_options::error.
inline std::optional<boost::program_options::variables_map> parse_options(
    int argc, char** argv, const boost::program_options::options_description& opts,
    const boost::program_options::positional_options_description& pos = {}, const char* help_end = "\n") {
  namespace po = boost::program_options;
  po::variables_map vm;
  po::store(po::command_line_parser(argc, argv).options(opts).positional(pos).run(), vm);
  if (vm.count("help")) {
    std::cout << opts << help_end;
    return std::nullopt;
  }
  po::notify(vm);
  return vm;
}

}  // namespace gw
