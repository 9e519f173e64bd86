// `gradwire list` shows exactly what the loaders and the compressor table
// know; `gradwire help COMMAND` is COMMAND's --help.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "gradwire/model/catalog.hpp"
#include "gradwire/model/compressors.hpp"
#include "gradwire/model/model_desc.hpp"
#include "gradwire/model/profile.hpp"
#include "run_util.hpp"

namespace {

const std::string kBin = GW_GRADWIRE_BIN;

/// The first word of every line that is not a comment or the header.
std::vector<std::string> first_words(const std::string& out) {
  std::vector<std::string> words;
  std::istringstream in(out);
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {  // the column titles
      header = false;
      continue;
    }
    words.push_back(line.substr(0, line.find(' ')));
  }
  return words;
}

std::string line_of(const std::string& out, const std::string& name) {
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(name + " ", 0) == 0) return line;
  return "";
}

TEST(List, CompressorsAreTheTable) {
  const auto r = gw::test::run({kBin, "list", "compressors"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(first_words(r.out), gw::compressor_names());
  EXPECT_NE(line_of(r.out, "topk").find("all-gather"), std::string::npos) << r.out;
  EXPECT_NE(line_of(r.out, "powersgd").find("rank"), std::string::npos) << r.out;
}

TEST(List, ProfilesAreWhatLoadProfileFinds) {
  const auto r = gw::test::run({kBin, "list", "profiles"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(first_words(r.out), gw::list_profiles());
  EXPECT_NE(line_of(r.out, "h200-measured").find("measured"), std::string::npos) << r.out;
  EXPECT_NE(line_of(r.out, "h100").find("datasheet"), std::string::npos) << r.out;
}

TEST(List, ModelsWithTheirParameterCounts) {
  const auto r = gw::test::run({kBin, "list", "models"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto names = gw::list_models(gw::default_models_dir());
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(first_words(r.out), names);
  for (const auto& n : names) {
    const auto m = gw::load_model(n);
    EXPECT_NE(line_of(r.out, n).find(" " + std::to_string(m.parameters) + " "), std::string::npos) << n;
  }
}

TEST(List, InstancesOfTheCatalog) {
  const auto r = gw::test::run({kBin, "list", "instances"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> names;
  for (const auto& t : gw::default_catalog().instances) names.push_back(t.name);
  EXPECT_EQ(first_words(r.out), names);
  // Every price with the date it was read and its source (issue 29, item 14);
  // one the last refresh could not re-read is marked, with the entry's note.
  for (const auto& t : gw::default_catalog().instances) {
    const std::string line = line_of(r.out, t.name);
    EXPECT_NE(line.find(" " + t.as_of + (t.refreshed ? " " : "* ")), std::string::npos) << line;
    EXPECT_EQ(line.substr(line.size() - t.source.size()), t.source) << line;
    if (!t.refreshed) {  // "# * not refreshed (a, b): NOTE", once per note
      const auto at = r.out.find("): " + t.note + "\n");
      ASSERT_NE(at, std::string::npos) << r.out;
      const std::string tag = "# * not refreshed (";
      const auto from = r.out.rfind(tag, at);
      ASSERT_NE(from, std::string::npos) << r.out;
      const std::string listed = ", " + r.out.substr(from + tag.size(), at - from - tag.size()) + ",";
      EXPECT_NE(listed.find(", " + t.name + ","), std::string::npos) << listed;
    }
  }
}

TEST(List, NothingOrAnUnknownKindIsAUsageError) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{kBin, "list"}, std::vector<std::string>{kBin, "list", "gpus"},
        std::vector<std::string>{kBin, "list", "--bogus"}}) {
    const auto r = gw::test::run(args);
    EXPECT_EQ(r.exit_code, 2) << r.all();
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(r.err.find("usage: gradwire list"), std::string::npos) << r.err;
  }
}

TEST(Help, IsTheCommandsOwnHelp) {
  for (const char* cmd : {"simulate", "sweep", "collective", "list", "validate", "merge"}) {
    const auto help = gw::test::run({kBin, "help", cmd});
    const auto own = gw::test::run({kBin, cmd, "--help"});
    EXPECT_EQ(help.exit_code, 0) << cmd << ": " << help.err;
    EXPECT_FALSE(help.out.empty()) << cmd;
    EXPECT_EQ(help.out, own.out) << cmd;
  }
  const auto overview = gw::test::run({kBin, "help"});
  EXPECT_EQ(overview.exit_code, 0);
  EXPECT_EQ(overview.out, gw::test::run({kBin, "--help"}).out);
  const auto unknown = gw::test::run({kBin, "help", "nope"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown command \"nope\""), std::string::npos) << unknown.err;
}

}  // namespace
