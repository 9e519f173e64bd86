#include "gradwire/validate/case_header.hpp"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "gradwire/core/error.hpp"
#include "gradwire/model/data_dir.hpp"

namespace gw::validate {
namespace fs = std::filesystem;

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

std::vector<std::string> case_files(const std::string& dir) {
  const auto refuse = [&](const std::string& why) { throw InputError(dir, 0, 0, "", why); };
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) refuse("not a folder of validation cases (*.yaml)");
  std::vector<std::string> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code entry;  // a dangling link is no case, not a folder that cannot be read
    if (it->is_regular_file(entry) && it->path().extension() == ".yaml") files.push_back(it->path().string());
  }
  if (ec) refuse("cannot read the folder: " + ec.message());
  if (files.empty()) refuse("no validation case (*.yaml) in this folder");
  std::sort(files.begin(), files.end());
  return files;
}

std::string bundled_cases_dir(const std::string& kind) { return data_dir() + "/validation/" + kind; }

std::string shown_path(const std::string& path) {
  const std::string root = data_dir() + "/";
  return path.rfind(root, 0) == 0 ? path.substr(root.size()) : path;
}

}  // namespace gw::validate
