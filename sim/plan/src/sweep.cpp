#include "gradwire/plan/sweep.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

#include "gradwire/atomic_file.hpp"
#include "gradwire/error.hpp"
#include "gradwire/units.hpp"
#include "gradwire/yaml_reader.hpp"

namespace gw::plan {
namespace {

// --- YAML helpers ------------------------------------------------------------

std::string flow(const YAML::Node& n) {
  if (n.IsScalar()) return n.Scalar();
  YAML::Emitter e;
  e.SetMapFormat(YAML::Flow);
  e.SetSeqFormat(YAML::Flow);
  e << n;
  return e.c_str();
}

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::uint64_t fnv1a(std::string_view s, std::uint64_t h = 1469598103934665603ull) {
  for (unsigned char ch : s) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  return h;
}

std::vector<std::string> split_key(const std::string& key) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : key) {
    if (ch == '.') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  out.push_back(cur);
  return out;
}

bool under(const std::string& key, const std::string& axis) {
  if (key == axis) return true;
  return key.size() > axis.size() && key.compare(0, axis.size(), axis) == 0 &&
         (key[axis.size()] == '.' || key[axis.size()] == '[');
}

/// The mark of the node at key path `path` ("a.b[2].c") below `root`, or of
/// its deepest existing ancestor.
YAML::Mark find_mark(const YAML::Node& root, const std::string& path) {
  YAML::Node node = root;
  YAML::Mark best = root.Mark();
  std::size_t pos = 0;
  while (pos < path.size()) {
    std::size_t end = path.find_first_of(".[", pos);
    if (end == pos && path[pos] == '[') {
      const std::size_t close = path.find(']', pos);
      if (close == std::string::npos || !node.IsSequence()) break;
      const std::size_t i = std::stoul(path.substr(pos + 1, close - pos - 1));
      if (i >= node.size()) break;
      node.reset(node[i]);
      pos = close + 1;
    } else {
      if (end == std::string::npos) end = path.size();
      const std::string seg = path.substr(pos, end - pos);
      if (!node.IsMap() || !node[seg]) break;
      YAML::Node child = node[seg];
      node.reset(child);
      pos = end;
    }
    if (!node.Mark().is_null()) best = node.Mark();
    if (pos < path.size() && path[pos] == '.') ++pos;
  }
  return best;
}

struct AxisDigit {
  std::size_t axis, value;
};

std::vector<AxisDigit> digits(const SweepSpec& spec, std::size_t index) {
  std::vector<AxisDigit> d(spec.axes.size());
  for (std::size_t a = spec.axes.size(); a-- > 0;) {
    const std::size_t n = spec.axes[a].size();
    d[a] = {a, index % n};
    index /= n;
  }
  return d;
}

// --- Signals -------------------------------------------------------------------

volatile sig_atomic_t g_stop = 0;
extern "C" void on_stop_signal(int) { g_stop = 1; }

void write_all_stderr(const std::string& s) {
  const char* p = s.data();
  std::size_t left = s.size();
  while (left > 0) {
    ssize_t w = ::write(2, p, left);
    if (w < 0) {
      if (errno == EINTR && !g_stop) continue;
      return;
    }
    p += w;
    left -= static_cast<std::size_t>(w);
  }
}

std::string fmt_duration(double s) {
  char buf[32];
  const long t = static_cast<long>(s + 0.5);
  std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
  return buf;
}

}  // namespace

// --- Loading ---------------------------------------------------------------------

