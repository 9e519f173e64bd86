// nccl-tests output read and written (gradwire/model/nccl_tests_log.hpp).
#include "gradwire/model/nccl_tests_log.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

#include "gradwire/core/atomic_file.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/core/units.hpp"

namespace gw::nccl_tests {
namespace {

struct Token {
  std::string_view text;
  int column = 0;  ///< 1-based
};

std::vector<Token> split(std::string_view line) {
  std::vector<Token> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) out.push_back({line.substr(start, i - start), static_cast<int>(start) + 1});
  }
  return out;
}

class Reader {
 public:
  Reader(std::string file, int line) : file_(std::move(file)), line_(line) {}
  [[noreturn]] void fail(int column, const std::string& why) const { throw InputError(file_, line_, column, "", why); }
  double number(const Token& t, const char* what) const {
    const auto v = units::parse_number(t.text);
    if (!v || *v < 0) fail(t.column, std::string(what) + " '" + std::string(t.text) + "' is not a number >= 0");
    return *v;
  }
  long long integer(const Token& t, const char* what, long long min) const {
    const auto v = units::parse_integer(t.text);
    if (!v || *v < min)
      fail(t.column,
           std::string(what) + " '" + std::string(t.text) + "' is not a whole number >= " + std::to_string(min));
    return *v;
  }

 private:
  std::string file_;
  int line_;
};

// The four columns of a group: time (us), algbw, busbw (GB/s), #wrong/error.
Result read_group(const Reader& r, const std::vector<Token>& t, std::size_t at) {
  Result g;
  g.time = r.number(t[at], "time") * 1e-6;
  g.algbw = r.number(t[at + 1], "algbw") * 1e9;
  g.busbw = r.number(t[at + 2], "busbw") * 1e9;
  const std::string_view w = t[at + 3].text;
  if (w != "N/A" && !units::parse_number(w)) r.fail(t[at + 3].column, "#wrong '" + std::string(w) + "' is not a count");
  g.wrong = std::string(w);
  return g;
}

bool is_integer(std::string_view s) { return units::parse_integer(s).has_value(); }

// size count type [redop] [root] + two groups of four.
Row read_row(const Reader& r, const std::vector<Token>& t) {
  if (t.size() < 11 || t.size() > 13)
    r.fail(t.front().column,
           "a result row has 11 to 13 columns (size count type [redop] [root], then time algbw "
           "busbw #wrong out-of-place and in-place), not " +
               std::to_string(t.size()));
  Row row;
  row.bytes = static_cast<double>(r.integer(t[0], "size", 0));
  row.count = static_cast<double>(r.integer(t[1], "count", 0));
  if (is_integer(t[2].text)) r.fail(t[2].column, "the type column holds '" + std::string(t[2].text) + "'");
  row.type = std::string(t[2].text);
  const std::size_t params = t.size() - 8;
  for (std::size_t i = 3; i < params; ++i) {
    if (is_integer(t[i].text))
      row.root = static_cast<int>(r.integer(t[i], "root", -1));
    else if (i == 3)
      row.redop = std::string(t[i].text);
    else
      r.fail(t[i].column, "root '" + std::string(t[i].text) + "' is not a rank");
  }
  row.out_of_place = read_group(r, t, params);
  row.in_place = read_group(r, t, params + 4);
  return row;
}

// "#  Rank  0 Group  0 Pid  28307 on      gpu59 device  0 [0x16] NVIDIA ..."
RankLine read_rank(const Reader& r, const std::vector<Token>& t) {
  RankLine out;
  out.rank = static_cast<int>(r.integer(t.at(2), "rank", 0));
  std::size_t i = 3;
  while (i + 1 < t.size() && t[i].text != "on") ++i;
  std::size_t d = i + 2;
  if (d + 2 >= t.size() || t[d].text != "device")
    r.fail(t[1].column, "a Rank line reads '# Rank R ... on HOST device D [BUS] NAME'");
  out.host = std::string(t[i + 1].text);
  out.device = static_cast<int>(r.integer(t[d + 1], "device", 0));
  for (std::size_t k = d + 3; k < t.size(); ++k) out.gpu += (out.gpu.empty() ? "" : " ") + std::string(t[k].text);
  return out;
}

