// libFuzzer wrapper of one loader (GW_FUZZ_ENTRY names it, see fuzz_targets.hpp).
// A rejection is fine; an exception other than gw::InputError is reported
// and aborts, so libFuzzer records the input.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <typeinfo>

#include "fuzz_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    gw::fuzz::GW_FUZZ_ENTRY(data, size);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gradwire fuzz: uncaught %s: %s\n", typeid(e).name(), e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "gradwire fuzz: uncaught non-standard exception\n");
    std::abort();
  }
  return 0;
}
