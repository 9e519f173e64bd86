// Shared by the sweep tests (test_sweep.cpp, test_sweep_cli.cpp, test_report.cpp): a
// temporary directory and a small sweep.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace gw::plan {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "gw-sweep-test-XXXXXX").string();
    path = ::mkdtemp(t.data());
  }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string& name, const std::string& text = "") const {
    const std::string p = (path / name).string();
    if (!text.empty()) std::ofstream(p) << text;
    return p;
  }
};

[[maybe_unused]] const char* kSmall =
    "name: small\n"
    "base:\n"
    "  cluster: {instance: p4d.24xlarge, nodes: 2}\n"
    "  workload: {model: resnet50, micro_batch: 32}\n"
    "  training: {samples: 1000000}\n"
    "axes:\n"
    "  cluster.nodes: [1, 2, 4]\n"
    "  workload.compression: [{kind: none}, {kind: powersgd, rank: 4}]\n"
    "zip:\n"
    "  - cluster.nics.bandwidth: [10Gbps, 100Gbps]\n"
    "    cluster.nics.latency: [20us, 5us]\n";

}  // namespace
}  // namespace gw::plan
