// The one nearest-name rule (gradwire/core/suggest.hpp) behind every "did you
// mean": unknown YAML keys, commands, catalog instances and profiles.
#include "gradwire/core/suggest.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

TEST(Suggest, EditDistanceIsLevenshtein) {
  EXPECT_EQ(gw::edit_distance("", ""), 0u);
  EXPECT_EQ(gw::edit_distance("abc", ""), 3u);
  EXPECT_EQ(gw::edit_distance("", "abc"), 3u);
  EXPECT_EQ(gw::edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(gw::edit_distance("simulat", "simulate"), 1u);
  EXPECT_EQ(gw::edit_distance("a100-80gb", "a100-40gb"), 1u);
  EXPECT_EQ(gw::edit_distance("flaw", "lawn"), 2u);
}

TEST(Suggest, NearestWithinTwoEditsFirstOnTies) {
  const std::vector<std::string> names = {"simulate", "sweep", "check", "collective"};
  EXPECT_EQ(gw::nearest_name("simulat", names), "simulate");
  EXPECT_EQ(gw::nearest_name("swep", names), "sweep");
  EXPECT_EQ(gw::nearest_name("validate", names), "");     // 3 edits or more: nothing
  EXPECT_EQ(gw::nearest_name("xx", {"ab", "cd"}), "ab");  // a tie: the first listed
  EXPECT_EQ(gw::nearest_name("anything", {}), "");
  EXPECT_EQ(gw::nearest_name("chek", names, 1), "");  // a tighter bound
}

TEST(Suggest, DidYouMeanSentence) {
  EXPECT_EQ(gw::did_you_mean("p4d.24xlarg", {"p3.16xlarge", "p4d.24xlarge"}), "; did you mean \"p4d.24xlarge\"?");
  EXPECT_EQ(gw::did_you_mean("tpu-v9", {"h100", "h200"}), "");
}

}  // namespace
