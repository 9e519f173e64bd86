#include "gradwire/yaml_reader.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "gradwire/atomic_file.hpp"
#include "gradwire/units.hpp"

namespace gw::yaml {
namespace {


std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string kind_name(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null: return "nothing (null)";
    case YAML::NodeType::Scalar: return "a scalar \"" + n.Scalar() + "\"";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    default: return "an undefined value";
  }
}

}  // namespace

std::string join(const std::string& parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  if (!key.empty() && key.front() == '[') return parent + std::string(key);
  return parent + "." + std::string(key);
}

Node::Node(YAML::Node node, std::string file, std::string path, YAML::Mark mark)
    : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)), mark_(mark) {
  if (node_.IsDefined() && !node_.Mark().is_null()) mark_ = node_.Mark();
}

void Node::fail(const std::string& reason) const {
  throw InputError(file_, mark_.is_null() ? 0 : line(), mark_.is_null() ? 0 : column(), path_, reason);
}

void Node::expect_map() const {
  if (!node_.IsMap()) fail("expected a mapping (key: value pairs), got " + kind_name(node_));
}

void Node::expect_seq() const {
  if (!node_.IsSequence()) fail("expected a list, got " + kind_name(node_));
}

void Node::allow_keys(std::initializer_list<std::string_view> allowed) const {
  std::vector<std::string> v(allowed.begin(), allowed.end());
  allow_keys(v);
}

void Node::allow_keys(const std::vector<std::string>& allowed) const {
  expect_map();
  std::set<std::string> seen;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const YAML::Node k = it->first;
    Node key_node(k, file_, path_, k.Mark());
    if (!k.IsScalar()) key_node.fail("keys must be plain names");
    const std::string key = k.Scalar();
    Node at(k, file_, join(path_, key), k.Mark());
    if (!seen.insert(key).second) at.fail("duplicate key (it already appears above in this mapping)");
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string best;
      std::size_t best_d = 3;
      for (const auto& a : allowed) {
        std::size_t d = edit_distance(key, a);
        if (d < best_d) {
          best_d = d;
          best = a;
        }
      }
      std::string msg = "unknown key";
      if (!best.empty()) msg += "; did you mean \"" + best + "\"?";
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      msg += " (allowed: " + list + ")";
      at.fail(msg);
    }
  }
}

bool Node::has(std::string_view key) const {
  if (!node_.IsMap()) return false;
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) return true;
  }
  return false;
}

std::optional<Node> Node::optional(std::string_view key) const {
  expect_map();
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) {
      return Node(it->second, file_, join(path_, key), it->first.Mark());
    }
  }
  return std::nullopt;
}

Node Node::required(std::string_view key) const {
  auto n = optional(key);
  if (!n) {
    Node missing(YAML::Node(), file_, join(path_, key), mark_);
    missing.fail("missing required field (inside " + (path_.empty() ? std::string("the top level") : path_) + ")");
  }
  return *n;
}

std::vector<std::string> Node::keys() const {
  expect_map();
  std::vector<std::string> out;
  for (auto it = node_.begin(); it != node_.end(); ++it) out.push_back(it->first.Scalar());
  return out;
}

std::vector<Node> Node::elements() const {
  expect_seq();
  std::vector<Node> out;
  std::size_t i = 0;
  for (auto it = node_.begin(); it != node_.end(); ++it, ++i) {
    out.emplace_back(*it, file_, path_ + "[" + std::to_string(i) + "]", it->Mark());
  }
  return out;
}

std::size_t Node::size() const { return node_.size(); }

std::string Node::scalar(std::string_view expected) const {
  if (!node_.IsScalar()) fail("expected " + std::string(expected) + ", got " + kind_name(node_));
  return node_.Scalar();
}

std::string Node::as_string() const {
  std::string s = scalar("a string");
  if (s.empty()) fail("expected a non-empty string");
  return s;
}

std::string Node::as_enum(std::initializer_list<std::string_view> choices) const {
  std::string s = scalar("one of the listed names");
  std::string list;
  for (auto c : choices) {
    if (c == s) return s;
    list += (list.empty() ? "" : ", ") + std::string(c);
  }
  fail("\"" + s + "\" is not one of: " + list);
}

