#include "gradwire/plan/sweep.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
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
#include "gradwire/child.hpp"
#include "gradwire/catalog.hpp"
#include "gradwire/error.hpp"
#include "gradwire/model_desc.hpp"
#include "gradwire/profile.hpp"
#include "gradwire/scenario_yaml.hpp"
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

using ojson = nlohmann::ordered_json;

/// JSON text that never throws: bytes that are not UTF-8 become U+FFFD.
std::string dump(const ojson& j) { return j.dump(-1, ' ', false, ojson::error_handler_t::replace); }

// --- The results file's lock ---------------------------------------------------
//
// OUT.lock beside the results file (the file itself is replaced by rename at
// the end, so its inode cannot carry the lock): flock(LOCK_EX) held for the
// whole run, the holder's PID written in it; removed (unlinked while still
// locked) when done. A process that locked a file just unlinked by its holder
// notices (the path no longer names its inode) and tries again.
class ResultsLock {
 public:
  ResultsLock(const std::string& out, const std::string& shown) : path_(out + ".lock") {
    for (int attempt = 0; attempt < 100; ++attempt) {
      fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
      if (fd_ < 0)
        throw InputError(shown, 0, 0, "", "cannot create the lock file " + path_ + ": " + std::strerror(errno));
      struct stat st {};
      if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd_);
        throw InputError(shown, 0, 0, "", "the lock file " + path_ + " is not a regular file");
      }
      if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        const int err = errno;
        std::string holder;
        char buf[64] = {};
        const ssize_t n = ::pread(fd_, buf, sizeof buf - 1, 0);
        if (n > 0) {
          holder.assign(buf, static_cast<std::size_t>(n));
          while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
          if (holder.find_first_not_of("0123456789") != std::string::npos) holder.clear();
        }
        ::close(fd_);
        fd_ = -1;
        if (err == EINTR) continue;
        if (err != EWOULDBLOCK)
          throw InputError(shown, 0, 0, "", "cannot lock " + path_ + ": " + std::strerror(err));
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
        return;
      }
      ::close(fd_);  // locked a lock file its holder had just removed: again
      fd_ = -1;
    }
    throw InputError(shown, 0, 0, "", "cannot take the lock " + path_ + " (it keeps being replaced)");
  }
  int fd() const { return fd_; }
  ResultsLock(const ResultsLock&) = delete;
  ResultsLock& operator=(const ResultsLock&) = delete;
  ~ResultsLock() {
    if (fd_ >= 0) {
      ::unlink(path_.c_str());
      ::close(fd_);
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
};

// --- Results records -----------------------------------------------------------

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

void validate_record(const nlohmann::json& j, const std::string& file, int line) {
  auto fail = [&](const std::string& key, const std::string& why) -> void { throw InputError(file, line, 1, key, why); };
  if (!j.is_object()) fail("", "not a sweep results record (expected a JSON object)");
  check_numbers(j, "", file, line);
  const std::string status = j.contains("status") && j["status"].is_string() ? j["status"].get<std::string>() : "";
  const bool ok = status == "ok";
  auto field = [&](const char* key, bool required) -> const nlohmann::json* {
    if (!j.contains(key)) {
      static const std::set<std::string> always{"index", "of", "sweep", "key", "status", "reason"};
      if (required) fail(key, std::string("missing") + (always.count(key) ? "" : " (a record of status ok needs it)"));
      return nullptr;
    }
    return &j[key];
  };
  auto count = [&](const char* key, bool required, unsigned long long max) {
    const auto* v = field(key, required);
    if (v == nullptr) return;
    if (!v->is_number_unsigned()) fail(key, "expected a whole number, got " + std::string(v->type_name()));
    if (v->get<unsigned long long>() > max) fail(key, v->dump() + " is out of range [0, " + std::to_string(max) + "]");
  };
  auto string = [&](const char* key, bool required, bool nullable = false) {
    const auto* v = field(key, required);
    if (v == nullptr || v->is_string() || (nullable && v->is_null())) return;
    fail(key, std::string("expected a string") + (nullable ? " or null" : "") + ", got " + v->type_name());
  };
  auto number = [&](const nlohmann::json& parent, const std::string& at, const char* key, bool required,
                    bool nullable = false) {
    if (!parent.contains(key)) {
      if (required) fail(at + key, "missing");
      return;
    }
    const auto& v = parent[key];
    if (v.is_number() || (nullable && v.is_null())) return;
    fail(at + key, std::string("expected a number") + (nullable ? " or null" : "") + ", got " + v.type_name());
  };
  auto object = [&](const char* key, bool required) -> const nlohmann::json* {
    const auto* v = field(key, required);
    if (v != nullptr && !v->is_object()) fail(key, std::string("expected an object, got ") + v->type_name());
    return v;
  };
  count("index", true, kMaxSweepPoints - 1);
  count("of", true, kMaxSweepPoints);
  if (j["of"].get<unsigned long long>() == 0) fail("of", "a sweep has at least one point");
  if (j["index"].get<unsigned long long>() >= j["of"].get<unsigned long long>())
    fail("index", j["index"].dump() + " is not below of (" + j["of"].dump() + ")");
  string("sweep", true);
  string("key", true);
  string("status", true);
  if (!kStatuses.count(status)) fail("status", "\"" + status + "\" is not ok, error, invalid or no_fit");
  string("reason", status == "error");
  for (const char* k : {"model", "compression", "compression_kind", "cluster_key"}) string(k, ok);
  for (const char* k : {"gpu", "evaluator"}) string(k, false);
  string("instance", ok, true);
  for (const char* k : {"nodes", "gpus_per_node", "world", "micro_batch", "accumulation"})
    count(k, ok, static_cast<unsigned long long>(INT_MAX));
  for (const char* k : {"node_bandwidth", "iteration", "forward", "backward", "exposed_communication", "optimizer"})
    number(j, "", k, ok);
  for (const char* k : {"encode", "decode", "samples_per_second", "wire_bytes_per_gpu", "global_batch"})
    number(j, "", k, false);
  for (const char* k : {"params", "inputs"}) {
    if (const auto* o = object(k, false)) {
      for (auto it = o->begin(); it != o->end(); ++it)
        if (!it.value().is_string()) fail(std::string(k) + "." + it.key(), "expected a string");
    }
  }
  if (const auto* m = object("memory", false)) number(*m, "memory.", "total", true);
  if (const auto* t = object("training", false)) number(*t, "training.", "hours", true);
  if (const auto* c = object("cost", false)) {
    number(*c, "cost.", "on_demand", true);
    number(*c, "cost.", "spot", true, true);
  }
}

}  // namespace

