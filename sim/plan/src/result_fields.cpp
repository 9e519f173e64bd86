// The sweep record's field table (result_fields.hpp): one row per field, the
// member it holds, its type, what the reader needs and its gradwire-result/1
// name. The writer, reader, checks and renames (results_file.cpp) walk it.
#include "gradwire/plan/result_fields.hpp"

#include <climits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gradwire/plan/result_record.hpp"
#include "gradwire/plan/results_file.hpp"
#include "result_access.hpp"

namespace gw::plan {
namespace {

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

template <class T>
struct unwrapped {
  using type = T;
};
template <class T>
struct unwrapped<std::optional<T>> {
  using type = T;
};

template <class>
struct member_of;
template <class R, class T>
struct member_of<T R::*> {
  using owner = R;
  using type = T;
};

// --- A value as JSON and back ------------------------------------------------------

template <class T>
ojson value_json(const T& v, const RecordField& row) {
  if constexpr (std::is_same_v<T, StringPairs>) {
    ojson j = ojson::object();
    for (const auto& [k, s] : v) j[k] = s;
    return j;
  } else if constexpr (std::is_same_v<T, std::optional<std::string>>) {
    return v ? ojson(*v) : ojson(nullptr);  // instance: null for a cluster spelled out
  } else if constexpr (std::is_class_v<T> && !std::is_same_v<T, std::string> &&
                       !std::is_same_v<T, std::vector<std::string>>) {
    ojson j = ojson::object();
    put_fields(j, row.fields, &v);
    return j;
  } else {
    return ojson(v);  // a whole count as an integer, a figure as a double
  }
}

/// `out` from `v` when `v` is of its type (true), else false.
template <class T>
bool json_value(const ojson& v, const RecordField& row, T& out) {
  if constexpr (std::is_arithmetic_v<T>) {
    if (!v.is_number()) return false;
    out = v.get<T>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) return false;
    out = v.get<std::string>();
  } else if constexpr (std::is_same_v<T, StringPairs>) {
    if (!v.is_object()) return false;
    // A non-string value (the checks leave it to the reader) keeps its JSON text.
    for (auto it = v.begin(); it != v.end(); ++it)
      out.emplace_back(it.key(), it->is_string() ? it->template get<std::string>() : it->dump());
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    if (!v.is_array()) return false;
    out = v.get<std::vector<std::string>>();
  } else if constexpr (std::is_same_v<T, std::optional<std::string>>) {
    out = v.is_string() ? std::optional<std::string>(v.get<std::string>()) : std::nullopt;
  } else {
    if (!v.is_object()) return false;
    read_fields(v, row.fields, &out);
  }
  return true;
}

// --- A member's FieldAccess -----------------------------------------------------------

template <auto M>
void put_member(ojson& j, const RecordField& row, const void* owner) {
  using R = typename member_of<decltype(M)>::owner;
  using T = typename member_of<decltype(M)>::type;
  const T& v = static_cast<const R*>(owner)->*M;
  if constexpr (is_optional<T>::value) {
    if (v) {
      j[row.name] = value_json(*v, row);
    } else if (row.written_always) {
      j[row.name] = nullptr;  // cost.spot: no spot price
    }
  } else if constexpr (std::is_same_v<T, StringPairs>) {
    if (!v.empty()) j[row.name] = value_json(v, row);
  } else {
    j[row.name] = value_json(v, row);
  }
}

template <auto M>
void read_member(const ojson& value, const RecordField& row, void* owner) {
  using R = typename member_of<decltype(M)>::owner;
  using T = typename member_of<decltype(M)>::type;
  T& m = static_cast<R*>(owner)->*M;
  if constexpr (is_optional<T>::value) {
    typename T::value_type v{};
    if (json_value(value, row, v)) m = std::move(v);
  } else {
    json_value(value, row, m);
  }
}

template <auto M>
inline constexpr FieldAccess kAccess{&put_member<M>, &read_member<M>};

// --- Rows ---------------------------------------------------------------------------

template <class T>
constexpr FieldType type_of() {
  using U = typename unwrapped<T>::type;
  if constexpr (std::is_same_v<U, std::optional<std::string>> || std::is_same_v<U, std::string>) {
    return FieldType::String;
  } else if constexpr (std::is_integral_v<U>) {
    return FieldType::Count;
  } else if constexpr (std::is_floating_point_v<U>) {
    return FieldType::Number;
  } else if constexpr (std::is_same_v<U, StringPairs>) {
    return FieldType::StringMap;
  } else if constexpr (std::is_same_v<U, std::vector<std::string>>) {
    return FieldType::StringList;
  } else {
    return FieldType::Object;
  }
}

/// A row under construction: the type, nullability and whether it is always
/// written follow from the member's C++ type.
struct Row {
  RecordField f;
  Row& was(const char* v1) { return f.v1_name = v1, *this; }
  Row& since(int version) { return f.since = version, *this; }
  Row& max(unsigned long long m) { return f.max = m, *this; }
  Row& text() { return f.one_line = false, *this; }  ///< free text, not a name
  Row& null_when_unset() { return f.nullable = f.written_always = true, *this; }
  Row& of(std::vector<RecordField> fields) { return f.fields = std::move(fields), *this; }
  operator RecordField() const { return f; }  // NOLINT: rows convert into the table
};

template <auto M>
Row field(const char* name, FieldNeed need, const char* unit = "") {
  using T = typename member_of<decltype(M)>::type;
  constexpr FieldType type = type_of<T>();
  const bool written_always = !is_optional<T>::value && !std::is_same_v<T, StringPairs>;
  const bool nullable = std::is_same_v<T, std::optional<std::optional<std::string>>>;
  const bool names = type == FieldType::String || type == FieldType::StringMap;
  return Row{{name,
              name,
              type,
              need,
              written_always,
              nullable,
              names,
              1,
              static_cast<unsigned long long>(INT_MAX),
              unit,
              {},
              &kAccess<M>}};
}

using N = FieldNeed;
using RR = ResultRecord;

std::vector<RecordField> memory_fields() {
  using M = MemoryBreakdown;
  // The order records write (part of their byte-exact form; simulate's table
  // and JSON list the terms in their own order, memory_terms in report.hpp).
  return {field<&M::total>("total_bytes", N::Always, "B").was("total"),
          field<&M::capacity>("capacity_bytes", N::Lenient, "B").was("capacity"),
          field<&M::parameters>("parameters_bytes", N::Lenient, "B").was("parameters"),
          field<&M::gradients>("gradients_bytes", N::Lenient, "B").was("gradients"),
          field<&M::optimizer_states>("optimizer_states_bytes", N::Lenient, "B").was("optimizer_states"),
          field<&M::error_feedback>("error_feedback_bytes", N::Lenient, "B").was("error_feedback"),
          field<&M::buckets>("buckets_bytes", N::Lenient, "B").was("buckets"),
          field<&M::compressor_state>("compressor_state_bytes", N::Lenient, "B").was("compressor_state"),
          field<&M::gather_buffer>("gather_buffer_bytes", N::Lenient, "B").was("gather_buffer"),
          field<&M::activations>("activations_bytes", N::Lenient, "B").was("activations"),
          field<&M::reserve>("reserve_bytes", N::Lenient, "B").was("reserve")};
}

std::vector<RecordField> training_fields() {
  using T = TrainingFigures;
  return {field<&T::samples>("samples", N::Lenient, "samples"),
          field<&T::convergence_factor>("convergence_factor", N::Lenient),
          field<&T::iterations>("iterations", N::Lenient, "steps"), field<&T::hours>("hours", N::Always, "h"),
          field<&T::critical_batch>("critical_batch", N::Lenient, "samples")};
}

std::vector<RecordField> cost_fields() {
  using C = CostFigures;
  return {field<&C::on_demand>("on_demand_usd", N::Always, "USD").was("on_demand"),
          field<&C::spot>("spot_usd", N::Always, "USD").was("spot").null_when_unset(),
          field<&C::billed_seconds>("billed_s", N::Lenient, "s").was("billed_seconds"),
          field<&C::usd_per_hour>("usd_per_hour", N::Lenient, "USD/h")};
}

std::vector<RecordField> band_fields() {
  using B = BandFigures;
  return {field<&B::iteration_low>("iteration_low_s", N::Always, "s").was("iteration_low"),
          field<&B::iteration_high>("iteration_high_s", N::Always, "s").was("iteration_high"),
          field<&B::straggler_wait>("straggler_wait_s", N::Always, "s").was("straggler_wait"),
          field<&B::hours_low>("low_hours", N::Optional, "h").was("hours_low"),
          field<&B::hours_high>("high_hours", N::Optional, "h").was("hours_high"),
          field<&B::on_demand_low>("on_demand_low_usd", N::Optional, "USD").was("on_demand_low"),
          field<&B::on_demand_high>("on_demand_high_usd", N::Optional, "USD").was("on_demand_high")};
}

std::vector<RecordField> point_fields() {
  return {field<&RR::index>("index", N::Always).max(kMaxSweepPoints - 1),
          field<&RR::of>("of", N::Always).max(kMaxSweepPoints),
          field<&RR::sweep>("sweep", N::Always),
          field<&RR::key>("key", N::Always),
          field<&RR::inputs>("inputs", N::Optional),
          field<&RR::params>("params", N::Optional),
          field<&RR::status>("status", N::Always).text(),
          field<&RR::instance>("instance", N::IfOk),
          field<&RR::nodes>("nodes", N::IfOk),
          field<&RR::gpus_per_node>("gpus_per_node", N::IfOk),
          field<&RR::world>("world", N::IfOk),
          field<&RR::gpu>("gpu", N::Optional),
          field<&RR::node_bandwidth>("node_bandwidth_bytes_per_s", N::IfOk, "B/s").was("node_bandwidth"),
          field<&RR::cluster_key>("cluster_key", N::IfOk),
          field<&RR::model>("model", N::IfOk),
          field<&RR::compression>("compression", N::IfOk),
          field<&RR::compression_kind>("compression_kind", N::IfOk),
          field<&RR::sharding>("sharding", N::Optional),
          field<&RR::evaluator>("evaluator", N::Optional),
          field<&RR::micro_batch>("micro_batch", N::IfOk, "samples"),
          field<&RR::accumulation>("accumulation", N::IfOk)};
}

std::vector<RecordField> figure_fields() {
  return {field<&RR::global_batch>("global_batch", N::Optional, "samples"),
          field<&RR::batch_split>("batch_split", N::Optional),
          field<&RR::memory>("memory", N::Optional, "B").of(memory_fields()),
          field<&RR::iteration>("iteration_s", N::IfOk, "s").was("iteration"),
          field<&RR::forward>("forward_s", N::IfOk, "s").was("forward"),
          field<&RR::backward>("backward_s", N::IfOk, "s").was("backward"),
          field<&RR::exposed_communication>("exposed_communication_s", N::IfOk, "s").was("exposed_communication"),
          field<&RR::encode>("encode_s", N::Optional, "s").was("encode"),
          field<&RR::decode>("decode_s", N::Optional, "s").was("decode"),
          field<&RR::optimizer>("optimizer_s", N::IfOk, "s").was("optimizer"),
          field<&RR::samples_per_second>("samples_per_s", N::Optional, "samples/s").was("samples_per_second"),
          field<&RR::wire_bytes_per_gpu>("wire_per_gpu_bytes", N::Optional, "B").was("wire_bytes_per_gpu"),
          field<&RR::measured_collectives>("measured_collectives", N::Optional).since(2),
          field<&RR::training>("training", N::Optional).of(training_fields()),
          field<&RR::cost>("cost", N::Optional).of(cost_fields()),
          field<&RR::band>("band", N::Optional).of(band_fields()),
          field<&RR::reason>("reason", N::IfError).text()};
}

}  // namespace

void put_fields(ojson& j, const std::vector<RecordField>& rows, const void* owner) {
  for (const auto& row : rows) row.access->put(j, row, owner);
}

void read_fields(const ojson& j, const std::vector<RecordField>& rows, void* owner) {
  for (const auto& row : rows) {
    const auto it = j.find(row.name);
    if (it != j.end()) row.access->read(*it, row, owner);
  }
}

const std::vector<RecordField>& result_fields() {
  static const std::vector<RecordField> rows = [] {
    std::vector<RecordField> all = point_fields();
    for (auto& f : figure_fields()) all.push_back(std::move(f));
    return all;
  }();
  return rows;
}

}  // namespace gw::plan
