#include "gradwire/core/yaml_reader.hpp"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include "gradwire/core/atomic_file.hpp"
#include "gradwire/core/suggest.hpp"
#include "gradwire/core/units.hpp"

namespace gw::yaml {
namespace {

std::string kind_name(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null:
      return "nothing (null)";
    case YAML::NodeType::Scalar: {
      // A whole non-YAML file can parse as one scalar: show its start only.
      std::string v = n.Scalar();
      if (v.size() > 40) {
        std::size_t cut = 40;
        while (cut > 0 && (static_cast<unsigned char>(v[cut]) & 0xC0) == 0x80) --cut;  // whole UTF-8 characters
        v = v.substr(0, cut) + "...";
      }
      return "a scalar \"" + v + "\"";
    }
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    default:
      return "an undefined value";
  }
}

// 1-based line and byte column of offset `at` in `text`.
std::pair<int, int> position_of(const std::string& text, std::size_t at) {
  int line = 1;
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < at && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return {line, static_cast<int>(std::min<std::size_t>(at - line_start, 1'000'000'000)) + 1};
}

// Lead bytes of the multi-byte UTF-8 sequences (RFC 3629, table 3-7 of the
// Unicode standard): the range of the lead byte, the sequence length and the
// range of the second byte (narrowed to exclude overlong forms, surrogates
// and code points above U+10FFFF); later bytes are 0x80..0xBF.
struct Utf8Lead {
  unsigned lo, hi;
  std::size_t length;
  unsigned second_lo, second_hi;
};
constexpr Utf8Lead kUtf8Leads[] = {
    {0xC2, 0xDF, 2, 0x80, 0xBF}, {0xE0, 0xE0, 3, 0xA0, 0xBF}, {0xE1, 0xEC, 3, 0x80, 0xBF}, {0xED, 0xED, 3, 0x80, 0x9F},
    {0xEE, 0xEF, 3, 0x80, 0xBF}, {0xF0, 0xF0, 4, 0x90, 0xBF}, {0xF1, 0xF3, 4, 0x80, 0xBF}, {0xF4, 0xF4, 4, 0x80, 0x8F},
};

// The length of the well-formed UTF-8 sequence at text[i] (RFC 3629: no
// overlong forms, no surrogates, at most U+10FFFF), or 0.
std::size_t utf8_length(const std::string& text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return k < text.size() ? static_cast<unsigned char>(text[k]) : 0u; };
  const unsigned c = byte(i);
  if (c < 0x80) return 1;
  for (const Utf8Lead& lead : kUtf8Leads) {
    if (c < lead.lo || c > lead.hi) continue;
    const unsigned second = byte(i + 1);
    if (second < lead.second_lo || second > lead.second_hi) return 0;
    for (std::size_t k = 2; k < lead.length; ++k) {
      const unsigned b = byte(i + k);
      if (b < 0x80 || b > 0xBF) return 0;
    }
    return lead.length;
  }
  return 0;
}

// Every byte is well-formed UTF-8 and no control character other than tab,
// line feed and carriage return appears (YAML's printable set).
void check_text(const std::string& text, const std::string& name) {
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F) {
      const auto [line, col] = position_of(text, i);
      char hex[8];
      std::snprintf(hex, sizeof hex, "%02X", c);
      throw InputError(name, line, col, "",
                       std::string("control character 0x") + hex + " is not allowed in a YAML file");
    }
    const std::size_t n = utf8_length(text, i);
    if (n == 0) {
      const auto [line, col] = position_of(text, i);
      char hex[8];
      std::snprintf(hex, sizeof hex, "%02X", c);
      throw InputError(name, line, col, "", std::string("invalid UTF-8 (byte 0x") + hex + "); save the file as UTF-8");
    }
    i += n;
  }
}

// One document per file: a `---` at the start of a line after the first
// document's content, or content after a `...` end marker, starts a second
// one, which is refused at its line (yaml-cpp would silently drop it).
void check_single_document(const std::string& text, const std::string& name) {
  bool content = false, ended = false;
  std::size_t start = 0;
  int line = 1;
  if (text.size() >= 3 && text.compare(0, 3, "\xEF\xBB\xBF") == 0) start = 3;  // byte order mark
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string_view l(text.data() + start, end - start);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    auto marker = [&](std::string_view m) {
      return l.substr(0, 3) == m && (l.size() == 3 || l[3] == ' ' || l[3] == '\t');
    };
    const std::string_view rest = units::trim(l);
    const bool blank = rest.empty() || rest.front() == '#';
    if (marker("---")) {
      if (content || ended) {
        throw InputError(name, line, 1, "",
                         "a second YAML document starts here (after ---); a gradwire file holds exactly one document");
      }
      content = true;
    } else if (marker("...")) {
      ended = true;
    } else if (!blank && l.front() != '%') {
      if (ended) {
        throw InputError(name, line, 1, "",
                         "content after the document end marker (...); a gradwire file holds exactly one document");
      }
      content = true;
    } else if (!blank && l.front() == '%' && content) {
      throw InputError(name, line, 1, "", "a directive after the document has started (a second document?)");
    }
    if (end == text.size()) break;
    start = end + 1;
    ++line;
  }
}