ResultLine parse_result_line(std::string text, const std::string& file, int line) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    // The library's message names the byte; keep its reason, not its prefix.
    std::string why = e.what();
    if (const auto p = why.find("] "); p != std::string::npos && why.rfind("[json.exception", 0) == 0)
      why = why.substr(p + 2);
    throw InputError(file, line, 1, "", "not a sweep results record (not one JSON object): " + why);
  }
  validate_record(j, file, line);
  ResultLine r;
  r.index = j["index"].get<std::size_t>();
  r.of = j["of"].get<std::size_t>();
  r.sweep = j["sweep"].get<std::string>();
  r.key = j["key"].get<std::string>();
  r.status = j["status"].get<std::string>();
  r.text = std::move(text);
  r.file = file;
  r.line = line;
  return r;
}

// --- Loading ---------------------------------------------------------------------

SweepSpec parse_sweep(const std::string& text, const std::string& name, const std::string& dir,
                      const ValidationProgress& progress) {
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
    std::error_code ec;  // never throws: a name too long or otherwise unusable is "does not exist" here
    if (!std::filesystem::exists(spec.base_file, ec)) base.fail("base scenario " + spec.base_file + " does not exist");
    load_scenario(spec.base_file);  // errors name the base file's own lines
    spec.base = YAML::Load(read_input_file(spec.base_file, kMaxYamlBytes));
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

  // At most INT_MAX: the micro-batch and accumulation derived from it are ints.
  if (auto g = root.optional("global_batch")) spec.options.global_batch = g->as_int(1, INT_MAX);
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

  // Every point through the scenario loader, once (the only full pass).
  for (std::size_t i = 0; i < spec.points; ++i) {
    point_scenario(spec, i);
    if (progress && (i + 1) % 64 == 0) progress(i + 1, spec.points);
  }
  if (progress) progress(spec.points, spec.points);
  return spec;
}

