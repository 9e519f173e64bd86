// How the rows of the sweep record's field table (result_fields.hpp) meet
// JSON: each row's FieldAccess writes and reads its member; put_fields and
// read_fields walk a table (a record's rows or an object's). Private to gw_plan.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "gradwire/plan/result_fields.hpp"

namespace gw::plan {

using ojson = nlohmann::ordered_json;

struct FieldAccess {
  /// Writes the row's member of `owner` (the record, or the object a row
  /// holds) into `j` under row.name when the owner sets it (or when the row
  /// is written_always: an unset nullable member as null).
  void (*put)(ojson& j, const RecordField& row, const void* owner);
  /// Reads `value` (the field as a checked line holds it) into the member of
  /// `owner`; a value not of the member's type leaves it as it is.
  void (*read)(const ojson& value, const RecordField& row, void* owner);
};

/// Every row's member of `owner` into `j`, in the rows' order.
void put_fields(ojson& j, const std::vector<RecordField>& rows, const void* owner);
/// Every row present in `j` into `owner`.
void read_fields(const ojson& j, const std::vector<RecordField>& rows, void* owner);

}  // namespace gw::plan
