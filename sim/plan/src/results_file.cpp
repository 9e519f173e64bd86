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
#include "gradwire/plan/result_fields.hpp"
#include "result_access.hpp"

namespace gw::plan {
namespace {

// --- gradwire-result/1 ------------------------------------------------------------

/// The rows of object `scope` ("" for the record itself), nullptr for a
/// field that is not an object of the table.
const std::vector<RecordField>* rows_of(const std::string& scope) {
  if (scope.empty()) return &result_fields();
  for (const auto& row : result_fields())
    if (row.type == FieldType::Object && (scope == row.name || scope == row.v1_name)) return &row.fields;
  return nullptr;
}

/// `name` in object `scope` renamed from /1 to /2 (`to_v2`) or back: the
/// fields gradwire-result/2 renamed to carry their unit (docs/outputs.md,
/// "Units"; the table's v1_name). A name the table does not hold is kept.
std::string renamed(const std::string& scope, const std::string& name, bool to_v2) {
  if (const auto* rows = rows_of(scope)) {
    for (const auto& row : *rows)
      if (name == (to_v2 ? row.v1_name : row.name)) return to_v2 ? row.name : row.v1_name;
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
    const auto* rows = rows_of(it.key());
    if (value.is_object() && rows != nullptr && rows != &result_fields()) {
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

// --- Checking ------------------------------------------------------------------

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

/// The checks of one record, first failure thrown as InputError(file, line):
/// the schema, every row of the field table (result_fields.hpp) in its
/// order, the rules between fields, then the names.
class RecordChecker {
 public:
  RecordChecker(const nlohmann::json& j, const std::string& file, int line) : j_(j), file_(file), line_(line) {}

  void check() const {
    if (!j_.is_object()) fail("", "not a sweep results record (expected a JSON object)");
    check_numbers(j_, "", file_, line_);
    const std::string status = j_.contains("status") && j_["status"].is_string() ? j_["status"].get<std::string>() : "";
    schema();
    fields(j_, "", result_fields(), status);
    rules(status);
    names();
  }

 private:
  [[noreturn]] void fail(const std::string& key, const std::string& why) const {
    throw InputError(file_, line_, 1, key, why);
  }

  /// A record written before records had a schema field has none: read as
  /// gradwire-result/1.
  void schema() const {
    if (j_.contains("schema") && !j_["schema"].is_string())
      fail("schema", std::string("expected a string, got ") + j_["schema"].type_name());
    if (schema_version(j_) == 0)
      fail("schema", "unsupported record schema " + j_["schema"].dump() + "; this gradwire reads " + kResultSchema +
                         " and " + kResultSchemaV1);
  }

  void fields(const nlohmann::json& obj, const std::string& at, const std::vector<RecordField>& rows,
              const std::string& status) const {
    for (const auto& row : rows) {
      const std::string key = at + row.name;
      if (!obj.contains(row.name)) {
        const bool needed = row.need == FieldNeed::Always || (row.need == FieldNeed::IfOk && status == "ok") ||
                            (row.need == FieldNeed::IfError && status == "error");
        // (A figure says "missing" alone: the message records have always given.)
        if (needed)
          fail(key, std::string("missing") + (row.need == FieldNeed::IfOk && row.type != FieldType::Number
                                                  ? " (a record of status ok needs it)"
                                                  : ""));
        continue;
      }
      if (row.need != FieldNeed::Lenient) value(obj[row.name], key, row, status);
    }
  }

  void value(const nlohmann::json& v, const std::string& key, const RecordField& row, const std::string& status) const {
    const std::string or_null = row.nullable ? " or null" : "";
    if (row.nullable && v.is_null()) return;
    switch (row.type) {
      case FieldType::Count:
        if (!v.is_number_unsigned()) fail(key, "expected a whole number, got " + std::string(v.type_name()));
        if (v.get<unsigned long long>() > row.max)
          fail(key, v.dump() + " is out of range [0, " + std::to_string(row.max) + "]");
        return;
      case FieldType::Number:
        if (!v.is_number()) fail(key, "expected a number" + or_null + ", got " + v.type_name());
        return;
      case FieldType::String:
        if (!v.is_string()) fail(key, "expected a string" + or_null + ", got " + v.type_name());
        return;
      case FieldType::StringList:
        if (!v.is_array() || v.empty()) fail(key, "expected a list of one string or more");
        for (const auto& e : v)
          if (!e.is_string()) fail(key, "expected a list of strings");
        return;
      case FieldType::StringMap:
      case FieldType::Object:
        if (!v.is_object()) fail(key, std::string("expected an object, got ") + v.type_name());
        if (row.type == FieldType::Object) return fields(v, key + ".", row.fields, status);
        for (auto it = v.begin(); it != v.end(); ++it)
          if (!it.value().is_string()) fail(key + "." + it.key(), "expected a string");
        return;
    }
  }

  /// What the rows cannot say alone: a sweep has a point, the index is below
  /// it, a status is one of four.
  void rules(const std::string& status) const {
    if (j_["of"].get<unsigned long long>() == 0) fail("of", "a sweep has at least one point");
    if (j_["index"].get<unsigned long long>() >= j_["of"].get<unsigned long long>())
      fail("index", j_["index"].dump() + " is not below of (" + j_["of"].dump() + ")");
    if (!kStatuses.count(status)) fail("status", "\"" + status + "\" is not ok, error, invalid or no_fit");
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
    for (const auto& row : result_fields()) {
      if (!row.one_line || !j_.contains(row.name)) continue;
      const auto& v = j_[row.name];
      if (row.type == FieldType::String) one_line(row.name, v);
      if (row.type != FieldType::StringMap || !v.is_object()) continue;
      for (auto it = v.begin(); it != v.end(); ++it) {
        one_line(row.name, it.key());
        one_line(std::string(row.name) + "." + it.key(), it.value());
      }
    }
  }

  const nlohmann::json& j_;
  const std::string& file_;
  int line_;
};

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
  ojson j{{"schema", kResultSchema}};
  put_fields(j, result_fields(), &r);
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
  read_fields(j, result_fields(), &r);
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
                   "a " + schema_name(l.version) + " record, while " + first.file + ":" + std::to_string(first.line) +
                       " holds " + schema_name(first.version) +
                       " ones; records of one results file or merge share one version: sweep the " + schema_name(1) +
                       " shards again into new files with this gradwire (it writes " + schema_name(2) +
                       "), then merge those");
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
    throw InputError(
        file, l.line, 1, "of",
        "a sweep of " + std::to_string(r.of) + " points, the record at " + first_at + " has " + std::to_string(of_));
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
