// nccl-tests output read and written (gradwire/model/nccl_tests_log.hpp).
#include "gradwire/model/nccl_tests_log.hpp"

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
  [[noreturn]] void fail(int column, const std::string& why) const {
    throw InputError(file_, line_, column, "", why);
  }
  double number(const Token& t, const char* what) const {
    const auto v = units::parse_number(t.text);
    if (!v || *v < 0) fail(t.column, std::string(what) + " '" + std::string(t.text) + "' is not a number >= 0");
    return *v;
  }
  long long integer(const Token& t, const char* what, long long min) const {
    const auto v = units::parse_integer(t.text);
    if (!v || *v < min) fail(t.column, std::string(what) + " '" + std::string(t.text) + "' is not a whole number >= " +
                                           std::to_string(min));
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
    r.fail(t.front().column, "a result row has 11 to 13 columns (size count type [redop] [root], then time algbw "
                             "busbw #wrong out-of-place and in-place), not " + std::to_string(t.size()));
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
  if (d + 2 >= t.size() || t[d].text != "device") r.fail(t[1].column, "a Rank line reads '# Rank R ... on HOST device D [BUS] NAME'");
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
  if (k == "Collective" && t.size() >= 5 && t[2].text == "test" && t[3].text == "starting:") log.binary = std::string(t[4].text);
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

void read_line(const std::string& file, int number, std::string_view line, Log& log) {
  const auto t = split(line);
  if (t.empty() || is_nccl_line(t)) return;
  const Reader r(file, number);
  if (t[0].text.front() == '#') {
    read_comment(r, t, log);
    return;
  }
  if (!is_integer(t[0].text)) r.fail(t[0].column, "not an nccl-tests line (a row starts with its size in bytes)");
  log.rows.push_back(read_row(r, t));
  log.rows.back().line = number;
}

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
  const Row& r = rows.back();
  if (r.redop == "none" && r.root && *r.root >= 0) return CollectiveOp::Broadcast;
  const bool reduction = !r.redop.empty() && r.redop != "none";
  if (reduction && (!r.root || *r.root < 0) && r.count > 0 && r.count * type_bytes(r.type) == r.bytes)
    return CollectiveOp::AllReduce;
  return std::nullopt;
}

}  // namespace

int Log::world_size() const {
  return ranks.empty() ? threads * gpus_per_thread : static_cast<int>(ranks.size());
}

int Log::nodes() const {
  std::set<std::string> hosts;
  for (const auto& r : ranks) hosts.insert(r.host);
  return hosts.empty() ? 1 : static_cast<int>(hosts.size());
}

std::string Log::gpu() const { return ranks.empty() ? std::string() : ranks.front().gpu; }

Log parse_log(std::string_view text, const std::string& file) {
  Log log;
  log.file = file;
  int number = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    ++number;
    read_line(file, number, text.substr(pos, end - pos), log);
    pos = end + 1;
  }
  if (log.rows.empty()) throw InputError(file, number, 0, "", "no result rows: not an nccl-tests log");
  if (log.binary.empty()) log.binary = binary_from_name(file);
  log.op = log.binary.empty() ? op_from_rows(log.rows) : find_nccl_tests_op(log.binary);
  if (log.op && log.binary.empty()) log.binary = collective_info(*log.op).nccl_tests_binary;
  return log;
}

Log load_log(const std::string& path) {
  constexpr std::size_t kMaxLogBytes = std::size_t{64} << 20;  // a log with NCCL_DEBUG=INFO on many ranks
  return parse_log(read_input_file(path, kMaxLogBytes), path);
}

std::optional<double> parse_size(std::string_view text) {
  text = units::trim(text);
  if (text.empty()) return std::nullopt;
  double scale = 1;
  switch (text.back()) {
    case 'K': case 'k': scale = 1024.0; break;
    case 'M': case 'm': scale = 1024.0 * 1024; break;
    case 'G': case 'g': scale = 1024.0 * 1024 * 1024; break;
    default: break;
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
  std::snprintf(buf, sizeof buf, "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n",
                "", "", "", "", "");
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
