#include "gradwire/plan/results_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "gradwire/core/atomic_file.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/core/output_schema.hpp"

namespace gw::plan {
namespace {

using ojson = nlohmann::ordered_json;

// --- gradwire-result/1 ------------------------------------------------------------

/// The fields gradwire-result/2 renamed to carry their unit (docs/outputs.md,
/// "Units"): (gradwire-result/1 name, gradwire-result/2 name), by the object
/// that holds them ("" for the record itself). Every other field keeps its
/// name; the values are the same. Records are typed with the /2 names; a /1
/// record is renamed on its way in and out.
using Renames = std::vector<std::pair<std::string, std::string>>;
const std::vector<std::pair<std::string, Renames>>& v1_renames() {
  static const std::vector<std::pair<std::string, Renames>> table{
      {"",
       {{"node_bandwidth", "node_bandwidth_bytes_per_s"}, {"iteration", "iteration_s"}, {"forward", "forward_s"},
        {"backward", "backward_s"}, {"exposed_communication", "exposed_communication_s"}, {"encode", "encode_s"},
        {"decode", "decode_s"}, {"optimizer", "optimizer_s"}, {"samples_per_second", "samples_per_s"},
        {"wire_bytes_per_gpu", "wire_per_gpu_bytes"}}},
      {"memory",
       {{"total", "total_bytes"}, {"capacity", "capacity_bytes"}, {"parameters", "parameters_bytes"},
        {"gradients", "gradients_bytes"}, {"optimizer_states", "optimizer_states_bytes"},
        {"error_feedback", "error_feedback_bytes"}, {"buckets", "buckets_bytes"},
        {"compressor_state", "compressor_state_bytes"}, {"gather_buffer", "gather_buffer_bytes"},
        {"activations", "activations_bytes"}, {"reserve", "reserve_bytes"}}},
      {"cost", {{"on_demand", "on_demand_usd"}, {"spot", "spot_usd"}, {"billed_seconds", "billed_s"}}},
      {"band",
       {{"iteration_low", "iteration_low_s"}, {"iteration_high", "iteration_high_s"},
        {"straggler_wait", "straggler_wait_s"}, {"hours_low", "low_hours"}, {"hours_high", "high_hours"},
        {"on_demand_low", "on_demand_low_usd"}, {"on_demand_high", "on_demand_high_usd"}}}};
  return table;
}

/// `name` in object `scope` renamed from /1 to /2 (`to_v2`) or back; a name
/// the table does not hold is kept.
std::string renamed(const std::string& scope, const std::string& name, bool to_v2) {
  for (const auto& [object, renames] : v1_renames()) {
    if (object != scope) continue;
    for (const auto& [v1, v2] : renames) {
      if (name == (to_v2 ? v1 : v2)) return to_v2 ? v2 : v1;
    }
  }
  return name;
}

/// `j` (a record) with its fields renamed, in their order (the objects
/// `params` and `inputs` hold the user's names and are left alone).
template <class Json>
Json renamed_record(const Json& j, bool to_v2) {
  if (!j.is_object()) return j;
  Json out = Json::object();
  for (auto it = j.begin(); it != j.end(); ++it) {
    Json value = it.value();
    if (value.is_object() && it.key() != "params" && it.key() != "inputs") {
      Json inner = Json::object();
      for (auto f = value.begin(); f != value.end(); ++f) inner[renamed(it.key(), f.key(), to_v2)] = f.value();
      value = std::move(inner);
    }
    out[renamed("", it.key(), to_v2)] = std::move(value);
  }
  return out;
}

/// A field as a /1 record names it ("band.iteration_low" for "band.iteration_low_s").
std::string v1_field(const std::string& key) {
  const auto dot = key.find('.');
  if (dot == std::string::npos) return renamed("", key, false);
  return key.substr(0, dot + 1) + renamed(key.substr(0, dot), key.substr(dot + 1), false);
}

/// The version a record's "schema" field names: 1 without it (written before
/// it), 0 for one this gradwire does not read (the checks say why).
int schema_version(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("schema")) return 1;
  const auto& s = j["schema"];
  if (s == kResultSchema) return 2;
  if (s == kResultSchemaV1) return 1;
  return 0;
}

// --- Writing -------------------------------------------------------------------

ojson pairs_json(const StringPairs& pairs) {
  ojson j = ojson::object();
  for (const auto& [k, v] : pairs) j[k] = v;
  return j;
}

// A record's memory block, in the order records write it (part of their
// byte-exact form; simulate's table and JSON list the terms in their own
// order, memory_terms in report.hpp).
constexpr std::array<std::pair<const char*, double MemoryBreakdown::*>, 11> kRecordMemory{{
    {"total_bytes", &MemoryBreakdown::total},
    {"capacity_bytes", &MemoryBreakdown::capacity},
    {"parameters_bytes", &MemoryBreakdown::parameters},
    {"gradients_bytes", &MemoryBreakdown::gradients},
    {"optimizer_states_bytes", &MemoryBreakdown::optimizer_states},
    {"error_feedback_bytes", &MemoryBreakdown::error_feedback},
    {"buckets_bytes", &MemoryBreakdown::buckets},
    {"compressor_state_bytes", &MemoryBreakdown::compressor_state},
    {"gather_buffer_bytes", &MemoryBreakdown::gather_buffer},
    {"activations_bytes", &MemoryBreakdown::activations},
    {"reserve_bytes", &MemoryBreakdown::reserve},
}};

ojson memory_json(const MemoryBreakdown& m) {
  ojson j = ojson::object();
  for (const auto& [name, member] : kRecordMemory) j[name] = m.*member;
  return j;
}

template <class T>
void put(ojson& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

void put_cluster(ojson& j, const ResultRecord& r) {
  if (r.instance) j["instance"] = *r.instance ? ojson(**r.instance) : ojson(nullptr);
  put(j, "nodes", r.nodes);
  put(j, "gpus_per_node", r.gpus_per_node);
  put(j, "world", r.world);
  put(j, "gpu", r.gpu);
  put(j, "node_bandwidth_bytes_per_s", r.node_bandwidth);
  put(j, "cluster_key", r.cluster_key);
  put(j, "model", r.model);
  put(j, "compression", r.compression);
  put(j, "compression_kind", r.compression_kind);
  put(j, "evaluator", r.evaluator);
}

void put_figures(ojson& j, const ResultRecord& r) {
  put(j, "micro_batch", r.micro_batch);
  put(j, "accumulation", r.accumulation);
  put(j, "global_batch", r.global_batch);
  put(j, "batch_split", r.batch_split);
  if (r.memory) j["memory"] = memory_json(*r.memory);
  put(j, "iteration_s", r.iteration);
  put(j, "forward_s", r.forward);
  put(j, "backward_s", r.backward);
  put(j, "exposed_communication_s", r.exposed_communication);
  put(j, "encode_s", r.encode);
  put(j, "decode_s", r.decode);
  put(j, "optimizer_s", r.optimizer);
  put(j, "samples_per_s", r.samples_per_second);
  put(j, "wire_per_gpu_bytes", r.wire_bytes_per_gpu);
  if (r.measured_collectives) j["measured_collectives"] = *r.measured_collectives;
  if (const auto& t = r.training)
    j["training"] = ojson{
        {"samples", t->samples}, {"convergence_factor", t->convergence_factor}, {"iterations", t->iterations},
        {"hours", t->hours}};
  if (r.training && r.training->critical_batch) j["training"]["critical_batch"] = *r.training->critical_batch;
  if (const auto& c = r.cost)
    j["cost"] = ojson{{"on_demand_usd", c->on_demand},
                      {"spot_usd", c->spot ? ojson(*c->spot) : ojson(nullptr)},
                      {"billed_s", c->billed_seconds},
                      {"usd_per_hour", c->usd_per_hour}};
  if (const auto& b = r.band) {
    ojson band{{"iteration_low_s", b->iteration_low},
               {"iteration_high_s", b->iteration_high},
               {"straggler_wait_s", b->straggler_wait}};
    put(band, "low_hours", b->hours_low);
    put(band, "high_hours", b->hours_high);
    put(band, "on_demand_low_usd", b->on_demand_low);
    put(band, "on_demand_high_usd", b->on_demand_high);
    j["band"] = band;
  }
}

// --- Reading -------------------------------------------------------------------

const std::set<std::string> kStatuses{"ok", "error", "invalid", "no_fit"};

/// Every number below `j` must be finite and not negative (no field of a
/// record is negative: times, costs, sizes, counts).
void check_numbers(const nlohmann::json& j, const std::string& at, const std::string& file, int line) {
  if (j.is_number()) {
    const double v = j.get<double>();
    if (!std::isfinite(v)) throw InputError(file, line, 1, at, "not a finite number");
    if (v < 0) throw InputError(file, line, 1, at, "negative (" + j.dump() + ")");
  } else if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      check_numbers(it.value(), at.empty() ? it.key() : at + "." + it.key(), file, line);
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) check_numbers(j[i], at + "[" + std::to_string(i) + "]", file, line);
  }
}

