// How a reference written in a scenario, a sweep or on the command line
// (workload.model, profile, --profile) is read: a path to a file, or the name
// of a bundled one. One rule for every loader (model, profile, scenario
// references): before it was written three times, and the copies disagreed
// about ".yml" (a scenario whose `profile: p.yml` sat beside it passed `check`
// from its parent folder and failed from its own).
#pragma once

#include <string_view>

namespace gw {

/// True when `ref` is a path rather than a bundled name: it contains a '/',
/// or ends in ".yaml" or ".yml". Names never contain either.
bool looks_like_path(std::string_view ref);

}  // namespace gw
