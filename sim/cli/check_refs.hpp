// The reference resolution lives in the libraries: a scenario's in
// gradwire/scenario_refs.hpp (sim/model), a sweep's in
// gradwire/plan/sweep_spec.hpp (gw::plan::resolve_sweep_references). This
// header only names the scenario's for the commands that still include it.
#pragma once

#include "gradwire/scenario_refs.hpp"

namespace gw::cli {

using gw::resolve_scenario_references;
using gw::ScenarioRefs;

}  // namespace gw::cli