/// The checks of one record, first failure thrown as InputError(file, line).
class RecordChecker {
 public:
  RecordChecker(const nlohmann::json& j, const std::string& file, int line) : j_(j), file_(file), line_(line) {}

  void check() const {
    if (!j_.is_object()) fail("", "not a sweep results record (expected a JSON object)");
    check_numbers(j_, "", file_, line_);
    const std::string status =
        j_.contains("status") && j_["status"].is_string() ? j_["status"].get<std::string>() : "";
    schema();
    identity(status);
    point(status == "ok");
  }

 private:
  [[noreturn]] void fail(const std::string& key, const std::string& why) const {
    throw InputError(file_, line_, 1, key, why);
  }

  const nlohmann::json* field(const char* key, bool required) const {
    if (!j_.contains(key)) {
      static const std::set<std::string> always{"index", "of", "sweep", "key", "status", "reason"};
      if (required) fail(key, std::string("missing") + (always.count(key) ? "" : " (a record of status ok needs it)"));
      return nullptr;
    }
    return &j_[key];
  }

  void count(const char* key, bool required, unsigned long long max) const {
    const auto* v = field(key, required);
    if (v == nullptr) return;
    if (!v->is_number_unsigned()) fail(key, "expected a whole number, got " + std::string(v->type_name()));
    if (v->get<unsigned long long>() > max) fail(key, v->dump() + " is out of range [0, " + std::to_string(max) + "]");
  }