// Flow collections ([ and {) nested deeper than kMaxFlowDepth are refused at
// the bracket that goes too deep (yaml-cpp's own limit says only "bad file").
constexpr int kMaxFlowDepth = 64;
void check_flow_depth(const std::string& text, const std::string& name) {
  int depth = 0;
  char quote = 0;
  bool comment = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') comment = false;
    if (comment) continue;
    if (quote) {
      if (c == '\\' && quote == '"')
        ++i;
      else if (c == quote)
        quote = 0;
      continue;
    }
    if (c == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\t' || text[i - 1] == '\n'))
      comment = true;
    else if ((c == '"' || c == '\'') &&
             (i == 0 || std::string_view(" \t\n[{,:").find(text[i - 1]) != std::string_view::npos))
      quote = c;
    else if (c == '[' || c == '{') {
      if (++depth > kMaxFlowDepth) {
        const auto [line, col] = position_of(text, i);
        throw InputError(name, line, col, "",
                         "lists and mappings nested more than " + std::to_string(kMaxFlowDepth) +
                             " levels deep; no gradwire file needs that (is this the right file?)");
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

// Block collections (by indentation) nested deeper than kMaxFlowDepth are
// refused at the line that goes too deep; yaml-cpp's own limit (a few
// hundred levels) says only "bad file". The depth is the stack of increasing
// indentations (a "- " entry adds a level); the content of a block scalar
// (`|`, `>`) is skipped. Conservative: it can only count fewer levels than
// yaml-cpp sees, never more, except for a plain scalar continued over more
// than 64 ever deeper lines.
// The levels a structural line opens: the deeper or equal indentations are
// closed, its own is pushed, and one more per "- " entry marker ("- - x": one
// level per dash); the markers are removed from `rest`.
void push_line_levels(std::vector<std::size_t>& stack, std::size_t indent, std::string_view& rest) {
  while (!stack.empty() && stack.back() >= indent) stack.pop_back();
  stack.push_back(indent);
  std::size_t col = indent;
  while (rest.size() >= 2 && rest[0] == '-' && rest[1] == ' ') {
    std::size_t skip = 2;
    while (skip < rest.size() && rest[skip] == ' ') ++skip;
    col += skip;
    rest.remove_prefix(skip);
    stack.push_back(col);
  }
}

// A block scalar starts when the line ends in | or > (with chomping or
// indentation indicators), a comment aside.
bool starts_block_scalar(std::string_view rest) {
  std::string_view body = rest;
  const auto hash = body.find(" #");
  if (hash != std::string_view::npos) body = body.substr(0, hash);
  while (!body.empty() && (body.back() == ' ' || body.back() == '\t')) body.remove_suffix(1);
  std::size_t k = body.size();
  while (k > 0 && (body[k - 1] == '-' || body[k - 1] == '+' || (body[k - 1] >= '1' && body[k - 1] <= '9'))) --k;
  return k > 0 && (body[k - 1] == '|' || body[k - 1] == '>') && (k == 1 || body[k - 2] == ' ' || body[k - 2] == ':');
}

void check_block_depth(const std::string& text, const std::string& name) {
  std::vector<std::size_t> stack;
  bool in_block_scalar = false;
  std::size_t block_parent = 0;
  int line = 0;
  for (std::size_t start = 0; start <= text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    ++line;
    std::string_view l(text.data() + start, end - start);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    std::size_t indent = 0;
    while (indent < l.size() && l[indent] == ' ') ++indent;
    std::string_view rest = l.substr(indent);
    const bool blank = rest.empty() || rest.front() == '#';
    // Inside a block scalar, deeper lines are text, not structure.
    if (!blank && !(in_block_scalar && indent > block_parent)) {
      in_block_scalar = false;
      push_line_levels(stack, indent, rest);
      if (stack.size() > static_cast<std::size_t>(kMaxFlowDepth))
        throw InputError(name, line, static_cast<int>(indent) + 1, "",
                         "lists and mappings nested more than " + std::to_string(kMaxFlowDepth) +
                             " levels deep; no gradwire file needs that (is this the right file?)");
      if (starts_block_scalar(rest)) {
        in_block_scalar = true;
        block_parent = indent;
      }
    }
    if (end == text.size()) break;
    start = end + 1;
  }
}

// Aliases are expanded by every reader that walks a document, so an alias
// cycle (`&c {self: *c}`: yaml-cpp builds a graph that refers to itself) would
// make each of them loop for ever, and a few lines of nested aliases ("billion
// laughs": ten anchors each listing the previous one ten times) would make
// them walk 10^10 nodes. Both are refused before the document is built, in one
// pass over the parser's events: an alias to a collection that is still open
// is a cycle; the nodes that aliases add (an anchor's size counts the aliases
// inside it) may not exceed kMaxAliasNodes. The sizes saturate, so 2^64 cannot
// wrap. No gradwire file needs more than a few shared blocks.
constexpr std::uint64_t kMaxAliasNodes = 1'000'000;

class AliasCheck : public YAML::EventHandler {
 public:
  AliasCheck(const std::string& text, const std::string& name) : text_(text), name_(name) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t anchor) override { leaf(anchor); }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t anchor, const std::string&) override {
    leaf(anchor);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open_.push_back({anchor, 1, m});
  }
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t anchor, YAML::EmitterStyle::value) override {
    open_.push_back({anchor, 1, m});
  }
  void OnSequenceEnd() override { close(); }
  void OnMapEnd() override { close(); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t anchor) override {
    for (const Open& o : open_) {
      if (o.anchor == anchor) {
        fail(m, "alias *" + alias_name(m) + " refers to the collection it is inside (its anchor is at line " +
                    std::to_string(o.mark.line + 1) + "): an alias cycle");
      }
    }
    const auto it = sizes_.find(anchor);
    const std::uint64_t size = it == sizes_.end() ? 1 : it->second;
    added_ = saturating_add(added_, size);
    if (added_ > kMaxAliasNodes) {
      fail(m, "aliases expand this file by more than " + std::to_string(kMaxAliasNodes) +
                  " nodes (an alias bomb?); no gradwire file needs that");
    }
    count(size);
  }

 private:
  struct Open {
    YAML::anchor_t anchor;
    std::uint64_t size;
    YAML::Mark mark;
  };
  static std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
    constexpr std::uint64_t kCap = 4 * kMaxAliasNodes;  // far above the limit, far below wrapping
    return std::min(kCap, a + std::min(kCap, b));
  }
  void count(std::uint64_t n) {
    if (!open_.empty()) open_.back().size = saturating_add(open_.back().size, n);
  }
  void leaf(YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor) sizes_[anchor] = 1;
    count(1);
  }
  void close() {
    const Open o = open_.back();
    open_.pop_back();
    if (o.anchor != YAML::NullAnchor) sizes_[o.anchor] = o.size;
    count(o.size);
  }
  // The alias's name, read from the text at its mark ("*name").
  std::string alias_name(const YAML::Mark& m) const {
    std::size_t at = std::min(text_.size(), static_cast<std::size_t>(std::max(0, m.pos)));
    if (at < text_.size() && text_[at] == '*') ++at;
    std::size_t end = at;
    while (end < text_.size() && end - at < 64 &&
           std::string_view(" \t\r\n,[]{}").find(text_[end]) == std::string_view::npos)
      ++end;
    return text_.substr(at, end - at);
  }
  [[noreturn]] void fail(const YAML::Mark& m, const std::string& reason) const {
    throw InputError(name_, m.line + 1, m.column + 1, "", reason);
  }

  const std::string& text_;
  const std::string& name_;
  std::vector<Open> open_;
  std::map<YAML::anchor_t, std::uint64_t> sizes_;
  std::uint64_t added_ = 0;
};

