#include "gradwire/core/units.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <utility>

namespace gw::units {
namespace {

struct UnitFactor {
  std::string_view unit;
  double factor;
};

constexpr std::array kBandwidthUnits = {
    UnitFactor{"bps", 1.0 / 8},
    UnitFactor{"Kbps", 1e3 / 8},
    UnitFactor{"Mbps", 1e6 / 8},
    UnitFactor{"Gbps", 1e9 / 8},
    UnitFactor{"Tbps", 1e12 / 8},
    UnitFactor{"b/s", 1.0 / 8},
    UnitFactor{"Kb/s", 1e3 / 8},
    UnitFactor{"Mb/s", 1e6 / 8},
    UnitFactor{"Gb/s", 1e9 / 8},
    UnitFactor{"Tb/s", 1e12 / 8},
    UnitFactor{"B/s", 1.0},
    UnitFactor{"KB/s", 1e3},
    UnitFactor{"MB/s", 1e6},
    UnitFactor{"GB/s", 1e9},
    UnitFactor{"TB/s", 1e12},
    UnitFactor{"KiB/s", 1024.0},
    UnitFactor{"MiB/s", 1048576.0},
    UnitFactor{"GiB/s", 1073741824.0},
    UnitFactor{"TiB/s", 1099511627776.0},
    UnitFactor{"Bps", 1.0},
    UnitFactor{"KBps", 1e3},
    UnitFactor{"MBps", 1e6},
    UnitFactor{"GBps", 1e9},
    UnitFactor{"TBps", 1e12},
};

constexpr std::array kTimeUnits = {
    UnitFactor{"ns", 1e-9}, UnitFactor{"us", 1e-6},  UnitFactor{"\xC2\xB5s", 1e-6}, UnitFactor{"ms", 1e-3},
    UnitFactor{"s", 1.0},   UnitFactor{"min", 60.0}, UnitFactor{"h", 3600.0},       UnitFactor{"d", 86400.0},
};

constexpr std::array kSizeUnits = {
    UnitFactor{"B", 1.0},
    UnitFactor{"KB", 1e3},
    UnitFactor{"MB", 1e6},
    UnitFactor{"GB", 1e9},
    UnitFactor{"TB", 1e12},
    UnitFactor{"PB", 1e15},
    UnitFactor{"KiB", 1024.0},
    UnitFactor{"MiB", 1048576.0},
    UnitFactor{"GiB", 1073741824.0},
    UnitFactor{"TiB", 1099511627776.0},
    UnitFactor{"PiB", 1125899906842624.0},
};

template <std::size_t N>
std::string unit_list(const std::array<UnitFactor, N>& units) {
  std::string out;
  for (const auto& u : units) {
    if (!out.empty()) out += ", ";
    out += u.unit;
  }
  return out;
}

// Splits "12.5GB/s" into the number and the unit; one optional space between.
template <std::size_t N>
std::optional<double> parse_quantity(std::string_view text, const std::array<UnitFactor, N>& units,
                                     std::string_view what, std::string_view example, std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<double> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  std::string_view s = trim(text);
  if (s.empty())
    return fail("expected a " + std::string(what) + " such as " + std::string(example) + ", got an empty value");
  std::size_t i = 0;
  auto is_num_char = [](char c) {
    return (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
  };
  // The number part ends at the first character that cannot belong to it. An 'e'
  // or 'E' counts only when followed by a digit or sign (so "5EB" is not eaten).
  while (i < s.size() && is_num_char(s[i])) {
    if ((s[i] == 'e' || s[i] == 'E') && !(i + 1 < s.size() && (std::isdigit(static_cast<unsigned char>(s[i + 1])) ||
                                                               s[i + 1] == '+' || s[i + 1] == '-')))
      break;
    ++i;
  }
  std::string_view num = s.substr(0, i);
  std::string_view unit = trim(s.substr(i));
  auto value = parse_number(num);
  if (!value) {
    return fail("expected a " + std::string(what) + " such as " + std::string(example) + ", got \"" + std::string(s) +
                "\"");
  }
  if (unit.empty()) {
    std::string msg = "\"";
    msg.append(s).append("\" has no unit; write a ").append(what).append(" with its unit, such as ");
    msg.append(example).append(" (units: ").append(unit_list(units)).append(")");
    return fail(std::move(msg));
  }
  for (const auto& u : units) {
    if (u.unit == unit) {
      if (*value < 0) return fail("a " + std::string(what) + " cannot be negative, got \"" + std::string(s) + "\"");
      double v = *value * u.factor;
      if (!std::isfinite(v)) return fail(std::string("\"").append(s).append("\" is out of range"));
      return v;
    }
  }
  return fail("unknown " + std::string(what) + " unit \"" + std::string(unit) + "\" in \"" + std::string(s) +
              "\" (units: " + unit_list(units) + ")");
}

std::string fmt_double(double v, int precision) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", precision, v);
  return buf;
}

}  // namespace

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<double> parse_number(std::string_view text) {
  std::string s(trim(text));
  if (s.empty()) return std::nullopt;
  // Reject forms strtod accepts but people do not write as quantities.
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')) return std::nullopt;
  }
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<std::int64_t> parse_integer(std::string_view text, IntegerError* why) {
  auto fail = [&](IntegerError e) -> std::optional<std::int64_t> {
    if (why) *why = e;
    return std::nullopt;
  };
  if (why) *why = IntegerError::kNone;
  std::string_view s = trim(text);
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return fail(IntegerError::kSyntax);
  for (char c : s) {
    if (c < '0' || c > '9') return fail(IntegerError::kSyntax);
  }
  if (s.size() > 1 && s.front() == '0') return fail(IntegerError::kSyntax);
  // Accumulate negatively: |INT64_MIN| does not fit a positive int64.
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  std::int64_t v = 0;
  for (char c : s) {
    const int d = c - '0';
    if (v < (kMin + d) / 10) return fail(IntegerError::kRange);
    v = v * 10 - d;
  }
  if (!negative) {
    if (v == kMin) return fail(IntegerError::kRange);
    v = -v;
  }
  return v;
}

std::optional<double> parse_bandwidth(std::string_view text, std::string* why) {
  return parse_quantity(text, kBandwidthUnits, "bandwidth", "100Gbps or 450GB/s", why);
}
std::optional<double> parse_time(std::string_view text, std::string* why) {
  return parse_quantity(text, kTimeUnits, "time", "2us or 1.5ms", why);
}
std::optional<double> parse_size(std::string_view text, std::string* why) {
  return parse_quantity(text, kSizeUnits, "size", "25MB or 25MiB", why);
}

namespace {

std::optional<double> range_size(std::string_view text, std::string* why) {
  const std::string_view t = trim(text);
  if (t.find('^') != std::string_view::npos) {
    if (why) {
      *why =
          "'" + std::string(t) + "': sizes are bytes with a unit, such as 1KiB (2^10 B) or 4KiB (2^10 fp32 elements)";
    }
    return std::nullopt;
  }
  std::string reason;
  const auto v = parse_size(t, &reason);
  if (!v) {
    if (why) *why = "'" + std::string(t) + "': " + reason;
    return std::nullopt;
  }
  if (!(*v >= 1)) {
    if (why) *why = "the smallest size must be at least 1 B";
    return std::nullopt;
  }
  return v;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = s.find(sep, start);
    out.push_back(s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

}  // namespace

std::optional<std::vector<double>> parse_size_range(std::string_view text, std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<std::vector<double>> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  std::vector<double> out;
  if (text.find(',') != std::string_view::npos) {
    for (auto part : split(text, ',')) {
      auto v = range_size(part, why);
      if (!v) return std::nullopt;
      out.push_back(*v);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  const auto parts = split(text, ':');
  if (parts.size() > 3)
    return fail("expected MIN:MAX[:FACTOR], a size or a comma list, got '" + std::string(text) + "'");
  const auto min = range_size(parts[0], why);
  if (!min) return std::nullopt;
  const auto max = parts.size() > 1 ? range_size(parts[1], why) : min;
  if (!max) return std::nullopt;
  if (*max < *min) return fail("MAX is smaller than MIN");
  double factor = 2;
  if (parts.size() == 3) {
    const auto f = parse_number(parts[2]);
    if (!f || *f != std::floor(*f) || *f < 2 || *f > 1024) {
      return fail("FACTOR '" + std::string(trim(parts[2])) + "' must be a whole number from 2 to 1024");
    }
    factor = *f;
  }
  for (double s = *min; s <= *max * (1 + 1e-12); s *= factor) out.push_back(s);
  return out;
}

std::string format_size(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  double v = bytes;
  while (std::fabs(v) >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  if (u == 0) return fmt_double(v, 0) + " B";
  return fmt_double(v, v < 10 ? 2 : (v < 100 ? 1 : 0)) + " " + units[u];
}

std::string format_time(double seconds) {
  double a = std::fabs(seconds);
  if (a == 0) return "0 s";
  if (a < 1e-6) return fmt_double(seconds * 1e9, 1) + " ns";
  if (a < 1e-3) return fmt_double(seconds * 1e6, 2) + " us";
  if (a < 1.0) return fmt_double(seconds * 1e3, 3) + " ms";
  if (a < 3600.0) return fmt_double(seconds, 3) + " s";
  return fmt_double(seconds / 3600.0, 2) + " h";
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds)) return "?";
  const std::string sign = seconds < 0 ? "-" : "";
  const double rounded = std::round(std::fabs(seconds));
  if (rounded >= 3600.0 * 1e12) return sign + fmt_double(rounded / 3600.0, 0) + ":00:00";  // beyond a long
  const auto t = static_cast<long long>(rounded);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", t / 3600, (t / 60) % 60, t % 60);
  return sign + buf;
}

std::string format_duration_words(double seconds) {
  if (!std::isfinite(seconds)) return "?";
  if (seconds < 0) return "-" + format_duration_words(-seconds);
  if (seconds >= 86400.0 * 1e12) return fmt_double(seconds / 86400.0, 0) + " d";  // beyond a long
  // n smaller units as "BIG big SMALL small" (the second left out when 0).
  const auto two = [](long long n, long long per, const char* big, const char* small) {
    std::string out = std::to_string(n / per) + " " + big;
    if (n % per != 0) out += " " + std::to_string(n % per) + " " + small;
    return out;
  };
  if (const long long h = std::llround(seconds / 3600.0); h >= 24) return two(h, 24, "d", "h");
  const long long m = std::llround(seconds / 60.0);
  if (m >= 60) return two(m, 60, "h", "min");
  if (m >= 10) return std::to_string(m) + " min";
  if (const long long s = std::llround(seconds); s >= 60) return two(s, 60, "min", "s");
  return std::to_string(std::llround(seconds)) + " s";
}

std::string format_bandwidth(double bytes_per_second) {
  double bits = bytes_per_second * 8;
  if (bits >= 1e12) return fmt_double(bits / 1e12, 2) + " Tbps";
  if (bits >= 1e9) return fmt_double(bits / 1e9, 2) + " Gbps";
  if (bits >= 1e6) return fmt_double(bits / 1e6, 2) + " Mbps";
  return fmt_double(bits / 1e3, 2) + " Kbps";
}

}  // namespace gw::units