  void string(const char* key, bool required, bool nullable = false) const {
    const auto* v = field(key, required);
    if (v == nullptr || v->is_string() || (nullable && v->is_null())) return;
    fail(key, std::string("expected a string") + (nullable ? " or null" : "") + ", got " + v->type_name());
  }

  void number(const nlohmann::json& parent, const std::string& at, const char* key, bool required,
              bool nullable = false) const {
    if (!parent.contains(key)) {
      if (required) fail(at + key, "missing");
      return;
    }
    const auto& v = parent[key];
    if (v.is_number() || (nullable && v.is_null())) return;
    fail(at + key, std::string("expected a number") + (nullable ? " or null" : "") + ", got " + v.type_name());
  }

  const nlohmann::json* object(const char* key, bool required) const {
    const auto* v = field(key, required);
    if (v != nullptr && !v->is_object()) fail(key, std::string("expected an object, got ") + v->type_name());
    return v;
  }

  /// A record written before records had a schema field has none: read as
  /// gradwire-result/1.
  void schema() const {
    string("schema", false);
    if (schema_version(j_) == 0)
      fail("schema", "unsupported record schema " + j_["schema"].dump() + "; this gradwire reads " +
                         kResultSchema + " and " + kResultSchemaV1);
  }

  /// index, of, sweep, key, status and reason.
  void identity(const std::string& status) const {
    count("index", true, kMaxSweepPoints - 1);
    count("of", true, kMaxSweepPoints);
    if (j_["of"].get<unsigned long long>() == 0) fail("of", "a sweep has at least one point");
    if (j_["index"].get<unsigned long long>() >= j_["of"].get<unsigned long long>())
      fail("index", j_["index"].dump() + " is not below of (" + j_["of"].dump() + ")");
    string("sweep", true);
    string("key", true);
    string("status", true);
    if (!kStatuses.count(status)) fail("status", "\"" + status + "\" is not ok, error, invalid or no_fit");
    string("reason", status == "error");
  }

