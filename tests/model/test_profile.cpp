#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include "gradwire/core/atomic_file.hpp"
#include "gradwire/model/compressors.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/model/fit.hpp"
#include "gradwire/model/profile.hpp"

namespace {

const char* const kBundled[] = {"v100", "a100-40gb", "a100-80gb", "h100", "h200", "a10g", "l4"};
// Every codec of the compressor table.
const std::vector<std::string> kCodecs = gw::compressor_codec_names();

gw::Profile sample_profile() {
  gw::Profile p;
  p.source = "measured";
  p.name = "test-gpu";
  p.device = "NVIDIA Test \"Quoted\" GPU";
  p.sm_count = 132;
  p.memory_bytes = 150011707392.0;
  p.driver = "580.65.06";
  p.cuda = "13.0";
  p.nccl = "2.28.9";
  p.date = "2026-01-02T03:04:05Z";
  p.host = "node-1";
  p.command = "gradwire-calibrate --out a:b.yaml --name 'x'";
  p.references = {"none"};
  p.notes = {"multi-GPU collectives not measured: 1 GPU visible", "line\nbreak"};
  p.nccl_env = {{"NCCL_ALGO", "Ring"}};
  p.gemm_flops = {{"fp32", 5.1e13}, {"tf32", 3.0e14}, {"bf16", 6.7e14}, {"fp16", 6.9e14}};
  p.gemm_points["bf16"] = {{1.0e9, 2.1e-6, 0.03, 20}, {6.87e10, 1.01e-4, 0.011, 20}};
  p.copy_bandwidth = 3.9e12 / 3.0;  // not a short decimal: checks exact round trip
  std::vector<gw::CurvePoint> pts;
  for (int e = 10; e <= 20; ++e) {
    double x = std::ldexp(1.0, e);
    pts.push_back({x, 4e-6 + x * 6.0 / 3.8e12 * 1.0000001, 0.01 * e, 25});
  }
  gw::CodecCost c;
  c.encode_points = pts;
  c.encode = gw::fit::fit_piecewise_log(pts, 0.01);
  c.decode_points = pts;
  c.decode = gw::fit::fit_piecewise_log(pts);
  p.codecs["fp16"] = c;
  p.codecs["int8_ef"] = c;
  gw::CollectiveCost ar;
  ar.op = gw::CollectiveOp::AllReduce;
  ar.gpus = 8;
  for (int e = 10; e <= 30; e += 2) {
    double x = std::ldexp(1.0, e);
    ar.points.push_back({x, 2e-5 + x / 1.7e11, 0.02, 10});
  }
  ar.fit = gw::fit::fit_alpha_beta(ar.points);
  p.collectives.push_back(ar);
  // The same op and GPU count across two nodes (an MPI run) is a separate entry.
  gw::CollectiveCost inter = ar;
  inter.nodes = 2;
  for (auto& pt : inter.points) pt.seconds = 5e-5 + pt.x / 2.3e10;
  inter.fit = gw::fit::fit_alpha_beta(inter.points);
  p.collectives.push_back(inter);
  return p;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("gw_test_" + std::to_string(::getpid()) + "_" + name)).string();
}

}  // namespace

TEST(Profile, RoundTripIsExact) {
  gw::Profile p = sample_profile();
  // Measured transport figures (docs/profiles.md), each optional.
  p.transports["socket"] = {0.9, 3e-05, 1.5e9};
  p.transports["nvswitch"] = {0.82, std::nullopt, std::nullopt};
  // Measured interference (docs/profiles.md), each optional.
  p.interference = {0.21, std::nullopt, 0.125, {}};
  // ... and per codec: both figures, one of them.
  p.interference.codecs["int8"] = {0.04, 0.3};
  p.interference.codecs["topk"] = {std::nullopt, 1.25};
  const std::string path = temp_path("roundtrip.yaml");
  gw::write_file_atomic(path, gw::profile_to_yaml(p));
  gw::Profile q = gw::load_profile_file(path);
  EXPECT_EQ(q.path, path);
  q.path = p.path;
  EXPECT_EQ(q.codecs.at("fp16").encode, p.codecs.at("fp16").encode);
  EXPECT_EQ(q.collectives, p.collectives);
  EXPECT_EQ(q.copy_bandwidth, p.copy_bandwidth);
  EXPECT_EQ(q.transports, p.transports);
  EXPECT_EQ(q.interference, p.interference);
  EXPECT_TRUE(q == p);
  // And the text is a fixed point.
  EXPECT_EQ(gw::profile_to_yaml(q), gw::profile_to_yaml(p));
  std::filesystem::remove(path);
}