SweepSpec parse_sweep(const std::string& text, const std::string& name, const std::string& dir) {
  auto doc = yaml::load_string(text, name);
  auto root = doc.root();
  root.allow_keys({"name", "base", "axes", "zip", "global_batch", "fit_accumulation", "convergence_factors",
                   "memory", "billing", "evaluator"});
  SweepSpec spec;
  spec.file = name;
  if (auto n = root.optional("name")) spec.name = n->as_string();
  auto base = root.required("base");
  spec.base_line = base.line();
  if (base.is_scalar()) {
    std::filesystem::path p(base.as_string());
    if (p.is_relative()) p = std::filesystem::path(dir) / p;
    spec.base_file = p.lexically_normal().string();
    if (!std::filesystem::exists(spec.base_file)) base.fail("base scenario " + spec.base_file + " does not exist");
    load_scenario(spec.base_file);  // errors name the base file's own lines
    spec.base = YAML::LoadFile(spec.base_file);
  } else if (base.is_map()) {
    spec.base_file = name;
    spec.base = base.raw();
  } else {
    base.fail("expected the path of a scenario file or an inline scenario mapping");
  }
  static const std::regex key_re(R"([A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*)");
  std::vector<std::pair<std::string, yaml::Node>> all_keys;
  auto check_key = [&](const yaml::Node& at, const std::string& key) {
    if (!std::regex_match(key, key_re)) at.fail("an axis key is a dotted path of field names, e.g. cluster.nodes");
    for (const auto& [other, node] : all_keys) {
      if (other == key) at.fail("axis " + key + " appears twice");
      if (under(key, other) || under(other, key))
        at.fail("axes " + other + " (line " + std::to_string(node.line()) + ") and " + key + " overlap");
    }
    all_keys.emplace_back(key, at);
  };
  auto values_of = [&](const yaml::Node& list) {
    list.expect_seq();
    if (list.size() == 0) list.fail("an axis needs at least one value");
    return list.elements();
  };
  std::optional<yaml::Node> axes_node;
  if (auto axes = root.optional("axes")) {
    axes_node = axes;
    axes->expect_map();
    for (const auto& key : axes->keys()) {
      auto list = axes->required(key);
      check_key(list, key);
      Axis a;
      a.keys = {key};
      for (const auto& v : values_of(list)) a.values.push_back({v.raw()});
      spec.axes.push_back(std::move(a));
    }
  }
  if (auto zip = root.optional("zip")) {
    if (!axes_node) axes_node = zip;
    zip->expect_seq();
    for (const auto& group : zip->elements()) {
      group.expect_map();
      Axis a;
      std::size_t len = 0;
      for (const auto& key : group.keys()) {
        auto list = group.required(key);
        check_key(list, key);
        auto vals = values_of(list);
        if (a.keys.empty()) {
          len = vals.size();
          a.values.resize(len);
        } else if (vals.size() != len) {
          list.fail("a zip group's lists must have the same length (" + std::to_string(len) + " above, " +
                    std::to_string(vals.size()) + " here)");
        }
        a.keys.push_back(key);
        for (std::size_t i = 0; i < len; ++i) a.values[i].push_back(vals[i].raw());
      }
      if (a.keys.empty()) group.fail("an empty zip group");
      spec.axes.push_back(std::move(a));
    }
  }
  // Size, refusing absurd sweeps before anything is expanded.
  long double points = 1;
  for (const auto& a : spec.axes) points *= static_cast<long double>(a.size());
  if (points > static_cast<long double>(kMaxSweepPoints)) {
    (axes_node ? *axes_node : root).fail("the axes make " + std::to_string(static_cast<double>(points)) +
                                         " points, more than the " + std::to_string(kMaxSweepPoints) +
                                         " a sweep may have; split it or thin the axes");
  }
  spec.points = static_cast<std::size_t>(points);

  if (auto g = root.optional("global_batch")) spec.options.global_batch = g->as_int(1, 1ll << 40);
  if (auto f = root.optional("fit_accumulation")) {
    spec.options.fit_accumulation = f->as_bool();
    if (spec.options.fit_accumulation && !spec.options.global_batch)
      f->fail("fit_accumulation needs global_batch");
    if (spec.options.fit_accumulation) {
      for (const auto& a : spec.axes)
        for (const auto& k : a.keys)
          if (k == "workload.accumulation" || k == "workload.micro_batch")
            f->fail("fit_accumulation chooses " + k + "; remove that axis");
    }
  }
  if (auto c = root.optional("convergence_factors")) {
    c->expect_map();
    for (const auto& k : c->keys()) {
      auto v = c->required(k);
      if (std::find(compressor_names().begin(), compressor_names().end(), k) == compressor_names().end())
        v.fail("unknown compression kind \"" + k + "\"");
      spec.options.convergence_factors[k] = v.as_double(0.01, 100);
    }
  }
  if (auto m = root.optional("memory")) {
    m->allow_keys({"reserve"});
    if (auto r = m->optional("reserve")) spec.options.memory.reserve = r->as_size(0, 1e13);
  }
  if (auto b = root.optional("billing")) {
    b->allow_keys({"granularity", "minimum"});
    BillingSpec bs;
    auto g = b->required("granularity");
    bs.granularity = g.as_time(0, 86400.0 * 31);
    if (bs.granularity <= 0) g.fail("granularity must be greater than 0");
    bs.minimum = b->required("minimum").as_time(0, 86400.0 * 31);
    spec.options.billing = bs;
  }
  if (auto e = root.optional("evaluator")) spec.evaluator = e->as_enum({"closed-form", "simulation"});

  // Identity of the sweep: what determines its records.
  std::string ident = flow(spec.base);
  for (const auto& a : spec.axes) {
    for (const auto& k : a.keys) ident += "|" + k;
    for (const auto& vals : a.values)
      for (const auto& v : vals) ident += "|" + flow(v);
  }
  ident += "|gb=" + (spec.options.global_batch ? std::to_string(*spec.options.global_batch) : std::string("-"));
  ident += "|fit=" + std::to_string(spec.options.fit_accumulation);
  for (const auto& [k, v] : spec.options.convergence_factors) ident += "|cf:" + k + "=" + std::to_string(v);
  ident += "|reserve=" + std::to_string(spec.options.memory.reserve);
  if (spec.options.billing)
    ident += "|bill=" + std::to_string(spec.options.billing->granularity) + "/" +
             std::to_string(spec.options.billing->minimum);
  ident += "|eval=" + spec.evaluator;
  spec.id = hex64(fnv1a(ident));

  for (std::size_t i = 0; i < spec.points; ++i) point_scenario(spec, i);
  return spec;
}

