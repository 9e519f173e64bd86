// What every validation case (validation/collectives/, validation/iterations/)
// carries about its published source, read in one place.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "gradwire/core/yaml_reader.hpp"

namespace gw::validate {

struct CaseHeader {
  std::string file;        ///< the case file
  std::string name;        ///< the case's name (`case`)
  std::string devset;      ///< its id in the development set (A1, B1, ...)
  std::string source;      ///< URL of the published figure or table
  std::string confidence;  ///< high, med or low (the development set's scale)
  std::string gap;         ///< the mechanism gradwire lacks for this case ("" if none)
};

/// The keys read_case_header reads; a case's own keys are added to them.
std::vector<std::string> case_header_keys(std::initializer_list<const char*> own);
/// Reads case, devset, source, confidence and the optional gap of `root`
/// (gw::InputError at the field); `file` is the case's path.
CaseHeader read_case_header(const yaml::Node& root, const std::string& file);

}  // namespace gw::validate
