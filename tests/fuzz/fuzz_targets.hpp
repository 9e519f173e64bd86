// Entry functions of the loader fuzz targets (docs/hardening.md). Each takes
// the bytes of one input file and runs the real loader on it. A rejection
// (gw::InputError, the documented way to refuse bad input) is a normal
// return; any other exception escapes and is a bug. The libFuzzer wrappers
// (fuzz_main.cpp) abort on it; the regression test replays the saved inputs
// of tests/fuzz/regressions/<target>/ through the same functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace gw::fuzz {

using Entry = void (*)(const std::uint8_t* data, std::size_t size);

void scenario(const std::uint8_t* data, std::size_t size);
void model(const std::uint8_t* data, std::size_t size);
void compute(const std::uint8_t* data, std::size_t size);
void profile(const std::uint8_t* data, std::size_t size);
void catalog(const std::uint8_t* data, std::size_t size);
void sweep(const std::uint8_t* data, std::size_t size);
void units(const std::uint8_t* data, std::size_t size);
void results(const std::uint8_t* data, std::size_t size);
/// nccl-tests logs, appended runs included (parse_runs, select_runs, collective_fits).
void nccl_tests(const std::uint8_t* data, std::size_t size);

struct Target {
  const char* name;
  Entry entry;
};

inline void PrintTo(const Target& t, std::ostream* os) { *os << t.name; }

/// Every target, by name (the name of its regressions/ and seed directories).
const std::vector<Target>& targets();

}  // namespace gw::fuzz
