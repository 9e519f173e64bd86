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
#include "gradwire/plan/planner.hpp"
#include "gradwire/plan/results_file.hpp"

namespace gw::plan {
namespace {

namespace fs = std::filesystem;

std::string html_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

/// A label as one double-quoted field of a gnuplot data file. Labels come
/// from the data (compressor, model and instance names, which are free
/// strings) and are never written into gnuplot's command text, where a
/// newline, a backquote or `system(...)` would run commands; in a data file
/// gnuplot only reads them as text. The field cannot hold a double quote or a
/// line break, so control characters become '?' and '"' becomes '\''.
std::string data_label(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) o += '?';
    else if (c == '"') o += '\'';
    else o += c;
  }
  return o + "\"";
}

std::string num(double v, const char* f = "%.4g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

void run_gnuplot(const std::string& gnuplot, const std::string& dir, const std::string& script) {
  const pid_t pid = gw::fork_dying_with_parent();  // gnuplot dies with us
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    if (::chdir(dir.c_str()) != 0) ::_exit(126);
    ::execlp(gnuplot.c_str(), gnuplot.c_str(), script.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("gnuplot failed on " + script + (WIFEXITED(status) && WEXITSTATUS(status) == 127
                                                                   ? " (is gnuplot installed?)"
                                                                   : ""));
}

struct Figure {
  std::string name, title, caption;
};

/// Writes NAME.gp that renders NAME.svg and NAME.png from `body` (the plot commands).
void figure(const std::string& gnuplot, const std::string& dir, const std::string& name, const std::string& body) {
  std::ostringstream gp;
  gp << "set terminal svg size 960,600 dynamic font 'sans,13' background rgb 'white'\n"
     << "set output '" << name << ".svg'\n"
     << body << "\n"
     << "set terminal pngcairo size 1280,800 font 'sans,14' background rgb 'white'\n"
     << "set output '" << name << ".png'\n"
     << "replot\nunset output\n";
  write_file_atomic(dir + "/" + name + ".gp", gp.str());
  run_gnuplot(gnuplot, dir, name + ".gp");
}

const char* kStyle =
    "set grid lc rgb '#dddddd'\nset key outside right top noenhanced\nset border lc rgb '#444444'\n"
    "set style line 1 lc rgb '#1f77b4' lw 2 pt 7\nset style line 2 lc rgb '#d62728' lw 2 pt 5\n"
    "set style line 3 lc rgb '#2ca02c' lw 2 pt 9\nset style line 4 lc rgb '#ff7f0e' lw 2 pt 11\n"
    "set style line 5 lc rgb '#9467bd' lw 2 pt 13\nset style line 6 lc rgb '#8c564b' lw 2 pt 7\n"
    "set style line 7 lc rgb '#e377c2' lw 2 pt 5\nset style line 8 lc rgb '#7f7f7f' lw 2 pt 9\n"
    "set style line 9 lc rgb '#bcbd22' lw 2 pt 11\nset style line 10 lc rgb '#17becf' lw 2 pt 13\n";

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
  if (contains(canon_target, res)) throw refuse("holds the results file " + results + "; choose another output directory");
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

// --- The figures -----------------------------------------------------------------

/// What varies among the ok points (it splits the series).
struct Dimensions {
  std::set<int> worlds, ks;
  std::set<std::string> instances, models;
  std::set<double> bandwidths;

  explicit Dimensions(const std::vector<const ResultRecord*>& ok) {
    for (const auto* r : ok) {
      worlds.insert(*r->world);
      ks.insert(*r->accumulation);
      instances.insert(r->instance_name());
      models.insert(*r->model);
      bandwidths.insert(*r->node_bandwidth);
    }
  }

  /// The series a point belongs to: its compressor, plus what varies.
  std::string series_of(const ResultRecord& r, bool with_k) const {
    std::string s = *r.compression;
    if (models.size() > 1) s += ", " + *r.model;
    if (instances.size() > 1 && r.instance && *r.instance) s += ", " + **r.instance;
    if (worlds.size() > 1) s += ", " + std::to_string(*r.world) + " GPUs";
    if (with_k && ks.size() > 1) s += ", k=" + std::to_string(*r.accumulation);
    return s;
  }
};

/// Writes the data, the gnuplot scripts and the figures of a report into `tmp`.
class FigureWriter {
 public:
  FigureWriter(std::string gnuplot, std::string tmp) : gnuplot_(std::move(gnuplot)), tmp_(std::move(tmp)) {}
  const std::vector<Figure>& figures() const { return figures_; }

  /// Iteration time against node bandwidth, one line per series.
  void iteration_vs_bandwidth(const std::vector<const ResultRecord*>& ok, const Dimensions& dims) {
    std::map<std::string, std::map<double, double>> series;
    // Colour by compressor, dash pattern by the rest (GPU count, instance, k).
    std::map<std::string, int> colour, dash;
    std::map<std::string, std::pair<int, int>> style;
    for (const auto* r : ok) {
      const std::string name = dims.series_of(*r, true);
      series[name][*r->node_bandwidth * 8 / 1e9] = *r->iteration * 1e3;
      const std::string rest = name.substr(r->compression->size());
      colour.emplace(*r->compression, static_cast<int>(colour.size()));
      dash.emplace(rest, static_cast<int>(dash.size()));
      style[name] = {colour[*r->compression], dash[rest]};
    }
    std::ostringstream dat, plot;
    int idx = 0;
    plot << kStyle << "set title 'Iteration time against inter-node bandwidth'\n"
         << "set xlabel 'node network bandwidth (Gbps)'\nset ylabel 'iteration time (ms)'\n"
         << "set logscale x 10\nset logscale y 10\nplot ";
    for (const auto& [name, pts] : series) {
      dat << data_label(name) << " " << data_label(name) << "\n";  // the series' title (columnheader)
      for (const auto& [x, y] : pts) dat << num(x, "%.6g") << " " << num(y, "%.6g") << "\n";
      dat << "\n\n";
      const auto [c, dt] = style[name];
      plot << (idx ? ", " : "") << "'iteration-vs-bandwidth.dat' index " << idx << " using 1:2 with linespoints ls "
           << (c % 10 + 1) << " dt " << (dt % 5 + 1) << " pt " << (dt % 7 * 2 + 5) << " title columnheader(1)";
      ++idx;
    }
    write_file_atomic(tmp_ + "/iteration-vs-bandwidth.dat", dat.str());
    add("iteration-vs-bandwidth", plot.str(), "Iteration time against bandwidth",
        "Predicted time of one training iteration (all accumulation micro-steps, synchronization "
        "and optimizer step) against the aggregate NIC bandwidth of a node, per compressor.");
  }

  /// Cost against time-to-train, with the Pareto front `front`.
  void cost_vs_time(const std::vector<PlanPoint>& points, const std::vector<std::size_t>& front) {
    std::map<std::string, std::vector<const PlanPoint*>> by;
    for (const auto& p : points) by[p.compression].push_back(&p);
    std::ostringstream dat, plot;
    plot << kStyle << "set title 'Cost against time-to-train (on-demand prices)'\n"
         << "set xlabel 'time to train (hours)'\nset ylabel 'cost (USD)'\nset logscale x 10\nset logscale y 10\nplot ";
    int idx = 0;
    for (const auto& [name, pts] : by) {
      dat << data_label(name) << " " << data_label(name) << "\n";  // the series' title (columnheader)
      for (const auto* p : pts) dat << num(p->hours, "%.6g") << " " << num(p->cost, "%.6g") << "\n";
      dat << "\n\n";
      plot << (idx ? ", " : "") << "'cost-vs-time.dat' index " << idx << " using 1:2 with points ls "
           << (idx % 10 + 1) << " ps 1.3 title columnheader(1)";
      ++idx;
    }
    dat << "# Pareto front\n";
    for (std::size_t i : front) dat << num(points[i].hours, "%.6g") << " " << num(points[i].cost, "%.6g") << "\n";
    plot << ", 'cost-vs-time.dat' index " << idx
         << " using 1:2 with linespoints lc rgb 'black' lw 1.5 dt 2 pt 6 ps 2.4 title 'Pareto front'";
    write_file_atomic(tmp_ + "/cost-vs-time.dat", dat.str());
    add("cost-vs-time", plot.str(), "Cost against time-to-train",
        "Every configuration with a training target and an instance price; the dashed staircase "
        "is the Pareto front (nothing is both faster and cheaper).");
  }

  /// Breakdown bars of `pick` (at most 24 points), absolute and as shares.
  void breakdown(const std::vector<const ResultRecord*>& pick, const Dimensions& dims, bool pareto) {
    std::ostringstream dat, plot;
    dat << "# label forward backward exposed_comm optimizer (ms)\n";
    for (const auto* r : pick) {
      std::string label = dims.series_of(*r, true);
      if (dims.bandwidths.size() > 1) label += ", " + num(*r->node_bandwidth * 8 / 1e9, "%g") + " Gbps";
      dat << data_label(label) << " " << num(*r->forward * 1e3, "%.6g") << " " << num(*r->backward * 1e3, "%.6g")
          << " " << num(*r->exposed_communication * 1e3, "%.6g") << " " << num(*r->optimizer * 1e3, "%.6g") << "\n";
    }
    write_file_atomic(tmp_ + "/breakdown.dat", dat.str());
    plot << kStyle << "set title 'Where an iteration goes'\nset ylabel 'time (ms)'\n"
         << "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.85 border -1\n"
         << "set boxwidth 0.7\nset xtics rotate by -40 left noenhanced font ',10'\nset bmargin 12\n"
         << "set key outside right top\n"
         << "plot 'breakdown.dat' using 2:xtic(1) title 'forward' lc rgb '#1f77b4', "
            "'' using 3 title 'backward' lc rgb '#2ca02c', '' using 4 title 'exposed communication' lc rgb "
            "'#d62728', '' using 5 title 'optimizer' lc rgb '#9467bd'\n";
    const std::string which =
        pareto ? "The Pareto-optimal configurations" : "The configurations of the largest cluster";
    add("breakdown", plot.str(), "Iteration breakdown",
        which + ": forward and backward compute (all micro-steps), communication not hidden behind "
                "the backward pass, and the optimizer step.");
    // The same bars as shares of each iteration, so that a small phase stays
    // visible beside a large one (at 1 Gbps exposed communication can be
    // 100x the compute).
    std::ostringstream share;
    share << kStyle << "set title 'Where an iteration goes (share of each iteration)'\nset ylabel 'share (%)'\n"
          << "set yrange [0:100]\nset style data histograms\nset style histogram rowstacked\n"
          << "set style fill solid 0.85 border -1\nset boxwidth 0.7\n"
          << "set xtics rotate by -40 left noenhanced font ',10'\nset bmargin 12\nset key outside right top\n"
          << "total(a, b, c, d) = (a + b + c + d > 0) ? a + b + c + d : 1\n"
          << "plot 'breakdown.dat' using (100*$2/total($2,$3,$4,$5)):xtic(1) title 'forward' lc rgb '#1f77b4', "
             "'' using (100*$3/total($2,$3,$4,$5)) title 'backward' lc rgb '#2ca02c', "
             "'' using (100*$4/total($2,$3,$4,$5)) title 'exposed communication' lc rgb '#d62728', "
             "'' using (100*$5/total($2,$3,$4,$5)) title 'optimizer' lc rgb '#9467bd'\n";
    add("breakdown-share", share.str(), "Iteration breakdown, as shares",
        which + ", each phase as a percentage of its iteration time.");
  }

 private:
  void add(const std::string& name, const std::string& body, const std::string& title, const std::string& caption) {
    figure(gnuplot_, tmp_, name, body);
    figures_.push_back({name, title, caption});
  }

  std::string gnuplot_, tmp_;
  std::vector<Figure> figures_;
};

/// The points of the breakdown: the Pareto points, else the largest cluster's
/// (in sweep order); at most 24.
std::vector<const ResultRecord*> breakdown_points(const std::vector<const ResultRecord*>& ok,
                                                  const Dimensions& dims, const std::vector<PlanPoint>& points,
                                                  const std::vector<std::size_t>& front) {
  std::vector<const ResultRecord*> pick;
  if (!front.empty()) {
    for (std::size_t i : front)
      for (const auto* r : ok)
        if (r->index == points[i].index) pick.push_back(r);
  } else {
    const int top = dims.worlds.empty() ? 0 : *dims.worlds.rbegin();
    for (const auto* r : ok)
      if (*r->world == top) pick.push_back(r);
  }
  if (pick.size() > 24) pick.resize(24);
  return pick;
}

// --- The HTML page -----------------------------------------------------------------

/// One row of the table of all points.
std::string point_row(const ResultRecord& r) {
  auto cell = [&](const std::optional<double>& v, double scale, const char* f) {
    return v ? num(*v * scale, f) : std::string("&ndash;");
  };
  const std::string mem = r.memory ? num(r.memory->total / (1u << 30), "%.1f") : "&ndash;";
  std::string hours = "&ndash;", od = "&ndash;", spot = "&ndash;";
  if (r.training) hours = num(r.training->hours);
  if (r.cost) {
    od = num(r.cost->on_demand, "%.2f");
    if (r.cost->spot) spot = num(*r.cost->spot, "%.2f");
  }
  std::string status = r.status;
  if (r.reason) status += ": " + *r.reason;
  std::ostringstream h;
  h << "<tr><td>" << r.index << "</td><td class=\"l\">" << html_escape(r.key) << "</td><td class=\"l\">"
    << html_escape(status) << "</td><td>" << r.world.value_or(0) << "</td><td>" << r.micro_batch.value_or(0)
    << "</td><td>" << r.accumulation.value_or(0) << "</td><td>" << cell(r.global_batch, 1, "%.0f") << "</td><td>"
    << cell(r.iteration, 1e3, "%.4g") << "</td><td>"
    << cell(r.exposed_communication, 1e3, "%.4g") << "</td><td>" << mem << "</td><td>" << hours << "</td><td>" << od
    << "</td><td>" << spot << "</td></tr>\n";
  return h.str();
}

/// The Pareto front's table.
std::string front_table(const std::vector<PlanPoint>& points, const std::vector<std::size_t>& front) {
  std::ostringstream h;
  h << "<h2>Pareto front</h2>\n<table><tr><th>#</th><th>configuration</th><th>iteration (ms)</th>"
       "<th>time to train (h)</th><th>cost on demand (USD)</th></tr>\n";
  for (std::size_t i : front) {
    const auto& p = points[i];
    h << "<tr><td>" << p.index << "</td><td class=\"l\">" << html_escape(describe(p)) << "</td><td>"
      << num(p.iteration * 1e3) << "</td><td>" << num(p.hours) << "</td><td>" << (p.priced ? num(p.cost, "%.2f") : "&ndash;")
      << "</td></tr>\n";
  }
  h << "</table>\n";
  return h.str();
}

std::string html_page(const std::string& results, const ReportSummary& sum, const std::vector<ResultRecord>& recs,
                      const std::vector<Figure>& figures, const std::vector<PlanPoint>& points,
                      const std::vector<std::size_t>& front) {
  std::ostringstream h;
  h << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>gradwire report</title>\n"
    << "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}"
       "table{border-collapse:collapse;font-size:13px;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;"
       "text-align:right}th{background:#f0f0f0}td.l{text-align:left}img{max-width:100%;border:1px solid #ddd}"
       ".rec{background:#eef6ee;padding:0.8em;border-left:4px solid #2ca02c}</style></head><body>\n";
  h << "<h1>gradwire report</h1>\n<p>Results: <code>" << html_escape(results) << "</code> &mdash; " << sum.points
    << " points: " << sum.ok << " predicted, " << sum.no_fit << " do not fit in GPU memory, " << sum.invalid
    << " invalid, " << sum.errors << " failed.</p>\n";
  std::string note;  // points at different global batches: one recommendation each
  const auto groups = points.empty() ? std::vector<std::vector<PlanPoint>>{} : comparable_groups(points, &note);
  if (!note.empty()) h << "<p>" << html_escape(note) << "</p>\n";
  for (const auto& group : groups) {
    const auto rec = recommend(group, std::nullopt, std::nullopt);
    h << "<p class=\"rec\"><b>Recommendation</b> (" << html_escape(rec.rule) << "): " << html_escape(rec.reason)
      << "</p>\n";
  }
  for (const auto& f : figures) {
    h << "<h2>" << html_escape(f.title) << "</h2>\n<p>" << html_escape(f.caption) << "</p>\n<img src=\"" << f.name
      << ".svg\" alt=\"" << html_escape(f.title) << "\"><p><a href=\"" << f.name << ".png\">PNG</a></p>\n";
  }
  if (!front.empty()) h << front_table(points, front);
  h << "<h2>All points</h2>\n<table><tr><th>#</th><th class=\"l\">point</th><th>status</th><th>GPUs</th>"
       "<th>micro-batch</th><th>k</th><th>global batch</th><th>iteration (ms)</th><th>exposed comm (ms)</th><th>memory (GiB)</th>"
       "<th>hours</th><th>USD on demand</th><th>USD spot</th></tr>\n";
  for (std::size_t i = 0; i < recs.size() && i < 2000; ++i) h << point_row(recs[i]);
  h << "</table>\n";
  if (recs.size() > 2000) h << "<p>(first 2,000 points shown)</p>\n";
  h << "<p>Prices: catalog/instances.yaml (dated list prices; they change). Method: see docs/planning.md.</p>\n"
    << "</body></html>\n";
  return h.str();
}

/// Writes the figures, the page and the marker of a report into `tmp`.
void write_report(const std::string& tmp, const std::string& gnuplot, const std::string& results,
                  const std::vector<ResultLine>& lines, const std::vector<ResultRecord>& recs,
                  const ReportSummary& sum) {
  std::vector<const ResultRecord*> ok;
  for (const auto& r : recs)
    if (r.status == "ok") ok.push_back(&r);
  const Dimensions dims(ok);
  FigureWriter fig(gnuplot, tmp);
  if (dims.bandwidths.size() > 1) fig.iteration_vs_bandwidth(ok, dims);
  const auto points = plan_points(lines, Pricing::OnDemand);
  std::vector<std::size_t> front;
  if (!points.empty()) {
    front = pareto_front(points);
    if (points.front().priced) fig.cost_vs_time(points, front);  // without prices: no cost axis
  }
  const auto pick = breakdown_points(ok, dims, points, front);
  if (!pick.empty()) fig.breakdown(pick, dims, !front.empty());
  write_file_atomic(tmp + "/index.html", html_page(results, sum, recs, fig.figures(), points, front));
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
  const auto lines = read_results(results);
  std::vector<ResultRecord> recs;
  ReportSummary sum;
  for (const auto& l : lines) {
    recs.push_back(l.record);
    const std::string& st = l.record.status;
    ++sum.points;
    if (st == "ok") ++sum.ok;
    else if (st == "no_fit") ++sum.no_fit;
    else if (st == "invalid") ++sum.invalid;
    else ++sum.errors;
  }
  std::sort(recs.begin(), recs.end(), [](const ResultRecord& a, const ResultRecord& b) { return a.index < b.index; });
  const fs::path target = report_target(out_dir, results);
  const std::string tmp = make_temp_dir(target, out_dir);
  try {
    write_report(tmp, gnuplot, results, lines, recs, sum);
  } catch (...) {
    remove_report_dir(tmp);
    throw;
  }
  swap_into_place(tmp, target, out_dir, results);
  sum.dir = target.string();
  for (const auto& e : fs::directory_iterator(target))
    if (e.path().filename() != kMarker) sum.files.push_back(e.path().filename().string());
  std::sort(sum.files.begin(), sum.files.end());
  return sum;
}

}  // namespace gw::plan