SweepSpec load_sweep(const std::string& path, const ValidationProgress& progress) {
  const std::string text = read_input_file(path, kMaxYamlBytes);  // regular file, capped, FIFO-safe
  const auto parent = std::filesystem::path(path).parent_path();
  return parse_sweep(text, path, parent.empty() ? "." : parent.string(), progress);
}

std::vector<std::size_t> reference_points(const SweepSpec& spec) {
  // Only the axes that can change a model, profile or instance vary; every
  // other axis stays at its first value.
  auto overlaps = [](const std::string& a, const std::string& b) { return under(a, b) || under(b, a); };
  std::vector<std::size_t> indices{0};
  for (const auto& axis : spec.axes) {
    bool relevant = false;
    for (const auto& k : axis.keys)
      for (const char* target : {"workload.model", "profile", "cluster.gpu", "cluster.instance"})
        if (overlaps(k, target)) relevant = true;
    std::vector<std::size_t> next;
    const std::size_t n = axis.size();
    for (std::size_t base : indices)
      for (std::size_t d = 0; d < (relevant ? n : 1); ++d) next.push_back(base * n + d);
    indices.swap(next);
  }
  return indices;
}

std::vector<SweepInput> sweep_inputs(const SweepSpec& spec) {
  std::map<std::string, std::string> files;  // role -> path
  if (spec.base_file != spec.file) files["base"] = spec.base_file;
  for (std::size_t i : reference_points(spec)) {
    const Scenario s = point_scenario(spec, i);
    if (s.workload && !files.count("model " + s.workload->model))
      files["model " + s.workload->model] = load_model(s.workload->model).path;
    const std::string profile = s.profile.empty() ? s.cluster.gpu : s.profile;
    if (!files.count("profile " + profile)) files["profile " + profile] = load_profile(profile).path;
    if (s.cluster.instance && !files.count("catalog")) files["catalog"] = default_catalog().path;
  }
  std::vector<SweepInput> out;
  for (const auto& [role, path] : files)
    out.push_back({role, path, hex64(fnv1a(read_input_file(path, kMaxYamlBytes)))});
  return out;
}

