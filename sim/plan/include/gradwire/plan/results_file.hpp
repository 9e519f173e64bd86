// The results file of a sweep (docs/planning.md, "Results files"): JSON
// lines, one ResultRecord per line. The one place where records meet JSON
// (to_json / from_json), the checks a record read back must pass, the
// canonical order, the merge of shards and the lock that keeps two writers
// apart. Plain C++ (POSIX flock).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gradwire/plan/result_record.hpp"

namespace gw::plan {

/// Sweeps larger than this are refused.
inline constexpr std::size_t kMaxSweepPoints = 1'000'000;

/// The version of the sweep record this gradwire writes (kResultSchema).
inline constexpr int kResultVersion = 2;

/// The record as one line of JSON (no newline): "schema" (kResultSchema, or
/// kResultSchemaV1 for `version` 1: the fields under their /1 names, for a
/// sweep resuming a /1 file) first, then the fields in ResultRecord's order,
/// numbers as nlohmann::json writes them (a whole count as an integer, every
/// other figure as a double); bytes that are not UTF-8 become U+FFFD.
/// Never throws for bad UTF-8.
std::string to_json(const ResultRecord& record, int version = kResultVersion);

/// Parses and checks one line (throws InputError at `file`:`line` naming the
/// key: not one JSON object, wrong type, non-finite or negative number,
/// unknown status, index >= of, a field an ok record needs missing, ...).
/// Fields the record does not type are ignored; a record without "schema"
/// (written before it) reads as gradwire-result/1, as does one of that
/// schema (its fields renamed, docs/outputs.md); gradwire-result/2 reads as
/// written; another schema is refused. An error names the field as the line
/// does. `version` (when given) is set to the record's version (1 or 2).
/// For every record this program writes, to_json(from_json(line, .., &v), v) == line.
ResultRecord from_json(const std::string& line, const std::string& file = "record", int line_no = 1,
                       int* version = nullptr);

struct ResultLine {
  ResultRecord record;
  std::string text;  ///< the JSON object as written (without a trailing CR): copied verbatim by merge and resume
  std::string file;  ///< where it was read
  int line = 0;      ///< its line there
  int version = kResultVersion;  ///< its schema's version: 1 (gradwire-result/1 or none) or 2
};
/// The version of the records of `lines` (kResultVersion when there are
/// none); throws InputError at the first line of another version than the
/// first line's (a file or a merge holds records of one version).
int records_version(const std::vector<ResultLine>& lines);
/// Reads a results file (a regular file of at most kMaxResultsBytes); a final
/// line without its newline (a crash during the append) is ignored; any other
/// malformed or invalid record is an InputError at FILE:LINE naming the key
/// (from_json). `partial` (when given) is set when such a final line was dropped.
std::vector<ResultLine> read_results(const std::string& path, bool* partial = nullptr);
/// Parses and checks one record as read_results does (from_json).
ResultLine parse_result_line(std::string text, const std::string& file, int line);
/// Whether two lines are the same record: the same text, or the same but for
/// the "schema" field a record written before schemas lacks (docs/outputs.md).
bool same_record(const ResultLine& a, const ResultLine& b);
/// One point, one record: the rule every reader of results follows (merge,
/// resume, plan, report; docs/planning.md, "Results files"). Records are
/// added in the order read; a record the same as the point's first one
/// (same_record: a file appended twice, two shards that both ran a point) is
/// a duplicate, kept once and counted; a different record of a point already
/// seen, a record of another sweep or of a sweep of another size, and one of
/// another schema version than the first are refused (InputError at the
/// record's FILE:LINE naming the other record's FILE:LINE).
class PointRecords {
 public:
  /// Adds `l`; false when it is a duplicate (dropped). The `l.file` of an
  /// error is the path as read; `shown` (when not empty) replaces it.
  bool add(const ResultLine& l, const std::string& shown = "");
  /// The distinct records, by index.
  const std::map<std::size_t, ResultLine>& by_index() const { return by_index_; }
  /// The distinct records in index order (the object is left empty).
  std::vector<ResultLine> take();
  std::size_t duplicates() const { return duplicates_; }
  const std::string& sweep() const { return sweep_; }
  std::size_t of() const { return of_; }

 private:
  std::map<std::size_t, ResultLine> by_index_;
  std::optional<ResultLine> first_;
  std::string sweep_;
  std::size_t of_ = 0;
  std::size_t duplicates_ = 0;
};
/// read_results through PointRecords: the distinct records of a results file
/// in index order; `duplicates` (when given) is set to the number dropped.
std::vector<ResultLine> read_distinct_results(const std::string& path, std::size_t* duplicates = nullptr);
/// The note a reader prints for `n` duplicates dropped from `file` ("" when
/// none): "FILE: 6 records repeat an earlier record of its point (...)".
std::string duplicates_note(const std::string& file, std::size_t n);
/// The canonical text: records sorted by index (stable), one per line.
std::string canonical_results(std::vector<ResultLine> lines);
/// Merges shard files into `out` (atomically, under the results file's lock).
/// Throws InputError for records of different sweeps or conflicting records
/// of one point, for an `out` that is one of the shards, and for an existing
/// `out` that is not a results file of the same sweep (PointRecords' rule).
struct MergeSummary {
  std::size_t points = 0;      ///< distinct points written
  std::size_t of = 0;          ///< the sweep's size
  std::size_t duplicates = 0;  ///< records dropped as duplicates
};
MergeSummary merge_results(const std::string& out, const std::vector<std::string>& shards);

/// OUT.lock beside the results file (the file itself is replaced by rename at
/// the end, so its inode cannot carry the lock): flock(LOCK_EX) held for the
/// object's life, the holder's PID written in it; removed (unlinked while
/// still locked) by the destructor. A process that locked a file just
/// unlinked by its holder notices (the path no longer names its inode) and
/// tries again. Throws InputError naming `shown` (the path as the user gave
/// it) when another process holds it.
class ResultsLock {
 public:
  ResultsLock(const std::string& out, const std::string& shown);
  ResultsLock(const ResultsLock&) = delete;
  ResultsLock& operator=(const ResultsLock&) = delete;
  ~ResultsLock();
  int fd() const { return fd_; }

 private:
  bool try_lock(const std::string& shown);
  std::string path_;
  int fd_ = -1;
};

}  // namespace gw::plan
