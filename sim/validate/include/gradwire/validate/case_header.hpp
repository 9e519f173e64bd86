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
/// The case files (*.yaml) of folder `dir`, in file-name order. A path that
/// is not a readable folder, or a folder without a case file, is bad input:
/// gw::InputError naming `dir` (`gradwire validate --cases DIR`: one line,
/// exit 2).
std::vector<std::string> case_files(const std::string& dir);
/// The folder of the bundled cases of `kind` (collectives or iterations):
/// <data dir>/validation/KIND (gradwire/model/data_dir.hpp), so that an
/// installed `gradwire validate` finds them from any directory.
std::string bundled_cases_dir(const std::string& kind);

/// A path under the data directory as the reports show it: relative to that
/// directory (validation/clusters/x.yaml), so the report is the same from a
/// source tree, a build or an install; any other path as given.
std::string shown_path(const std::string& path);

}  // namespace gw::validate