// "# nThread 1 nGpus 8 minBytes ... iters: 20 ..."
void read_threads(const Reader& r, const std::vector<Token>& t, Log& log) {
  for (std::size_t i = 1; i + 1 < t.size(); ++i) {
    const std::string_view k = t[i].text;
    if (k == "nThread") log.threads = static_cast<int>(r.integer(t[i + 1], "nThread", 1));
    if (k == "nGpus") log.gpus_per_thread = static_cast<int>(r.integer(t[i + 1], "nGpus", 1));
    if (k == "iters:" && t[i - 1].text != "warmup" && t[i - 1].text != "agg")
      log.iters = static_cast<int>(r.integer(t[i + 1], "iters", 0));
  }
}

// A '#' line: the ones that carry facts are read, the others are comments.
void read_comment(const Reader& r, const std::vector<Token>& t, Log& log) {
  if (t.size() < 2) return;
  const std::string_view k = t[1].text;
  if (k == "nThread") read_threads(r, t, log);
  if (k == "Rank" && t.size() > 2) log.ranks.push_back(read_rank(r, t));
  if (k == "Collective" && t.size() >= 5 && t[2].text == "test" && t[3].text == "starting:")
    log.binary = std::string(t[4].text);
  if (k == "Avg" && t.size() >= 6 && t[2].text == "bus") log.avg_busbw = r.number(t[5], "average bus bandwidth") * 1e9;
}

// NCCL's own lines: "NCCL version 2.20.3+cuda12.3" and the debug lines
// "host:pid:tid [dev] NCCL INFO ..." (NCCL_DEBUG=INFO).
bool is_nccl_line(const std::vector<Token>& t) {
  if (t.size() >= 2 && t[0].text == "NCCL" && t[1].text == "version") return true;
  if (t.size() >= 2 && t[1].text.size() > 2 && t[1].text.front() == '[' && t[1].text.back() == ']') {
    const std::string_view h = t[0].text;  // host:pid:tid
    const auto first = h.find(':');
    return first != std::string_view::npos && h.find(':', first + 1) != std::string_view::npos;
  }
  return false;
}

// The '#' lines nccl-tests prints once per run, before its rows.
enum class Line { None, Binary, Threads, Devices, Rank, Columns, Footer };

Line header_of(const std::vector<Token>& t) {
  if (t.size() < 2) return Line::None;
  const std::string_view k = t[1].text;
  if (k == "Collective" && t.size() >= 4 && t[2].text == "test" && t[3].text == "starting:") return Line::Binary;
  if (k == "nThread") return Line::Threads;
  if (k == "Using" && t.size() >= 3 && t[2].text == "devices") return Line::Devices;
  if (k == "Rank") return Line::Rank;
  if (k == "size" || k == "out-of-place") return Line::Columns;
  if ((k == "Out" && t.size() >= 3 && t[2].text == "of") || (k == "Avg" && t.size() >= 3 && t[2].text == "bus"))
    return Line::Footer;
  return Line::None;
}

// Why a parsed row cannot be a measurement, and the column that says so;
// nullopt for a real one. 0 B rows are kept (the fit and --compare leave them
// out; nccl-tests prints them for sizes below one element per rank).
constexpr double kMaxRowSeconds = 3600;  // the profile loader's longest time

