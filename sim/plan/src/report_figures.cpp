#include "report_figures.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string_view>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "gradwire/core/atomic_file.hpp"
#include "gradwire/core/child.hpp"
#include "gradwire/core/units.hpp"
#include "gradwire/plan/planner.hpp"

namespace gw::plan::report_detail {

bool natural_less(const std::string& a, const std::string& b) {
  auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      std::size_t ie = i, je = j;
      while (ie < a.size() && digit(a[ie])) ++ie;
      while (je < b.size() && digit(b[je])) ++je;
      while (i + 1 < ie && a[i] == '0') ++i;  // leading zeros do not count
      while (j + 1 < je && b[j] == '0') ++j;
      if (ie - i != je - j) return ie - i < je - j;
      const int c = a.compare(i, ie - i, b, j, je - j);
      if (c != 0) return c < 0;
      i = ie;
      j = je;
    } else {
      const int x = std::tolower(static_cast<unsigned char>(a[i])), y = std::tolower(static_cast<unsigned char>(b[j]));
      if (x != y) return x < y;
      ++i;
      ++j;
    }
  }
  if (a.size() - i != b.size() - j) return a.size() - i < b.size() - j;
  return a < b;  // equal but for case or leading zeros: a fixed order all the same
}

std::string num(double v, const char* f) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string short_key(const std::string& key) {
  const auto dot = key.rfind('.');
  return dot == std::string::npos ? key : key.substr(dot + 1);
}

std::vector<std::string> other_swept_keys(const ResultRecord& r) {
  // "cluster": a whole cluster per value, shown as its instance (or "own
  // cluster"), GPU count and bandwidth.
  static const std::set<std::string> shown{"workload.model",        "cluster",
                                           "cluster.instance",      "cluster.nodes",
                                           "cluster.gpus_per_node", "workload.accumulation",
                                           "cluster.nics.bandwidth"};
  std::vector<std::string> out;
  if (r.params)
    for (const auto& kv : *r.params)
      if (!is_compression_key(kv.first) && !shown.count(kv.first)) out.push_back(kv.first);
  return out;
}

std::string compressor_colour(const std::string& kind, const std::string& label) {
  // (kind, hue, whether it has variants (a rank, a ratio), the exponent of 2
  // of the variant shown in the hue itself)
  struct Hue {
    const char* kind;
    unsigned rgb;
    bool variants;
    int common;
  };
  static const Hue kHues[] = {
      {"none", 0x4d4d4d, false, 0}, {"fp16", 0x1f77b4, false, 0},   {"bf16", 0x17becf, false, 0},
      {"int8", 0x9467bd, false, 0}, {"sign", 0xff7f0e, false, 0},   {"majority_vote", 0x8c564b, false, 0},
      {"topk", 0x2ca02c, true, 0},  {"randomk", 0xbcbd22, true, 0}, {"powersgd", 0xd62728, true, 2}};
  Hue hue{"", 0xe377c2, false, 0};
  for (const auto& h : kHues)
    if (kind == h.kind) hue = h;
  // The variant: the label's first number, as a power of two from the common one.
  const auto digit = label.find_first_of("0123456789");
  int shade = 0;
  if (hue.variants && digit != std::string::npos) {
    const double v = std::atof(label.c_str() + digit);
    if (v > 0) shade = ((static_cast<int>(std::lround(std::log2(v))) - hue.common) % 4 + 4) % 4;
  }
  const unsigned rgb = hue.rgb;
  std::string out;
  for (int shift : {16, 8, 0}) {
    const double c = (rgb >> shift) & 0xff;
    // 0: the hue; 1: darker; 2: lighter; 3: much darker.
    const double v = shade == 1 ? c * 0.65 : shade == 2 ? c + (255 - c) * 0.45 : shade == 3 ? c * 0.42 : c;
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned>(std::lround(v)) & 0xffu);
    out += hex;
  }
  return out;
}

namespace {

struct NaturalLess {
  bool operator()(const std::string& a, const std::string& b) const { return natural_less(a, b); }
};
using NaturalSet = std::set<std::string, NaturalLess>;

/// A label as one double-quoted field of a gnuplot data file (never command
/// text). The field cannot hold a double quote or a line break, so control
/// characters become '?' and '"' becomes '\''.
std::string data_label(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f)
      o += '?';
    else if (c == '"')
      o += '\'';
    else
      o += c;
  }
  return o + "\"";
}