  /// The point's fields: those an ok record needs, and the types of the rest.
  void point(bool ok) const {
    for (const char* k : {"model", "compression", "compression_kind", "cluster_key"}) string(k, ok);
    for (const char* k : {"gpu", "evaluator", "batch_split"}) string(k, false);
    string("instance", ok, true);
    for (const char* k : {"nodes", "gpus_per_node", "world", "micro_batch", "accumulation"})
      count(k, ok, static_cast<unsigned long long>(INT_MAX));
    for (const char* k : {"node_bandwidth_bytes_per_s", "iteration_s", "forward_s", "backward_s",
                          "exposed_communication_s", "optimizer_s"})
      number(j_, "", k, ok);
    for (const char* k : {"encode_s", "decode_s", "samples_per_s", "wire_per_gpu_bytes", "global_batch"})
      number(j_, "", k, false);
    if (const auto* m = field("measured_collectives", false)) {
      if (!m->is_array() || m->empty()) fail("measured_collectives", "expected a list of one string or more");
      for (const auto& e : *m)
        if (!e.is_string()) fail("measured_collectives", "expected a list of strings");
    }
    for (const char* k : {"params", "inputs"}) {
      if (const auto* o = object(k, false)) {
        for (auto it = o->begin(); it != o->end(); ++it)
          if (!it.value().is_string()) fail(std::string(k) + "." + it.key(), "expected a string");
      }
    }
    if (const auto* m = object("memory", false)) number(*m, "memory.", "total_bytes", true);
    if (const auto* t = object("training", false)) number(*t, "training.", "hours", true);
    if (const auto* b = object("band", false)) {
      for (const char* k : {"iteration_low_s", "iteration_high_s", "straggler_wait_s"}) number(*b, "band.", k, true);
      for (const char* k : {"low_hours", "high_hours", "on_demand_low_usd", "on_demand_high_usd"})
        number(*b, "band.", k, false);
    }
    if (const auto* c = object("cost", false)) {
      number(*c, "cost.", "on_demand_usd", true);
      number(*c, "cost.", "spot_usd", true, true);
    }
    names();
  }

  /// The names plan and report print (an instance "x\nrecommendation: FAKE"
  /// forged a line of plan's output, issue 29, item 7): one line, no control
  /// characters, as the loaders of the files they come from require.
  void names() const {
    auto one_line = [&](const std::string& at, const nlohmann::json& v) {
      if (!v.is_string()) return;
      const std::string& s = v.get_ref<const std::string&>();
      for (std::size_t i = 0; i < s.size();) {
        const TextUnit u = text_unit_at(s, i);
        if (u.control) fail(at, "a name is one line without control characters (byte " + std::to_string(i) + ")");
        i += u.length;
      }
    };
    for (const char* k : {"sweep", "key", "instance", "gpu", "model", "compression", "compression_kind",
                          "cluster_key", "evaluator", "batch_split"})
      if (j_.contains(k)) one_line(k, j_[k]);
    for (const char* k : {"params", "inputs"}) {
      if (!j_.contains(k) || !j_[k].is_object()) continue;
      for (auto it = j_[k].begin(); it != j_[k].end(); ++it) {
        one_line(k, it.key());
        one_line(std::string(k) + "." + it.key(), it.value());
      }
    }
  }

