#include <gtest/gtest.h>

#include <functional>

#include "gradwire/yaml_reader.hpp"

using gw::InputError;
namespace y = gw::yaml;

namespace {
InputError catch_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no InputError thrown";
  return InputError("", 0, 0, "", "");
}
}  // namespace

TEST(YamlReader, ReadsTypedValuesWithPaths) {
  auto doc = y::load_string("a:\n  n: 4\n  bw: 100Gbps\n  t: 2us\n  s: 25MiB\n  f: 0.5\n  b: true\n", "x.yaml");
  auto a = doc.root().required("a");
  a.allow_keys({"n", "bw", "t", "s", "f", "b"});
  EXPECT_EQ(a.required("n").as_int(1, 10), 4);
  EXPECT_DOUBLE_EQ(a.required("bw").as_bandwidth(), 12.5e9);
  EXPECT_DOUBLE_EQ(a.required("t").as_time(), 2e-6);
  EXPECT_DOUBLE_EQ(a.required("s").as_size(), 25.0 * 1048576);
  EXPECT_DOUBLE_EQ(a.required("f").as_double(0, 1), 0.5);
  EXPECT_TRUE(a.required("b").as_bool());
  EXPECT_EQ(a.required("bw").path(), "a.bw");
}

TEST(YamlReader, UnknownKeyNamesLineColumnAndSuggests) {
  auto doc = y::load_string("a:\n  nodse: 4\n", "f.yaml");
  auto e = catch_error([&] { doc.root().required("a").allow_keys({"nodes"}); });
  EXPECT_EQ(e.file(), "f.yaml");
  EXPECT_EQ(e.line(), 2);
  EXPECT_EQ(e.column(), 3);
  EXPECT_EQ(e.key(), "a.nodse");
  EXPECT_NE(std::string(e.what()).find("did you mean \"nodes\""), std::string::npos);
}

TEST(YamlReader, DuplicateKeyRejected) {
  auto doc = y::load_string("a: 1\nb: 2\na: 3\n", "d.yaml");
  auto e = catch_error([&] { doc.root().allow_keys({"a", "b"}); });
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.key(), "a");
}

TEST(YamlReader, MissingFieldAndWrongType) {
  auto doc = y::load_string("a:\n  n: four\n", "m.yaml");
  auto e1 = catch_error([&] { doc.root().required("a").required("k"); });
  EXPECT_EQ(e1.key(), "a.k");
  auto e2 = catch_error([&] { doc.root().required("a").required("n").as_int(0, 5); });
  EXPECT_EQ(e2.line(), 2);
  EXPECT_EQ(e2.key(), "a.n");
  auto e3 = catch_error([&] { (void)y::load_string("n: 9\n", "r.yaml").root().required("n").as_int(0, 5); });
  EXPECT_NE(std::string(e3.what()).find("out of range"), std::string::npos);
}

TEST(YamlReader, SyntaxEmptyAndNonMapping) {
  auto e1 = catch_error([] { y::load_string("a: [1, 2\n", "s.yaml"); });
  EXPECT_GT(e1.line(), 0);
  auto e2 = catch_error([] { y::load_string("", "e.yaml"); });
  EXPECT_NE(std::string(e2.what()).find("empty"), std::string::npos);
  auto e3 = catch_error([] { y::load_string("- 1\n- 2\n", "l.yaml"); });
  EXPECT_NE(std::string(e3.what()).find("mapping"), std::string::npos);
  auto e4 = catch_error([] { y::load_file("/nonexistent/gradwire.yaml"); });
  EXPECT_NE(std::string(e4.what()).find("cannot open"), std::string::npos);
}
