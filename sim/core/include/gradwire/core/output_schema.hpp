// The versions of gradwire's JSON outputs (docs/outputs.md): every output
// object starts with "schema": "<name>/<version>", and docs/schemas/ holds
// the JSON Schema of each. A field added keeps the version; a field renamed
// or removed, or its meaning or unit changed, bumps it.
#pragma once

#include <string>

namespace gw {

inline constexpr const char* kIterationSchema = "gradwire-iteration/2";  ///< simulate --format json
inline constexpr const char* kResultSchema = "gradwire-result/2";        ///< one sweep record
/// The sweep record before its fields carried their units: still read,
/// and written when a sweep resumes a file of such records.
inline constexpr const char* kResultSchemaV1 = "gradwire-result/1";
inline constexpr const char* kPlanSchema = "gradwire-plan/2";              ///< plan --format json
inline constexpr const char* kCollectiveSchema = "gradwire-collective/2";  ///< collective --format json
inline constexpr const char* kValidationSchema = "gradwire-validation/1";  ///< validate --format json
inline constexpr const char* kCompareSchema = "gradwire-compare/1";        ///< collective --compare --format json
/// simulate --trace: Chrome trace-event JSON (Perfetto), the version in its
/// otherData (the format's place for a producer's own fields).
inline constexpr const char* kTraceSchema = "gradwire-trace/1";

/// `json_text` (one JSON object) with "schema": `schema` as its first field,
/// the other fields after it in their order and with their text (numbers are
/// not reformatted), dumped with `indent` (-1: one line).
std::string schema_first(const char* schema, const std::string& json_text, int indent);

}  // namespace gw