  const nlohmann::json& j_;
  const std::string& file_;
  int line_;
};

// Readers of a checked record: a field the checks leave untyped (memory.capacity,
// training.samples, ...) reads as absent (0) when it is not of its type.

template <class T>
std::optional<T> opt(const ojson& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end()) return std::nullopt;
  if constexpr (std::is_same_v<T, std::string>) {
    if (!it->is_string()) return std::nullopt;
  } else {
    if (!it->is_number()) return std::nullopt;
  }
  return it->get<T>();
}

double figure(const ojson& j, const char* key) { return opt<double>(j, key).value_or(0.0); }

StringPairs pairs_of(const ojson& j) {
  StringPairs out;
  // A non-string value (the checks leave `inputs` untyped) keeps its JSON text.
  for (auto it = j.begin(); it != j.end(); ++it)
    out.emplace_back(it.key(), it->is_string() ? it->get<std::string>() : it->dump());
  return out;
}

void read_cluster(const ojson& j, ResultRecord& r) {
  if (j.contains("instance"))
    r.instance = j["instance"].is_string() ? std::optional<std::string>(j["instance"].get<std::string>())
                                           : std::optional<std::string>();
  r.nodes = opt<int>(j, "nodes");
  r.gpus_per_node = opt<int>(j, "gpus_per_node");
  r.world = opt<int>(j, "world");
  r.gpu = opt<std::string>(j, "gpu");
  r.node_bandwidth = opt<double>(j, "node_bandwidth_bytes_per_s");
  r.cluster_key = opt<std::string>(j, "cluster_key");
  r.model = opt<std::string>(j, "model");
  r.compression = opt<std::string>(j, "compression");
  r.compression_kind = opt<std::string>(j, "compression_kind");
  r.evaluator = opt<std::string>(j, "evaluator");
}

void read_objects(const ojson& j, ResultRecord& r) {
  if (j.contains("memory")) {
    const auto& m = j["memory"];
    MemoryBreakdown mem;
    for (const auto& [name, member] : kRecordMemory) mem.*member = figure(m, name);
    r.memory = mem;
  }
  if (j.contains("training")) {
    const auto& t = j["training"];
    r.training = TrainingFigures{figure(t, "samples"), figure(t, "convergence_factor"), figure(t, "iterations"),
                                 figure(t, "hours"), opt<double>(t, "critical_batch")};
  }
  if (j.contains("cost")) {
    const auto& c = j["cost"];
    r.cost = CostFigures{figure(c, "on_demand_usd"), opt<double>(c, "spot_usd"), figure(c, "billed_s"),
                         figure(c, "usd_per_hour")};
  }
  if (j.contains("band")) {
    const auto& b = j["band"];
    r.band = BandFigures{figure(b, "iteration_low_s"), figure(b, "iteration_high_s"), figure(b, "straggler_wait_s"),
                         opt<double>(b, "low_hours"), opt<double>(b, "high_hours"),
                         opt<double>(b, "on_demand_low_usd"), opt<double>(b, "on_demand_high_usd")};
  }
}

void read_figures(const ojson& j, ResultRecord& r) {
  r.micro_batch = opt<int>(j, "micro_batch");
  r.accumulation = opt<int>(j, "accumulation");
  r.global_batch = opt<double>(j, "global_batch");
  r.batch_split = opt<std::string>(j, "batch_split");
  r.iteration = opt<double>(j, "iteration_s");
  r.forward = opt<double>(j, "forward_s");
  r.backward = opt<double>(j, "backward_s");
  r.exposed_communication = opt<double>(j, "exposed_communication_s");
  r.encode = opt<double>(j, "encode_s");
  r.decode = opt<double>(j, "decode_s");
  r.optimizer = opt<double>(j, "optimizer_s");
  r.samples_per_second = opt<double>(j, "samples_per_s");
  r.wire_bytes_per_gpu = opt<double>(j, "wire_per_gpu_bytes");
  if (j.contains("measured_collectives")) r.measured_collectives = j["measured_collectives"].get<std::vector<std::string>>();
  read_objects(j, r);
}

