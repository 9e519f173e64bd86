// The instance catalog: the bundled file, malformed catalogs (file, line,
// key), and scenarios that name an instance.
#include <gtest/gtest.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <tuple>
#include <vector>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gradwire/model/catalog.hpp"
#include "gradwire/model/data_dir.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/model/profile.hpp"
#include "gradwire/model/scenario_refs.hpp"
#include "gradwire/model/scenario_yaml.hpp"

namespace gw {
namespace {

namespace fs = std::filesystem;

TEST(Catalog, BundledCatalogHasTheRequiredInstancesWithProfiles) {
  const Catalog c = load_catalog_file(default_catalog_path());
  EXPECT_EQ(c.currency, "USD");
  for (const char* name :
       {"p3.16xlarge", "p3dn.24xlarge", "p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5en.48xlarge", "g5.48xlarge",
        "a2-highgpu-8g", "a3-highgpu-8g", "ND96asr_v4", "ND96isr_H100_v5"}) {
    const InstanceType* t = c.find(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_TRUE(fs::exists(data_dir() + "/calibrate/profiles/" + t->gpu + ".yaml")) << name << " -> " << t->gpu;
    EXPECT_GT(t->on_demand, 0);
    if (t->spot) {
      EXPECT_LT(*t->spot, t->on_demand);
    }
  }
  const InstanceType* p4d = c.find("p4d.24xlarge");
  EXPECT_EQ(p4d->cloud, "aws");
  EXPECT_EQ(p4d->gpu, "a100-40gb");
  EXPECT_EQ(p4d->gpus, 8);
  EXPECT_EQ(p4d->nic_count, 4);
  EXPECT_DOUBLE_EQ(p4d->nic.bandwidth, 100e9 / 8);
  EXPECT_DOUBLE_EQ(p4d->billing.granularity, 1);
  EXPECT_DOUBLE_EQ(p4d->billing.minimum, 60);
}

// Issue 29, item 14: every bundled price says where it was read (the
// provider's own page) and when; one that the last refresh could not re-read
// says so and why.
TEST(Catalog, EveryCatalogGpuIsAClassWithABundledProfile) {
  // One list of GPU classes (gpu_classes) for the catalog's gpu field and for
  // the class of a cluster.gpu (the profile warnings): every bundled entry's
  // GPU is a class of its own, and every class loads as a bundled profile.
  const Catalog c = load_catalog_file(default_catalog_path());
  ASSERT_FALSE(c.instances.empty());
  for (const InstanceType& t : c.instances) {
    EXPECT_EQ(gpu_class_of_name(t.gpu), t.gpu) << t.name;
    EXPECT_EQ(gpu_class_of_name(t.gpu + "-measured"), t.gpu) << t.name;  // a measured profile of it
  }
  for (const std::string& g : gpu_classes()) {
    EXPECT_EQ(gpu_class_of_name(g), g);
    EXPECT_EQ(load_profile(g).name, g);
  }
  EXPECT_EQ(gpu_class_of_name("a100-80gb-mine"), "a100-80gb");  // a profile of the user's for an A100 80GB
  EXPECT_EQ(gpu_class_of_name("a100"), "");                     // no class: a name of the user's
  // A device name maps to one of these classes.
  for (const char* device : {"NVIDIA H200", "NVIDIA H100 80GB HBM3", "Tesla V100-SXM2-16GB", "NVIDIA A10G", "NVIDIA L4",
                             "NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM4-40GB"}) {
    const std::string g = gpu_class_of_device(device, 0);
    EXPECT_NE(std::find(gpu_classes().begin(), gpu_classes().end(), g), gpu_classes().end()) << device << " -> " << g;
  }
}

TEST(Catalog, EveryBundledPriceHasAFirstPartySourceAndADate) {
  const Catalog c = load_catalog_file(default_catalog_path());
  const std::map<std::string, std::string> first_party{
      {"aws", "https://aws.amazon.com/"},          {"gcp", "https://cloud.google.com/"},
      {"azure", "https://azure.microsoft.com/"},   {"lambda", "https://lambda.ai/"},
      {"coreweave", "https://www.coreweave.com/"}, {"runpod", "https://www.runpod.io/"}};
  char today[16];
  const std::time_t now = std::time(nullptr);
  std::strftime(today, sizeof today, "%Y-%m-%d", std::gmtime(&now));
  for (const InstanceType& t : c.instances) {
    ASSERT_TRUE(first_party.count(t.cloud)) << t.name << ": a cloud without a known first-party site: " << t.cloud;
    EXPECT_EQ(t.source.rfind(first_party.at(t.cloud), 0), 0u) << t.name << ": " << t.source;
    EXPECT_EQ(t.as_of.size(), 10u) << t.name;
    EXPECT_LE(t.as_of, today) << t.name;  // not read in the future
    if (!t.refreshed) {
      EXPECT_FALSE(t.note.empty()) << t.name;
    }
  }
  // The AWS P4/P5 entries predate the June 2025 on-demand cut: until a
  // first-party page gives the new price they must say so, not pass as current.
  for (const char* name : {"p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5en.48xlarge"}) {
    const InstanceType* t = c.find(name);
    ASSERT_NE(t, nullptr) << name;
    if (t->as_of < "2025-06-01") {
      EXPECT_FALSE(t->refreshed) << name;
      EXPECT_NE(t->note.find("45%"), std::string::npos) << name << ": " << t->note;
    }
  }
  const auto [oldest, newest] = c.dates();
  EXPECT_LE(oldest, newest);
  EXPECT_EQ(oldest.size(), 10u);
}

TEST(Catalog, MalformedCatalogsNameFileLineAndKey) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(std::string(GW_PLAN_TEST_DIR) + "/bad-catalogs")) {
    const std::string path = e.path().string();
    std::ifstream in(path);
    std::string first;
    std::getline(in, first);
    std::istringstream want(first.substr(first.find(':') + 1));
    int line = 0;
    std::string key;
    want >> line >> key;
    try {
      load_catalog_file(path);
      ADD_FAILURE() << path << " was accepted";
    } catch (const InputError& err) {
      EXPECT_EQ(err.file(), path);
      EXPECT_EQ(err.line(), line) << path << ": " << err.what();
      EXPECT_EQ(err.key(), key) << path << ": " << err.what();
    }
    ++n;
  }
  EXPECT_GE(n, 10);
}

TEST(Catalog, ScenarioNamesAnInstance) {
  auto s = parse_scenario(yaml::load_string("cluster: {instance: p4d.24xlarge, nodes: 16}\n", "inst.yaml"));
  EXPECT_EQ(s.cluster.world_size(), 128);
  EXPECT_EQ(s.cluster.gpu, "a100-40gb");
  EXPECT_EQ(s.cluster.nic_count, 4);
  // 4 x 100 Gbps EFA: the transport's achievable fraction of the line rate.
  EXPECT_EQ(s.cluster.nic.transport, Transport::EFA);
  EXPECT_EQ(s.cluster.intra_node.transport, Transport::NVSwitch);
  EXPECT_DOUBLE_EQ(s.cluster.node_bandwidth(), 400e9 / 8);
  EXPECT_DOUBLE_EQ(s.cluster.usable_node_bandwidth(), 400e9 / 8 * transport_info(Transport::EFA).fraction);
  ASSERT_TRUE(s.cluster.instance.has_value());
  EXPECT_EQ(*s.cluster.instance, "p4d.24xlarge");
  // Overrides: one NIC field, the fabric, the placement.
  auto o = parse_scenario(yaml::load_string(
      "cluster:\n  instance: p4d.24xlarge\n  nodes: 4\n  nics: {bandwidth: 10Gbps}\n"
      "  fabric: {topology: fat-tree, nodes_per_leaf: 2, oversubscription: 2}\n  placement: interleaved\n",
      "over.yaml"));
  EXPECT_EQ(o.cluster.nic_count, 4);
  EXPECT_DOUBLE_EQ(o.cluster.nic.bandwidth, 10e9 / 8);
  EXPECT_EQ(o.cluster.fabric.topology, FabricTopology::FatTree);
  EXPECT_EQ(o.cluster.placement, Placement::Interleaved);
}

TEST(Catalog, InstanceErrorsNameLineAndKey) {
  try {
    parse_scenario(yaml::load_string("cluster:\n  instance: p9.huge\n  nodes: 2\n", "s.yaml"));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.key(), "cluster.instance");
    EXPECT_NE(e.reason().find("p4d.24xlarge"), std::string::npos);
  }
  try {
    parse_scenario(yaml::load_string("cluster:\n  instance: p4d.24xlarge\n  nodes: 2\n  gpu: h100\n", "s.yaml"));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 4);
    EXPECT_EQ(e.key(), "cluster.gpu");
  }
  try {
    parse_scenario(yaml::load_string("cluster:\n  instance: p4d.24xlarge\n  nodes: 0\n", "s.yaml"));
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.key(), "cluster.nodes");
  }
}

