#include <gtest/gtest.h>

#include <cstdint>
#include <cmath>
#include <limits>

#include "gradwire/core/units.hpp"

using namespace gw::units;

TEST(Units, BandwidthBitsAndBytes) {
  EXPECT_DOUBLE_EQ(*parse_bandwidth("100Gbps"), 12.5e9);
  EXPECT_DOUBLE_EQ(*parse_bandwidth("450GB/s"), 450e9);
  EXPECT_DOUBLE_EQ(*parse_bandwidth("1 GiB/s"), 1073741824.0);
  EXPECT_DOUBLE_EQ(*parse_bandwidth("400Gb/s"), 50e9);
  EXPECT_DOUBLE_EQ(*parse_bandwidth("1.5e1Mbps"), 15e6 / 8);
}

TEST(Units, TimesAndSizes) {
  EXPECT_DOUBLE_EQ(*parse_time("2us"), 2e-6);
  EXPECT_DOUBLE_EQ(*parse_time("1.5ms"), 1.5e-3);
  EXPECT_DOUBLE_EQ(*parse_time("3 s"), 3.0);
  EXPECT_DOUBLE_EQ(*parse_time("40ns"), 40e-9);
  EXPECT_DOUBLE_EQ(*parse_size("25MB"), 25e6);
  EXPECT_DOUBLE_EQ(*parse_size("25MiB"), 25.0 * 1048576);
  EXPECT_DOUBLE_EQ(*parse_size("8B"), 8.0);
  EXPECT_DOUBLE_EQ(*parse_size("1GB"), 1e9);
}

TEST(Units, UnitRequiredAndStrict) {
  std::string why;
  EXPECT_FALSE(parse_bandwidth("100", &why));
  EXPECT_NE(why.find("no unit"), std::string::npos);
  EXPECT_FALSE(parse_bandwidth("100Gbit", &why));
  EXPECT_NE(why.find("unknown bandwidth unit"), std::string::npos);
  EXPECT_FALSE(parse_time("-2us", &why));
  EXPECT_NE(why.find("negative"), std::string::npos);
  EXPECT_FALSE(parse_size("nanMB"));
  EXPECT_FALSE(parse_size("1e999GB"));
  EXPECT_FALSE(parse_size("MB"));
  EXPECT_FALSE(parse_size("25 M B"));
  EXPECT_FALSE(parse_time("2 seconds"));
  EXPECT_FALSE(parse_number("0x10"));
  EXPECT_FALSE(parse_number("inf"));
}

TEST(Units, Formatting) {
  EXPECT_EQ(format_size(25.0 * 1048576), "25.0 MiB");
  EXPECT_EQ(format_time(2e-6), "2.00 us");
  EXPECT_EQ(format_bandwidth(12.5e9), "100.00 Gbps");
}

// Durations of hours as h:mm:ss (issue 16, item 7), rounded to the second,
// hours not wrapped at a day; format_hours is the same of a figure in hours.
TEST(Units, DurationsAsHoursMinutesSeconds) {
  using gw::units::format_duration;
  using gw::units::format_hours;
  EXPECT_EQ(format_duration(0), "0:00:00");
  EXPECT_EQ(format_duration(42.4), "0:00:42");
  EXPECT_EQ(format_duration(59.5), "0:01:00");
  EXPECT_EQ(format_duration(5940), "1:39:00");
  EXPECT_EQ(format_duration(123 * 3600.0 + 4 * 60 + 5), "123:04:05");
  EXPECT_EQ(format_duration(-5), "-0:00:05");
  EXPECT_EQ(format_duration(std::numeric_limits<double>::infinity()), "?");
  EXPECT_EQ(format_duration(std::nan("")), "?");
  EXPECT_EQ(format_hours(1.65), "1:39:00");
  EXPECT_EQ(format_hours(1000), "1000:00:00");
  EXPECT_EQ(format_hours(8.4), "8:24:00");
  // Beyond what a 64-bit count of seconds holds: still hours, no overflow.
  EXPECT_EQ(format_hours(1e15).substr(0, 5), "10000");
}

// Issue 29, item 16: a day is a unit of time ("--deadline 2d"), and a
// duration also reads in words beside h:mm:ss.
TEST(Units, DayIsAUnitOfTime) {
  using gw::units::parse_time;
  EXPECT_DOUBLE_EQ(*parse_time("2d"), 2 * 86400.0);
  EXPECT_DOUBLE_EQ(*parse_time("1.5 d"), 1.5 * 86400.0);
  EXPECT_DOUBLE_EQ(*parse_time("2d"), *parse_time("48h"));
  std::string why;
  EXPECT_FALSE(parse_time("2 days", &why));
  EXPECT_NE(why.find("min, h, d"), std::string::npos) << why;
  EXPECT_FALSE(parse_time("-1d", &why));
}

