// A validator for the subset of JSON Schema (draft 2020-12) that
// docs/schemas/ uses: type (a name or a list), const, enum, minimum, minItems,
// properties, required, additionalProperties (false or a schema), items,
// anyOf and "$ref": "#/$defs/NAME". Any other keyword is an error of the
// schema itself, so a schema cannot silently rely on what is not checked.
// Annotations ($schema, $id, $defs, title, description) are skipped.
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace gw::test {

class SchemaValidator {
 public:
  explicit SchemaValidator(nlohmann::json schema) : root_(std::move(schema)) {}

  /// Every violation as "PATH: why" (empty: the document is valid).
  std::vector<std::string> validate(const nlohmann::json& doc) const {
    std::vector<std::string> errors;
    check(root_, doc, "", errors);
    return errors;
  }

 private:
  static bool has_type(const nlohmann::json& v, const std::string& t) {
    if (t == "object") return v.is_object();
    if (t == "array") return v.is_array();
    if (t == "string") return v.is_string();
    if (t == "boolean") return v.is_boolean();
    if (t == "null") return v.is_null();
    if (t == "number") return v.is_number();
    // A whole number written as an integer (nlohmann writes every double with a '.').
    if (t == "integer") return v.is_number_integer();
    return false;
  }

  const nlohmann::json& resolve(const std::string& ref) const {
    const std::string prefix = "#/$defs/";
    if (ref.rfind(prefix, 0) != 0 || !root_.contains("$defs") || !root_["$defs"].contains(ref.substr(prefix.size())))
      throw std::invalid_argument("schema: unresolvable $ref " + ref);
    return root_["$defs"][ref.substr(prefix.size())];
  }

  void check_keywords(const nlohmann::json& s) const {
    static const std::set<std::string> known{
        "$schema", "$id",      "$defs",      "title",    "description",          "type",  "const", "enum",
        "minimum", "minItems", "properties", "required", "additionalProperties", "items", "anyOf", "$ref"};
    for (auto it = s.begin(); it != s.end(); ++it)
      if (!known.count(it.key())) throw std::invalid_argument("schema: unsupported keyword " + it.key());
  }

  void check_type(const nlohmann::json& s, const nlohmann::json& v, const std::string& at,
                  std::vector<std::string>& errors) const {
    const auto types = s["type"].is_array() ? s["type"] : nlohmann::json::array({s["type"]});
    for (const auto& t : types)
      if (has_type(v, t.get<std::string>())) return;
    errors.push_back(at + ": " + std::string(v.type_name()) + " " + v.dump() + " is not of type " + s["type"].dump());
  }

  void check_object(const nlohmann::json& s, const nlohmann::json& v, const std::string& at,
                    std::vector<std::string>& errors) const {
    const auto props = s.value("properties", nlohmann::json::object());
    for (const auto& r : s.value("required", nlohmann::json::array()))
      if (!v.contains(r.get<std::string>())) errors.push_back(at + ": required field " + r.dump() + " missing");
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string where = at + "/" + it.key();
      if (props.contains(it.key())) {
        check(props[it.key()], it.value(), where, errors);
      } else if (s.contains("additionalProperties")) {
        const auto& extra = s["additionalProperties"];
        if (extra.is_boolean() && !extra.get<bool>())
          errors.push_back(where + ": field not in the schema");
        else if (extra.is_object())
          check(extra, it.value(), where, errors);
      }
    }
  }

  void check(const nlohmann::json& s, const nlohmann::json& v, const std::string& at,
             std::vector<std::string>& errors) const {
    check_keywords(s);
    if (s.contains("$ref")) check(resolve(s["$ref"].get<std::string>()), v, at, errors);
    if (s.contains("anyOf")) {
      bool any = false;
      for (const auto& alt : s["anyOf"]) {
        std::vector<std::string> sub;
        check(alt, v, at, sub);
        any = any || sub.empty();
      }
      if (!any) errors.push_back(at + ": matches none of anyOf");
    }
    if (s.contains("type")) {
      const std::size_t before = errors.size();
      check_type(s, v, at, errors);
      if (errors.size() != before) return;
    }
    if (s.contains("const") && v != s["const"]) errors.push_back(at + ": " + v.dump() + " is not " + s["const"].dump());
    if (s.contains("enum") && std::find(s["enum"].begin(), s["enum"].end(), v) == s["enum"].end())
      errors.push_back(at + ": " + v.dump() + " is not one of " + s["enum"].dump());
    if (s.contains("minimum") && v.is_number() && v.get<double>() < s["minimum"].get<double>())
      errors.push_back(at + ": " + v.dump() + " is below the minimum " + s["minimum"].dump());
    if (s.contains("minItems") && v.is_array() && v.size() < s["minItems"].get<std::size_t>())
      errors.push_back(at + ": " + std::to_string(v.size()) + " items, fewer than " + s["minItems"].dump());
    if (v.is_object()) check_object(s, v, at, errors);
    if (v.is_array() && s.contains("items"))
      for (std::size_t i = 0; i < v.size(); ++i) check(s["items"], v[i], at + "/" + std::to_string(i), errors);
  }

  nlohmann::json root_;
};

}  // namespace gw::test