std::optional<Note> implausible(const Row& row, const std::vector<Token>& t) {
  const std::size_t group = t.size() - 8;  // the out-of-place time's column
  for (std::size_t g = 0; g < 2; ++g) {
    const Result& res = g == 0 ? row.out_of_place : row.in_place;
    const Token& wrong = t[group + 4 * g + 3];
    const auto count = units::parse_integer(wrong.text);
    if (count && *count > 0)
      return Note{row.line, wrong.column,
                  "row skipped: #wrong is " + std::string(wrong.text) +
                      " (nccl-tests found wrong results: the row is not a valid measurement)"};
    const Token& time = t[group + 4 * g];
    if (!std::isfinite(res.algbw) || !std::isfinite(res.busbw) || res.time > kMaxRowSeconds)
      return Note{row.line, time.column,
                  "row skipped: a time of " + std::string(time.text) +
                      " us (or its bandwidths) is out of range, over an hour per call"};
    if (row.bytes > 0 && !(res.time > 0))
      return Note{row.line, time.column,
                  "row skipped: a time of " + std::string(time.text) + " us for " + std::string(t[0].text) +
                      " B cannot be measured"};
    if (row.bytes > 0 && row.bytes / res.time > kMaxCollectiveBeta) {
      char rate[128];
      std::snprintf(rate, sizeof rate, " us is %.3g B/s, faster than any link (the plausible maximum is %.0e B/s)",
                    row.bytes / res.time, kMaxCollectiveBeta);
      return Note{row.line, time.column,
                  "row skipped: " + std::string(t[0].text) + " B in " + std::string(time.text) + rate};
    }
  }
  return std::nullopt;
}

/// Splits a text into runs as nccl-tests prints them (parse_runs).
class RunSplitter {
 public:
  explicit RunSplitter(std::string file) : file_(std::move(file)) {}

  void line(int number, std::string_view text) {
    const auto t = split(text);
    if (t.empty() || is_nccl_line(t)) return;
    const Reader r(file_, number);
    if (t[0].text.front() == '#') {
      comment(r, number, t);
      return;
    }
    if (!is_integer(t[0].text)) r.fail(t[0].column, "not an nccl-tests line (a row starts with its size in bytes)");
    if (runs_.empty()) start(number);
    Run& run = runs_.back();
    if (run.footer > 0)
      r.fail(t[0].column, "a result row after the run's footer (line " + std::to_string(run.footer) +
                              ") and no header of its own: rows of a run follow its header");
    ++run.row_lines;
    Row row = read_row(r, t);
    row.line = number;
    if (auto why = implausible(row, t)) {
      run.log.notes.push_back(std::move(*why));
    } else {
      run.log.rows.push_back(std::move(row));
    }
  }

  std::vector<Log> finish(int last_line) {
    std::vector<Log> out;
    std::vector<Note> pending;  // notes of runs without rows, for the next run
    for (auto& run : runs_) {
      if (run.row_lines == 0) {
        pending.push_back({run.log.line, 0, "a run without result rows (its header only) skipped"});
        continue;
      }
      run.log.notes.insert(run.log.notes.begin(), pending.begin(), pending.end());
      pending.clear();
      out.push_back(std::move(run.log));
    }
    if (out.empty()) throw InputError(file_, last_line, 0, "", "no result rows: not an nccl-tests log");
    out.back().notes.insert(out.back().notes.end(), pending.begin(), pending.end());
    for (std::size_t i = 0; i < out.size(); ++i) {
      out[i].run = static_cast<int>(i) + 1;
      out[i].runs = static_cast<int>(out.size());
    }
    return out;
  }

 private:
  struct Run {
    Log log;
    bool binary = false, threads = false;
    int row_lines = 0;  ///< rows read, kept or not
    int footer = 0;     ///< line of the footer, once read
  };

  void start(int number) {
    runs_.push_back({});
    runs_.back().log.file = file_;
    runs_.back().log.line = number;
  }

  void comment(const Reader& r, int number, const std::vector<Token>& t) {
    const Line h = header_of(t);
    if (h != Line::None && h != Line::Footer && (runs_.empty() || next_run(runs_.back(), h))) start(number);
    if (runs_.empty()) return;  // a comment before any run
    Run& run = runs_.back();
    if (h == Line::Binary) run.binary = true;
    if (h == Line::Threads) run.threads = true;
    if (h == Line::Footer && run.footer == 0) run.footer = number;
    read_comment(r, t, run.log);
  }

