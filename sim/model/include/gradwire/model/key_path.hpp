// Key paths into a scenario tree ("cluster.nodes", "a.b[2].c") and the
// mixed-radix numbering of sweep points: the one definition used by the sweep
// (sim/plan), the reference resolution and `gradwire check`. Plain C++ on
// yaml-cpp.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <string>
#include <vector>

namespace gw {

/// "a.b.c" -> {"a", "b", "c"} (an empty segment stays empty: "a..b" -> {"a", "", "b"}).
std::vector<std::string> split_key(const std::string& key);

/// True when `key` is `prefix` or a path below it ("a.b" and "a.b[1]" are
/// below "a"; "ab" is not).
bool key_under(const std::string& key, const std::string& prefix);

/// True when one of the two paths is under the other.
bool keys_overlap(const std::string& a, const std::string& b);

/// The mark of the node at key path `path` ("a.b[2].c") below `root`, or of
/// its deepest existing ancestor with a mark; `root`'s own mark for "".
/// Nothing is inserted into `root`.
YAML::Mark mark_at(const YAML::Node& root, const std::string& path);

/// The digits of `index` in the mixed radix `radices` (the first digit most
/// significant): index = ((d0 x r1 + d1) x r2 + d2) ... Every radix must be
/// at least 1.
std::vector<std::size_t> mixed_radix_digits(const std::vector<std::size_t>& radices, std::size_t index);

}  // namespace gw
