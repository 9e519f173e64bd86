// The calibrator's interference phase (docs/calibrate.md, "Interference") on
// a fake backend whose work slows by known factors when it runs beside other
// work: a GEMM batch beside a codec loop takes (1 + F[codec]) times as long,
// beside all-reduces (1 + F_nccl) times, and a codec call beside a GEMM batch
// (1 + G[codec]) times. The phase must recover every factor exactly, keep
// the figures in the loader's range with a note when a measurement falls
// outside it, and write a profile that loads.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "fake_backend.hpp"
#include "gradwire/calibrate/calibrate.hpp"
#include "gradwire/model/profile.hpp"

namespace {

using gw::calibrate::Backend;
using gw::calibrate::GemmBatch;

constexpr double kGemm = 1e-3;        // s per GEMM alone
constexpr double kCollective = 2e-3;  // s per all-reduce

class FakeBackend;

/// A batch whose time depends on what ran beside it while it was active.
class FakeBatch final : public GemmBatch {
 public:
  FakeBatch(FakeBackend& b, int count);
  ~FakeBatch() override;
  FakeBatch(const FakeBatch&) = delete;
  FakeBatch& operator=(const FakeBatch&) = delete;
  double wait() override;
  std::string beside;  ///< a codec name, "nccl", or "" (alone)

 private:
  FakeBackend& b_;
  int count_;
};

class FakeBackend : public gw::test::FakeBackendBase {
 public:
  std::map<std::string, double> gemm_beside_codec;  ///< F: GEMM slow-down beside the codec
  std::map<std::string, double> codec_beside_gemm;  ///< G: the codec's slow-down beside GEMMs
  double gemm_beside_nccl = 0;                      ///< F_nccl
  int gpus = 0;
  FakeBatch* active = nullptr;
  int batches = 0;

  std::vector<std::string> codec_names() override {
    std::vector<std::string> out;
    for (const auto& [name, f] : gemm_beside_codec) out.push_back(name);
    return out;
  }
  void time_codec(const std::string& name, std::size_t n, int, int repeats, std::vector<double>& enc,
                  std::vector<double>& dec, const std::function<void()>& ready) override {
    if (ready) ready();
    const double slow = active != nullptr ? 1 + codec_beside_gemm.at(name) : 1.0;
    if (active != nullptr) active->beside = name;
    const double t = (5e-6 + 1e-10 * static_cast<double>(n)) * slow;
    enc.assign(static_cast<std::size_t>(repeats), 0.4 * t);
    dec.assign(static_cast<std::size_t>(repeats), 0.6 * t);
  }
  std::unique_ptr<GemmBatch> start_gemm_batch(const std::string& precision, int, int, int, int count) override {
    if (precision != "fp32") throw std::runtime_error("only fp32 here");
    if (active != nullptr) throw std::logic_error("a second batch while one runs");
    ++batches;
    return std::make_unique<FakeBatch>(*this, count);
  }
  int collective_gpus() override { return gpus; }
  std::vector<double> time_collective(gw::CollectiveOp, int, double bytes, int, int repeats) override {
    if (gpus < 2) throw std::logic_error("no collectives on this fake backend");
    if (active != nullptr) active->beside = "nccl";
    return std::vector<double>(static_cast<std::size_t>(repeats), kCollective + 1e-10 * bytes);
  }
};

FakeBatch::FakeBatch(FakeBackend& b, int count) : b_(b), count_(count) { b_.active = this; }
FakeBatch::~FakeBatch() {
  if (b_.active == this) b_.active = nullptr;
}
double FakeBatch::wait() {
  b_.active = nullptr;
  const double f = beside.empty() ? 0 : beside == "nccl" ? b_.gemm_beside_nccl : b_.gemm_beside_codec.at(beside);
  return count_ * kGemm * (1 + f);
}

gw::calibrate::Options options() {
  gw::calibrate::Options o;
  o.device = "cpu";
  o.out = "unused.yaml";
  o.name = "interference-test";
  o.sizes = {1024, 4096, 16384};
  o.repeats = 3;
  o.warmup = 0;
  o.max_seconds = 30;
  return o;
}

::testing::AssertionResult has_note(const gw::Profile& p, const std::string& part) {
  std::string all;
  for (const auto& n : p.notes) {
    if (n.find(part) != std::string::npos) return ::testing::AssertionSuccess();
    all += "\n  " + n;
  }
  return ::testing::AssertionFailure() << "no note has \"" << part << "\"; the notes:" << all;
}

}  // namespace