SweepSpec load_sweep(const std::string& path) {
  std::string text;
  try {
    text = read_file(path);
  } catch (const std::exception& e) {
    throw InputError(path, 0, 0, "", e.what());
  }
  const auto parent = std::filesystem::path(path).parent_path();
  return parse_sweep(text, path, parent.empty() ? "." : parent.string());
}

std::vector<std::pair<std::string, std::string>> point_params(const SweepSpec& spec, std::size_t index) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& d : digits(spec, index)) {
    const Axis& a = spec.axes[d.axis];
    for (std::size_t k = 0; k < a.keys.size(); ++k) out.emplace_back(a.keys[k], flow(a.values[d.value][k]));
  }
  return out;
}

std::string point_key(const SweepSpec& spec, std::size_t index) {
  std::string key;
  for (const auto& [k, v] : point_params(spec, index)) key += (key.empty() ? "" : ";") + k + "=" + v;
  return key;
}

Scenario point_scenario(const SweepSpec& spec, std::size_t index) {
  if (index >= spec.points) throw std::out_of_range("sweep point " + std::to_string(index) + " out of range");
  // A fresh tree per point (Clone: no memory shared with the sweep document),
  // validated by the scenario loader itself; errors are mapped back to the
  // sweep file (axis values) or the base file (everything else).
  YAML::Node tree = YAML::Clone(spec.base);
  struct Set {
    std::string key;
    YAML::Node value;
  };
  std::vector<Set> sets;
  for (const auto& d : digits(spec, index)) {
    const Axis& a = spec.axes[d.axis];
    for (std::size_t k = 0; k < a.keys.size(); ++k) {
      const auto segs = split_key(a.keys[k]);
      const YAML::Node& value = a.values[d.value][k];
      YAML::Node node = tree;
      for (std::size_t s = 0; s + 1 < segs.size(); ++s) {
        YAML::Node child = node[segs[s]];
        if (!child.IsDefined() || child.IsNull()) {
          node[segs[s]] = YAML::Node(YAML::NodeType::Map);
          child.reset(node[segs[s]]);
        } else if (!child.IsMap()) {
          const YAML::Mark m = value.Mark();
          throw InputError(spec.file, m.line + 1, m.column + 1, a.keys[k],
                           "the base scenario's " + segs[s] + " is not a mapping, so " + a.keys[k] +
                               " cannot be set");
        }
        node.reset(child);
      }
      node[segs.back()] = YAML::Clone(value);
      sets.push_back({a.keys[k], value});
    }
  }
  YAML::Emitter out;
  out << tree;
  try {
    return parse_scenario(yaml::load_string(out.c_str(), spec.base_file));
  } catch (const InputError& e) {
    const std::string where = " (sweep point " + std::to_string(index) + ": " + point_key(spec, index) + ")";
    for (const auto& set : sets) {
      if (under(e.key(), set.key)) {
        const std::string rest = e.key().substr(set.key.size());
        YAML::Mark m = find_mark(set.value, rest.empty() ? rest : rest.substr(rest[0] == '.' ? 1 : 0));
        throw InputError(spec.file, m.line + 1, m.column + 1, e.key(), e.reason() + where);
      }
    }
    const YAML::Mark m = find_mark(spec.base, e.key());
    throw InputError(spec.base_file, m.is_null() ? 0 : m.line + 1, m.is_null() ? 0 : m.column + 1, e.key(),
                     e.reason() + where);
  }
}

