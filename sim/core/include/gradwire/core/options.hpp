// Command-line parsing shared by every gradwire command and the benchmark
// binaries: Boost.Program_options plus the --help convention. Header-only; the caller links
// Boost::program_options.
#pragma once

#include <boost/program_options.hpp>
#include <iostream>
#include <optional>

namespace gw {

/// Parses argv against `visible` and `hidden` (options --help does not list,
/// such as the targets of positional arguments). With -h/--help it prints
/// `help_head`, `visible` and `help_end` on stdout and returns nullopt (the
/// caller exits 0); an unknown option or a bad value throws
/// boost::program_options::error.
inline std::optional<boost::program_options::variables_map> parse_options(
    int argc, char** argv, const boost::program_options::options_description& visible,
    const boost::program_options::options_description& hidden,
    const boost::program_options::positional_options_description& pos, const char* help_head,
    const char* help_end) {
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

}  // namespace gw
