// The sweep record's field table: one row per field of a ResultRecord, in the
// order records are written (docs/planning.md, "Results records"). The rows
// drive the writer (to_json), the checks and the reader (from_json) and the
// gradwire-result/1 renames; tests/cli/test_schemas.cpp holds the committed
// schemas (docs/schemas/gradwire-result-2.schema.json and result.schema.json)
// to them in both directions. Adding a figure to sweep records: a member of
// ResultRecord (result_record.hpp), its row (result_fields.cpp), its property
// in gradwire-result-2.schema.json, and the code that fills it. Plain C++.
#pragma once

#include <vector>

namespace gw::plan {

/// How a row reads and writes its member (result_fields.cpp; opaque here).
struct FieldAccess;

/// The JSON type of a field.
enum class FieldType {
  Count,   ///< a whole number, 0 .. RecordField::max
  Number,  ///< a finite number >= 0 (every figure of a record)
  String,
  StringMap,   ///< an object of strings, in the order written (params, inputs)
  StringList,  ///< a list of one string or more
  Object,      ///< an object of the fields in RecordField::fields
};

/// What the reader requires of a field.
enum class FieldNeed {
  Always,    ///< present, of its type (in an object: whenever the object is)
  IfOk,      ///< present in a record of status ok; of its type when present
  IfError,   ///< present in a record of status error; of its type when present
  Optional,  ///< of its type when present
  Lenient,   ///< not checked: read when of its type, else left at its default
};

struct RecordField {
  const char* name;     ///< as gradwire-result/2 writes it
  const char* v1_name;  ///< as gradwire-result/1 wrote it (== name when not renamed)
  FieldType type;
  FieldNeed need;
  /// Written even when the record does not set it (a plain member, or an
  /// unset optional written as null): the schema's "required".
  bool written_always;
  bool nullable;                    ///< may be null (instance: a cluster spelled out; cost.spot)
  bool one_line;                    ///< a name plan and report print: one line, no control characters
  int since;                        ///< the first record version with the field (1 or 2)
  unsigned long long max;           ///< the largest Count
  const char* unit;                 ///< "s", "B", "B/s", "h", "USD", "USD/h", "samples", ... ("" for none)
  std::vector<RecordField> fields;  ///< an Object's fields, in the order written
  const FieldAccess* access;
};

/// The fields of a sweep record (gradwire-result/2), in the order written;
/// "schema" comes first and is not a row (it names the table's version).
const std::vector<RecordField>& result_fields();

}  // namespace gw::plan
