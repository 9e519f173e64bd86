// Strict parsing and formatting of physical quantities as people write them:
// "100Gbps", "450GB/s", "2us", "25MB", "25MiB". A unit is always required.
// Results are in SI base units: bytes per second, seconds, bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gw::units {

/// Bandwidth in bytes/s. Bits: bps Kbps Mbps Gbps Tbps (also Kb/s ... Tb/s).
/// Bytes: B/s KB/s MB/s GB/s TB/s (decimal) and KiB/s MiB/s GiB/s TiB/s (binary),
/// also written Bps KBps MBps GBps TBps.
std::optional<double> parse_bandwidth(std::string_view text, std::string* why = nullptr);
/// Time in seconds: ns, us (or µs), ms, s, min, h, d (a day: 86,400 s).
std::optional<double> parse_time(std::string_view text, std::string* why = nullptr);
/// Size in bytes: B, KB MB GB TB PB (powers of 1000), KiB MiB GiB TiB PiB (powers of 1024).
std::optional<double> parse_size(std::string_view text, std::string* why = nullptr);
/// A list of sizes in bytes: the one `--sizes` grammar of every command
/// (`gradwire collective`, `gradwire calibrate`).
///   MIN:MAX[:FACTOR]   MIN, MIN x FACTOR, MIN x FACTOR^2, ... while <= MAX;
///                      FACTOR a whole number in 2..1024, 2 when left out
///   SIZE               one size
///   SIZE,SIZE,...      a list (sorted, duplicates dropped)
/// Each SIZE is a byte size with its unit as parse_size reads it ("8B",
/// "4KiB", "1GB"), at least 1 B. A bare number or a power such as 2^10 is
/// refused (a unit is required). nullopt with *why on an error.
std::optional<std::vector<double>> parse_size_range(std::string_view text, std::string* why = nullptr);
/// A plain finite decimal number with nothing after it ("1e-3", "42").
std::optional<double> parse_number(std::string_view text);

/// Why parse_integer refused a text.
enum class IntegerError { kNone, kSyntax, kRange };
/// A 64-bit integer in plain decimal: an optional sign (`+` or `-`) and one or
/// more digits, without leading zeros ("0", "-0" and "+0" are zero), blanks
/// around allowed. Refused: `_` separators, hex/octal/binary (0x10, 0o17,
/// 0b1), exponents (1e3), decimals (4.0), leading zeros (064: octal in YAML
/// 1.1), and values outside int64 (kRange). Never throws.
std::optional<std::int64_t> parse_integer(std::string_view text, IntegerError* why = nullptr);

/// Human-readable forms used in tables: "25 MiB"-style binary sizes, "3.20 ms" times,
/// "100 Gbps"-style bandwidths.
std::string format_size(double bytes);
std::string format_time(double seconds);
std::string format_bandwidth(double bytes_per_second);
/// A duration as a person reads one of hours: "h:mm:ss", rounded to the
/// second ("1:39:00", "0:00:42", "123:04:05"; "-0:00:05" below zero; "?"
/// when not finite). Every duration of training shown to a person (tables,
/// sentences, progress) goes through it; JSON and CSV keep numbers.
std::string format_duration(double seconds);
/// format_duration of a figure in hours (time-to-train, deadlines).
inline std::string format_hours(double hours) { return format_duration(hours * 3600.0); }
/// The same duration in words, for a person to take in at a glance beside
/// h:mm:ss: its two largest units from a day down ("3 d 4 h", "1 h 39 min",
/// "2 min 5 s", "42 s"), rounded to the smaller; from ten minutes to an hour
/// minutes alone ("52 min"); "?" when not finite.
std::string format_duration_words(double seconds);

/// Removes leading and trailing blanks.
std::string_view trim(std::string_view s);

}  // namespace gw::units