/// The library's parse error without its "[json.exception...] " prefix.
[[noreturn]] void rethrow_parse_error(const std::exception& e, const std::string& file, int line) {
  std::string why = e.what();
  if (const auto p = why.find("] "); p != std::string::npos && why.rfind("[json.exception", 0) == 0)
    why = why.substr(p + 2);
  throw InputError(file, line, 1, "", "not a sweep results record (not one JSON object): " + why);
}

}  // namespace

std::string to_json(const ResultRecord& r, int version) {
  if (version != 1 && version != 2) throw std::invalid_argument("no gradwire-result/" + std::to_string(version));
  ojson j{{"schema", kResultSchema}, {"index", r.index}, {"of", r.of}, {"sweep", r.sweep}, {"key", r.key}};
  if (!r.inputs.empty()) j["inputs"] = pairs_json(r.inputs);
  if (r.params) j["params"] = pairs_json(*r.params);
  j["status"] = r.status;
  put_cluster(j, r);
  put_figures(j, r);
  put(j, "reason", r.reason);
  if (version == 1) {
    j = renamed_record(j, false);
    j["schema"] = kResultSchemaV1;
  }
  // Never throws on bad UTF-8 (a scenario's string, a file name in a reason).
  return j.dump(-1, ' ', false, ojson::error_handler_t::replace);
}

ResultRecord from_json(const std::string& text, const std::string& file, int line, int* version) {
  nlohmann::json checked;
  try {
    checked = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    rethrow_parse_error(e, file, line);
  }
  const int v = schema_version(checked);
  if (version != nullptr) *version = v;
  if (v == 1) checked = renamed_record(checked, true);
  try {
    RecordChecker(checked, file, line).check();
  } catch (const InputError& e) {
    if (v != 1) throw;
    throw InputError(file, line, 1, v1_field(e.key()), e.reason());  // the field as the file names it
  }
  ojson j = ojson::parse(text);  // in the file's key order (params, inputs)
  if (v == 1) j = renamed_record(j, true);
  ResultRecord r;
  r.index = j["index"].get<std::size_t>();
  r.of = j["of"].get<std::size_t>();
  r.sweep = j["sweep"].get<std::string>();
  r.key = j["key"].get<std::string>();
  if (j.contains("inputs") && j["inputs"].is_object()) r.inputs = pairs_of(j["inputs"]);
  if (j.contains("params")) r.params = pairs_of(j["params"]);
  r.status = j["status"].get<std::string>();
  read_cluster(j, r);
  read_figures(j, r);
  r.reason = opt<std::string>(j, "reason");
  return r;
}

ResultLine parse_result_line(std::string text, const std::string& file, int line) {
  ResultLine r;
  r.record = from_json(text, file, line, &r.version);
  r.text = std::move(text);
  r.file = file;
  r.line = line;
  return r;
}

std::vector<ResultLine> read_results(const std::string& path, bool* partial) {
  if (partial) *partial = false;
  std::vector<ResultLine> out;
  const std::string text = read_input_file(path, kMaxResultsBytes);  // regular file, capped, FIFO-safe
  std::size_t pos = 0;
  int lineno = 0;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    ++lineno;
    if (nl == std::string::npos) {
      if (partial) *partial = true;  // an append cut short: ignored
      break;
    }
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();  // CRLF: the record without its CR
    if (line.empty()) continue;
    out.push_back(parse_result_line(std::move(line), path, lineno));
  }
  return out;
}