TEST(Catalog, EnvironmentVariableAddsACatalogToTheBundledOne) {
  const fs::path dir = fs::temp_directory_path() / ("gw-cat-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "mine.yaml").string();
  std::ofstream(path)
      << "schema: gradwire-catalog/2\ncurrency: USD\ninstances:\n"
         "  - {name: lab-box, cloud: aws, region: here, gpu: l4, gpus: 2, gpu_memory: 24GB,\n"
         "     intra_node: {bandwidth: 16GB/s, latency: 2us}, nics: {count: 1, bandwidth: 10Gbps, latency: 20us},\n"
         "     price: {on_demand: 1.5}, billing: {granularity: 1h, minimum: 1h}, source: invoice,\n"
         "     as_of: 2025-01-01}\n";
  ::setenv("GRADWIRE_CATALOG", path.c_str(), 1);
  auto s = parse_scenario(yaml::load_string("cluster: {instance: lab-box, nodes: 3}\n", "s.yaml"));
  const InstanceType* t = default_catalog().find("lab-box");
  // Added, not replaced: the bundled instances are still there (issue 16, item 3).
  const InstanceType* bundled = default_catalog().find("p4d.24xlarge");
  const std::string added = default_catalog().added_path;
  ::unsetenv("GRADWIRE_CATALOG");
  EXPECT_NE(bundled, nullptr);
  EXPECT_EQ(added, path);
  EXPECT_EQ(s.cluster.world_size(), 6);
  ASSERT_NE(t, nullptr);
  EXPECT_DOUBLE_EQ(t->billing.granularity, 3600);
  EXPECT_FALSE(t->spot.has_value());
  EXPECT_EQ(t->source, "invoice");  // your own price: its source need not be a page
  EXPECT_EQ(t->as_of, "2025-01-01");
  EXPECT_TRUE(t->refreshed);
  fs::remove_all(dir);
}

TEST(Catalog, MergeReplacesAnInstanceOfTheSameNameAndAppendsNewOnes) {
  Catalog base;
  base.path = "bundled.yaml";
  base.currency = "USD";
  base.instances.resize(2);
  base.instances[0].name = "a";
  base.instances[0].on_demand = 10;
  base.instances[1].name = "b";
  Catalog mine;
  mine.path = "mine.yaml";
  mine.currency = "USD";
  mine.instances.resize(2);
  mine.instances[0].name = "a";
  mine.instances[0].on_demand = 7;  // a negotiated price
  mine.instances[1].name = "c";
  const Catalog m = merge_catalogs(base, mine);
  ASSERT_EQ(m.instances.size(), 3u);
  EXPECT_DOUBLE_EQ(m.find("a")->on_demand, 7);
  EXPECT_NE(m.find("b"), nullptr);
  EXPECT_NE(m.find("c"), nullptr);
  EXPECT_EQ(m.added_path, "mine.yaml");
  mine.currency = "EUR";
  EXPECT_THROW(merge_catalogs(base, mine), InputError);
}

TEST(Catalog, AClusterOfYourOwnTakesCloudAndAPrice) {
  const std::string spelled =
      "cluster:\n  nodes: 2\n  gpus_per_node: 4\n  gpu: a100-80gb\n"
      "  nics: {count: 1, bandwidth: 100Gbps, latency: 5us}\n"
      "  fabric: {topology: switch, latency: 1us}\n";
  auto s = parse_scenario(yaml::load_string(spelled + "  cloud: onprem\n  price_per_gpu_hour: 1.25\n", "s.yaml"));
  EXPECT_EQ(s.cluster.cloud, "onprem");
  ASSERT_TRUE(s.cluster.price_per_node_hour.has_value());
  EXPECT_DOUBLE_EQ(*s.cluster.price_per_node_hour, 5.0);
  s = parse_scenario(yaml::load_string(spelled + "  cloud: our-lab\n  price_per_node_hour: 9\n", "s.yaml"));
  EXPECT_DOUBLE_EQ(*s.cluster.price_per_node_hour, 9.0);
  for (const auto& [extra, key, line] : std::vector<std::tuple<std::string, std::string, int>>{
           {"  cloud: onprem\n", "cluster.cloud", 7},
           {"  price_per_gpu_hour: 2\n", "cluster.price_per_gpu_hour", 7},
           {"  cloud: onprem\n  price_per_gpu_hour: 1\n  price_per_node_hour: 4\n", "cluster.price_per_node_hour", 9},
           {"  cloud: onprem\n  price_per_gpu_hour: 0\n", "cluster.price_per_gpu_hour", 8}}) {
    try {
      parse_scenario(yaml::load_string(spelled + extra, "s.yaml"));
      ADD_FAILURE() << extra;
    } catch (const InputError& e) {
      EXPECT_EQ(e.key(), key) << e.what();
      EXPECT_EQ(e.line(), line) << e.what();
    }
  }
}

}  // namespace
}  // namespace gw
