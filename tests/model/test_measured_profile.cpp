// Checks on the measured profiles committed in calibrate/profiles (source:
// measured): they carry the versions they were taken with, and their kernel
// fits predict held-out sizes within 5% (median over all codec curves).
#include <gtest/gtest.h>

#include <filesystem>

#include "gradwire/model/data_dir.hpp"
#include "gradwire/model/fit.hpp"
#include "gradwire/model/profile.hpp"

namespace fs = std::filesystem;

namespace {

std::vector<gw::Profile> measured_profiles() {
  std::vector<gw::Profile> out;
  for (const auto& e : fs::directory_iterator(gw::data_dir() + "/calibrate/profiles")) {
    if (e.path().extension() != ".yaml") continue;
    gw::Profile p = gw::load_profile_file(e.path().string());
    if (p.source == "measured") out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

TEST(MeasuredProfile, AtLeastOneIsCommitted) { EXPECT_FALSE(measured_profiles().empty()); }

TEST(MeasuredProfile, RecordsWhereAndWithWhatItWasTaken) {
  for (const auto& p : measured_profiles()) {
    SCOPED_TRACE(p.path);
    EXPECT_FALSE(p.device.empty());
    EXPECT_FALSE(p.driver.empty());
    EXPECT_FALSE(p.cuda.empty());
    EXPECT_FALSE(p.nccl.empty());
    EXPECT_FALSE(p.date.empty());
    EXPECT_GT(p.sm_count, 0);
    EXPECT_GT(p.memory_bytes, 0);
    EXPECT_GT(p.copy_bandwidth, 0);
    EXPECT_FALSE(p.codecs.empty());
  }
}

TEST(MeasuredProfile, HeldOutSizesPredictedWithinFivePercentMedian) {
  for (const auto& p : measured_profiles()) {
    SCOPED_TRACE(p.path);
    std::vector<double> errors;
    for (const auto& [name, cost] : p.codecs) {
      for (const auto* pts : {&cost.encode_points, &cost.decode_points}) {
        auto e = gw::fit::held_out_rel_errors(*pts);
        errors.insert(errors.end(), e.begin(), e.end());
      }
    }
    ASSERT_GT(errors.size(), 50u);
    EXPECT_LT(gw::fit::median(errors), 0.05);
  }
}