namespace {

std::string schema_name(int version) { return version == 1 ? kResultSchemaV1 : kResultSchema; }

/// `l` is of `first`'s version, or an InputError at `l` says what to do.
void check_same_version(const ResultLine& first, const ResultLine& l) {
  if (l.version == first.version) return;
  throw InputError(l.file, l.line, 1, "schema",
                   "a " + schema_name(l.version) + " record, while " + first.file + ":" +
                       std::to_string(first.line) + " holds " + schema_name(first.version) +
                       " ones; records of one results file or merge share one version: sweep the " +
                       schema_name(1) + " shards again into new files with this gradwire (it writes " +
                       schema_name(2) + "), then merge those");
}

}  // namespace

int records_version(const std::vector<ResultLine>& lines) {
  for (const auto& l : lines) check_same_version(lines.front(), l);
  return lines.empty() ? kResultVersion : lines.front().version;
}

bool same_record(const ResultLine& a, const ResultLine& b) {
  // The one difference two builds may write for one point: the schema
  // field, which records written before it lack.
  const std::string lead = std::string("{\"schema\":\"") + kResultSchemaV1 + "\",";
  auto body = [&lead](const std::string& t) { return t.rfind(lead, 0) == 0 ? t.substr(lead.size()) : t.substr(1); };
  return a.text == b.text || body(a.text) == body(b.text);
}

std::string canonical_results(std::vector<ResultLine> lines) {
  std::stable_sort(lines.begin(), lines.end(),
                   [](const ResultLine& a, const ResultLine& b) { return a.record.index < b.record.index; });
  std::string out;
  for (const auto& l : lines) out += l.text + "\n";
  return out;
}

// --- One record per point ----------------------------------------------------------

bool PointRecords::add(const ResultLine& l, const std::string& shown) {
  const ResultRecord& r = l.record;
  const std::string& file = shown.empty() ? l.file : shown;
  if (!first_) {
    first_ = l;
    sweep_ = r.sweep;
    of_ = r.of;
  }
  check_same_version(*first_, l);
  const std::string first_at = first_->file + ":" + std::to_string(first_->line);
  if (r.sweep != sweep_)
    throw InputError(file, l.line, 1, "sweep",
                     "a record of another sweep (" + r.sweep + ") than the one at " + first_at + " (" + sweep_ +
                         "); a results file or a merge holds one sweep");
  if (r.of != of_)
    throw InputError(file, l.line, 1, "of",
                     "a sweep of " + std::to_string(r.of) + " points, the record at " + first_at + " has " +
                         std::to_string(of_));
  const auto [it, inserted] = by_index_.emplace(r.index, l);
  if (inserted) return true;
  if (!same_record(it->second, l))
    throw InputError(file, l.line, 1, "index",
                     "point " + std::to_string(r.index) + " differs from its record at " + it->second.file + ":" +
                         std::to_string(it->second.line) + "; a point has one record: remove one of them");
  ++duplicates_;
  return false;
}

std::vector<ResultLine> PointRecords::take() {
  std::vector<ResultLine> out;
  out.reserve(by_index_.size());
  for (auto& [i, l] : by_index_) out.push_back(std::move(l));
  by_index_.clear();
  return out;
}

std::vector<ResultLine> read_distinct_results(const std::string& path, std::size_t* duplicates) {
  PointRecords records;
  for (const auto& l : read_results(path)) records.add(l);
  if (duplicates != nullptr) *duplicates = records.duplicates();
  return records.take();
}

std::string duplicates_note(const std::string& file, std::size_t n) {
  if (n == 0) return {};
  return file + ": " + std::to_string(n) + (n == 1 ? " record repeats" : " records repeat") +
         " an earlier record of its point (the same figures, e.g. a file appended twice); each point is counted once";
}

// --- Merging -----------------------------------------------------------------------