TEST(Profile, NodesIsWrittenOnlyAboveOneAndSelectsTheEntry) {
  gw::Profile p = sample_profile();
  const std::string text = gw::profile_to_yaml(p);
  // One entry spans 2 nodes: "nodes: 2" once, no "nodes: 1" (absent means 1).
  const auto first = text.find("    nodes: 2\n");
  ASSERT_NE(first, std::string::npos) << text;
  EXPECT_EQ(text.find("    nodes: 2\n", first + 1), std::string::npos);
  EXPECT_EQ(text.find("nodes: 1"), std::string::npos);
  const std::string path = temp_path("nodes.yaml");
  gw::write_file_atomic(path, text);
  gw::Profile q = gw::load_profile_file(path);
  std::filesystem::remove(path);
  ASSERT_EQ(q.collectives.size(), 2u);
  EXPECT_EQ(q.collectives[0].nodes, 1);
  EXPECT_EQ(q.collectives[1].nodes, 2);
  // The two-argument accessor is the single-node fit; the three-argument one picks by nodes.
  ASSERT_NE(q.collective(gw::CollectiveOp::AllReduce, 8), nullptr);
  EXPECT_EQ(q.collective(gw::CollectiveOp::AllReduce, 8)->nodes, 1);
  EXPECT_EQ(q.collective(gw::CollectiveOp::AllReduce, 8), q.collective(gw::CollectiveOp::AllReduce, 8, 1));
  ASSERT_NE(q.collective(gw::CollectiveOp::AllReduce, 8, 2), nullptr);
  EXPECT_EQ(q.collective(gw::CollectiveOp::AllReduce, 8, 2)->nodes, 2);
  EXPECT_NEAR(q.collective(gw::CollectiveOp::AllReduce, 8, 2)->fit.beta, 2.3e10, 2.3e10 * 1e-3);
  EXPECT_EQ(q.collective(gw::CollectiveOp::AllReduce, 8, 4), nullptr);
  // Profiles written before the field existed (no `nodes`) load as one node.
  gw::Profile h = gw::load_profile("h100");
  for (const auto& c : h.collectives) EXPECT_EQ(c.nodes, 1) << gw::to_string(c.op) << " " << c.gpus;
}

TEST(Profile, LoadByNameAndPathAndAccessors) {
  gw::Profile h = gw::load_profile("h100");
  EXPECT_EQ(h.name, "h100");
  EXPECT_EQ(h.source, "datasheet");
  EXPECT_NE(h.path.find("calibrate/profiles/h100.yaml"), std::string::npos);
  gw::Profile same = gw::load_profile(h.path);
  EXPECT_EQ(same.gemm_flops, h.gemm_flops);
  EXPECT_GT(h.flops("bf16"), h.flops("tf32"));
  EXPECT_GT(h.flops("tf32"), h.flops("fp32"));
  EXPECT_THROW(h.flops("fp8"), std::out_of_range);
  EXPECT_THROW(h.codec_time("qsgd", true, 1e6), std::out_of_range);
  EXPECT_EQ(h.collective(gw::CollectiveOp::AllReduce, 3), nullptr);
  ASSERT_NE(h.collective(gw::CollectiveOp::AllReduce, 8), nullptr);
  try {
    gw::load_profile("no-such-gpu");
    ADD_FAILURE() << "no error";
  } catch (const gw::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("h200"), std::string::npos) << e.what();
  }
}