  static bool next_run(const Run& run, Line h) {
    return run.row_lines > 0 || run.footer > 0 || (h == Line::Binary && run.binary) ||
           (h == Line::Threads && run.threads);
  }

  std::string file_;
  std::vector<Run> runs_;
};

std::string binary_from_name(const std::string& file) {
  const std::string name = std::filesystem::path(file).filename().string();
  std::string best;
  for (const auto& i : collective_ops()) {
    const std::string b = i.nccl_tests_binary;
    const auto at = name.find(b);
    // "reduce_scatter_perf" must not be read as "scatter_perf"-like suffixes:
    // the longest match at a word start wins.
    if (at != std::string::npos && (at == 0 || name[at - 1] == '-' || name[at - 1] == '_' || name[at - 1] == '.') &&
        b.size() > best.size())
      best = b;
  }
  return best;
}

// Bytes of one element of an nccl-tests type name (0: unknown).
double type_bytes(const std::string& type) {
  if (type == "int8" || type == "uint8" || type == "char" || type.rfind("fp8", 0) == 0) return 1;
  if (type == "half" || type == "bfloat16") return 2;
  if (type == "int32" || type == "uint32" || type == "float" || type == "int") return 4;
  if (type == "int64" || type == "uint64" || type == "double") return 8;
  return 0;
}

// allreduce: a reduction at root -1 whose count is the whole size (a
// reducescatter's is one rank's share); broadcast: no reduction, a root.
std::optional<CollectiveOp> op_from_rows(const std::vector<Row>& rows) {
  if (rows.empty()) return std::nullopt;
  const Row& r = rows.back();
  if (r.redop == "none" && r.root && *r.root >= 0) return CollectiveOp::Broadcast;
  const bool reduction = !r.redop.empty() && r.redop != "none";
  if (reduction && (!r.root || *r.root < 0) && r.count > 0 && r.count * type_bytes(r.type) == r.bytes)
    return CollectiveOp::AllReduce;
  return std::nullopt;
}

// The op of a run: its own "Collective test starting" line, else the file's
// name where the rows agree with it, else what the rows say.
void name_op(Log& log, const std::string& from_name) {
  if (log.binary.empty() && !from_name.empty()) {
    const auto op = find_nccl_tests_op(from_name);
    if (!op || rows_agree(log, *op)) log.binary = from_name;
  }
  log.op = log.binary.empty() ? op_from_rows(log.rows) : find_nccl_tests_op(log.binary);
  if (log.op && log.binary.empty()) log.binary = collective_info(*log.op).nccl_tests_binary;
}

std::string list_runs(const std::vector<Log>& runs) {
  std::string out;
  for (const auto& r : runs)
    out += (out.empty() ? "" : "; ") + ("line " + std::to_string(r.line) + ": " + r.describe());
  return out;
}

}  // namespace

bool rows_agree(const Log& log, CollectiveOp op) {
  const CollectiveInfo& info = collective_info(op);
  const bool none = std::string_view(info.nccl_tests_redop) == "none";
  const double ranks = info.size == SizeConvention::Total ? log.world_size() : 1;
  for (const auto& row : log.rows) {
    if (!row.redop.empty() && (row.redop == "none") != none) return false;
    const double bytes = type_bytes(row.type);
    if (row.count > 0 && bytes > 0 && row.count * bytes * ranks != row.bytes) return false;
  }
  return true;
}

std::string Log::describe() const {
  const int n = nodes();
  return (binary.empty() ? std::string("op not named") : binary) + ", " + std::to_string(world_size()) + " rank" +
         (world_size() == 1 ? "" : "s") + " on " + std::to_string(n) + " node" + (n == 1 ? "" : "s");
}

std::string Log::where() const {
  if (runs <= 1) return file;
  return file + " (run " + std::to_string(run) + " of " + std::to_string(runs) + ", line " + std::to_string(line) + ")";
}

