// Strict YAML reading on top of yaml-cpp. Every accessor that fails throws
// gw::InputError naming the file, the line and column, and the key path.
//
//   auto doc = gw::yaml::load_file("scenario.yaml");
//   auto cluster = doc.root().required("cluster");
//   cluster.allow_keys({"nodes", "gpus_per_node", ...});   // unknown/duplicate keys rejected
//   int nodes = cluster.required("nodes").as_int(1, 1'000'000);
//   double bw = cluster.required("nics").required("bandwidth").as_bandwidth();
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gradwire/core/error.hpp"

namespace gw::yaml {

/// A node of a loaded document with the file it came from and its key path.
class Node {
 public:
  Node(YAML::Node node, std::string file, std::string path, YAML::Mark mark);

  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }
  int line() const { return mark_.line + 1; }
  int column() const { return mark_.column + 1; }
  const YAML::Node& raw() const { return node_; }

  bool is_map() const { return node_.IsMap(); }
  bool is_seq() const { return node_.IsSequence(); }
  bool is_scalar() const { return node_.IsScalar(); }
  bool is_null() const { return node_.IsNull(); }

  /// Checks that this node is a mapping whose keys are all in `allowed` and that
  /// no key appears twice. Suggests the closest allowed key for a typo.
  void allow_keys(std::initializer_list<std::string_view> allowed) const;
  void allow_keys(const std::vector<std::string>& allowed) const;
  /// Requires a mapping (error otherwise).
  void expect_map() const;
  /// Requires a sequence (error otherwise).
  void expect_seq() const;

  bool has(std::string_view key) const;
  /// The child `key`; error naming this node's position when absent.
  Node required(std::string_view key) const;
  std::optional<Node> optional(std::string_view key) const;
  /// Keys of a mapping in document order.
  std::vector<std::string> keys() const;
  /// Elements of a sequence.
  std::vector<Node> elements() const;
  std::size_t size() const;

  /// A non-empty string without control characters other than line feed and tab.
  std::string as_string() const;
  /// as_string on one line, without tabs: names shown in outputs.
  std::string as_name() const;
  /// One of `choices`; the error lists them and suggests the nearest (did_you_mean).
  std::string as_enum(std::initializer_list<std::string_view> choices) const;
  std::string as_enum(const std::vector<std::string>& choices) const;
  std::int64_t as_int(std::int64_t min, std::int64_t max) const;
  double as_double(double min, double max) const;
  bool as_bool() const;
  double as_bandwidth(double min = 0, double max = 1e18) const;  ///< bytes/s, unit required
  double as_time(double min = 0, double max = 1e9) const;        ///< seconds, unit required
  double as_size(double min = 0, double max = 1e18) const;       ///< bytes, unit required

  /// Throws InputError at this node's position.
  [[noreturn]] void fail(const std::string& reason) const;

 private:
  std::string scalar(std::string_view expected) const;
  YAML::Node node_;
  std::string file_;
  std::string path_;
  YAML::Mark mark_;
};

/// A loaded document. Syntax errors, empty files and non-mapping top levels are
/// reported as InputError.
class Document {
 public:
  Node root() const;
  const std::string& file() const { return file_; }

  friend Document load_file(const std::string& path);
  friend Document load_string(const std::string& text, const std::string& name);

 private:
  YAML::Node root_;
  std::string file_;
};

/// Loads a YAML file (at most 64 MiB). Errors: unreadable file, empty, syntax.
Document load_file(const std::string& path);
/// Loads YAML text; `name` is used as the file name in errors.
Document load_string(const std::string& text, const std::string& name);

/// Joins a key path: join("cluster", "nics") == "cluster.nics"; index form "x[3]".
std::string join(const std::string& parent, std::string_view key);

}  // namespace gw::yaml
