// The scenario parser on an already loaded YAML document. Apart from
// gradwire/model/scenario.hpp so that yaml-cpp reaches only the translation units
// that read YAML themselves (the sweep, `gradwire check`, tests).
#pragma once

#include "gradwire/model/scenario.hpp"
#include "gradwire/core/yaml_reader.hpp"

namespace gw {

/// Validates an already loaded document (used by sweeps after substitution).
Scenario parse_scenario(const yaml::Document& doc);

/// Section parsers (one per part of the schema).
ClusterSpec parse_cluster(const yaml::Node& node);
WorkloadSpec parse_workload(const yaml::Node& node);
TrainingSpec parse_training(const yaml::Node& node);

}  // namespace gw