std::string format_note(const Log& log, const Note& note) {
  return format_input_error(log.file, note.line, note.column, "", note.text);
}

int Log::world_size() const { return ranks.empty() ? threads * gpus_per_thread : static_cast<int>(ranks.size()); }

int Log::nodes() const {
  std::set<std::string> hosts;
  for (const auto& r : ranks) hosts.insert(r.host);
  return hosts.empty() ? 1 : static_cast<int>(hosts.size());
}

std::string Log::gpu() const { return ranks.empty() ? std::string() : ranks.front().gpu; }

std::vector<Log> parse_runs(std::string_view text, const std::string& file) {
  RunSplitter splitter(file);
  int number = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    ++number;
    splitter.line(number, text.substr(pos, end - pos));
    pos = end + 1;
  }
  std::vector<Log> runs = splitter.finish(number);
  const std::string from_name = binary_from_name(file);
  for (auto& log : runs) name_op(log, from_name);
  return runs;
}

std::vector<Log> load_runs(const std::string& path) {
  constexpr std::size_t kMaxLogBytes = std::size_t{64} << 20;  // a log with NCCL_DEBUG=INFO on many ranks
  return parse_runs(read_input_file(path, kMaxLogBytes), path);
}

namespace {
Log only_run(std::vector<Log> runs) {
  if (runs.size() > 1)
    throw InputError(runs[1].file, runs[1].line, 1, "",
                     "a second run: the log holds " + std::to_string(runs.size()) + " runs (" + list_runs(runs) +
                         "); give one run per file");
  return std::move(runs.front());
}
}  // namespace

Log parse_log(std::string_view text, const std::string& file) { return only_run(parse_runs(text, file)); }

Log load_log(const std::string& path) { return only_run(load_runs(path)); }

namespace {
/// "FILE:LINE:1: run left out: ..., not the collective asked for; using the
/// run at line N (...)": one line per run of `left`, naming those `taken`.
std::vector<std::string> left_out_lines(const std::vector<Log>& left, const std::vector<Log>& taken) {
  std::string used;
  for (const auto& t : taken)
    used += (used.empty() ? "" : "; ") + ("line " + std::to_string(t.line) + ": " + t.describe());
  std::vector<std::string> lines;
  for (const auto& l : left)
    lines.push_back(l.file + ":" + std::to_string(l.line) + ":1: run left out: " + l.describe() +
                    ", not the collective asked for; using the run" + (taken.size() == 1 ? "" : "s") + " at " + used);
  return lines;
}
}  // namespace

std::vector<Log> select_runs(std::vector<Log> runs, const std::vector<CollectiveOp>& ops, const std::string& pick,
                             std::vector<std::string>* left_out) {
  if (runs.empty()) return runs;  // parse_runs never returns none
  const auto wanted = [&](CollectiveOp op) {
    return ops.empty() || std::find(ops.begin(), ops.end(), op) != ops.end();
  };
  const std::string found = "the log holds " + std::to_string(runs.size()) + " run" + (runs.size() == 1 ? "" : "s") +
                            " (" + list_runs(runs) + ")";
  const std::string file = runs.front().file;
  const int first_line = runs.front().line;
  std::vector<Log> out, left;
  for (auto& log : runs) {
    if (!log.op && !ops.empty()) {
      // A run that does not name a simulated op: not one asked for when
      // it names another binary or its rows fit none of `ops`; the one op
      // asked for when its rows fit it.
      const auto fits = [&](CollectiveOp op) { return rows_agree(log, op); };
      if (!log.binary.empty() || std::none_of(ops.begin(), ops.end(), fits)) {
        left.push_back(std::move(log));
        continue;
      }
      if (ops.size() == 1) {
        log.op = ops.front();
        log.binary = collective_info(ops.front()).nccl_tests_binary;
      }
    }
    if (log.rows.empty() && (!log.op || wanted(*log.op)))
      throw InputError(log.file, log.line, 1, "",
                       "no usable rows: every row of the run was left out (" +
                           (log.notes.empty() ? std::string("none") : format_note(log, log.notes.front())) + ")");
    if (!log.op) {
      throw InputError(log.file, log.line, 1, "",
                       (log.binary.empty() ? std::string("the run does not say which collective it measured")
                                           : log.binary + " is not a collective gradwire simulates") +
                           "; " + found + ": " + pick);
    }
    (wanted(*log.op) ? out : left).push_back(std::move(log));
  }
  if (out.empty())
    throw InputError(file, first_line, 1, "", "no run of the collectives asked for; " + found + ": " + pick);
  for (std::size_t i = 0; i < out.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (out[j].op != out[i].op || (out[j].world_size() == out[i].world_size() && out[j].nodes() == out[i].nodes()))
        continue;
      throw InputError(out[i].file, out[i].line, 1, "",
                       "the runs disagree: " + out[i].describe() + ", but the run at line " +
                           std::to_string(out[j].line) + " measured the same collective as " + out[j].describe() +
                           "; give each configuration a file of its own");
    }
  }
  if (left_out != nullptr) *left_out = left_out_lines(left, out);
  return out;
}

