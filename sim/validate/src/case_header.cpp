#include "gradwire/validate/case_header.hpp"

namespace gw::validate {

std::vector<std::string> case_header_keys(std::initializer_list<const char*> own) {
  std::vector<std::string> keys{"case", "devset", "source", "confidence", "gap"};
  keys.insert(keys.end(), own.begin(), own.end());
  return keys;
}

CaseHeader read_case_header(const yaml::Node& root, const std::string& file) {
  CaseHeader h;
  h.file = file;
  h.name = root.required("case").as_name();
  h.devset = root.required("devset").as_name();
  h.source = root.required("source").as_name();
  h.confidence = root.required("confidence").as_enum({"high", "med", "low"});
  if (auto g = root.optional("gap")) h.gap = g->as_string();
  return h;
}

}  // namespace gw::validate
