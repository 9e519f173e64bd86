#include "gradwire/plan/report.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "gradwire/core/atomic_file.hpp"
#include "gradwire/core/child.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/core/signal_cleanup.hpp"
#include "gradwire/core/units.hpp"
#include "gradwire/plan/planner.hpp"
#include "gradwire/plan/results_file.hpp"
#include "report_figures.hpp"

namespace gw::plan {
namespace {

namespace fs = std::filesystem;
using report_detail::Figure;
using report_detail::num;

std::string html_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

constexpr const char* kMarker = ".gradwire-report";
constexpr const char* kMarkerHeader = "# gradwire report directory: files made by `gradwire report`";

/// The files a report directory's marker lists, or nullopt when `dir` holds
/// no valid marker (it is then not a report).
std::optional<std::set<std::string>> marked_files(const fs::path& dir) {
  struct stat st {};
  const fs::path marker = dir / kMarker;
  if (::lstat(marker.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  std::string text;
  try {
    text = read_input_file(marker.string(), 1 << 20);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  std::istringstream is(text);
  std::string line;
  if (!std::getline(is, line) || line != kMarkerHeader) return std::nullopt;
  std::set<std::string> files{kMarker};
  while (std::getline(is, line)) {
    if (line.empty() || line.find('/') != std::string::npos || line == "." || line == "..") return std::nullopt;
    files.insert(line);
  }
  return files;
}

/// Removes a report directory that this program made: the files its marker
/// lists (regular files only), then the directory, which must then be empty.
/// Never removes anything else; a directory without a marker (a temporary one
/// being built) is emptied of regular files only.
void remove_report_dir(const fs::path& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    struct stat st {};
    if (::lstat(e.path().c_str(), &st) == 0 && S_ISREG(st.st_mode)) ::unlink(e.path().c_str());
  }
  ::rmdir(dir.c_str());
}

/// The directory `gradwire report` may write: a path that does not exist
/// yet, or a report directory that `report` made itself (its marker lists
/// every entry in it, all regular files) and that holds neither the results
/// file nor the current directory. Anything else: InputError, exit 2.
fs::path report_target(const std::string& out_dir, const std::string& results) {
  if (out_dir.empty()) throw InputError(out_dir, 0, 0, "", "an empty output directory");
  fs::path target = fs::absolute(out_dir).lexically_normal();
  if (target.filename().empty()) target = target.parent_path();
  const auto refuse = [&](const std::string& why) { return InputError(out_dir, 0, 0, "", why); };
  if (target == target.root_path()) throw refuse("refusing to write a report over the root directory");
  std::error_code ec;
  // Links resolved where the file system can (a name it cannot resolve, e.g.
  // one too long, is compared as written).
  auto canonical = [](const fs::path& p) {
    std::error_code e;
    fs::path c = fs::weakly_canonical(p, e);
    return e || c.empty() ? fs::absolute(p).lexically_normal() : c;
  };
  const fs::path res = canonical(fs::absolute(results));
  const fs::path canon_target = canonical(target);
  auto contains = [](const fs::path& dir, const fs::path& p) {
    if (dir.empty() || p.empty()) return false;
    auto d = dir.begin(), q = p.begin();
    for (; d != dir.end(); ++d, ++q)
      if (q == p.end() || *d != *q) return false;
    return true;
  };
  if (same_file(target.string(), results)) throw refuse("is the results file; a report is a new directory");
  if (contains(canon_target, res))
    throw refuse("holds the results file " + results + "; choose another output directory");
  struct stat st {};
  if (::lstat(target.c_str(), &st) != 0) return target;  // new: fine
  if (S_ISLNK(st.st_mode)) throw refuse("is a symbolic link; give the report directory itself");
  if (!S_ISDIR(st.st_mode))
    throw refuse("exists and is not a directory; a report is a directory (give a new path with --out)");
  const fs::path cwd = fs::current_path(ec);
  if (!ec && contains(canon_target, canonical(cwd)))
    throw refuse("is the current directory or holds it; choose another output directory");
  const auto files = marked_files(target);
  if (!files)
    throw refuse("exists and was not made by gradwire report (no " + std::string(kMarker) +
                 " marker in it); refusing to replace it, choose a new path");
  for (const auto& e : fs::directory_iterator(target)) {
    const std::string name = e.path().filename().string();
    struct stat est {};
    if (!files->count(name) || ::lstat(e.path().c_str(), &est) != 0 || !S_ISREG(est.st_mode))
      throw refuse("holds " + name + ", which gradwire report did not make; refusing to replace the directory");
  }
  return target;
}

// --- The HTML page -----------------------------------------------------------------

/// Most rows of the table of all points.
constexpr std::size_t kMaxRows = 5000;

/// The page's one script, static text (no data is ever written into it):
/// a click on a column's header sorts the table by it (numbers as numbers,
/// h:mm:ss as durations, other text in natural order; again to reverse), and
/// the box above a table keeps the rows holding every word typed in it.
constexpr const char* kTableScript = R"JS(
function gwKey(t){t=t.trim();if(/^-?\d+(\.\d+)?(e[-+]?\d+)?$/i.test(t))return[0,parseFloat(t)];
var m=/^(\d+):(\d\d):(\d\d)$/.exec(t);if(m)return[0,3600*m[1]+60*m[2]+1*m[3]];
return[t===''||t==='\u2013'?2:1,t];}
function gwSort(th){var table=th.closest('table'),body=table.tBodies[0],i=th.cellIndex;
var down=th.getAttribute('data-sort')===' \u25b2';
Array.prototype.forEach.call(table.tHead.rows[0].cells,function(c){c.removeAttribute('data-sort');});
th.setAttribute('data-sort',down?' \u25bc':' \u25b2');
var rows=Array.prototype.slice.call(body.rows);
rows.sort(function(a,b){var x=gwKey(a.cells[i].textContent),y=gwKey(b.cells[i].textContent);
var r=x[0]-y[0]||(x[0]===0?x[1]-y[1]:String(x[1]).localeCompare(String(y[1]),undefined,{numeric:true}));
return down?-r:r;});rows.forEach(function(r){body.appendChild(r);});}
function gwFilter(input){var words=input.value.toLowerCase().split(/\s+/).filter(Boolean);
var table=document.getElementById(input.getAttribute('data-table')),shown=0;
Array.prototype.forEach.call(table.tBodies[0].rows,function(r){var t=r.textContent.toLowerCase();
var keep=words.every(function(w){return t.indexOf(w)>=0;});r.style.display=keep?'':'none';if(keep)shown++;});
input.nextElementSibling.textContent=shown+' of '+table.tBodies[0].rows.length+' rows';}
document.querySelectorAll('th').forEach(function(th){th.addEventListener('click',function(){gwSort(th);});});
document.querySelectorAll('input[data-table]').forEach(function(i){i.addEventListener('input',function(){gwFilter(i);});
gwFilter(i);});
)JS";

/// The filter box of the table `id` (the script fills in the row count).
std::string table_tools(const std::string& id) {
  return "<div class=\"tools\"><input type=\"search\" data-table=\"" + id +
         "\" placeholder=\"filter rows: words, e.g. PowerSGD 25MiB\"> <span></span> &mdash; "
         "click a column's header to sort by it</div>\n";
}

/// The swept keys of the records (their params), in the order the records
/// name them, that the table's own columns do not show (compressor, k,
/// micro-batch, instance): a column each in the table of all points.
std::vector<std::string> swept_keys(const std::vector<ResultRecord>& recs) {
  std::vector<std::string> keys;
  for (const auto& r : recs)
    if (r.params)
      for (const auto& kv : *r.params) {
        const std::string& k = kv.first;
        const bool shown = is_compression_key(k) || k == "workload.accumulation" || k == "workload.micro_batch" ||
                           k == "cluster.instance";
        if (!shown && std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
      }
  return keys;
}

/// One row of the table of all points.
std::string point_row(const ResultRecord& r, const std::vector<std::string>& keys) {
  auto cell = [&](const std::optional<double>& v, double scale, const char* f) {
    return v ? num(*v * scale, f) : std::string("&ndash;");
  };
  const std::string mem = r.memory ? num(r.memory->total / (1u << 30), "%.1f") : "&ndash;";
  std::string hours = "&ndash;", od = "&ndash;", spot = "&ndash;", band = "&ndash;";
  if (r.training) hours = units::format_hours(r.training->hours);
  if (r.cost) {
    od = num(r.cost->on_demand, "%.2f");
    if (r.cost->spot) spot = num(*r.cost->spot, "%.2f");
  }
  if (r.band) band = num(r.band->iteration_low * 1e3) + "&ndash;" + num(r.band->iteration_high * 1e3);
  std::string status = r.status;
  if (r.reason) status += ": " + *r.reason;
  // The cluster: the catalog instance, else the GPU of a cluster of one's own (an on-prem price).
  const std::string cluster =
      !r.instance_name().empty() ? r.instance_name() : "own cluster (" + r.gpu.value_or("?") + ")";
  std::ostringstream h;
  h << "<tr><td>" << r.index << "</td>";
  for (const auto& key : keys) {
    std::string value = "&ndash;";
    if (r.params)
      for (const auto& [k, v] : *r.params)
        if (k == key) value = html_escape(v);
    // Long values (a whole cluster) are cut to the column's width; the cell's
    // title holds them whole, and the filter reads them whole.
    h << "<td class=\"l sk\" title=\"" << value << "\">" << value << "</td>";
  }
  h << "<td class=\"l\">" << html_escape(cluster) << "</td><td>" << r.world.value_or(0) << "</td><td class=\"l\">"
    << html_escape(r.configuration()) << "</td><td>" << r.micro_batch.value_or(0) << "</td><td>"
    << r.accumulation.value_or(0) << "</td><td>" << cell(r.global_batch, 1, "%.0f") << "</td><td>"
    << cell(r.iteration, 1e3, "%.4g") << "</td><td>" << band << "</td><td>"
    << cell(r.exposed_communication, 1e3, "%.4g") << "</td><td>" << mem << "</td><td>" << hours << "</td><td>" << od
    << "</td><td>" << spot << "</td><td class=\"l\">" << html_escape(status) << "</td></tr>\n";
  return h.str();
}

/// The table of all points: a column per swept key (named by its key), then
/// the figures. Sortable and filtered by the page's script (kTableScript).
std::string points_table(const std::vector<ResultRecord>& recs) {
  const auto keys = swept_keys(recs);
  std::ostringstream h;
  h << "<h2 id=\"all-points\">All points</h2>\n"
    << table_tools("all") << "<div class=\"scroll\"><table id=\"all\"><thead><tr><th>#</th>";
  for (const auto& key : keys) h << "<th class=\"l\">" << html_escape(key) << "</th>";
  h << "<th class=\"l\" title=\"cluster.instance\">instance / GPU</th><th>GPUs</th><th class=\"l\" "
       "title=\"workload.compression\">compressor</th><th title=\"workload.micro_batch\">micro-batch</th><th "
       "title=\"workload.accumulation\">k</th>"
       "<th>global batch</th><th>iteration (ms)</th><th>band (ms)</th><th>exposed comm (ms)</th><th>memory (GiB)</th>"
       "<th>time to train (h:mm:ss)</th><th>USD on demand</th><th>USD spot</th><th class=\"l\">status</th></tr>"
       "</thead><tbody>\n";
  for (std::size_t i = 0; i < recs.size() && i < kMaxRows; ++i) h << point_row(recs[i], keys);
  h << "</tbody></table></div>\n";
  if (recs.size() > kMaxRows)
    h << "<p>(first " << kMaxRows << " of " << recs.size() << " points shown; the results file has them all)</p>\n";
  return h.str();
}

/// The Pareto front's table.
std::string front_table(const std::vector<PlanPoint>& points, const std::vector<std::size_t>& front) {
  std::ostringstream h;
  h << "<h2 id=\"pareto-front\">Pareto front</h2>\n"
    << table_tools("front")
    << "<div class=\"scroll\"><table id=\"front\"><thead><tr><th>#</th><th class=\"l w\">configuration (every swept "
       "key)</th><th>iteration (ms)</th><th>time to train (h:mm:ss)</th><th>cost on demand (USD)</th></tr></thead>"
       "<tbody>\n";
  for (std::size_t i : front) {
    const auto& p = points[i];
    h << "<tr><td>" << p.index << "</td><td class=\"l w\">" << html_escape(describe(p)) << "</td><td>"
      << num(p.iteration * 1e3) << "</td><td>" << units::format_hours(p.hours) << "</td><td>"
      << (p.priced ? num(p.cost, "%.2f") : "&ndash;") << "</td></tr>\n";
  }
  h << "</tbody></table></div>\n";
  return h.str();
}

/// The recommendation's paragraph: the rule, the reason and the constraints it
/// was asked for.
std::string recommendation_html(const Recommendation& rec, const ReportOptions& opt) {
  std::string asked;
  if (opt.deadline_hours) asked += "deadline " + units::format_hours(*opt.deadline_hours);
  if (opt.budget) asked += std::string(asked.empty() ? "" : ", ") + "budget " + num(*opt.budget, "%.2f") + " USD";
  std::ostringstream h;
  h << "<p class=\"rec\"><b>Recommendation</b> (" << html_escape(rec.rule)
    << (asked.empty() ? std::string() : "; " + html_escape(asked)) << "): " << html_escape(rec.reason) << "</p>\n";
  return h.str();
}

struct Page {
  const std::string& results;
  const ReportSummary& sum;
  const std::vector<ResultRecord>& recs;
  const report_detail::Figures& figures;
  const std::vector<PlanPoint>& points;
  const std::vector<std::size_t>& front;
  const std::vector<Recommendation>& recommendations;  ///< one per group of comparable points
  const std::string& note;                             ///< why there are several ("" when one)
  const ReportOptions& opt;
};

std::string html_page(const Page& pg) {
  std::ostringstream h;
  h << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>gradwire report</title>\n"
    << "<style>body{font-family:sans-serif;max-width:1300px;margin:2em auto;padding:0 1em;color:#222}"
       "table{border-collapse:collapse;font-size:13px;margin:0 0 1em}td,th{border:1px solid #ccc;padding:3px 8px;"
       "text-align:right;white-space:nowrap}th{background:#f0f0f0;cursor:pointer;position:sticky;top:0}"
       "th.l,td.l{text-align:left}td.sk{max-width:16em;overflow:hidden;text-overflow:ellipsis}"
       ".w{white-space:normal;min-width:24em}th[data-sort]::after{content:attr(data-sort);color:#555}"
       ".scroll{overflow:auto;max-height:80vh;border:1px solid #ddd}img{max-width:100%;border:1px solid #ddd}"
       ".rec{background:#eef6ee;padding:0.8em;border-left:4px solid #2ca02c}.note{color:#555}"
       ".tools{margin:0.5em 0;font-size:13px}.tools input{width:32em;padding:3px}</style></head><body>\n";
  h << "<h1>gradwire report</h1>\n<p>Results: <code>" << html_escape(pg.results) << "</code> &mdash; " << pg.sum.points
    << " points: " << pg.sum.ok << " predicted, " << pg.sum.no_fit << " do not fit in GPU memory, " << pg.sum.invalid
    << " invalid, " << pg.sum.errors << " failed.</p>\n";
  if (pg.sum.duplicates > 0)
    h << "<p class=\"note\">" << html_escape(duplicates_note(pg.results, pg.sum.duplicates)) << ".</p>\n";
  if (!pg.note.empty()) h << "<p>" << html_escape(pg.note) << "</p>\n";
  for (const auto& rec : pg.recommendations) h << recommendation_html(rec, pg.opt);
  for (const auto& n : pg.figures.notes) h << "<p class=\"note\">" << html_escape(n) << "</p>\n";
  for (const auto& f : pg.figures.figures) {
    h << "<h2 id=\"" << f.name << "\">" << html_escape(f.title) << "</h2>\n<p>" << html_escape(f.caption)
      << "</p>\n<img src=\"" << f.name << ".svg\" alt=\"" << html_escape(f.title) << "\"><p><a href=\"" << f.name
      << ".png\">PNG</a></p>\n";
  }
  if (!pg.front.empty()) h << front_table(pg.points, pg.front);
  h << points_table(pg.recs);
  h << "<p>Prices: catalog/instances.yaml (dated list prices; they change). Method: see docs/planning.md.</p>\n"
    << "<script>" << kTableScript << "</script>\n</body></html>\n";
  return h.str();
}

/// Writes the figures, the page and the marker of a report into `tmp`.
void write_report(const std::string& tmp, const ReportOptions& opt, const std::string& results,
                  const std::vector<ResultLine>& lines, const std::vector<ResultRecord>& recs, ReportSummary& sum) {
  report_detail::FigureInputs in;
  for (const auto& r : recs)
    if (r.status == "ok") in.ok.push_back(&r);
  in.points = plan_points(lines, Pricing::OnDemand);
  // Points at different global batches are compared only under a batch law:
  // otherwise one recommendation per global batch (comparable_groups says why).
  std::vector<Recommendation> recommendations;
  std::string note;
  if (!in.points.empty()) {
    in.front = pareto_front(in.points);
    in.priced = in.points.front().priced;
    for (const auto& group : comparable_groups(in.points, &note))
      recommendations.push_back(recommend(group, opt.budget, opt.deadline_hours));
    if (recommendations.size() == 1) {  // the figures mark one recommendation and its baseline
      if (recommendations[0].found) in.recommended = recommendations[0].choice;
      in.baseline = recommendations[0].baseline;
    }
  }
  report_detail::Figures figures;
  sum.figures = report_detail::gnuplot_available(opt.gnuplot);
  if (sum.figures) {
    figures = report_detail::write_figures(opt.gnuplot, tmp, in);
  } else {
    figures.notes.push_back("No figures: gnuplot (" + opt.gnuplot +
                            ") did not start; install it (./setup.sh does) and run the report again. The tables "
                            "below are complete.");
  }
  write_file_atomic(tmp + "/index.html",
                    html_page({results, sum, recs, figures, in.points, in.front, recommendations, note, opt}));
  // The marker: this directory is a report, and these are its files (the
  // only ones a later report may remove when it replaces this one).
  std::string listing = std::string(kMarkerHeader) + "\n";
  std::vector<std::string> made;
  for (const auto& e : fs::directory_iterator(tmp)) made.push_back(e.path().filename().string());
  std::sort(made.begin(), made.end());
  for (const auto& f : made) listing += f + "\n";
  write_file_atomic(tmp + "/" + kMarker, listing);
}

/// A new directory beside `target` to build the report in.
std::string make_temp_dir(const fs::path& target, const std::string& out_dir) {
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  if (ec)
    throw InputError(out_dir, 0, 0, "",
                     "cannot create the directory " + target.parent_path().string() + ": " + ec.message());
  std::string tmpl = (target.parent_path() / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  if (::mkdtemp(tmpl.data()) == nullptr)
    throw InputError(out_dir, 0, 0, "",
                     "cannot create a directory beside " + target.string() + ": " + std::strerror(errno));
  // mkdtemp makes it 0700; the report is a directory like any other the user
  // makes, so it gets the mode the umask gives (0755 under umask 022).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::chmod(tmpl.c_str(), 0777 & ~mask) != 0)
    throw InputError(out_dir, 0, 0, "", "cannot set the mode of " + tmpl + ": " + std::strerror(errno));
  return tmpl;
}

/// Swaps `tmp` into place: the old report (checked again to be one) is moved
/// aside, then its files are removed one by one and its directory last.
void swap_into_place(const std::string& tmp, const fs::path& target, const std::string& out_dir,
                     const std::string& results) {
  std::string old;
  std::error_code gone;
  if (fs::exists(fs::symlink_status(target, gone))) {
    report_target(out_dir, results);  // still a report of ours, and not holding the input
    old = tmp + ".old";
    fs::rename(target, old);
  }
  fs::rename(tmp, target);
  if (!old.empty()) remove_report_dir(old);
}

}  // namespace

ReportSummary render_report(const std::string& results, const std::string& out_dir, const std::string& gnuplot) {
  ReportOptions opt;
  opt.gnuplot = gnuplot;
  return render_report(results, out_dir, opt);
}

ReportSummary render_report(const std::string& results, const std::string& out_dir, const ReportOptions& options) {
  ReportSummary sum;
  const auto lines = read_distinct_results(results, &sum.duplicates);  // one record per point
  std::vector<ResultRecord> recs;
  for (const auto& l : lines) {
    recs.push_back(l.record);
    const std::string& st = l.record.status;
    ++sum.points;
    if (st == "ok")
      ++sum.ok;
    else if (st == "no_fit")
      ++sum.no_fit;
    else if (st == "invalid")
      ++sum.invalid;
    else
      ++sum.errors;
  }
  std::sort(recs.begin(), recs.end(), [](const ResultRecord& a, const ResultRecord& b) { return a.index < b.index; });
  const fs::path target = report_target(out_dir, results);
  const std::string tmp = make_temp_dir(target, out_dir);
  {
    // SIGINT/SIGTERM/SIGHUP remove the temporary directory, then end the
    // process; the swap is not interrupted half way.
    const RemoveDirOnSignal cleanup(tmp);
    try {
      write_report(tmp, options, results, lines, recs, sum);
    } catch (...) {
      remove_report_dir(tmp);
      throw;
    }
    const StopSignalsHeld held;
    swap_into_place(tmp, target, out_dir, results);
  }
  sum.dir = target.string();
  for (const auto& e : fs::directory_iterator(target))
    if (e.path().filename() != kMarker) sum.files.push_back(e.path().filename().string());
  std::sort(sum.files.begin(), sum.files.end());
  return sum;
}

}  // namespace gw::plan