std::optional<double> parse_size(std::string_view text) {
  text = units::trim(text);
  if (text.empty()) return std::nullopt;
  double scale = 1;
  switch (text.back()) {
    case 'K':
    case 'k':
      scale = 1024.0;
      break;
    case 'M':
    case 'm':
      scale = 1024.0 * 1024;
      break;
    case 'G':
    case 'g':
      scale = 1024.0 * 1024 * 1024;
      break;
    default:
      break;
  }
  if (scale > 1) text.remove_suffix(1);
  const auto v = units::parse_number(text);
  if (!v || *v < 0) return std::nullopt;
  return std::floor(*v * scale);
}

std::string format_time_us(double seconds) {
  const double us = seconds * 1e6;
  char buf[64];
  std::snprintf(buf, sizeof buf, us >= 10000.0 ? "%7.0f" : us >= 100.0 ? "%7.1f" : "%7.2f", us);
  return buf;
}

std::string format_header(const Header& h) {
  char buf[512];
  std::string out;
  std::snprintf(buf, sizeof buf,
                "# nThread 1 nGpus %d minBytes %.0f maxBytes %.0f step: %s warmup iters: 0 iters: 1 agg iters: 1 "
                "validation: 0 graph: 0\n#\n# Using devices\n",
                h.ranks, h.min_bytes, h.max_bytes, h.step.c_str());
  out += buf;
  for (const auto& d : h.devices) {
    std::snprintf(buf, sizeof buf, "#  Rank %2d Group  0 Pid %6d on %10s device %2d [0x00] %s\n", d.rank, 0,
                  d.host.c_str(), d.device, d.gpu.c_str());
    out += buf;
  }
  out += "#\n";
  std::snprintf(buf, sizeof buf,
                "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n", "", "",
                "", "", "");
  out += buf;
  std::snprintf(buf, sizeof buf, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s\n", "size", "count",
                "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
  out += buf;
  std::snprintf(buf, sizeof buf, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n", "(B)",
                "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  out += buf;
  return out;
}

std::string format_row(double bytes, double count, const std::string& redop, int root, const Result& r) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%12lld  %12lld  %8s  %6s  %6d", static_cast<long long>(bytes),
                static_cast<long long>(count), "float", redop.c_str(), root);
  std::string out = buf;
  const std::string time = format_time_us(r.time);
  std::snprintf(buf, sizeof buf, "  %7s  %6.2f  %6.2f  %5s", time.c_str(), r.algbw / 1e9, r.busbw / 1e9, "N/A");
  out += buf;
  out += buf;
  return out + "\n";
}

std::string format_footer(double avg_busbw) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : %g \n#\n", avg_busbw / 1e9);
  return buf;
}

}  // namespace gw::nccl_tests
