#include "gradwire/model/catalog.hpp"

#include <algorithm>

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <set>

#include "gradwire/core/error.hpp"
#include "gradwire/model/data_dir.hpp"
#include "gradwire/model/scenario.hpp"
#include "gradwire/model/scenario_yaml.hpp"
#include "gradwire/core/yaml_reader.hpp"

namespace gw {
namespace {

BillingSpec read_billing(const yaml::Node& n, BillingSpec b) {
  n.allow_keys({"granularity", "minimum"});
  if (auto g = n.optional("granularity")) {
    b.granularity = g->as_time(0, 86400.0 * 31);
    if (b.granularity <= 0) g->fail("granularity must be greater than 0");
  }
  if (auto m = n.optional("minimum")) b.minimum = m->as_time(0, 86400.0 * 31);
  return b;
}

double price(const yaml::Node& n) {
  double v = n.as_double(0, 1e6);
  if (v <= 0) n.fail("a price must be greater than 0 (USD per instance hour)");
  return v;
}

/// A date YYYY-MM-DD that exists, in [2000, 2100]: when a price was read.
std::string read_date(const yaml::Node& n) {
  const std::string s = n.as_name();
  static const std::regex date(R"(\d{4}-\d{2}-\d{2})");
  if (!std::regex_match(s, date)) n.fail("expected a date YYYY-MM-DD (when the price was read)");
  auto digits = [&](std::size_t at, std::size_t count) {  // ASCII digits, checked by the pattern above
    int v = 0;
    for (std::size_t i = at; i < at + count; ++i) v = v * 10 + (s[i] - '0');
    return v;
  };
  const int y = digits(0, 4), m = digits(5, 2), d = digits(8, 2);
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  const int days[] = {31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (y < 2000 || y > 2100) n.fail("year " + std::to_string(y) + " is out of range [2000, 2100]");
  if (m < 1 || m > 12) n.fail("month " + std::to_string(m) + " does not exist (" + s + ")");
  if (d < 1 || d > days[m - 1]) n.fail("day " + std::to_string(d) + " does not exist in " + s.substr(0, 7));
  return s;
}

/// The price and where it comes from: price {on_demand, spot?}, source,
/// as_of, refreshed?, note? (a note is required when refreshed is false).
void read_price(const yaml::Node& e, InstanceType& t) {
  auto p = e.required("price");
  p.allow_keys({"on_demand", "spot"});
  t.on_demand = price(p.required("on_demand"));
  if (auto s = p.optional("spot")) {
    t.spot = price(*s);
    if (*t.spot > t.on_demand) s->fail("spot price above the on-demand price");
  }
  // Names and texts that outputs print: one line, no control characters.
  t.source = e.required("source").as_name();
  t.as_of = read_date(e.required("as_of"));
  if (auto r = e.optional("refreshed")) t.refreshed = r->as_bool();
  if (auto n = e.optional("note")) t.note = n->as_name();
  if (!t.refreshed && t.note.empty()) {
    e.required("refreshed").fail("refreshed: false needs a note saying why the price could not be re-read");
  }
}

InstanceType read_instance(const yaml::Node& e, const BillingSpec& defaults) {
  e.allow_keys({"name", "cloud", "region", "gpu", "gpus", "gpu_memory", "intra_node", "nics", "fabric_latency", "price",
                "billing", "source", "as_of", "refreshed", "note"});
  InstanceType t;
  t.line = e.line();
  t.name = e.required("name").as_name();
  t.cloud = parse_cloud_name(e.required("cloud"));
  t.region = e.required("region").as_name();
  t.gpu = e.required("gpu").as_enum(gpu_classes());
  t.gpus = static_cast<int>(e.required("gpus").as_int(1, kMaxGpusPerNode));
  t.gpu_memory = e.required("gpu_memory").as_size(1e9, 1e13);
  t.intra_node = parse_link(e.required("intra_node"), TransportPlace::IntraNode);
  auto nics = e.required("nics");
  t.nic = parse_link(nics, TransportPlace::Network, {"count"});
  t.nic_count = static_cast<int>(nics.required("count").as_int(1, kMaxNicsPerNode));
  t.fabric_latency = e.optional("fabric_latency") ? e.required("fabric_latency").as_time(0, kMaxLinkLatency) : 0.0;
  read_price(e, t);
  t.billing = defaults;
  if (auto b = e.optional("billing")) t.billing = read_billing(*b, defaults);
  return t;
}

}  // namespace

const std::vector<std::string>& gpu_classes() {
  static const std::vector<std::string> classes = {"v100", "a100-40gb", "a100-80gb", "h100", "h200", "a10g", "l4"};
  return classes;
}

const InstanceType* Catalog::find(std::string_view name) const {
  for (const auto& i : instances) {
    if (i.name == name) return &i;
  }
  return nullptr;
}

std::pair<std::string, std::string> Catalog::dates() const {
  std::pair<std::string, std::string> span;
  for (const auto& i : instances) {
    if (span.first.empty() || i.as_of < span.first) span.first = i.as_of;  // YYYY-MM-DD sorts as text
    if (i.as_of > span.second) span.second = i.as_of;
  }
  return span;
}

Catalog load_catalog_file(const std::string& path) {
  auto doc = yaml::load_file(path);
  auto root = doc.root();
  Catalog c;
  c.path = path;
  auto schema = root.required("schema");
  const std::string version = schema.as_name();
  if (version == kCatalogSchemaV1) {
    schema.fail(std::string("schema ") + kCatalogSchemaV1 + " dated the whole file; " + kCatalogSchema +
                " dates every price: give each entry `as_of: YYYY-MM-DD` (when its price was read) and `source` "
                "(the page it was read from), drop the top-level as_of, and say schema: " +
                kCatalogSchema);
  }
  if (version != kCatalogSchema) {
    schema.fail("unsupported catalog schema \"" + version + "\" (expected " + kCatalogSchema + ")");
  }
  root.allow_keys({"schema", "currency", "billing", "instances"});
  c.currency = root.required("currency").as_enum({"USD"});
  BillingSpec defaults;
  if (auto b = root.optional("billing")) defaults = read_billing(*b, defaults);
  auto list = root.required("instances");
  list.expect_seq();
  if (list.size() == 0) list.fail("the catalog lists no instances");
  std::set<std::string> names;
  for (const auto& e : list.elements()) {
    InstanceType t = read_instance(e, defaults);
    if (!names.insert(t.name).second) e.required("name").fail("duplicate instance \"" + t.name + "\"");
    c.instances.push_back(std::move(t));
  }
  return c;
}

std::string default_catalog_path() { return data_dir() + "/catalog/instances.yaml"; }

std::string user_catalog_path() {
  const char* env = std::getenv("GRADWIRE_CATALOG");
  return env != nullptr ? env : "";
}

Catalog merge_catalogs(Catalog base, const Catalog& added) {
  if (added.currency != base.currency) {
    throw InputError(
        added.path, 0, 0, "currency",
        "is " + added.currency + ", the bundled catalog's is " + base.currency + " (one currency for both)");
  }
  for (const InstanceType& t : added.instances) {
    auto same = std::find_if(base.instances.begin(), base.instances.end(),
                             [&](const InstanceType& b) { return b.name == t.name; });
    if (same != base.instances.end()) {
      *same = t;
    } else {
      base.instances.push_back(t);
    }
  }
  base.added_path = added.path;
  return base;
}

const Catalog& default_catalog() {
  static std::mutex mu;
  static std::map<std::pair<std::string, std::string>, std::unique_ptr<Catalog>> cache;
  std::lock_guard<std::mutex> lock(mu);
  const auto key = std::make_pair(default_catalog_path(), user_catalog_path());
  auto it = cache.find(key);
  if (it == cache.end()) {
    Catalog c = load_catalog_file(key.first);
    if (!key.second.empty()) c = merge_catalogs(std::move(c), load_catalog_file(key.second));
    it = cache.emplace(key, std::make_unique<Catalog>(std::move(c))).first;
  }
  return *it->second;
}

ClusterSpec cluster_from_instance(const InstanceType& type, int nodes) {
  ClusterSpec c;
  c.nodes = nodes;
  c.gpus_per_node = type.gpus;
  c.gpu = type.gpu;
  c.intra_node = type.intra_node;
  c.nic_count = type.nic_count;
  c.nic = type.nic;
  c.fabric.topology = FabricTopology::Switch;
  c.fabric.latency = type.fabric_latency;
  c.instance = type.name;
  return c;
}

}  // namespace gw