TEST(Profile, BundledDatasheetProfilesAreCompleteAndConsistent) {
  std::map<std::string, gw::Profile> all;
  for (const char* name : kBundled) {
    SCOPED_TRACE(name);
    gw::Profile p = gw::load_profile(name);
    EXPECT_EQ(p.source, "datasheet");
    EXPECT_FALSE(p.references.empty());
    EXPECT_GT(p.sm_count, 0);
    for (const auto& c : kCodecs) {
      ASSERT_TRUE(p.codecs.count(c)) << c;
      // Costs grow with size and are at least a launch.
      double small = p.codec_time(c, true, 1024), big = p.codec_time(c, true, 1 << 28);
      EXPECT_GE(small, 5e-6);
      EXPECT_GT(big, small) << c;
      EXPECT_GT(p.codec_time(c, false, 1 << 28), p.codec_time(c, false, 1024)) << c;
    }
    for (const auto& op : gw::collective_ops()) {
      for (int g : {2, 4, 8}) EXPECT_NE(p.collective(op.op, g), nullptr) << op.name << g;
    }
    all[name] = p;
  }
  // Bandwidth-bound costs follow memory bandwidth: H200 (4.8 TB/s) < H100 (3.35 TB/s) < L4 (300 GB/s).
  const double n = 1 << 28;
  EXPECT_LT(all["h200"].codec_time("fp16", true, n), all["h100"].codec_time("fp16", true, n));
  EXPECT_LT(all["h100"].codec_time("fp16", true, n), all["l4"].codec_time("fp16", true, n));
  // fp16 encode of 2^28 elements on H100: 6 B/element at 0.8 x 3.35 TB/s + 5 us.
  EXPECT_NEAR(all["h100"].codec_time("fp16", true, n), 5e-6 + n * 6 / (0.8 * 3.35e12), 1e-9);
  // NVLink all-reduce at 8 GPUs beats PCIe.
  EXPECT_GT(all["h100"].collective(gw::CollectiveOp::AllReduce, 8)->fit.beta,
            5 * all["l4"].collective(gw::CollectiveOp::AllReduce, 8)->fit.beta);
}

TEST(Profile, CodecCostChangesPropagate) {
  gw::Profile p = gw::load_profile("a100-80gb");
  const double before = p.codec_time("int8", true, 1e7);
  for (auto& k : p.codecs["int8"].encode.knots) k.seconds *= 3;
  EXPECT_NEAR(p.codec_time("int8", true, 1e7), 3 * before, 1e-12 * before);
}

TEST(Profile, FitsMissingKnotsAndAlphaBetaFromPoints) {
  gw::Profile p = sample_profile();
  std::string text = gw::profile_to_yaml(p);
  // Drop the knots and the collective fit: the loader fits them from the points.
  gw::Profile q = p;
  q.codecs["fp16"].encode.knots.clear();
  std::string y = gw::profile_to_yaml(q);
  auto pos = y.find("    alpha: ");
  auto end = y.find("    max_rel_residual: ", pos);
  end = y.find('\n', end);
  y.erase(pos, end + 1 - pos);
  const std::string path = temp_path("refit.yaml");
  gw::write_file_atomic(path, y);
  gw::Profile r = gw::load_profile_file(path);
  std::filesystem::remove(path);
  EXPECT_EQ(r.codecs["fp16"].encode.knots.size(), p.codecs["fp16"].encode_points.size());
  EXPECT_NEAR(r.collectives[0].fit.alpha, 2e-5, 2e-5 * 1e-3);
  EXPECT_NEAR(r.collectives[0].fit.beta, 1.7e11, 1.7e11 * 1e-3);
}

// --- malformed profiles ------------------------------------------------------

struct BadCase {
  const char* file;
  int line;
  const char* key;
  const char* reason_part;
};

TEST(Profile, TheBaseOfTheMalformedProfilesIsValid) {
  // Each file in bad/ is this file with one defect.
  gw::Profile p = gw::load_profile_file(std::string(GW_TEST_DATA_DIR) + "/good_base.yaml");
  EXPECT_EQ(p.name, "base");
  EXPECT_EQ(p.codecs.at("fp16").encode.knots.size(), 2u);  // fitted from the points
  // One decode knot: constant below it, proportional to size above it.
  EXPECT_DOUBLE_EQ(p.codec_time("fp16", false, 512), 5.0e-6);
  EXPECT_DOUBLE_EQ(p.codec_time("fp16", false, 4096), 2.0e-5);
  ASSERT_NE(p.collective(gw::CollectiveOp::AllReduce, 8), nullptr);
  EXPECT_DOUBLE_EQ(p.collective(gw::CollectiveOp::AllReduce, 8)->fit.evaluate(1e11), 2.0e-5 + 1.0);
}

