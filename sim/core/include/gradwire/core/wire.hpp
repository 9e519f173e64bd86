// A compact, exact binary encoding for what gradwire's own processes hand
// each other (a forked child and its parent, docs/architecture.md,
// "Processes"): never a file, never another program, never the public
// output. Numbers go by their bytes (a double's bits: NaN, infinities and -0
// cross unchanged), a bool as one byte 0 or 1, strings and sequences by
// their size then their elements, a struct by its fields in the order its
// wire_fields lists them:
//
//   template <class S, class F>
//     requires std::same_as<std::remove_const_t<S>, Point>
//   void wire_fields(S& p, F&& f) { f(p.x); f(p.y); }   // found by ADL
//
// A message (seal/open) is a header, "GW", a 4-character kind, a version
// and the payload's length, then the payload: a message of another kind or
// version, cut short or with bytes left over is refused with
// gw::wire::Malformed, whose message says which (a wrong byte inside a
// well-formed payload is not detected: this is a channel between two copies
// of one program, not a file format).
#pragma once

#include <concepts>
#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace gw::wire {

/// A message that is not what its reader expects (truncated, of another kind
/// or version, a bad bool, trailing bytes).
class Malformed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <class T>
concept Number = (std::is_arithmetic_v<T> || std::is_enum_v<T>)&&!std::same_as<T, bool>;

/// A struct with a wire_fields(s, f) found by argument-dependent lookup.
template <class T>
concept Fields = requires(T& t) {
  wire_fields(t, [](auto&) {});
};

class Writer {
 public:
  template <Number T>
  void put(T v) {
    char bytes[sizeof v];
    std::memcpy(bytes, &v, sizeof v);
    out_.append(bytes, sizeof bytes);
  }
  void put(bool b) { out_ += b ? '\1' : '\0'; }
  void put(std::string_view s) {
    put(static_cast<std::uint64_t>(s.size()));
    out_.append(s.data(), s.size());
  }
  void put(const std::string& s) { put(std::string_view(s)); }
  void put(const char* s) { put(std::string_view(s)); }
  template <class T>
  void put(const std::vector<T>& v) {
    put(static_cast<std::uint64_t>(v.size()));
    for (const auto& e : v) put(e);
  }
  template <class K, class V>
  void put(const std::map<K, V>& m) {
    put(static_cast<std::uint64_t>(m.size()));
    for (const auto& [k, v] : m) {
      put(k);
      put(v);
    }
  }
  template <class T>
  requires Fields<const T>
  void put(const T& s) {
    wire_fields(s, [this](const auto& field) { put(field); });
  }
  /// What was put, and the writer empty again.
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  /// Reads `bytes` (which must outlive the reader); `what` names the message
  /// in errors.
  Reader(std::string_view bytes, std::string what) : in_(bytes), what_(std::move(what)) {}

  template <Number T>
  void get(T& v) {
    std::memcpy(&v, take(sizeof v), sizeof v);
  }
  void get(bool& b) {
    const char c = *take(1);
    if (c != '\0' && c != '\1') fail("a bool is neither 0 nor 1");
    b = c == '\1';
  }
  void get(std::string& s) {
    const std::size_t n = size();
    s.assign(take(n), n);
  }
  template <class T>
  void get(std::vector<T>& v) {
    const std::size_t n = size();  // at most one element a byte: no huge allocation from a bad count
    v.clear();
    v.reserve(n);
    for (std::size_t i = 0; i < n; ++i) get(v.emplace_back());
  }
  template <class K, class V>
  void get(std::map<K, V>& m) {
    const std::size_t n = size();
    m.clear();
    for (std::size_t i = 0; i < n; ++i) {
      std::pair<K, V> kv;
      get(kv.first);
      get(kv.second);
      m.insert_or_assign(std::move(kv.first), std::move(kv.second));
    }
  }
  template <class T>
  requires Fields<T>
  void get(T& s) {
    wire_fields(s, [this](auto& field) { get(field); });
  }
  template <class T>
  T get() {
    T v{};
    get(v);
    return v;
  }
  /// Refuses the message unless every byte was read.
  void finish() const {
    if (pos_ != in_.size()) fail(std::to_string(in_.size() - pos_) + " bytes left over");
  }
  [[noreturn]] void fail(const std::string& why) const { throw Malformed(what_ + ": " + why); }

 private:
  const char* take(std::size_t n) {
    if (n > in_.size() - pos_)
      fail("truncated (" + std::to_string(n) + " bytes needed at byte " + std::to_string(pos_) + " of " +
           std::to_string(in_.size()) + ")");
    const char* p = in_.data() + pos_;
    pos_ += n;
    return p;
  }
  /// A count of strings or elements: each takes at least one byte, so a
  /// count larger than what is left is refused before anything is allocated.
  std::size_t size() {
    std::uint64_t n = 0;
    get(n);
    if (n > in_.size() - pos_)
      fail("a count of " + std::to_string(n) + " exceeds the " + std::to_string(in_.size() - pos_) + " bytes left");
    return static_cast<std::size_t>(n);
  }

  std::string_view in_;
  std::string what_;
  std::size_t pos_ = 0;
};

/// The message of `kind` (4 characters) and `version` around `payload`.
std::string seal(std::string_view kind, std::uint32_t version, std::string_view payload);
/// The payload of a message sealed with `kind` and `version`; Malformed
/// (naming `what`) for anything else: too short for its header, another
/// kind or version, a payload shorter or longer than its header says.
std::string_view open(std::string_view message, std::string_view kind, std::uint32_t version, const std::string& what);

}  // namespace gw::wire
