// The scenario parser on an already loaded YAML document. Apart from
// gradwire/model/scenario.hpp so that yaml-cpp reaches only the translation units
// that read YAML themselves (the sweep, `gradwire check`, tests).
#pragma once

#include "gradwire/model/scenario.hpp"
#include "gradwire/core/yaml_reader.hpp"

#include <string>
#include <vector>

namespace gw {

/// Validates an already loaded document (used by sweeps after substitution).
Scenario parse_scenario(const yaml::Document& doc);

/// A link section: bandwidth, latency (both required), and optionally
/// `transport` (a row of transports.hpp usable at `place`; default: the ideal
/// link), `connections` and `per_connection` (transports with a
/// per-connection limit only: the connections a GPU's peer link uses, and the
/// rate one of them reaches where the cluster's cloud documents its own).
/// `extra_keys` are the section's other keys, read by the caller.
LinkSpec parse_link(const yaml::Node& node, TransportPlace place, std::vector<std::string> extra_keys = {});
/// The same keys, each optional, over an existing link (an instance's NICs
/// overridden by a scenario). A new transport resets the table's figures.
void override_link(const yaml::Node& node, TransportPlace place, std::vector<std::string> extra_keys, LinkSpec& link);

/// Section parsers (one per part of the schema).
ClusterSpec parse_cluster(const yaml::Node& node);
WorkloadSpec parse_workload(const yaml::Node& node);
TrainingSpec parse_training(const yaml::Node& node);
/// A compute precision (compute_precision_names()): the one parser of
/// workload.compute_precision and of a measured-compute document's field.
std::string parse_compute_precision(const yaml::Node& node);
/// Who prices a cluster (`cloud:` of a catalog entry or of a spelled-out
/// cluster): aws, gcp, azure, onprem or a name of the user's, 1-64 letters,
/// digits, '-', '_' or '.'.
std::string parse_cloud_name(const yaml::Node& node);

}  // namespace gw