namespace {

/// Never replace a file that is not a results file of the same sweep, nor
/// one holding a record the merge would lose.
void check_merge_target(const std::string& target, const std::string& out, const PointRecords& m) {
  struct stat st {};
  if (::stat(target.c_str(), &st) != 0 || st.st_size == 0) return;
  std::vector<ResultLine> existing;
  try {
    existing = read_results(target);
  } catch (const InputError& e) {
    throw InputError(out, 0, 0, "",
                     "exists and is not a sweep results file (" + e.reason() +
                         "); refusing to overwrite it: give the merged file a new name (gradwire merge OUT SHARD...)");
  }
  for (const auto& l : existing) {
    if (!m.sweep().empty() && l.record.sweep != m.sweep())
      throw InputError(out, l.line, 1, "sweep",
                       "exists and holds results of another sweep (" + l.record.sweep + ", the shards' are " +
                           m.sweep() + "); refusing to overwrite it: give the merged file a new name");
    // A record the merge would lose: OUT is most likely a shard given as
    // OUT by mistake (`gradwire merge shard0 shard1`).
    const auto it = m.by_index().find(l.record.index);
    if (it == m.by_index().end() || !same_record(it->second, l))
      throw InputError(out, l.line, 1, "index",
                       "exists and holds point " + std::to_string(l.record.index) +
                           (it == m.by_index().end() ? ", which no shard has" : " with other figures than the shards") +
                           "; refusing to overwrite it (is it a shard? gradwire merge OUT SHARD... writes OUT): give "
                           "the merged file a new name");
  }
}

}  // namespace

MergeSummary merge_results(const std::string& out, const std::vector<std::string>& shards) {
  // OUT is checked (not a shard, not a device, ...) and locked before anything is read.
  const std::string target = checked_output_path(out, shards);
  ResultsLock lock(target, out);
  PointRecords m;
  for (const auto& path : shards)
    for (const auto& l : read_results(path)) m.add(l);  // a final line cut short is ignored
  check_merge_target(target, out, m);
  MergeSummary sum{m.by_index().size(), m.of(), m.duplicates()};
  write_file_atomic(target, canonical_results(m.take()), shards);
  return sum;
}

// --- The lock ------------------------------------------------------------------------

ResultsLock::ResultsLock(const std::string& out, const std::string& shown) : path_(out + ".lock") {
  for (int attempt = 0; attempt < 100; ++attempt)
    if (try_lock(shown)) return;
  throw InputError(shown, 0, 0, "", "cannot take the lock " + path_ + " (it keeps being replaced)");
}

namespace {

/// The PID a lock file holds ("" when it holds none).
std::string lock_holder(int fd) {
  std::string holder;
  char buf[64] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  if (n > 0) {
    holder.assign(buf, static_cast<std::size_t>(n));
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    if (holder.find_first_not_of("0123456789") != std::string::npos) holder.clear();
  }
  return holder;
}

}  // namespace

bool ResultsLock::try_lock(const std::string& shown) {
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd_ < 0) throw InputError(shown, 0, 0, "", "cannot create the lock file " + path_ + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw InputError(shown, 0, 0, "", "the lock file " + path_ + " is not a regular file");
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const std::string holder = lock_holder(fd_);
    ::close(fd_);
    fd_ = -1;
    if (err == EINTR) return false;
    if (err != EWOULDBLOCK) throw InputError(shown, 0, 0, "", "cannot lock " + path_ + ": " + std::strerror(err));
    throw InputError(shown, 0, 0, "",
                     "is being written by another gradwire process (" +
                         (holder.empty() ? std::string("PID unknown") : "PID " + holder) + ", lock " + path_ +
                         "); wait for it to finish or use another output file");
  }
  struct stat now {};
  if (::stat(path_.c_str(), &now) == 0 && now.st_dev == st.st_dev && now.st_ino == st.st_ino) {
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
      // The lock holds without the PID; only the message of a second run suffers.
    }
    return true;
  }
  ::close(fd_);  // locked a lock file its holder had just removed: again
  fd_ = -1;
  return false;
}

ResultsLock::~ResultsLock() {
  if (fd_ >= 0) {
    ::unlink(path_.c_str());
    ::close(fd_);
  }
}

}  // namespace gw::plan