// Runs AliasCheck over the text (syntax errors are left to YAML::Load, which
// reports them the same way).
void check_aliases(const std::string& text, const std::string& name) {
  if (text.find('*') == std::string::npos) return;  // no alias at all
  std::istringstream in(text);
  AliasCheck check(text, name);
  try {
    YAML::Parser parser(in);
    parser.HandleNextDocument(check);
  } catch (const YAML::Exception&) {
  }
}

// Explicit tags (`!!str`, `!custom`, `!<...>`) are refused: every field's type
// is fixed by the schema, and a tag would be silently ignored.
void check_no_tags(const YAML::Node& root, const std::string& name) {
  std::vector<YAML::Node> stack{root};
  while (!stack.empty()) {
    YAML::Node n = stack.back();
    stack.pop_back();
    std::string tag = n.Tag();
    if (!tag.empty() && tag != "?" && tag != "!") {
      if (tag.rfind("tag:yaml.org,2002:", 0) == 0) tag = "!!" + tag.substr(18);
      const YAML::Mark m = n.Mark();
      throw InputError(name, m.is_null() ? 0 : m.line + 1, m.is_null() ? 0 : m.column + 1, "",
                       "YAML tag \"" + tag + "\" is not allowed (remove it; the schema fixes every field's type)");
    }
    if (n.IsMap()) {
      for (auto it = n.begin(); it != n.end(); ++it) {
        stack.push_back(it->first);
        stack.push_back(it->second);
      }
    } else if (n.IsSequence()) {
      for (auto it = n.begin(); it != n.end(); ++it) stack.push_back(*it);
    }
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
      std::string msg = "unknown key" + did_you_mean(key, allowed);
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
  // Escapes ("\e", "\x1b", "\r") can put control characters into a quoted
  // value; they would garble every output. Line feeds and tabs are text
  // (block scalars); names refuse them too (Node::as_name).
  for (unsigned char c : s) {
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "%02X", c);
      fail(std::string("control character 0x") + hex + " in a string value");
    }
  }
  return s;
}