TEST(Profile, MalformedProfilesAreRejectedWithFileLineAndField) {
  const BadCase cases[] = {
      {"schema_version.yaml", 1, "schema", "unsupported profile schema \"2\""},
      {"missing_compute.yaml", 1, "compute", "missing required field"},
      {"unknown_key.yaml", 5, "devise", "unknown key"},
      {"duplicate_key.yaml", 5, "name", "duplicate key"},
      {"bad_source.yaml", 2, "source", "is not one of"},
      {"negative_flops.yaml", 8, "compute.bf16_flops", "must be positive"},
      {"unknown_codec.yaml", 13, "codecs.qsgd", "unknown codec"},
      {"short_point.yaml", 16, "codecs.fp16.encode.points[1]", "4 numbers"},
      {"unsorted_points.yaml", 16, "codecs.fp16.encode.points[1][0]", "increase strictly"},
      {"no_curve.yaml", 17, "codecs.fp16.decode", "neither is given"},
      {"bad_op.yaml", 21, "collectives[0].op", "is not one of"},
      {"one_gpu.yaml", 22, "collectives[0].gpus", "out of range"},
      {"alpha_without_beta.yaml", 21, "collectives[0].beta", "missing required field"},
      {"duplicate_collective.yaml", 25, "collectives[1]", "a second allreduce entry for 8 GPUs"},
      {"datasheet_without_references.yaml", 1, "references", "must name its references"},
      {"not_a_number.yaml", 9, "compute.fp16_flops", "expected a finite number"},
      {"flat_collective.yaml", 23, "collectives[0].points", "does not grow with size"},
      {"nodes_above_gpus.yaml", 25, "collectives[0].nodes", "out of range"},
      {"unknown_interference_codec.yaml", 29, "interference.codecs.qsgd", "not a codec"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file);
    const std::string path = std::string(GW_TEST_DATA_DIR) + "/bad/" + c.file;
    ASSERT_TRUE(std::filesystem::exists(path));
    try {
      gw::load_profile_file(path);
      ADD_FAILURE() << "accepted";
    } catch (const gw::InputError& e) {
      EXPECT_EQ(e.file(), path);
      EXPECT_EQ(e.line(), c.line) << e.what();
      EXPECT_EQ(e.key(), c.key) << e.what();
      EXPECT_NE(e.reason().find(c.reason_part), std::string::npos) << e.what();
    }
  }
}

// The profile's field table (profile.cpp, profile_keys) and the documented
// keys (docs/profiles.md, "Fields") are the same, in the same order, and a
// key the table needs is the one the documentation says is required ("yes").
TEST(Profile, FieldTableIsTheDocumentedKeys) {
  std::ifstream in(std::string(GW_SOURCE_DIR) + "/docs/profiles.md");
  std::string line;
  while (std::getline(in, line) && line != "## Fields") {
  }
  std::vector<std::string> documented;
  std::set<std::string> required;
  bool in_table = false;
  while (std::getline(in, line)) {
    if (line.rfind("|", 0) != 0) {
      if (in_table) break;  // the end of the first table of the section
      continue;
    }
    in_table = true;
    if (line.rfind("| `", 0) != 0) continue;
    const auto cell_end = line.find(" | ", 2);
    const std::string cell = line.substr(2, cell_end - 2);
    const bool yes = line.compare(cell_end + 3, 3, "yes") == 0;
    // "`name`, `device`": two keys; "`compute.fp16_flops`, `tf32_flops`": one.
    std::vector<std::string> keys;
    for (std::size_t a = cell.find('`'); a != std::string::npos; a = cell.find('`', cell.find('`', a + 1) + 1))
      keys.push_back(cell.substr(a + 1, cell.find('`', a + 1) - a - 1));
    ASSERT_FALSE(keys.empty()) << line;
    const auto top_end = keys[0].find_first_of(".[");
    if (top_end != std::string::npos) keys = {keys[0].substr(0, top_end)};
    for (const auto& k : keys) {
      if (documented.empty() || documented.back() != k) documented.push_back(k);
      if (yes) required.insert(k);
    }
  }
  std::vector<std::string> table;
  std::set<std::string> table_required;
  for (const auto& k : gw::profile_keys()) {
    table.emplace_back(k.key);
    if (k.required) table_required.insert(k.key);
  }
  EXPECT_EQ(table, documented);
  EXPECT_EQ(table_required, required);
}
