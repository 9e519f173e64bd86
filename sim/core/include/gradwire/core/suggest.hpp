// "Did you mean ...?" for a name that is not one of a known list: the one
// nearest-name rule of every message that refuses a name (unknown YAML keys,
// commands, catalog instances, profiles).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gw {

/// Levenshtein distance: the fewest single-character insertions, deletions
/// and substitutions that turn `a` into `b`.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The first of `candidates` at the smallest edit distance from `name` when
/// that distance is below `below` (2 edits at most by default), else "".
std::string nearest_name(std::string_view name, const std::vector<std::string>& candidates, std::size_t below = 3);

/// "; did you mean \"X\"?" with X = nearest_name(name, candidates), or ""
/// when no candidate is near.
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace gw