std::string sweep_identity(const SweepSpec& spec, const std::vector<SweepInput>& inputs) {
  std::string ident = spec.id;
  for (const auto& in : inputs) ident += "|" + in.role + "=" + in.hash;
  return hex64(fnv1a(ident));
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

std::string canonical_results(std::vector<ResultLine> lines) {
  std::stable_sort(lines.begin(), lines.end(),
                   [](const ResultLine& a, const ResultLine& b) { return a.index < b.index; });
  std::string out;
  for (const auto& l : lines) out += l.text + "\n";
  return out;
}

std::pair<std::size_t, std::size_t> merge_results(const std::string& out, const std::vector<std::string>& shards) {
  // OUT is checked (not a shard, not a device, ...) and locked before anything is read.
  const std::string target = checked_output_path(out, shards);
  ResultsLock lock(target, out);
  std::map<std::size_t, ResultLine> by_index;
  std::string sweep;
  std::size_t of = 0;
  for (const auto& path : shards) {
    bool partial = false;
    auto lines = read_results(path, &partial);
    for (auto& l : lines) {
      if (sweep.empty()) {
        sweep = l.sweep;
        of = l.of;
      } else if (l.sweep != sweep) {
        throw InputError(path, l.line, 1, "sweep",
                         "records of another sweep (" + l.sweep + ", the first file's are " + sweep + ")");
      } else if (l.of != of) {
        throw InputError(path, l.line, 1, "of",
                         "a sweep of " + std::to_string(l.of) + " points, the first file's has " + std::to_string(of));
      }
      auto [it, inserted] = by_index.emplace(l.index, l);
      if (!inserted && it->second.text != l.text)
        throw InputError(path, l.line, 1, "index",
                         "point " + std::to_string(l.index) + " differs from its record at " + it->second.file + ":" +
                             std::to_string(it->second.line));
    }
  }
  // Never replace a file that is not a results file of the same sweep.
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0 && st.st_size > 0) {
    std::vector<ResultLine> existing;
    try {
      existing = read_results(target);
    } catch (const InputError& e) {
      throw InputError(out, 0, 0, "",
                       "exists and is not a sweep results file (" + e.reason() +
                           "); refusing to overwrite it: give the merged file a new name (gradwire merge OUT SHARD...)");
    }
    for (const auto& l : existing) {
      if (!sweep.empty() && l.sweep != sweep)
        throw InputError(out, l.line, 1, "sweep",
                         "exists and holds results of another sweep (" + l.sweep + ", the shards' are " + sweep +
                             "); refusing to overwrite it: give the merged file a new name");
      // A record the merge would lose: OUT is most likely a shard given as
      // OUT by mistake (`gradwire merge shard0 shard1`).
      const auto it = by_index.find(l.index);
      if (it == by_index.end() || it->second.text != l.text)
        throw InputError(out, l.line, 1, "index",
                         "exists and holds point " + std::to_string(l.index) +
                             (it == by_index.end() ? ", which no shard has" : " with other figures than the shards") +
                             "; refusing to overwrite it (is it a shard? gradwire merge OUT SHARD... writes OUT): give "
                             "the merged file a new name");
    }
  }
  std::vector<ResultLine> all;
  for (auto& [i, l] : by_index) all.push_back(std::move(l));
  write_file_atomic(target, canonical_results(all), shards);
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

  // What the points read, and the identity that covers it.
  const std::vector<SweepInput> inputs = sweep_inputs(spec);
  const std::string id = sweep_identity(spec, inputs);
  std::vector<std::string> input_paths{spec.file, spec.base_file};
  for (const auto& in : inputs) input_paths.push_back(in.path);

  // The output: checked (not an input, not a device, FIFO, directory, dangling
  // link) and locked before anything is read or run.
  const std::string out = checked_output_path(opt.out, input_paths);
  sum.out = out;
  ResultsLock lock(out, opt.out);

  auto in_shard = [&](std::size_t i) {
    return i % static_cast<std::size_t>(opt.shard_count) == static_cast<std::size_t>(opt.shard_index);
  };
  std::set<std::size_t> done;
  struct stat out_st {};
  if (::stat(out.c_str(), &out_st) == 0) {
    bool partial = false;
    auto lines = read_results(out, &partial);
    std::map<std::size_t, const ResultLine*> seen;
    std::vector<ResultLine> keep;
    for (const auto& l : lines) {
      if (l.sweep != id || l.of != spec.points || l.key != point_key(spec, l.index)) {
        // Name the file that changed when the record says what it was made from.
        std::string why = "holds results of another sweep, or of this one before " + spec.file +
                          " changed: use another --out or remove it";
        if (l.sweep != id && l.of == spec.points && l.key == point_key(spec, l.index)) {
          const auto j = nlohmann::json::parse(l.text);
          if (j.contains("inputs")) {
            const auto& was = j["inputs"];
            for (const auto& in : inputs) {
              if (was.contains(in.role) && was[in.role] != in.hash) {
                why = "was made with another version of " + in.path + " (" + in.role +
                      "): it changed since, and resuming would mix old and new figures; use another --out, or "
                      "remove it to run the sweep again";
                break;
              }
            }
          }
        }
        throw InputError(opt.out, l.line, 1, "sweep", why);
      }
      auto [it, inserted] = seen.emplace(l.index, &l);
      if (!inserted) {
        if (it->second->text != l.text)
          throw InputError(opt.out, l.line, 1, "index",
                           "point " + std::to_string(l.index) + " differs from its record at line " +
                               std::to_string(it->second->line) +
                               " (two runs wrote this file at once?); remove one of them");
        continue;  // the same record twice (as merge does: kept once)
      }
      if (l.status == "error" && in_shard(l.index)) {
        ++sum.retried;  // a failed point of this shard: run it again
        continue;
      }
      done.insert(l.index);
      keep.push_back(l);
    }
    if (partial || sum.retried > 0 || keep.size() != lines.size()) {
      // Drop the cut-off record, the duplicates and the records to retry
      // before appending after them.
      std::string text;
      for (const auto& l : keep) text += l.text + "\n";
      write_file_atomic(out, text, input_paths);
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
    std::vector<std::pair<std::string, std::string>> ih;
    for (const auto& in : inputs) ih.emplace_back(in.role, in.hash);
    pe.set_inputs(std::move(ih));
  }
  // Workers inherit the loaded models and profiles (the points were all
  // validated by load_sweep: no second pass over them here).
  for (std::size_t i : reference_points(spec)) pe.preload(point_scenario(spec, i));
  // The results file is created by the first append (or, with nothing to
  // run, at the end): a run that fails before any record leaves no file.
  const bool created_here = ::stat(out.c_str(), &out_st) != 0;

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

  // An error record; never throws on bad UTF-8 (dump replaces it).
  auto error_record = [&](std::size_t index, const std::string& why) {
    ojson j{{"index", index}, {"of", spec.points}, {"sweep", id}, {"key", point_key(spec, index)}};
    ojson ij = ojson::object();
    for (const auto& in : inputs) ij[in.role] = in.hash;
    if (!inputs.empty()) j["inputs"] = ij;
    j["status"] = "error";
    j["reason"] = why;
    return dump(j);
  };

  auto spawn = [&](std::size_t index) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    std::fflush(nullptr);
    const pid_t pid = gw::fork_dying_with_parent();  // a worker dies with the sweep
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      ::signal(SIGINT, SIG_DFL);
      ::signal(SIGTERM, SIG_DFL);
      ::close(fds[0]);
      for (const auto& w : running) ::close(w.fd);
      // Not the lock: a worker outliving a killed parent must not keep it.
      ::close(lock.fd());
      // The worker ends with _exit whatever happens in it: an exception must
      // never unwind into the parent's code (this process is a copy of it).
      std::string line;
      try {
        try {
          line = pe.evaluate(index, spec.points, id, point_key(spec, index), point_params(spec, index),
                             point_scenario(spec, index));
        } catch (const std::exception& e) {
          line = error_record(index, e.what());
        } catch (...) {
          line = error_record(index, "the evaluation failed with an unknown exception");
        }
      } catch (...) {
        ::_exit(4);  // not even the error record could be made: the parent records the failure
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

  auto record_failure = [&](const Worker& w, const std::string& why) { return error_record(w.index, why); };

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
        if (!line.empty()) {
          // Only a valid record of this point goes into the file (a bad one
          // would make every later read of it fail).
          try {
            const ResultLine r = parse_result_line(line, "worker output", 1);
            if (r.index != w.index || r.sweep != id) throw InputError("worker output", 1, 1, "index", "another point");
          } catch (const InputError& e) {
            line = record_failure(w, "the worker wrote an invalid record (" + e.key() + ": " + e.reason() + ")");
          }
        }
        const std::size_t index = w.index;
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
        if (line.empty()) continue;  // interrupted: not finished
        append_line_durable(out, line);
        ++sum.ran;
        if (line.find("\"status\":\"error\"") != std::string::npos) ++sum.failed;  // the record's own status
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
    if (created_here) {
      // Nothing half-written: a file this run created without one whole
      // record in it (e.g. the disk was full at the first append) goes.
      std::string text;
      try {
        text = read_file(out);
      } catch (const std::exception&) {
      }
      if (text.find('\n') == std::string::npos) ::unlink(out.c_str());
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
    if (::stat(out.c_str(), &out_st) != 0) write_file_atomic(out, "", input_paths);  // nothing was to run
    auto lines = read_results(out);
    // Error records left in the file (this run's failures; another shard's too).
    for (const auto& l : lines)
      if (l.status == "error") ++sum.errors_left;
    write_file_atomic(out, canonical_results(std::move(lines)), input_paths);
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sum.seconds = std::chrono::duration<double>(clock::now() - t0).count();
  return sum;
}

}  // namespace gw::plan