std::pair<int, int> parse_shard(const std::string& text) {
  static const std::regex re(R"((\d{1,6})/(\d{1,6}))");
  std::smatch m;
  if (!std::regex_match(text, m, re)) throw std::invalid_argument("--shard expects i/N, e.g. 0/4");
  const int i = std::stoi(m[1]), n = std::stoi(m[2]);
  if (n < 1 || i >= n) throw std::invalid_argument("--shard " + text + ": need 0 <= i < N");
  return {i, n};
}

// --- Results files ---------------------------------------------------------------

std::vector<ResultLine> read_results(const std::string& path, bool* partial) {
  if (partial) *partial = false;
  std::vector<ResultLine> out;
  std::string text;
  try {
    text = read_file(path);
  } catch (const std::exception& e) {
    throw InputError(path, 0, 0, "", e.what());
  }
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
    if (line.empty()) continue;
    ResultLine r;
    try {
      const auto j = nlohmann::json::parse(line);
      r.index = j.at("index").get<std::size_t>();
      r.of = j.at("of").get<std::size_t>();
      r.sweep = j.at("sweep").get<std::string>();
      r.key = j.at("key").get<std::string>();
    } catch (const std::exception& e) {
      throw InputError(path, lineno, 1, "", std::string("not a sweep results record: ") + e.what());
    }
    r.text = std::move(line);
    out.push_back(std::move(r));
  }
  return out;
}

std::string canonical_results(std::vector<ResultLine> lines) {
  std::stable_sort(lines.begin(), lines.end(),
                   [](const ResultLine& a, const ResultLine& b) { return a.index < b.index; });
  std::string out;
  for (const auto& l : lines) out += l.text + "\n";
  return out;
}

std::pair<std::size_t, std::size_t> merge_results(const std::string& out, const std::vector<std::string>& shards) {
  std::map<std::size_t, ResultLine> by_index;
  std::string sweep;
  std::size_t of = 0;
  for (const auto& path : shards) {
    bool partial = false;
    auto lines = read_results(path, &partial);
    int lineno = 0;
    for (auto& l : lines) {
      ++lineno;
      if (sweep.empty()) {
        sweep = l.sweep;
        of = l.of;
      } else if (l.sweep != sweep) {
        throw InputError(path, lineno, 1, "sweep",
                         "records of another sweep (" + l.sweep + ", the first file's are " + sweep + ")");
      }
      auto [it, inserted] = by_index.emplace(l.index, l);
      if (!inserted && it->second.text != l.text)
        throw InputError(path, lineno, 1, "index", "point " + std::to_string(l.index) + " differs from its record in another shard");
    }
  }
  std::vector<ResultLine> all;
  for (auto& [i, l] : by_index) all.push_back(std::move(l));
  write_file_atomic(out, canonical_results(all));
  return {all.size(), of};
}