std::string Node::as_name() const {
  std::string s = as_string();
  // Line feeds and tabs, and beyond as_string's C0 controls the C1 controls
  // ("\N" is U+0085, a line break; U+009B starts a terminal escape) and the
  // line and paragraph separators ("\L", "\P"): each ends or rewrites a line.
  for (std::size_t i = 0; i < s.size();) {
    const TextUnit u = text_unit_at(s, i);
    if (u.control) fail("a name is one line without tabs or control characters (byte " + std::to_string(i) + ")");
    i += u.length;
  }
  return s;
}

std::string Node::as_enum(std::initializer_list<std::string_view> choices) const {
  return as_enum(std::vector<std::string>(choices.begin(), choices.end()));
}

std::string Node::as_enum(const std::vector<std::string>& choices) const {
  std::string s = scalar("one of the listed names");
  std::string list;
  for (const auto& c : choices) {
    if (c == s) return s;
    list += (list.empty() ? "" : ", ") + c;
  }
  fail("\"" + s + "\" is not one of: " + list + did_you_mean(s, choices));
}

std::int64_t Node::as_int(std::int64_t min, std::int64_t max) const {
  std::string s = scalar("an integer");
  units::IntegerError why = units::IntegerError::kNone;
  const auto v = units::parse_integer(s, &why);
  if (!v && why == units::IntegerError::kSyntax) {
    fail("expected an integer, got \"" + s +
         "\" (write decimal digits with an optional sign: no _, 0x, 0o, exponent, decimal point or leading zero)");
  }
  if (!v || *v < min || *v > max) {
    fail(s + " is out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  return *v;
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
  double v = quantity(
      *this, s, [](std::string_view t, std::string* w) { return units::parse_bandwidth(t, w); }, min, max, fmt_bw);
  if (v <= 0) fail("a bandwidth must be positive, got \"" + s + "\"");
  return v;
}

double Node::as_time(double min, double max) const {
  std::string s = scalar("a time such as 2us");
  return quantity(
      *this, s, [](std::string_view t, std::string* w) { return units::parse_time(t, w); }, min, max, fmt_time);
}

double Node::as_size(double min, double max) const {
  std::string s = scalar("a size such as 25MiB");
  return quantity(
      *this, s, [](std::string_view t, std::string* w) { return units::parse_size(t, w); }, min, max, fmt_size);
}

Node Document::root() const { return Node(root_, file_, "", root_.Mark()); }

Document load_string(const std::string& text, const std::string& name) {
  Document d;
  d.file_ = name;
  if (text.find('\0') != std::string::npos) {
    throw InputError(name, 0, 0, "", "not a YAML text file (it contains NUL bytes)");
  }
  check_single_document(text, name);
  check_text(text, name);
  check_flow_depth(text, name);
  check_block_depth(text, name);
  check_aliases(text, name);
  try {
    d.root_ = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(name, e.mark.is_null() ? 0 : e.mark.line + 1, e.mark.is_null() ? 0 : e.mark.column + 1, "",
                     "YAML syntax error: " + e.msg);
  }
  if (!d.root_.IsDefined() || d.root_.IsNull()) throw InputError(name, 0, 0, "", "the file is empty");
  check_no_tags(d.root_, name);
  if (!d.root_.IsMap()) {
    throw InputError(name, d.root_.Mark().line + 1, d.root_.Mark().column + 1, "",
                     "expected a mapping (key: value pairs) at the top level, got " + kind_name(d.root_));
  }
  return d;
}

Document load_file(const std::string& path) { return load_string(read_input_file(path, kMaxYamlBytes), path); }

}  // namespace gw::yaml