TEST(Units, DurationsInWords) {
  using gw::units::format_duration_words;
  EXPECT_EQ(format_duration_words(0), "0 s");
  EXPECT_EQ(format_duration_words(42.4), "42 s");
  EXPECT_EQ(format_duration_words(59.6), "1 min");  // rounded up into the next unit
  EXPECT_EQ(format_duration_words(125), "2 min 5 s");
  EXPECT_EQ(format_duration_words(52 * 60 + 10), "52 min");
  EXPECT_EQ(format_duration_words(5940), "1 h 39 min");
  EXPECT_EQ(format_duration_words(3 * 86400.0 + 4 * 3600 + 20 * 60), "3 d 4 h");
  EXPECT_EQ(format_duration_words(86400.0 - 60), "1 d");  // 23 h 59 min rounds to the hour
  EXPECT_EQ(format_duration_words(7 * 3600.0), "7 h");
  EXPECT_EQ(format_duration_words(-125), "-2 min 5 s");
  EXPECT_EQ(format_duration_words(std::nan("")), "?");
  EXPECT_EQ(format_duration_words(1e30).substr(0, 5), "11574");  // no overflow
}

TEST(Units, IntegerGrammar) {
  using gw::units::IntegerError;
  using gw::units::parse_integer;
  IntegerError why = IntegerError::kNone;
  EXPECT_EQ(parse_integer("42"), 42);
  EXPECT_EQ(parse_integer(" +7 "), 7);
  EXPECT_EQ(parse_integer("-12"), -12);
  EXPECT_EQ(parse_integer("0"), 0);
  EXPECT_EQ(parse_integer("-0"), 0);
  EXPECT_EQ(parse_integer("9223372036854775807"), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(parse_integer("-9223372036854775808"), std::numeric_limits<std::int64_t>::min());
  for (const char* bad : {"", "+", "-", "_", "+_", "1_000", "0x10", "0o17", "0b1", "1e3", "4.0", "064", "00", "--1",
                          "+-1", "12a", "1 2", "\xEF\xBC\x91"}) {
    EXPECT_FALSE(parse_integer(bad, &why)) << bad;
    EXPECT_EQ(why, IntegerError::kSyntax) << bad;
  }
  for (const char* big : {"9223372036854775808", "-9223372036854775809", "99999999999999999999999"}) {
    EXPECT_FALSE(parse_integer(big, &why)) << big;
    EXPECT_EQ(why, IntegerError::kRange) << big;
  }
}

TEST(Units, SizeRangesAreBytesWithUnits) {
  // MIN:MAX doubles; MIN:MAX:FACTOR steps by FACTOR; one size; a comma list sorted.
  EXPECT_EQ(*parse_size_range("8B:64B"), (std::vector<double>{8, 16, 32, 64}));
  EXPECT_EQ(*parse_size_range("8B:100B"), (std::vector<double>{8, 16, 32, 64}));
  EXPECT_EQ(*parse_size_range("1KiB:1MiB:32"), (std::vector<double>{1024, 32768, 1048576}));
  EXPECT_EQ(*parse_size_range("4KiB"), (std::vector<double>{4096}));
  EXPECT_EQ(*parse_size_range("16KiB, 4KiB,16KiB,1MB"), (std::vector<double>{4096, 16384, 1e6}));
  EXPECT_EQ(parse_size_range("8B:1GiB")->size(), 28u);  // gradwire collective's default
  std::string why;
  // A bare number or a power of two is refused: a unit is required.
  EXPECT_FALSE(parse_size_range("2^10:2^28", &why));
  EXPECT_NE(why.find("with a unit"), std::string::npos) << why;
  EXPECT_FALSE(parse_size_range("1024", &why));
  EXPECT_NE(why.find("no unit"), std::string::npos) << why;
  EXPECT_FALSE(parse_size_range("1MiB:1KiB", &why));
  EXPECT_EQ(why, "MAX is smaller than MIN");
  EXPECT_FALSE(parse_size_range("0B:1KiB", &why));
  EXPECT_EQ(why, "the smallest size must be at least 1 B");
  for (const char* bad : {"1KiB:1MiB:1", "1KiB:1MiB:2.5", "1KiB:1MiB:x", "1B:2B:2:2", "", "1KiB,", "8B:nanGB"}) {
    EXPECT_FALSE(parse_size_range(bad)) << bad;
  }
}
