// Where the bundled data lives: the model zoo (models/), the calibration
// profiles (calibrate/profiles/), the instance catalog (catalog/), the
// scenarios (scenarios/) and the validation cases (validation/).
// Resolved at run time, nothing is compiled in (README.md, "Data files").
#pragma once

#include <optional>
#include <string>

namespace gw {

/// The data root, the directory holding models/, calibrate/profiles/,
/// catalog/, scenarios/ and validation/. In order:
///   1. the environment variable GRADWIRE_DATA, when set and not empty,
///      else GRADWIRE_DATA_DIR (its older name, kept as an alias: when both
///      are set, GRADWIRE_DATA wins);
///   2. share/gradwire in the parent of the executable's directory (found
///      through /proc/self/exe) or in one of the two directories above that
///      one: <prefix>/bin/gradwire finds
///      <prefix>/share/gradwire; the build tree's share/gradwire is a link
///      to the source tree, made by CMake, so build/bin/gradwire and the test
///      executables under build/tests/<area>/ find the sources;
///   3. "." (the current directory).
/// Symbolic links are resolved, so in the build tree the answer is the
/// source directory itself. Computed once per process.
const std::string& data_dir();

/// The value of the first line starting with `schema:` among the first 64
/// lines of `path`, read without parsing the YAML; nullopt when the file is
/// not a regular file or has no such line. Lists of what a folder holds (the
/// profiles, the models) keep to files of their kind with it.
std::optional<std::string> declared_schema(const std::string& path);

}  // namespace gw
