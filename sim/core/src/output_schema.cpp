#include "gradwire/core/output_schema.hpp"

#include <nlohmann/json.hpp>

namespace gw {

std::string schema_first(const char* schema, const std::string& json_text, int indent) {
  // Parsed in the text's key order; nlohmann writes a parsed double back as
  // the same shortest round-trip text it was written with.
  const auto doc = nlohmann::ordered_json::parse(json_text);
  nlohmann::ordered_json out;
  out["schema"] = schema;
  for (auto it = doc.begin(); it != doc.end(); ++it)
    if (it.key() != "schema") out[it.key()] = it.value();
  return out.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace gw