TEST(CalibrateInterference, EveryFactorIsRecoveredAndTheSummaryIsTheMedianOverCodecs) {
  FakeBackend b;
  b.gemm_beside_codec = {{"int8", 0.05}, {"topk", 0.20}, {"fp16", 0.10}};
  b.codec_beside_gemm = {{"int8", 0.30}, {"topk", 0.90}, {"fp16", 0.50}};
  b.gemm_beside_nccl = 0.15;
  b.gpus = 2;
  const gw::Profile p = gw::calibrate::run_calibration(options(), b);
  const auto& f = p.interference;
  ASSERT_TRUE(f.compute_under_nccl.has_value());
  EXPECT_NEAR(*f.compute_under_nccl, 0.15, 1e-12);
  ASSERT_EQ(f.codecs.size(), 3u);
  for (const auto& [codec, g] : b.gemm_beside_codec) {
    SCOPED_TRACE(codec);
    EXPECT_NEAR(f.codecs.at(codec).compute_under_codec.value(), g, 1e-12);
    EXPECT_NEAR(f.codecs.at(codec).codec_under_compute.value(), b.codec_beside_gemm.at(codec), 1e-12);
  }
  EXPECT_NEAR(f.compute_under_codec.value(), 0.10, 1e-12);  // median of 0.05, 0.10, 0.20
  EXPECT_NEAR(f.codec_under_compute.value(), 0.50, 1e-12);  // median of 0.30, 0.50, 0.90
  EXPECT_TRUE(has_note(p, "interference: fp32 GEMM 128x256x384 in batches of 20"));
  EXPECT_TRUE(has_note(p, "beside 4.00 MiB all-reduces on 2 ranks"));
  EXPECT_TRUE(has_note(p, "interference beside topk: GEMM +20%, topk +90%"));
  // Three rounds per codec of: alone, GEMM beside the codec, codec beside GEMMs;
  // three of alone and beside all-reduce; two to size the batch.
  EXPECT_EQ(b.batches, 2 + 3 * 2 + 3 * 3 * 3);
  // The profile loads and reads back the same.
  const gw::Profile q = gw::parse_profile_text(gw::profile_to_yaml(p), "interference.yaml");
  EXPECT_EQ(q.interference, p.interference);
}

TEST(CalibrateInterference, FiguresOutsideTheLoadersRangeAreRecordedAtItsEdgeWithANote) {
  FakeBackend b;
  b.gemm_beside_codec = {{"int8", -0.04}};  // faster beside: noise
  b.codec_beside_gemm = {{"int8", 14.0}};   // beyond the loader's 10
  const gw::Profile p = gw::calibrate::run_calibration(options(), b);
  const auto& c = p.interference.codecs.at("int8");
  EXPECT_EQ(c.compute_under_codec.value(), 0.0);
  EXPECT_EQ(c.codec_under_compute.value(), gw::kMaxInterference);
  EXPECT_TRUE(has_note(p, "interference GEMM beside int8: measured -4%"));
  EXPECT_TRUE(has_note(p, "interference int8 beside GEMM: measured 1.4e+03%, recorded as the loader's largest, 10"));
  // No collectives here: the NCCL figure is left out and the profile says why.
  EXPECT_FALSE(p.interference.compute_under_nccl.has_value());
  EXPECT_TRUE(has_note(p, "compute_under_nccl not measured (no collectives: CPU mode without --mpi, or one rank)"));
  EXPECT_NO_THROW(gw::parse_profile_text(gw::profile_to_yaml(p), "edge.yaml"));
}

TEST(CalibrateInterference, OffOrUnsupportedMeansNoSectionAndANote) {
  FakeBackend b;
  b.gemm_beside_codec = {{"int8", 0.05}};
  b.codec_beside_gemm = {{"int8", 0.30}};
  auto o = options();
  o.interference = false;
  gw::Profile p = gw::calibrate::run_calibration(o, b);
  EXPECT_EQ(p.interference, gw::InterferenceFigures{});
  EXPECT_EQ(b.batches, 0);
  EXPECT_TRUE(has_note(p, "interference not measured (--no-interference)"));
  EXPECT_EQ(gw::profile_to_yaml(p).find("interference:"), std::string::npos);

  // A backend that cannot run a GEMM beside other work (Backend's default).
  class Sequential final : public FakeBackend {
    std::unique_ptr<GemmBatch> start_gemm_batch(const std::string& precision, int m, int n, int k, int count) override {
      return Backend::start_gemm_batch(precision, m, n, k, count);
    }
  } s;
  s.gemm_beside_codec = b.gemm_beside_codec;
  s.codec_beside_gemm = b.codec_beside_gemm;
  p = gw::calibrate::run_calibration(options(), s);
  EXPECT_EQ(p.interference, gw::InterferenceFigures{});
  EXPECT_TRUE(has_note(p, "interference not measured: this backend cannot run a GEMM beside other work"));
}
