// gradwire calibrate --sizes: bytes in the one grammar of
// gw::units::parse_size_range, turned into fp32 element counts.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "gradwire/calibrate/calibrate.hpp"

namespace c = gw::calibrate;

TEST(CalibrateSizes, BytesBecomeFp32Elements) {
  // The CUDA default (4KiB:1GiB) is the 2^10 .. 2^28 elements measured before
  // --sizes took bytes; the CPU default (4KiB:1MiB) 2^10 .. 2^18.
  const auto gpu = c::codec_sizes("4KiB:1GiB");
  ASSERT_EQ(gpu.size(), 19u);
  for (std::size_t i = 0; i < gpu.size(); ++i) EXPECT_EQ(gpu[i], std::ldexp(1.0, 10 + static_cast<int>(i)));
  const auto cpu = c::codec_sizes("4KiB:1MiB");
  EXPECT_EQ(cpu.front(), 1024);
  EXPECT_EQ(cpu.back(), 262144);
  EXPECT_EQ(c::codec_sizes("4KiB:64MiB:4"),
            (std::vector<double>{1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216}));
  EXPECT_EQ(c::codec_sizes("16KiB,4KiB"), (std::vector<double>{1024, 4096}));
  EXPECT_EQ(c::kElementBytes, 4);
}

TEST(CalibrateSizes, ElementCountsAndPartElementsAreRefused) {
  EXPECT_THROW(c::codec_sizes("2^10:2^28"), std::invalid_argument);  // the old element-count form
  EXPECT_THROW(c::codec_sizes("1024"), std::invalid_argument);       // no unit
  EXPECT_THROW(c::codec_sizes("6B"), std::invalid_argument);         // 1.5 elements
  EXPECT_THROW(c::codec_sizes("1MiB:1KiB"), std::invalid_argument);
  try {
    c::codec_sizes("10B");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("whole number of 4-byte fp32 elements"), std::string::npos) << e.what();
  }
}