std::int64_t Node::as_int(std::int64_t min, std::int64_t max) const {
  std::string s = scalar("an integer");
  std::string_view t = units::trim(s);
  bool ok = !t.empty();
  std::size_t start = (!t.empty() && (t[0] == '-' || t[0] == '+')) ? 1 : 0;
  if (start == t.size()) ok = false;
  for (std::size_t i = start; ok && i < t.size(); ++i) {
    if (t[i] == '_' ) continue;
    if (t[i] < '0' || t[i] > '9') ok = false;
  }
  if (!ok) fail("expected an integer, got \"" + s + "\"");
  std::string digits;
  for (char c : t) if (c != '_') digits += c;
  long double v = std::strtold(digits.c_str(), nullptr);
  if (v < static_cast<long double>(min) || v > static_cast<long double>(max)) {
    fail(s + " is out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  return static_cast<std::int64_t>(std::stoll(digits));
}

double Node::as_double(double min, double max) const {
  std::string s = scalar("a number");
  auto v = units::parse_number(s);
  if (!v) fail("expected a finite number, got \"" + s + "\"");
  if (*v < min || *v > max) {
    std::ostringstream os;
    os << s << " is out of range [" << min << ", " << max << "]";
    fail(os.str());
  }
  return *v;
}

bool Node::as_bool() const {
  std::string s = scalar("true or false");
  if (s == "true" || s == "True" || s == "on" || s == "yes") return true;
  if (s == "false" || s == "False" || s == "off" || s == "no") return false;
  fail("expected true or false, got \"" + s + "\"");
}

namespace {
template <typename Parse>
double quantity(const Node& n, const std::string& s, Parse parse, double min, double max,
                const char* (*fmt)(double, std::string&)) {
  std::string why;
  auto v = parse(s, &why);
  if (!v) n.fail(why);
  if (*v < min || *v > max) {
    std::string lo, hi;
    n.fail("\"" + s + "\" is out of range [" + std::string(fmt(min, lo)) + ", " + std::string(fmt(max, hi)) + "]");
  }
  return *v;
}
const char* fmt_bw(double v, std::string& out) { return (out = units::format_bandwidth(v)).c_str(); }
const char* fmt_time(double v, std::string& out) { return (out = units::format_time(v)).c_str(); }
const char* fmt_size(double v, std::string& out) { return (out = units::format_size(v)).c_str(); }
}  // namespace

double Node::as_bandwidth(double min, double max) const {
  std::string s = scalar("a bandwidth such as 100Gbps");
  double v = quantity(*this, s, [](std::string_view t, std::string* w) { return units::parse_bandwidth(t, w); }, min, max, fmt_bw);
  if (v <= 0) fail("a bandwidth must be positive, got \"" + s + "\"");
  return v;
}

double Node::as_time(double min, double max) const {
  std::string s = scalar("a time such as 2us");
  return quantity(*this, s, [](std::string_view t, std::string* w) { return units::parse_time(t, w); }, min, max, fmt_time);
}

double Node::as_size(double min, double max) const {
  std::string s = scalar("a size such as 25MiB");
  return quantity(*this, s, [](std::string_view t, std::string* w) { return units::parse_size(t, w); }, min, max, fmt_size);
}

Node Document::root() const { return Node(root_, file_, "", root_.Mark()); }

Document load_string(const std::string& text, const std::string& name) {
  Document d;
  d.file_ = name;
  if (text.find('\0') != std::string::npos) {
    throw InputError(name, 0, 0, "", "not a YAML text file (it contains NUL bytes)");
  }
  try {
    d.root_ = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(name, e.mark.is_null() ? 0 : e.mark.line + 1, e.mark.is_null() ? 0 : e.mark.column + 1, "",
                     "YAML syntax error: " + e.msg);
  }
  if (!d.root_.IsDefined() || d.root_.IsNull()) throw InputError(name, 0, 0, "", "the file is empty");
  if (!d.root_.IsMap()) {
    throw InputError(name, d.root_.Mark().line + 1, d.root_.Mark().column + 1, "",
                     "expected a mapping (key: value pairs) at the top level, got " + kind_name(d.root_));
  }
  return d;
}

Document load_file(const std::string& path) { return load_string(read_input_file(path, kMaxYamlBytes), path); }

}  // namespace gw::yaml
