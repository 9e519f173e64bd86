// The instance catalog (catalog/instances.yaml, schema gradwire-catalog/2):
// cloud GPU instances with their GPUs, interconnects and list prices, each
// price with the page it was read from and the date it was read, so that a
// scenario can say `cluster: {instance: p4d.24xlarge, nodes: 16}`. Plain C++.
// Loading is strict: gw::InputError with file, line, column and key path.
// Schema and sources: docs/planning.md.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gradwire/model/scenario.hpp"

namespace gw {

inline constexpr const char* kCatalogSchema = "gradwire-catalog/2";
/// The schema before every entry carried its own date (refused with a hint).
inline constexpr const char* kCatalogSchemaV1 = "gradwire-catalog/1";

/// The GPU classes gradwire knows: the values of a catalog entry's `gpu`,
/// each the name of a bundled datasheet profile (what cluster.gpu names).
/// The one list of them (scenario_refs' class of a cluster.gpu reads it too).
const std::vector<std::string>& gpu_classes();

/// How a provider bills: time is rounded up to `granularity` seconds and is at
/// least `minimum` seconds (per instance, per launch).
struct BillingSpec {
  double granularity = 1.0;
  double minimum = 60.0;
};

struct InstanceType {
  std::string name;       ///< e.g. "p4d.24xlarge"
  std::string cloud;      ///< aws, gcp, azure
  std::string region;     ///< the region the prices are for
  std::string gpu;        ///< its GPU class (gpu_classes()), a bundled profile name
  int gpus = 0;           ///< GPUs per instance
  double gpu_memory = 0;  ///< bytes per GPU
  LinkSpec intra_node;    ///< one GPU's link into the node fabric, one direction
  int nic_count = 1;
  LinkSpec nic;  ///< one NIC
  double fabric_latency = 0;
  double on_demand = 0;        ///< USD per instance hour
  std::optional<double> spot;  ///< USD per instance hour, when offered
  BillingSpec billing;
  std::string source;     ///< where the price was read (the provider's price page, or "our invoice")
  std::string as_of;      ///< when it was read (YYYY-MM-DD)
  bool refreshed = true;  ///< false: the last refresh could not re-read it; as_of is the older reading
  std::string note;       ///< why not refreshed, or another caveat of the price; "" when none
  int line = 0;           ///< line of the entry in the catalog file
};

struct Catalog {
  std::string path;
  std::string currency;  ///< "USD"
  std::vector<InstanceType> instances;
  /// The user's catalog added to this one ($GRADWIRE_CATALOG), "" when none.
  std::string added_path;
  /// The entry named `name` (exact match), or nullptr.
  const InstanceType* find(std::string_view name) const;
  /// The oldest and the newest entry date (YYYY-MM-DD), {"", ""} when empty.
  std::pair<std::string, std::string> dates() const;
};

/// Loads and validates a catalog file: schema, unknown / duplicate keys,
/// duplicate instance names, names that are not one printable line (control
/// characters), GPU names without a bundled profile name form, units,
/// prices > 0, spot < on-demand, each entry's source and date, and a note
/// on every entry that says `refreshed: false`.
Catalog load_catalog_file(const std::string& path);

/// The bundled catalog: <data dir>/catalog/instances.yaml.
std::string default_catalog_path();

/// $GRADWIRE_CATALOG when set and non-empty (a catalog of the user's added to
/// the bundled one), else "".
std::string user_catalog_path();

/// `added`'s entries added to `base`: a new name is appended, a name `base`
/// has is replaced by `added`'s entry (your own price for a listed instance).
/// Both must be in one currency (InputError at added's `currency`).
Catalog merge_catalogs(Catalog base, const Catalog& added);

/// The bundled catalog with $GRADWIRE_CATALOG's entries added (merge_catalogs),
/// loaded once per pair of paths and process.
const Catalog& default_catalog();

/// The ClusterSpec of `nodes` instances of `type`: its GPUs, links, NICs and a
/// non-blocking switch fabric with the catalog's hop latency; instance set.
ClusterSpec cluster_from_instance(const InstanceType& type, int nodes);

}  // namespace gw