/// Runs gnuplot with `args` in `dir`, its output to /dev/null when `quiet`;
/// returns its exit status (127: it could not be started).
int run_gnuplot_status(const std::string& gnuplot, const std::string& dir, const std::vector<std::string>& args,
                       bool quiet) {
  const pid_t pid = gw::fork_dying_with_parent();  // gnuplot dies with us
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    if (::chdir(dir.c_str()) != 0) ::_exit(126);
    if (quiet) {
      const int null = ::open("/dev/null", O_WRONLY);
      if (null >= 0) {
        ::dup2(null, 1);
        ::dup2(null, 2);
      }
    }
    std::vector<char*> argv{const_cast<char*>(gnuplot.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execvp(gnuplot.c_str(), argv.data());
    ::_exit(127);
  }
  int status = 0;
  if (!wait_for_child(pid, &status)) return 128;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/// Writes NAME.gp that renders NAME.svg (width x height) and NAME.png from
/// `body` (the plot commands) and runs it.
void figure(const std::string& gnuplot, const std::string& dir, const std::string& name, const std::string& body,
            int width = 960, int height = 600) {
  std::ostringstream gp;
  gp << "set terminal svg size " << width << "," << height << " dynamic font 'sans,13' background rgb 'white'\n"
     << "set output '" << name << ".svg'\n"
     << body << "\n"
     << "set terminal pngcairo size " << width * 4 / 3 << "," << height * 4 / 3
     << " font 'sans,14' background rgb 'white'\n"
     << "set output '" << name << ".png'\n"
     << (body.find("set multiplot") != std::string::npos ? body : std::string("replot")) << "\nunset output\n";
  write_file_atomic(dir + "/" + name + ".gp", gp.str());
  const int rc = run_gnuplot_status(gnuplot, dir, {name + ".gp"}, false);
  if (rc != 0)
    throw std::runtime_error("gnuplot failed on " + name + ".gp" + (rc == 127 ? " (is gnuplot installed?)" : ""));
}

const char* kStyle = "set grid lc rgb '#dddddd'\nset key outside right top noenhanced\nset border lc rgb '#444444'\n";

/// "set logscale AXIS 10" when the values span a decade or more, else
/// linear; a range of one value is widened by 10% each way (gnuplot would
/// warn about an empty range).
std::string log_if_wide(const char* axis, double lo, double hi) {
  std::string s = lo > 0 && hi / lo >= 10 ? std::string("set logscale ") + axis + " 10\n"
                                          : std::string("unset logscale ") + axis + "\n";
  if (lo > 0 && lo == hi)
    s += std::string("set ") + axis + "range [" + num(lo * 0.9, "%.6g") + ":" + num(hi * 1.1, "%.6g") + "]\n";
  return s;
}

// --- What varies among the points ------------------------------------------------

/// A dimension the points may vary in: one the figures know (model, instance,
/// GPU count, k, bandwidth) or any other swept key (Param: the bucket size,
/// the micro-batch, ...), so that no swept key is left out of a label.
struct Dim {
  enum Kind { Model, Instance, Gpus, K, Bandwidth, Param };
  Kind kind = Model;
  std::string key;                                                         ///< Param: the swept key
  Dim(Kind k, std::string param = {}) : kind(k), key(std::move(param)) {}  // NOLINT: Dim::K reads as a Dim
  bool operator==(const Dim& o) const { return kind == o.kind && key == o.key; }
  bool operator<(const Dim& o) const { return kind != o.kind ? kind < o.kind : key < o.key; }
};
const Dim kFixedDims[] = {Dim::Model, Dim::Instance, Dim::Gpus, Dim::K, Dim::Bandwidth};

std::string param_value(const ResultRecord& r, const std::string& key) {
  if (r.params)
    for (const auto& [k, v] : *r.params)
      if (k == key) return v;
  return "?";
}

std::string value_of(const Dim& d, const ResultRecord& r) {
  switch (d.kind) {
    case Dim::Model:
      return r.model.value_or("");
    case Dim::Instance:
      return r.instance_name().empty() ? std::string("own cluster") : r.instance_name();
    case Dim::Gpus:
      return std::to_string(r.world.value_or(0)) + " GPUs";
    case Dim::K:
      return "k=" + std::to_string(r.accumulation.value_or(0));
    case Dim::Bandwidth:
      return num(r.node_bandwidth.value_or(0) * 8 / 1e9, "%g") + " Gbps";
    case Dim::Param:
      return short_key(d.key) + "=" + param_value(r, d.key);
  }
  return {};
}

std::string dim_name(const Dim& d) {
  switch (d.kind) {
    case Dim::Model:
      return "model";
    case Dim::Instance:
      return "instance";
    case Dim::Gpus:
      return "GPU count";
    case Dim::K:
      return "accumulation k";
    case Dim::Bandwidth:
      return "bandwidth";
    case Dim::Param:
      return d.key;
  }
  return {};
}

struct Dimensions {
  std::vector<Dim> all;  ///< the fixed dimensions, then the other swept keys in the records' order
  std::map<Dim, NaturalSet> values;
  NaturalSet compressors;

  explicit Dimensions(const std::vector<const ResultRecord*>& ok) : all(std::begin(kFixedDims), std::end(kFixedDims)) {
    for (const auto* r : ok)
      for (const auto& key : other_swept_keys(*r))
        if (std::find(all.begin(), all.end(), Dim(Dim::Param, key)) == all.end()) all.emplace_back(Dim::Param, key);
    for (const auto* r : ok) {
      compressors.insert(r->compression.value_or(""));
      for (const Dim& d : all) values[d].insert(value_of(d, *r));
    }
  }
  bool varies(const Dim& d) const {  // no values at all (no point predicted): nothing varies
    const auto it = values.find(d);
    return it != values.end() && it->second.size() > 1;
  }
  std::size_t count(const Dim& d) const {
    const auto it = values.find(d);
    return it == values.end() ? 0 : it->second.size();
  }

  /// The varying dimensions of `r` other than `skip`, joined: "k=4, 64 GPUs".
  std::string rest_of(const ResultRecord& r, const std::vector<Dim>& skip) const {
    std::string s;
    for (const Dim& d : all) {
      if (!varies(d) || std::find(skip.begin(), skip.end(), d) != skip.end()) continue;
      if (!s.empty()) s += ", ";
      s += value_of(d, r);
    }
    return s;
  }
  /// The series of `r`: its compressor, then the rest.
  std::string series_of(const ResultRecord& r, const std::vector<Dim>& skip) const {
    const std::string rest = rest_of(r, skip);
    return r.configuration() + (rest.empty() ? "" : ", " + rest);
  }
};

/// Colours by compressor (compressor_colour: the same in every report) and
/// dash patterns by the rest of a series, the same in every panel and figure.
class Palette {
 public:
  explicit Palette(const std::vector<const ResultRecord*>& ok) {
    for (const auto* r : ok) kind_.emplace(r->compression.value_or(""), r->compression_kind.value_or(""));
  }
  std::string colour(const std::string& compressor) const {
    const auto it = kind_.find(compressor);
    return compressor_colour(it == kind_.end() ? std::string() : it->second, compressor);
  }
  int dash(const std::string& rest) { return dash_.emplace(rest, static_cast<int>(dash_.size())).first->second; }

 private:
  std::map<std::string, std::string> kind_;  ///< compressor label -> kind
  std::map<std::string, int, NaturalLess> dash_;
};

// --- Iteration time against what varies ---------------------------------------------

struct Axis {
  Dim dim;
  std::string name, title, xlabel;  ///< name: [a-z0-9-] only; title and xlabel: safe in a gnuplot '...' string
  std::function<double(const ResultRecord&)> x;
};

std::vector<Axis> fixed_axes() {
  return {
      {Dim::Bandwidth, "iteration-vs-bandwidth", "Iteration time against inter-node bandwidth",
       "node network bandwidth (Gbps)", [](const ResultRecord& r) { return r.node_bandwidth.value_or(0) * 8 / 1e9; }},
      {Dim::Gpus, "iteration-vs-gpus", "Iteration time against the GPU count", "GPUs",
       [](const ResultRecord& r) { return static_cast<double>(r.world.value_or(0)); }},
      {Dim::K, "iteration-vs-k", "Iteration time against the accumulation steps", "accumulation steps k",
       [](const ResultRecord& r) { return static_cast<double>(r.accumulation.value_or(0)); }},
  };
}

/// How the values of a swept key read as numbers: a plain number, a size (in
/// MiB on the axis), a time (ms) or a bandwidth (Gbps).
struct NumericScale {
  const char* unit;
  std::optional<double> (*parse)(std::string_view, std::string*);
  double factor;
};
std::optional<double> plain_number(std::string_view s, std::string*) { return units::parse_number(s); }
const NumericScale kScales[] = {{"", plain_number, 1},
                                {"MiB", units::parse_size, 1.0 / (1 << 20)},
                                {"ms", units::parse_time, 1e3},
                                {"Gbps", units::parse_bandwidth, 8 / 1e9}};

/// `s` with what is not a lower-case letter or a digit replaced by `sep`
/// (text that may stand in a gnuplot string or a file name).
std::string tame(const std::string& s, char sep) {
  std::string o;
  for (char c : s) {
    const char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    o += (l >= 'a' && l <= 'z') || (l >= '0' && l <= '9') ? l : sep;
  }
  return o;
}

/// The x axis along a swept key the figures have no axis of their own for
/// (the bucket size), when every value of it is a number of one scale.
std::optional<Axis> param_axis(const Dim& d, const NaturalSet& values) {
  for (const auto& scale : kScales) {
    bool all = true;
    for (const auto& v : values) {
      const auto eq = v.find('=');
      all = all && eq != std::string::npos && scale.parse(v.substr(eq + 1), nullptr).has_value();
    }
    if (!all) continue;
    const std::string words = tame(short_key(d.key), ' ');
    const std::string key = d.key;
    const auto parse = scale.parse;
    const double factor = scale.factor;
    return Axis{d, "iteration-vs-" + tame(d.key, '-'), "Iteration time against " + words,
                words + (*scale.unit ? std::string(" (") + scale.unit + ")" : std::string()),
                [key, parse, factor](const ResultRecord& r) {
                  return parse(param_value(r, key), nullptr).value_or(0) * factor;
                }};
  }
  return std::nullopt;
}

/// One line: the compressor (its colour), the rest (its dash), its points.
struct Series {
  std::string compressor, rest;
  std::map<double, double> xy;
};
/// One panel: its lines by name, and whether its legend is factored (one
/// entry per compressor colour and one per dash pattern, instead of one per
/// line: 5 compressors x 4 values of k take 9 entries, not 20).
struct Panel {
  std::map<std::string, Series, NaturalLess> series;
  NaturalSet compressors, rests;
  bool factored() const { return compressors.size() > 1 && rests.size() > 1; }
};
/// Panels by facet value ("" without facets).
using Panels = std::map<std::string, Panel, NaturalLess>;

/// How the iteration figure shows the varying dimensions other than its x
/// axis and the compressor: as lines (a dash pattern each) while a panel
/// keeps to kMaxSeries lines, then one as panels, and the rest held at one
/// value (the anchor's: the recommendation, else the fastest point), named in
/// the caption. No two points of a panel share a line and an x value, so no
/// line folds into a vertical column.
struct Layout {
  std::vector<Dim> lines;
  std::optional<Dim> facet;
  std::vector<Dim> held;
};

/// Whether `d` has one value among the records that agree on every one of `by`
/// (the bandwidth of a catalog instance follows the instance).
bool follows(const std::vector<const ResultRecord*>& ok, const Dim& d, const std::vector<Dim>& by) {
  std::map<std::vector<std::string>, std::string> seen;
  for (const auto* r : ok) {
    std::vector<std::string> key;
    for (const Dim& b : by) key.push_back(value_of(b, *r));
    const auto [it, inserted] = seen.emplace(key, value_of(d, *r));
    if (!inserted && it->second != value_of(d, *r)) return false;
  }
  return true;
}

Layout layout_for(const std::vector<const ResultRecord*>& ok, const Dimensions& dims, const Dim& x) {
  Layout l;
  std::size_t series = std::max<std::size_t>(1, dims.compressors.size());
  for (const Dim& d : dims.all) {
    if (d == x || !dims.varies(d)) continue;
    std::vector<Dim> drawn = l.lines;
    drawn.push_back(x);
    if (l.facet) drawn.push_back(*l.facet);
    if (follows(ok, d, drawn)) continue;  // shown already: the bandwidth of the instances drawn
    if (series * dims.count(d) <= kMaxSeries) {
      l.lines.push_back(d);
      series *= dims.count(d);
    } else if (!l.facet && dims.count(d) <= kMaxPanels) {
      l.facet = d;
    } else {
      l.held.push_back(d);
    }
  }
  if (!l.facet && !l.held.empty()) {  // every other one has more values than panels: its first ones are drawn
    l.facet = l.held.front();
    l.held.erase(l.held.begin());
  }
  // A dimension that follows the ones drawn (with the x axis) needs no holding.
  std::vector<Dim> drawn = l.lines;
  drawn.push_back(x);
  if (l.facet) drawn.push_back(*l.facet);
  l.held.erase(std::remove_if(l.held.begin(), l.held.end(), [&](const Dim& d) { return follows(ok, d, drawn); }),
               l.held.end());
  return l;
}

class IterationFigure {
 public:
  IterationFigure(const Axis& axis, const Dimensions& dims, Palette& palette)
      : axis_(axis), dims_(dims), palette_(palette) {}

  /// Data and plot commands; `caption` gains what the panels and lines are.
  /// `anchor` gives the values of the held dimensions.
  std::pair<std::string, std::string> build(const std::vector<const ResultRecord*>& ok, const ResultRecord& anchor,
                                            std::string& caption) {
    const Layout layout = layout_for(ok, dims_, Dim(axis_.dim));
    const auto& facet = layout.facet;
    std::map<std::string, std::vector<const ResultRecord*>, NaturalLess> groups;
    std::string held;
    for (const Dim& d : layout.held) held += (held.empty() ? "" : ", ") + value_of(d, anchor);
    for (const auto* r : ok) {
      bool in = true;
      for (const Dim& d : layout.held) in = in && value_of(d, *r) == value_of(d, anchor);
      if (in) groups[facet ? value_of(*facet, *r) : std::string()].push_back(r);
    }
    if (!held.empty())
      caption += " Too many configurations for one figure: the points at " + held +
                 " (the recommendation's, else the fastest point's) are drawn; the tables below have every point.";
    if (groups.size() > kMaxPanels) {
      caption += " Only the first " + std::to_string(kMaxPanels) + " of " + std::to_string(groups.size()) +
                 " panels are drawn.";
      while (groups.size() > kMaxPanels) groups.erase(std::prev(groups.end()));
    }
    Panels panels;
    for (const auto& [name, records] : groups) panels[name] = panel(records, facet);
    if (facet) caption += " One panel per " + dim_name(*facet) + " (named first in its legend), same scales.";
    panels_ = panels.size();
    held_ = layout.held;
    return {data(panels, facet.has_value()), plot(panels, facet.has_value())};
  }
  /// The dimensions held at one value (empty when every point is drawn).
  const std::vector<Dim>& held() const { return held_; }
  std::size_t panels() const { return panels_; }

 private:
  /// The lines of one panel; a line's name holds only what varies inside the panel.
  Panel panel(const std::vector<const ResultRecord*>& records, const std::optional<Dim>& facet) {
    const Dimensions local(records);
    std::vector<Dim> skip{Dim(axis_.dim)};
    if (facet) skip.push_back(*facet);
    Panel p;
    for (const auto* r : records) {
      Series& s = p.series[local.series_of(*r, skip)];
      s.compressor = r->compression.value_or("");
      s.rest = local.rest_of(*r, skip);
      p.compressors.insert(s.compressor);
      p.rests.insert(s.rest);
      const double x = axis_.x(*r), y = r->iteration.value_or(0) * 1e3;
      s.xy[x] = y;
      lo_x_ = std::min(lo_x_, x), hi_x_ = std::max(hi_x_, x);
      lo_y_ = std::min(lo_y_, y), hi_y_ = std::max(hi_y_, y);
    }
    return p;
  }

  static void header(std::ostringstream& dat, const std::string& title, bool empty) {
    dat << data_label(title) << " " << data_label(title) << "\n" << (empty ? "NaN NaN\n\n\n" : "");
  }

  /// Blocks in plot order: [panel name], [legend: compressors, then rests], lines.
  std::string data(const Panels& panels, bool faceted) const {
    std::ostringstream dat;
    for (const auto& [facet, p] : panels) {
      if (faceted) header(dat, facet, true);
      if (p.factored()) {
        for (const auto& c : p.compressors) header(dat, c, true);
        for (const auto& r : p.rests) header(dat, r, true);
      }
      for (const auto& [name, s] : p.series) {
        header(dat, name, false);  // the series' title (columnheader)
        for (const auto& [x, y] : s.xy) dat << num(x, "%.6g") << " " << num(y, "%.6g") << "\n";
        dat << "\n\n";
      }
    }
    return dat.str();
  }

  /// The plot command of one panel, its blocks from `idx` on.
  std::string panel_plot(const Panel& p, bool faceted, int& idx) {
    const std::string file = "'" + axis_.name + ".dat' index ";
    std::vector<std::string> parts;
    auto entry = [&](const std::string& style) {
      parts.push_back(file + std::to_string(idx++) + " using 1:2 " + style);
    };
    if (faceted) entry("with dots lc rgb 'white' title columnheader(1)");
    if (p.factored()) {
      for (const auto& c : p.compressors)
        entry("with lines lw 3 lc rgb '#" + palette_.colour(c) + "' title columnheader(1)");
      for (const auto& r : p.rests) {
        const int dt = palette_.dash(r);
        entry("with linespoints lw 2 lc rgb '#444444' dt " + std::to_string(dt % 5 + 1) + " pt " +
              std::to_string(dt % 7 * 2 + 5) + " title columnheader(1)");
      }
    }
    for (const auto& [name, s] : p.series) {
      const int dt = palette_.dash(s.rest);
      entry("with linespoints lw 2 lc rgb '#" + palette_.colour(s.compressor) + "' dt " + std::to_string(dt % 5 + 1) +
            " pt " + std::to_string(dt % 7 * 2 + 5) + (p.factored() ? " notitle" : " title columnheader(1)"));
    }
    std::string out = "plot ";
    for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
    return out + "\n";
  }

  std::string plot(const Panels& panels, bool faceted) {
    std::ostringstream plot;
    plot << kStyle << "set xlabel '" << axis_.xlabel << "' noenhanced\nset ylabel 'iteration time (ms)'\n"
         << log_if_wide("x", lo_x_, hi_x_) << log_if_wide("y", lo_y_, hi_y_);
    if (faceted) {
      // The same ranges in every panel, so that panels compare at a glance.
      plot << "set xrange [" << num(lo_x_, "%.6g") << ":" << num(hi_x_, "%.6g") << "]\nset yrange ["
           << num(lo_y_ * 0.9, "%.6g") << ":" << num(hi_y_ * 1.1, "%.6g") << "]\n";
      const std::size_t cols = panels.size() > 1 ? 2 : 1, rows = (panels.size() + cols - 1) / cols;
      plot << "set multiplot layout " << rows << "," << cols << " title '" << axis_.title << "'\n";
    } else {
      plot << "set title '" << axis_.title << "'\n";
    }
    int idx = 0;
    for (const auto& [facet, p] : panels) plot << panel_plot(p, faceted, idx);
    if (faceted) plot << "unset multiplot\n";
    return plot.str();
  }

  const Axis& axis_;
  const Dimensions& dims_;
  Palette& palette_;
  std::size_t panels_ = 0;
  std::vector<Dim> held_;
  double lo_x_ = 1e300, hi_x_ = 0, lo_y_ = 1e300, hi_y_ = 0;
};

// --- The writer ------------------------------------------------------------------------

class FigureWriter {
 public:
  FigureWriter(std::string gnuplot, std::string dir, const FigureInputs& in)
      : gnuplot_(std::move(gnuplot)), dir_(std::move(dir)), in_(in), dims_(in.ok), palette_(in.ok) {}

  Figures run() {
    iteration();
    speedup_map();
    if (!in_.points.empty() && in_.priced)
      cost_vs_time();
    else if (in_.points.empty())
      out_.notes.push_back("No cost figure: no point has a time-to-train (a training target).");
    else
      out_.notes.push_back(
          "No cost figure: no point has a price (a catalog instance or a price of your own); "
          "the points are ranked by time.");
    const auto pick = breakdown_points();
    if (!pick.empty()) breakdown(pick);
    return out_;
  }

 private:
  void add(const std::string& name, const std::string& body, const std::string& title, const std::string& caption,
           int width = 960, int height = 600) {
    figure(gnuplot_, dir_, name, body, width, height);
    out_.figures.push_back({name, title, caption});
  }

  /// The x axis of the iteration figure: the first of bandwidth, GPU count,
  /// k and the other swept keys whose values are numbers (the bucket size)
  /// along which a line has two points or more on average (bandwidth that
  /// only changes with the instance draws no line).
  std::optional<Axis> iteration_axis() const {
    std::vector<Axis> axes = fixed_axes();
    for (const Dim& d : dims_.all)
      if (d.kind == Dim::Param && dims_.varies(d))
        if (auto a = param_axis(d, dims_.values.at(d))) axes.push_back(std::move(*a));
    for (auto& a : axes) {
      if (!dims_.varies(a.dim)) continue;
      std::set<std::string> lines;
      for (const auto* r : in_.ok) lines.insert(dims_.series_of(*r, {a.dim}));
      if (in_.ok.size() >= 2 * lines.size()) return std::move(a);
    }
    return std::nullopt;
  }

  /// Iteration time against the axis `iteration_axis` picks.
  void iteration() {
    const auto axis = iteration_axis();
    if (!axis) {
      out_.notes.push_back(
          "No iteration-time figure: no line would have two points along the bandwidth, the GPU count, k or "
          "another swept number.");
      return;
    }
    std::string caption =
        "Predicted time of one training iteration (all accumulation micro-steps, synchronization and optimizer "
        "step). One colour per compressor, one dash pattern per value of the other varying dimensions.";
    IterationFigure fig(*axis, dims_, palette_);
    const auto [dat, plot] = fig.build(in_.ok, anchor(), caption);
    write_file_atomic(dir_ + "/" + axis->name + ".dat", dat);
    const int cols = fig.panels() > 1 ? 2 : 1, rows = static_cast<int>((fig.panels() + cols - 1) / cols);
    add(axis->name, plot, axis->title, caption, cols == 1 ? 960 : 1600, rows == 1 ? 600 : 420 * rows);
  }

  /// The point whose values the figures hold fixed when they cannot show
  /// every dimension: the recommendation, else the fastest point.
  const ResultRecord& anchor() const {
    const ResultRecord* best = in_.ok.front();
    for (const auto* r : in_.ok) {
      if (in_.recommended && r->index == in_.recommended->index) return *r;
      if (r->iteration.value_or(0) < best->iteration.value_or(0)) best = r;
    }
    return *best;
  }

  void cost_vs_time();
  void speedup_map();
  std::vector<std::pair<std::string, const ResultRecord*>> breakdown_points() const;
  void breakdown(const std::vector<std::pair<std::string, const ResultRecord*>>& pick);

  std::string gnuplot_, dir_;
  const FigureInputs& in_;
  Dimensions dims_;
  Palette palette_;
  Figures out_;
};

/// The point's axis values (its params) without the compression axes: what
/// an uncompressed record shares with its compressed twins; none for a
/// record without params.
std::optional<StringPairs> params_without_compression(const ResultRecord& r) {
  if (!r.params) return std::nullopt;
  StringPairs out;
  for (const auto& [key, value] : *r.params)
    if (!is_compression_key(key)) out.emplace_back(key, value);
  return out;
}

/// Speedup maps: one panel per compressor, its speedup over uncompressed
/// (t_uncompressed / t_compressor at the same point) on a grid of node
/// bandwidth x GPU count, each cell the median over the other swept
/// dimensions; green where it pays, red where it loses (log2 colour scale).
/// Drawn when the sweep has uncompressed points and compressed twins, and
/// the bandwidth or the GPU count varies.
void FigureWriter::speedup_map() {
  std::map<StringPairs, double> none;  // params without compression -> uncompressed iteration
  for (const auto* r : in_.ok) {
    const auto twin = params_without_compression(*r);
    if (twin && r->compression_kind.value_or("") == "none") none[*twin] = r->iteration.value_or(0);
  }
  if (none.empty() || (!dims_.varies(Dim::Bandwidth) && !dims_.varies(Dim::Gpus))) return;
  // compressor -> (bandwidth, GPUs) -> speedups
  std::map<std::string, std::map<std::pair<std::string, std::string>, std::vector<double>>, NaturalLess> cells;
  for (const auto* r : in_.ok) {
    if (r->compression_kind.value_or("") == "none" || !(r->iteration.value_or(0) > 0)) continue;
    const auto twin = params_without_compression(*r);
    const auto base = twin ? none.find(*twin) : none.end();
    if (base == none.end()) continue;
    cells[r->compression.value_or("")][{value_of(Dim::Bandwidth, *r), value_of(Dim::Gpus, *r)}].push_back(
        base->second / *r->iteration);
  }
  if (cells.empty()) return;
  while (cells.size() > kMaxPanels) cells.erase(std::prev(cells.end()));
  const auto& xs = dims_.values.at(Dim::Bandwidth);
  const auto& ys = dims_.values.at(Dim::Gpus);
  auto position = [](const NaturalSet& set, const std::string& v) {
    return static_cast<int>(std::distance(set.begin(), set.find(v)));
  };
  std::ostringstream dat, plot;
  const std::size_t cols = std::min<std::size_t>(3, cells.size()), rows = (cells.size() + cols - 1) / cols;
  plot << "set key tmargin center noenhanced samplen 0 font ',14'\nset tmargin 3\nset xlabel 'node network "
          "bandwidth'\nset ylabel 'GPUs'\n"
       << "set xrange [-0.5:" << static_cast<double>(xs.size()) - 0.5
       << "]\nset yrange [-0.5:" << static_cast<double>(ys.size()) - 0.5 << "]\n"
       << "set palette defined (-3 '#b2182b', -1 '#f4a582', 0 '#f7f7f7', 1 '#a6dba0', 3 '#1b7837')\n"
       << "set cbrange [-3:3]\nset cbtics ('1/8x' -3, '1/4x' -2, '1/2x' -1, '1x' 0, '2x' 1, '4x' 2, '8x' 3)\n"
       << "set tics nomirror\n"
       << (xs.size() > 4 ? "set xtics rotate by 45 right\n" : "") << "set multiplot layout " << rows << "," << cols
       << " title 'Speedup over uncompressed (green pays, red loses)'\n";
  int idx = 0;
  for (const auto& [compressor, grid] : cells) {
    dat << data_label(compressor) << " " << data_label(compressor) << "\nNaN NaN\n\n\n";  // the panel's name
    dat << "# x y log2(speedup) label xtic ytic\n";
    for (const auto& [xy, v] : grid) {
      std::vector<double> sorted = v;
      std::sort(sorted.begin(), sorted.end());
      const double m = sorted[sorted.size() / 2];
      dat << position(xs, xy.first) << " " << position(ys, xy.second) << " "
          << num(std::clamp(std::log2(m), -3.0, 3.0), "%.4f") << " " << data_label(num(m, "%.2g") + "x") << " "
          << data_label(xy.first) << " " << data_label(xy.second) << "\n";
    }
    dat << "\n\n";
    plot << "plot 'speedup-map.dat' index " << idx << " using 1:2 with dots lc rgb 'white' title columnheader(1), "
         << "'speedup-map.dat' index " << idx + 1
         << " using 1:2:(0.5):(0.5):3:xtic(5):ytic(6) with boxxyerror fs solid 1.0 noborder fc palette notitle, "
         << "'' index " << idx + 1 << " using 1:2:4 with labels font ',10' notitle\n";
    idx += 2;
  }
  plot << "unset multiplot\n";
  write_file_atomic(dir_ + "/speedup-map.dat", dat.str());
  add("speedup-map", plot.str(), "Where compression pays",
      "Each compressor's speedup over the uncompressed run of the same configuration (t_uncompressed / "
      "t_compressor), per node bandwidth and GPU count; a cell is the median over the other swept dimensions "
      "(model, batch, k, ...). Green: the compressor pays; red: it costs time.",
      cols == 1 ? 700 : 520 * static_cast<int>(cols), 420 * static_cast<int>(rows));
}

/// One axis of the cost figure: its range and whether it is logarithmic.
struct AxisRange {
  double lo = 1e300, hi = 0;
  bool log = false;
  void add(double v) { lo = std::min(lo, v), hi = std::max(hi, v); }
  /// Decided once every value is in: log when the values span a decade or
  /// more; then widened (8% of the span each way, or 10% of a single value)
  /// so that no marker sits on the frame.
  void finish() {
    log = lo > 0 && hi / lo >= 10;
    if (log) {
      const double pad = std::pow(hi / lo, 0.08);
      lo /= pad, hi *= pad;
    } else if (hi > lo) {
      const double pad = (hi - lo) * 0.08;
      lo = std::max(0.0, lo - pad), hi += pad;
    } else {
      lo *= 0.9, hi = hi > 0 ? hi * 1.1 : 1;
    }
  }
  /// Where `v` sits along the axis, 0..1.
  double at(double v) const {
    return log ? std::log(v / lo) / std::log(hi / lo) : (hi > lo ? (v - lo) / (hi - lo) : 0.5);
  }
  bool holds(double v) const { return v >= lo && v <= hi; }
  std::string commands(const char* axis) const {
    return (log ? std::string("set logscale ") + axis + " 10\n" : std::string("unset logscale ") + axis + "\n") +
           "set " + axis + "range [" + num(lo, "%.6g") + ":" + num(hi, "%.6g") + "]\n";
  }
};

/// The region the cost figure draws: the Pareto front's (every point outside
/// it is slower than the cheapest or costlier than the fastest Pareto point,
/// so dominated), with the recommendation and its baseline in it.
std::pair<AxisRange, AxisRange> cost_region(const FigureInputs& in) {
  AxisRange x, y;
  std::vector<bool> on_front(in.points.size(), in.front.size() <= 1);  // one Pareto point: every point's region
  for (std::size_t i : in.front) on_front[i] = true;
  for (std::size_t i = 0; i < in.points.size(); ++i) {
    if (!on_front[i]) continue;
    x.add(in.points[i].hours);
    y.add(in.points[i].cost);
  }
  for (const auto* p : {&in.recommended, &in.baseline})
    if (*p) x.add((*p)->hours), y.add((*p)->cost);
  x.finish();
  y.finish();
  return {x, y};
}

/// The Pareto points to label with their index: a label is left out when it
/// would overlap one already placed (closer than 4% of the plot's width and
/// height), so labels never pile up; every point stays marked.
std::vector<bool> labelled(const FigureInputs& in, const AxisRange& x, const AxisRange& y) {
  std::vector<bool> keep(in.front.size(), false);
  std::vector<std::pair<double, double>> placed;
  for (std::size_t k = 0; k < in.front.size(); ++k) {
    const auto& p = in.points[in.front[k]];
    const double px = x.at(p.hours), py = y.at(p.cost);
    bool clear = true;
    for (const auto& [qx, qy] : placed) clear = clear && (std::fabs(px - qx) > 0.06 || std::fabs(py - qy) > 0.04);
    if (clear) placed.emplace_back(px, py);
    keep[k] = clear;
  }
  return keep;
}

/// Cost against time-to-train: a colour per compressor (half transparent, so
/// points on top of each other stay visible), clusters of one's own (no
/// catalog instance: an on-prem price) circled, the Pareto front labelled with
/// each point's index, the recommendation and its baseline marked; the axes
/// zoomed to the front's region, the points beyond it counted in the caption.
void FigureWriter::cost_vs_time() {
  const auto [x, y] = cost_region(in_);
  std::map<std::string, std::vector<const PlanPoint*>, NaturalLess> by;
  std::vector<const PlanPoint*> own;
  std::size_t outside = 0;
  for (const auto& p : in_.points) {
    if (!x.holds(p.hours) || !y.holds(p.cost)) {
      ++outside;
      continue;
    }
    by[p.compression].push_back(&p);
    if (p.instance.empty()) own.push_back(&p);
  }
  std::ostringstream dat, plot;
  plot << kStyle << "set title 'Cost against time-to-train (on-demand prices)'\n"
       << "set xlabel 'time to train (hours)'\nset ylabel 'cost (USD)'\n"
       << x.commands("x") << y.commands("y")
       << "set style textbox opaque noborder margins 1,1\nset key spacing 1.6\nplot ";
  int idx = 0;
  auto block = [&](const std::string& title, const std::vector<const PlanPoint*>& pts, const std::string& style) {
    dat << data_label(title) << " " << data_label(title) << "\n";  // the block's title (columnheader)
    for (const auto* p : pts) dat << num(p->hours, "%.6g") << " " << num(p->cost, "%.6g") << "\n";
    dat << (pts.empty() ? "NaN NaN\n\n\n" : "\n\n");
    plot << (idx ? ", " : "") << "'cost-vs-time.dat' index " << idx << " using 1:2 " << style;
    ++idx;
  };
  for (const auto& [name, pts] : by)
    block(name, pts, "with points pt 7 ps 1.2 lc rgb '#80" + palette_.colour(name) + "' title columnheader(1)");
  if (!own.empty())
    block("own cluster (on-prem price)", own, "with points pt 6 ps 2.2 lw 1.5 lc rgb '#333333' title columnheader(1)");
  const auto keep = labelled(in_, x, y);
  dat << "\"Pareto front\" \"Pareto front\"\n";
  for (std::size_t k = 0; k < in_.front.size(); ++k) {
    const auto& p = in_.points[in_.front[k]];
    dat << num(p.hours, "%.6g") << " " << num(p.cost, "%.6g") << " "
        << data_label(keep[k] ? "#" + std::to_string(p.index) : "") << "\n";
  }
  dat << "\n\n";
  plot << ", 'cost-vs-time.dat' index " << idx
       << " using 1:2 with linespoints lc rgb 'black' lw 1.5 dt 2 pt 1 ps 1.2 title columnheader(1)"
       << ", 'cost-vs-time.dat' index " << idx
       << " using 1:2:3 with labels boxed left offset char 1,1 font ',10' notitle";
  ++idx;
  auto mark = [&](const std::optional<PlanPoint>& p, const char* title, int pt) {
    if (p)
      block(title, {&*p}, "with points pt " + std::to_string(pt) + " ps 3 lw 2 lc rgb 'black' title columnheader(1)");
  };
  mark(in_.recommended, "recommended", 3);
  if (in_.baseline && in_.recommended && in_.baseline->index != in_.recommended->index)
    mark(in_.baseline, "baseline (uncompressed, k = 1)", 4);
  write_file_atomic(dir_ + "/cost-vs-time.dat", dat.str());
  const std::size_t unlabelled = static_cast<std::size_t>(std::count(keep.begin(), keep.end(), false));
  add("cost-vs-time", plot.str() + "\n", "Cost against time-to-train",
      "Every configuration with a training target and a price" +
          (outside ? " in the Pareto front's region (" + std::to_string(outside) +
                         " points beyond it, all slower than its cheapest point or costlier than its fastest, are "
                         "left out; the tables list them)"
                   : std::string()) +
          ". Colours: one per compressor, the same in every report; a ring marks a cluster of one's own (an "
          "on-prem price, no catalog instance). The dashed staircase is the Pareto front (nothing is both faster "
          "and cheaper), its points labelled with their index in the tables" +
          (unlabelled ? " (" + std::to_string(unlabelled) + " labels left out where they would overlap)"
                      : std::string()) +
          "; the star is the recommendation, the square its uncompressed baseline (the same on every other swept "
          "key)." +
          (x.log || y.log ? " Logarithmic axes where the values span a decade or more." : ""));
}

/// The bars to draw: the recommendation and its baseline first, then the
/// Pareto points, else the largest cluster's points (in sweep order); at most 24.
std::vector<std::pair<std::string, const ResultRecord*>> FigureWriter::breakdown_points() const {
  std::vector<std::pair<std::string, const ResultRecord*>> pick;
  std::set<std::size_t> taken;
  auto take = [&](std::size_t index, const std::string& role) {
    if (taken.count(index)) return;
    for (const auto* r : in_.ok)
      if (r->index == index) {
        pick.emplace_back(role, r);
        taken.insert(index);
      }
  };
  if (in_.baseline) take(in_.baseline->index, "baseline: ");
  if (in_.recommended) take(in_.recommended->index, "recommended: ");
  for (std::size_t i : in_.front) take(in_.points[i].index, "");
  if (pick.empty()) {
    int top = 0;
    for (const auto* r : in_.ok) top = std::max(top, r->world.value_or(0));
    for (const auto* r : in_.ok)
      if (r->world.value_or(0) == top) take(r->index, "");
  }
  if (pick.size() > 24) pick.resize(24);
  return pick;
}

/// Breakdown bars of `pick`, absolute and as shares.
void FigureWriter::breakdown(const std::vector<std::pair<std::string, const ResultRecord*>>& pick) {
  std::ostringstream dat, plot;
  dat << "# label forward backward exposed_comm optimizer (ms)\n";
  std::size_t longest = 0;
  for (const auto& [role, r] : pick) {
    const std::string label = role + dims_.series_of(*r, {});
    longest = std::max(longest, label.size());
    dat << data_label(label) << " " << num(r->forward.value_or(0) * 1e3, "%.6g") << " "
        << num(r->backward.value_or(0) * 1e3, "%.6g") << " " << num(r->exposed_communication.value_or(0) * 1e3, "%.6g")
        << " " << num(r->optimizer.value_or(0) * 1e3, "%.6g") << "\n";
  }
  write_file_atomic(dir_ + "/breakdown.dat", dat.str());
  // Room under the bars for the longest label, slanted at 40 degrees: about
  // 0.3 character lines of the axis font per character of the smaller tic font.
  const int margin = 4 + static_cast<int>(std::ceil(0.3 * static_cast<double>(longest)));
  const int height = 420 + 14 * margin;
  const std::string bars =
      "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.85 border -1\n"
      "set boxwidth 0.7\nset xtics rotate by -40 left noenhanced font ',10'\nset bmargin " +
      std::to_string(margin) + "\nset rmargin " + std::to_string(std::max(10, margin)) + "\n";
  plot << kStyle << "set title 'Where an iteration goes'\nset ylabel 'time (ms)'\n"
       << bars
       << "plot 'breakdown.dat' using 2:xtic(1) title 'forward' lc rgb '#1f77b4', "
          "'' using 3 title 'backward' lc rgb '#2ca02c', '' using 4 title 'exposed communication' lc rgb "
          "'#d62728', '' using 5 title 'optimizer' lc rgb '#9467bd'\n";
  const bool planned = in_.recommended.has_value();
  const std::string which = planned ? "The recommendation beside its baseline (uncompressed, smallest k, the same "
                                      "on every other swept key, when the sweep has it), then the Pareto-optimal "
                                      "configurations"
                                    : "The configurations of the largest cluster";
  add("breakdown", plot.str(), "Iteration breakdown",
      which +
          ": forward and backward compute (all micro-steps), communication not hidden behind "
          "the backward pass, and the optimizer step.",
      1100, height);
  // The same bars as shares of each iteration, so that a small phase stays
  // visible beside a large one (at 1 Gbps exposed communication can be
  // 100x the compute).
  std::ostringstream share;
  share << kStyle << "set title 'Where an iteration goes (share of each iteration)'\nset ylabel 'share (%)'\n"
        << "set yrange [0:100]\n"
        << bars << "total(a, b, c, d) = (a + b + c + d > 0) ? a + b + c + d : 1\n"
        << "plot 'breakdown.dat' using (100*$2/total($2,$3,$4,$5)):xtic(1) title 'forward' lc rgb '#1f77b4', "
           "'' using (100*$3/total($2,$3,$4,$5)) title 'backward' lc rgb '#2ca02c', "
           "'' using (100*$4/total($2,$3,$4,$5)) title 'exposed communication' lc rgb '#d62728', "
           "'' using (100*$5/total($2,$3,$4,$5)) title 'optimizer' lc rgb '#9467bd'\n";
  add("breakdown-share", share.str(), "Iteration breakdown, as shares",
      which + ", each phase as a percentage of its iteration time.", 1100, height);
}

}  // namespace

bool gnuplot_available(const std::string& gnuplot) {
  return run_gnuplot_status(gnuplot, ".", {"-e", "exit"}, true) == 0;
}

Figures write_figures(const std::string& gnuplot, const std::string& dir, const FigureInputs& in) {
  return FigureWriter(gnuplot, dir, in).run();
}

}  // namespace gw::plan::report_detail
