// A JSON output's fields as one table (docs/outputs.md): each row names a
// field, its JSON type and how it is read from and written to a C++ struct
// `R`; the one table drives the writer (write), the reader (read) and the
// list the schema test compares docs/schemas/ with (describe). Rows:
//
//   member("total_s", &R::total)              a member, its type from C++
//   object("critical_path", {rows...})        an object of rows of R
//   array("buckets", &R::buckets, {rows...})  a list of objects, rows of the element
//   custom(key, type, write, read)            anything else: derived,
//                                             conditional, constant, an enum
//
// and .when(pred) (written only when pred(r): not in the schema's
// "required", read when present) or .write_only() (a value the writer
// derives from other fields: the reader skips it).
// The JSON is nlohmann::json, whose objects keep their keys sorted: the
// rows' order does not change the output.
#pragma once

#include <nlohmann/json.hpp>

#include <concepts>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace gw::json_fields {

using nlohmann::json;

/// One field as the schema test sees it.
struct Info {
  std::string path;    ///< keys from the root joined by '/'; a list's element adds "[]"
  std::string type;    ///< JSON Schema type: string, integer, number, boolean, array, object
  std::string items;   ///< an array of scalars: their type; else ""
  bool always = true;  ///< written on every document (the schema's "required")
};

/// The JSON Schema type of a C++ value.
template <class T>
std::string type_of() {
  if constexpr (std::same_as<T, bool>)
    return "boolean";
  else if constexpr (std::integral<T>)
    return "integer";
  else if constexpr (std::floating_point<T>)
    return "number";
  else if constexpr (std::same_as<T, std::string>)
    return "string";
  else
    return "array";  // std::vector of one of the above
}

template <class T>
std::string items_of() {
  if constexpr (requires { typename T::value_type; } && !std::same_as<T, std::string>)
    return type_of<typename T::value_type>();
  else
    return "";
}

template <class R>
struct Row {
  std::string key;
  std::string type;
  std::string items;
  std::function<json(const R&)> write;
  std::function<void(const json&, R&)> read;  ///< empty: write-only
  std::function<bool(const R&)> condition;    ///< empty: always written
  /// The rows inside (an object, a list's element): their Infos under `path`.
  std::function<void(const std::string& path, std::vector<Info>&)> inner;

  Row&& write_only() && {
    read = nullptr;
    return std::move(*this);
  }
  Row&& when(std::function<bool(const R&)> pred) && {
    condition = std::move(pred);
    return std::move(*this);
  }
};

template <class R>
using Table = std::vector<Row<R>>;

/// The JSON object of `r`'s fields.
template <class R>
json write(const Table<R>& table, const R& r) {
  json j = json::object();
  for (const auto& row : table)
    if (!row.condition || row.condition(r)) j[row.key] = row.write(r);
  return j;
}

/// Reads `j`'s fields into `r`: a row always written must be there (json's
/// out_of_range otherwise), a conditional one is read when present.
template <class R>
void read(const Table<R>& table, const json& j, R& r) {
  for (const auto& row : table) {
    if (!row.read) continue;
    if (row.condition && !j.contains(row.key)) continue;
    row.read(j.at(row.key), r);
  }
}

/// Every field of the table, depth first, with `prefix` before its paths.
template <class R>
void describe(const Table<R>& table, const std::string& prefix, std::vector<Info>& out) {
  for (const auto& row : table) {
    const std::string path = prefix.empty() ? row.key : prefix + "/" + row.key;
    out.push_back({path, row.type, row.items, !row.condition});
    if (row.inner) row.inner(path, out);
  }
}

template <class R, class T>
Row<R> member(std::string key, T R::*m) {
  return {std::move(key),
          type_of<T>(),
          items_of<T>(),
          [m](const R& r) { return json(r.*m); },
          [m](const json& j, R& r) { r.*m = j.get<T>(); },
          nullptr,
          nullptr};
}

template <class R>
Row<R> object(std::string key, Table<R> rows) {
  auto shared = std::make_shared<const Table<R>>(std::move(rows));
  return {std::move(key),
          "object",
          "",
          [shared](const R& r) { return write(*shared, r); },
          [shared](const json& j, R& r) { read(*shared, j, r); },
          nullptr,
          [shared](const std::string& path, std::vector<Info>& out) { describe(*shared, path, out); }};
}

template <class R, class E>
Row<R> array(std::string key, std::vector<E> R::*m, Table<E> rows) {
  auto shared = std::make_shared<const Table<E>>(std::move(rows));
  return {std::move(key),
          "array",
          "object",
          [shared, m](const R& r) {
            json a = json::array();
            for (const auto& e : r.*m) a.push_back(write(*shared, e));
            return a;
          },
          [shared, m](const json& j, R& r) {
            (r.*m).clear();
            for (const auto& e : j) read(*shared, e, (r.*m).emplace_back());
          },
          nullptr,
          [shared](const std::string& path, std::vector<Info>& out) { describe(*shared, path + "[]", out); }};
}

template <class R>
Row<R> custom(std::string key, std::string type, std::function<json(const R&)> write_fn,
              std::function<void(const json&, R&)> read_fn, std::string items = "") {
  return {std::move(key), std::move(type), std::move(items), std::move(write_fn), std::move(read_fn), nullptr, nullptr};
}

}  // namespace gw::json_fields