// --- Running ---------------------------------------------------------------------

RunSummary run_sweep(const SweepSpec& spec, const RunOptions& opt, const Evaluator& evaluator,
                     const std::string& evaluator_name) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  if (opt.out.empty()) throw std::invalid_argument("no results file given");
  if (opt.jobs < 1) throw std::invalid_argument("-j must be at least 1");
  RunSummary sum;
  std::set<std::size_t> done;
  if (std::filesystem::exists(opt.out)) {
    bool partial = false;
    auto lines = read_results(opt.out, &partial);
    int lineno = 0;
    for (const auto& l : lines) {
      ++lineno;
      if (l.sweep != spec.id || l.of != spec.points || l.index >= spec.points || l.key != point_key(spec, l.index))
        throw InputError(opt.out, lineno, 1, "sweep",
                         "holds results of another sweep (or an edited one): use another --out or remove it");
      done.insert(l.index);
    }
    if (partial) {  // drop the cut-off record before appending after it
      std::string text;
      for (const auto& l : lines) text += l.text + "\n";
      write_file_atomic(opt.out, text);
    }
  }
  std::vector<std::size_t> todo;
  for (std::size_t i = static_cast<std::size_t>(opt.shard_index); i < spec.points;
       i += static_cast<std::size_t>(opt.shard_count)) {
    ++sum.in_shard;
    if (done.count(i)) {
      ++sum.skipped;
    } else {
      todo.push_back(i);
    }
  }
  PointEvaluator pe(spec.options, evaluator, evaluator_name);
  {
    std::set<std::pair<std::string, std::string>> seen;
    for (std::size_t i : todo) {
      Scenario s = point_scenario(spec, i);
      const std::pair<std::string, std::string> mp{s.workload ? s.workload->model : "",
                                                   s.profile.empty() ? s.cluster.gpu : s.profile};
      if (seen.insert(mp).second) pe.preload(s);  // workers inherit the loaded models and profiles
    }
  }
  if (!std::filesystem::exists(opt.out)) write_file_atomic(opt.out, "");

  bool bar = opt.progress == RunOptions::Progress::Bar ||
             (opt.progress == RunOptions::Progress::Auto && ::isatty(2));
  const bool lines_progress = opt.progress == RunOptions::Progress::Lines;

  struct sigaction sa {}, old_int {}, old_term {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: poll returns EINTR
  g_stop = 0;
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);

  struct Worker {
    pid_t pid;
    int fd;
    std::size_t index;
    std::string buf;
  };
  std::vector<Worker> running;
  std::size_t next = 0;
  auto last_bar = clock::now() - std::chrono::seconds(1);
  const std::size_t total_todo = todo.size();

  auto spawn = [&](std::size_t index) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      ::signal(SIGINT, SIG_DFL);
      ::signal(SIGTERM, SIG_DFL);
      ::close(fds[0]);
      for (const auto& w : running) ::close(w.fd);
      std::string line;
      try {
        line = pe.evaluate(index, spec.points, spec.id, point_key(spec, index), point_params(spec, index),
                           point_scenario(spec, index));
      } catch (const std::exception& e) {
        nlohmann::ordered_json j{{"index", index}, {"of", spec.points}, {"sweep", spec.id},
                                 {"key", point_key(spec, index)}, {"status", "error"}, {"reason", e.what()}};
        line = j.dump();
      }
      line += "\n";
      const char* p = line.data();
      std::size_t left = line.size();
      while (left > 0) {
        ssize_t w = ::write(fds[1], p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) ::_exit(3);
        p += w;
        left -= static_cast<std::size_t>(w);
      }
      ::_exit(0);
    }
    ::close(fds[1]);
    running.push_back({pid, fds[0], index, {}});
  };

  auto record_failure = [&](const Worker& w, const std::string& why) {
    nlohmann::ordered_json j{{"index", w.index}, {"of", spec.points}, {"sweep", spec.id},
                             {"key", point_key(spec, w.index)}, {"status", "error"}, {"reason", why}};
    return j.dump();
  };

  try {
    while (!g_stop && (next < todo.size() || !running.empty())) {
      while (!g_stop && running.size() < static_cast<std::size_t>(opt.jobs) && next < todo.size())
        spawn(todo[next++]);
      std::vector<pollfd> pfds;
      for (const auto& w : running) pfds.push_back({w.fd, POLLIN, 0});
      const int rc = ::poll(pfds.data(), pfds.size(), 200);
      if (rc < 0) {
        if (errno == EINTR) continue;
        throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
      }
      for (std::size_t k = pfds.size(); k-- > 0;) {
        if (pfds[k].revents == 0) continue;
        Worker& w = running[k];
        char buf[65536];
        const ssize_t n = ::read(w.fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n > 0) {
          w.buf.append(buf, static_cast<std::size_t>(n));
          continue;
        }
        ::close(w.fd);
        int status = 0;
        while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
        }
        std::string line;
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !w.buf.empty() && w.buf.back() == '\n') {
          line = w.buf.substr(0, w.buf.size() - 1);
        } else if (!g_stop) {
          line = record_failure(w, WIFSIGNALED(status)
                                       ? "the worker died with signal " + std::to_string(WTERMSIG(status))
                                       : "the worker failed (exit " + std::to_string(WEXITSTATUS(status)) + ")");
        }
        const std::size_t index = w.index;
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
        if (line.empty()) continue;  // interrupted: not finished
        append_line_durable(opt.out, line);
        ++sum.ran;
        if (line.find("\"status\":\"error\"") != std::string::npos) ++sum.failed;
        if (lines_progress) {
          write_all_stderr("point " + std::to_string(index) + " done (" + std::to_string(sum.ran) + "/" +
                           std::to_string(total_todo) + ")\n");
        }
        if (bar && (clock::now() - last_bar > std::chrono::milliseconds(100) || sum.ran == total_todo)) {
          last_bar = clock::now();
          const double el = std::chrono::duration<double>(clock::now() - t0).count();
          const double ran = static_cast<double>(sum.ran), todo_n = static_cast<double>(total_todo);
          const double rate = ran / std::max(el, 1e-9);
          char msg[200];
          std::snprintf(msg, sizeof msg, "\rsweep %s: %zu/%zu points (%.0f%%), %.1f points/s, ETA %s   ",
                        spec.name.empty() ? spec.file.c_str() : spec.name.c_str(), sum.ran, total_todo,
                        100.0 * ran / std::max(todo_n, 1.0), rate,
                        fmt_duration((todo_n - ran) / std::max(rate, 1e-9)).c_str());
          write_all_stderr(msg);
        }
      }
    }
  } catch (...) {
    for (const auto& w : running) {
      ::kill(w.pid, SIGTERM);
      ::close(w.fd);
      ::waitpid(w.pid, nullptr, 0);
    }
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
    throw;
  }
  if (bar && total_todo > 0) write_all_stderr("\n");
  if (g_stop) {
    sum.interrupted = true;
    for (const auto& w : running) ::kill(w.pid, SIGTERM);
    for (const auto& w : running) {
      ::close(w.fd);
      while (::waitpid(w.pid, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
  } else {
    // Complete: rewrite in canonical order (sorted by index).
    write_file_atomic(opt.out, canonical_results(read_results(opt.out)));
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sum.seconds = std::chrono::duration<double>(clock::now() - t0).count();
  return sum;
}

}  // namespace gw::plan
