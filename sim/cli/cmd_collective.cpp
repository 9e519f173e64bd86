// gradwire collective: simulate one collective over a size sweep on a
// scenario's cluster (engine::collective_times: every size back to back in one
// simulation) and print it in nccl-tests' own layout
// (gradwire/model/nccl_tests_log.hpp), or as CSV/JSON; with --compare LOG,
// simulate what a real nccl-tests log measured and print both
// (gradwire/validate/nccl_log.hpp).
#include <boost/program_options.hpp>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.hpp"
#include "gradwire/core/output_schema.hpp"
#include <cstdlib>

#include "gradwire/model/closed_form.hpp"
#include "gradwire/model/collectives.hpp"
#include "gradwire/model/measured_collective.hpp"
#include "gradwire/engine/engine.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/core/options.hpp"
#include "gradwire/model/profile.hpp"
#include "gradwire/model/scenario.hpp"
#include "gradwire/model/scenario_refs.hpp"
#include "gradwire/model/topology.hpp"
#include "gradwire/core/units.hpp"
#include "gradwire/model/nccl_tests_log.hpp"
#include "gradwire/validate/nccl_log.hpp"
#include "gradwire/validate/validation_json.hpp"

namespace po = boost::program_options;

namespace gw::cli {
namespace {

constexpr const char* kCmd = "gradwire collective";
constexpr const char* kExamples =
    "\nExample: gradwire collective scenarios/resnet50-8xa100.yaml --sizes 1MiB:256MiB:4\n"
    "Example: gradwire collective scenarios/default.yaml --op allgather --algo ring -g 8 --format csv\n"
    "Example: gradwire collective scenarios/default.yaml --algo ring --proto simple -b 8 -e 1G\n";

struct Row {
  double bytes = 0;
  double count = 0;                 ///< float elements
  double time = 0;                  ///< seconds
  double algbw = 0;                 ///< bytes/s
  double busbw = 0;                 ///< bytes/s
  std::string algorithm, protocol;  ///< the pair simulated at this size
  /// With a measured curve (Meta::measured): "measured" within its sizes,
  /// "modelled" outside them; empty without one.
  std::string source;
};

struct Meta {
  std::string scenario, op, algorithm, protocol, granularity;
  int gpus = 0;
  CollectiveOp collective = CollectiveOp::AllReduce;
  const ClusterSpec* cluster = nullptr;
  std::vector<double> sizes;
  /// The profile's measured curve that timed the sizes (measured_note), "" when the model did.
  std::string measured;
};

// Sizes a measured curve timed: which collective on which shape, its
// measured sizes, the profile, and how sizes outside them are timed.
std::string measured_note(const MeasuredCollective& m, const std::string& profile) {
  return m.label() + (m.range().empty() ? "" : ", measured " + m.range()) + " (profile " + profile +
         "): the curve within the measured sizes, NCCL's own choice; outside them the model, joined to the "
         "curve's end";
}

// One column description shared by every format: the CSV key (nccl-tests'
// names and units), the two table header lines, width, the value, and the
// JSON key with its value (gradwire's unit grammar, docs/outputs.md: the
// bandwidths in B/s, not nccl-tests' GB/s).
struct Column {
  const char* key;
  const char* title;
  const char* unit;
  int width;
  int precision;  ///< -1: integer; -2: the type string
  double (*value)(const Row&);
  const char* json_key;
  double (*json_value)(const Row&);
};

const Column kColumns[] = {
    {"size_B", "size", "(B)", 12, -1, [](const Row& r) { return r.bytes; }, "size_bytes", nullptr},
    {"count", "count", "(elements)", 12, -1, [](const Row& r) { return r.count; }, "count", nullptr},
    {"type", "type", "", 7, -2, nullptr, "type", nullptr},
    {"time_us", "time", "(us)", 11, 2, [](const Row& r) { return r.time * 1e6; }, "time_us", nullptr},
    {"algbw_GBps", "algbw", "(GB/s)", 8, 2, [](const Row& r) { return r.algbw / 1e9; }, "algbw_bytes_per_s",
     [](const Row& r) { return r.algbw; }},
    {"busbw_GBps", "busbw", "(GB/s)", 8, 2, [](const Row& r) { return r.busbw / 1e9; }, "busbw_bytes_per_s",
     [](const Row& r) { return r.busbw; }},
};

std::string cell(const Column& c, const Row& r) {
  if (c.precision == -2) return "float";
  std::ostringstream s;
  if (c.precision == -1)
    s << static_cast<long long>(c.value(r));
  else
    s << std::fixed << std::setprecision(c.precision) << c.value(r);
  return s.str();
}

class Printer {
 public:
  virtual ~Printer() = default;
  virtual void begin(const Meta& m) = 0;
  virtual void row(const Row& r) = 0;
  virtual void end() = 0;
};

// nccl-tests' layout: its header, one "#  Rank" line per simulated GPU, its
// column groups (both groups the same simulated time; #wrong N/A) and footer.
class TablePrinter : public Printer {
 public:
  void begin(const Meta& m) override {
    std::cout << "# gradwire collective: " << m.op << " / " << m.algorithm << " / " << m.protocol << " / "
              << m.granularity << " on " << m.gpus << " GPUs of " << m.scenario << " (simulated)\n# "
              << describe_network(*m.cluster) << "\n";
    nccl_tests::Header h;
    h.ranks = m.gpus;
    h.min_bytes = m.sizes.front();
    h.max_bytes = m.sizes.back();
    h.step = step_text(m.sizes);
    const int per_node = m.cluster->gpus_per_node;
    for (int r = 0; r < m.gpus; ++r)
      h.devices.push_back({r, "node" + std::to_string(r / per_node), r % per_node, m.cluster->gpu});
    std::cout << nccl_tests::format_header(h);
    const auto& info = collective_info(m.collective);
    redop_ = info.nccl_tests_redop;
    root_ = info.nccl_tests_root;
    per_rank_ = info.size == SizeConvention::Total ? m.gpus : 1;
    measured_ = m.measured;
  }
  void row(const Row& r) override {
    nccl_tests::Result res;
    res.time = r.time;
    res.algbw = r.algbw;
    res.busbw = r.busbw;
    std::cout << nccl_tests::format_row(r.bytes, std::floor(r.bytes / 4 / per_rank_), redop_, root_, res);
    busbw_sum_ += r.busbw;
    ++rows_;
    extend(pairs_, r.algorithm + "/" + r.protocol, r.bytes);
    if (!r.source.empty()) extend(sources_, r.source, r.bytes);
  }
  // nccl-tests' footer, then the pair per size range as a comment block
  // (parsers of nccl-tests logs skip '#' lines).
  void end() override {
    std::cout << nccl_tests::format_footer(rows_ ? busbw_sum_ / rows_ : 0);
    std::cout << "# algorithm/protocol per size (NCCL's rule: lowest closed-form time):\n";
    print_ranges(pairs_);
    if (measured_.empty()) return;
    std::cout << "# times measured on this cluster's shape: " << measured_ << "\n";
    print_ranges(sources_);
  }

 private:
  // "2(factor)" when the sizes grow by one whole factor, else the byte step.
  static std::string step_text(const std::vector<double>& s) {
    if (s.size() < 2) return "1048576(bytes)";
    const double f = s[1] / s[0];
    bool geometric = f >= 2 && f == std::floor(f);
    for (std::size_t i = 1; geometric && i < s.size(); ++i) geometric = s[i] == s[i - 1] * f;
    if (geometric) return std::to_string(static_cast<long long>(f)) + "(factor)";
    return std::to_string(static_cast<long long>(s[1] - s[0])) + "(bytes)";
  }
  struct PairRange {
    std::string pair;
    double first = 0, last = 0;
  };
  static void extend(std::vector<PairRange>& ranges, const std::string& what, double bytes) {
    if (ranges.empty() || ranges.back().pair != what) ranges.push_back({what, bytes, bytes});
    ranges.back().last = bytes;
  }
  static void print_ranges(const std::vector<PairRange>& ranges) {
    for (const auto& p : ranges)
      std::cout << "#   " << units::format_size(p.first) << " .. " << units::format_size(p.last) << ": " << p.pair
                << "\n";
  }
  std::vector<PairRange> pairs_, sources_;
  std::string measured_;
  std::string redop_;
  int root_ = -1;
  double per_rank_ = 1;
  double busbw_sum_ = 0;
  int rows_ = 0;
};

// A measured curve adds the column `source` (measured or modelled).
class CsvPrinter : public Printer {
 public:
  void begin(const Meta& m) override {
    bool first = true;
    for (const auto& c : kColumns) {
      std::cout << (first ? "" : ",") << c.key;
      first = false;
    }
    std::cout << ",algorithm,protocol" << (m.measured.empty() ? "" : ",source") << "\n";
  }
  void row(const Row& r) override {
    bool first = true;
    for (const auto& c : kColumns) {
      std::cout << (first ? "" : ",") << cell(c, r);
      first = false;
    }
    std::cout << "," << r.algorithm << "," << r.protocol << (r.source.empty() ? "" : "," + r.source) << "\n";
  }
  void end() override {}
};

class JsonPrinter : public Printer {
 public:
  void begin(const Meta& m) override {
    doc_ = {{"scenario", m.scenario},
            {"op", m.op},
            {"algorithm", m.algorithm},
            {"protocol", m.protocol},
            {"granularity", m.granularity},
            {"gpus", m.gpus},
            {"type", "float"},
            {"results", nlohmann::json::array()}};
    if (!m.measured.empty()) doc_["measured"] = m.measured;
  }
  void row(const Row& r) override {
    nlohmann::json j;
    for (const auto& c : kColumns) {
      if (!c.value) continue;
      if (c.precision == -1)
        j[c.json_key] = static_cast<long long>(c.value(r));
      else
        j[c.json_key] = c.json_value ? c.json_value(r) : c.value(r);
    }
    j["algorithm"] = r.algorithm;
    j["protocol"] = r.protocol;
    if (!r.source.empty()) j["source"] = r.source;
    doc_["results"].push_back(std::move(j));
  }
  void end() override { std::cout << schema_first(kCollectiveSchema, doc_.dump(), 2) << "\n"; }

 private:
  nlohmann::json doc_;
};

std::unique_ptr<Printer> make_printer(const std::string& format) {
  if (format == "table") return std::make_unique<TablePrinter>();
  if (format == "csv") return std::make_unique<CsvPrinter>();
  if (format == "json") return std::make_unique<JsonPrinter>();
  throw std::invalid_argument("--format must be table, csv or json, not '" + format + "'");
}

// Beyond 1 PiB per rank the byte and element counts no longer fit the
// table's integer columns and SimGrid's clock saturates: refuse.
void check_max_size(const std::vector<double>& sizes, const char* option) {
  constexpr double kMaxBytes = 1125899906842624.0;  // 1 PiB
  if (sizes.back() > kMaxBytes) {
    throw std::invalid_argument(std::string(option) + ": '" + units::format_size(sizes.back()) +
                                "' is more than the 1PiB a rank may send");
  }
}

// The --sizes grammar of gradwire/core/units.hpp (bytes, nccl-tests sizes).
std::vector<double> parse_sizes(const std::string& text) {
  std::string why;
  const auto sizes = units::parse_size_range(text, &why);
  if (!sizes) throw std::invalid_argument("--sizes: " + why);
  check_max_size(*sizes, "--sizes");
  return *sizes;
}

// nccl-tests' -b MIN -e MAX -f FACTOR (K/M/G: powers of 1024; -e defaults to
// -b, -f to 2, -b to 8).
std::vector<double> nccl_tests_sizes(const po::variables_map& vm) {
  auto size = [&](const char* key, double fallback) {
    if (!vm.count(key)) return fallback;
    const std::string text = vm[key].as<std::string>();
    const auto v = nccl_tests::parse_size(text);
    if (!v || *v < 1)
      throw std::invalid_argument(std::string("--") + key + ": '" + text + "' is not a size (8, 128K, 8G)");
    return *v;
  };
  const double min = size("minbytes", 8);
  const double max = size("maxbytes", min);
  const long long factor = vm.count("stepfactor") ? vm["stepfactor"].as<long long>() : 2;
  if (max < min) throw std::invalid_argument("-e/--maxbytes must not be below -b/--minbytes");
  if (factor < 2 || factor > 1024) throw std::invalid_argument("-f/--stepfactor must be a whole number in 2..1024");
  std::vector<double> sizes;
  for (double b = min; b <= max; b *= static_cast<double>(factor)) sizes.push_back(b);
  check_max_size(sizes, "-e/--maxbytes");
  return sizes;
}

std::vector<double> requested_sizes(const po::variables_map& vm) {
  const bool nccl_style = vm.count("minbytes") || vm.count("maxbytes") || vm.count("stepfactor");
  if (nccl_style && !vm["sizes"].defaulted())
    throw std::invalid_argument("give the sizes either as --sizes or as -b/-e/-f, not both");
  return nccl_style ? nccl_tests_sizes(vm) : parse_sizes(vm["sizes"].as<std::string>());
}

int usage_error(const std::string& msg, const po::options_description& opts) {
  std::cerr << kCmd << ": " << msg << "\n" << opts;
  return kExitInput;
}

po::options_description options() {
  static const std::string op_help = collective_op_list();
  static const std::string algo_help =
      "auto (default: NCCL's rule, the pair with the lowest predicted time per size), " + algorithm_help() +
      "; default from NCCL_ALGO when set";
  po::options_description opts(
      "gradwire collective SCENARIO [options]: simulate one collective over a size sweep on SCENARIO's cluster "
      "and print it as nccl-tests does");
  // clang-format off
  opts.add_options()
      ("help,h", "show this help")
      ("scenario", po::value<std::string>(), "the scenario file, as an option (the older spelling of SCENARIO)")
      ("op", po::value<std::string>()->default_value("allreduce"), op_help.c_str())
      ("algo", po::value<std::string>(), algo_help.c_str())
      ("proto", po::value<std::string>(),
       "auto (default), LL, LL128 or Simple (case-insensitive); default from NCCL_PROTO when set")
      ("sizes", po::value<std::string>()->default_value("8B:1GiB"),
       "bytes: MIN:MAX[:FACTOR] (MIN, MIN x FACTOR, ... while <= MAX; FACTOR 2 when left out), "
       "one size or a comma list (nccl-tests sizes: per-rank buffer for allreduce/broadcast, total "
       "for allgather/reducescatter/alltoall); 1GB = 1e9 B, 1GiB = 2^30 B")
      ("minbytes,b", po::value<std::string>(), "nccl-tests style: smallest size (8, 128K, 1M, 8G: K/M/G powers of 1024)")
      ("maxbytes,e", po::value<std::string>(), "nccl-tests style: largest size (default: -b)")
      ("stepfactor,f", po::value<long long>(), "nccl-tests style: size factor (default 2)")
      ("granularity", po::value<std::string>()->default_value("aggregated"),
       "aggregated (one flow per edge) or per-step (every chunk a message; slow beyond a few "
       "hundred GPUs)")
      ("format", po::value<std::string>()->default_value("table"),
       "table (nccl-tests' layout), csv or json (with --compare: table or json)")
      ("gpus,g", po::value<int>(), "use only the first N ranks (default: all)")
      ("compare", po::value<std::string>(),
       "an nccl-tests log (any *_perf output): simulate its op at its sizes on its GPU count and print "
       "measured vs predicted");
  // clang-format on
  return opts;
}

engine::Granularity parse_granularity(const std::string& gran) {
  if (gran == "aggregated") return engine::Granularity::Aggregated;
  if (gran == "per-step") return engine::Granularity::PerStep;
  throw std::invalid_argument("--granularity must be aggregated or per-step, not '" + gran + "'");
}

// The scenario, its cluster resolved as `simulate` resolves it
// (resolve_scenario_cluster: the profile found beside the scenario or by its
// GPU; intra_node from its all-reduce fit when left out, its measured
// transports), and the profile's measured collectives.
struct ClusterScenario {
  Scenario scenario;
  std::string profile;                       ///< the profile's name, "" when none was resolved
  std::vector<MeasuredCollective> measured;  ///< measured_collectives of the profile
};
ClusterScenario load_cluster_scenario(const std::string& path) {
  ClusterScenario c{load_scenario(path), {}, {}};  // InputError -> main: exit 2
  std::optional<Profile> profile;
  c.scenario.cluster = resolve_scenario_cluster(c.scenario, path, std::nullopt, &profile);
  if (profile) {
    c.profile = profile->name;
    c.measured = measured_collectives(*profile);
  }
  return c;
}

// The times of `sizes` of `req` on the first `gpus` ranks. A curve the profile
// measured on that shape (measured_collective_for), under pins NCCL accepts
// (nccl_accepts), times every size: within its sizes the curve, outside them
// the closed form joined to it (MeasuredCollective::seconds); `source` says
// which, and `note` what (measured_note). Otherwise the engine simulates them.
struct Timed {
  std::vector<double> times;
  std::vector<std::string> source;  ///< per size; empty without a curve
  std::string note;                 ///< measured_note; "" without a curve
};
Timed time_sizes(const ClusterScenario& c, const engine::CollectiveRequest& req, int gpus,
                 const std::vector<double>& sizes, const std::string& path) {
  Timed t;
  const ClusterSpec& cluster = c.scenario.cluster;
  const NcclShape shape = collective_shape(cluster, gpus);
  const MeasuredCollective* m = measured_collective_for(c.measured, req.op, cluster, gpus);
  if (!m || !nccl_accepts(req.op, req.algorithm, req.protocol, cluster, shape)) {
    t.times = engine::collective_times(cluster, req, sizes, path);
    return t;
  }
  const auto model = [&](double bytes) {
    return choose_collective(req.op, req.algorithm, req.protocol, cluster, shape, bytes).time;
  };
  for (double bytes : sizes) {
    t.times.push_back(m->seconds(bytes, model));
    t.source.push_back(m->in_range(bytes) ? "measured" : "modelled");
  }
  t.note = measured_note(*m, c.profile);
  return t;
}

// --algo / --proto, else NCCL_ALGO / NCCL_PROTO (one name each), else auto.
void choose_pair(const po::variables_map& vm, engine::CollectiveRequest& req) {
  auto pick = [&](const char* option, const char* env) -> std::string {
    if (vm.count(option)) return vm[option].as<std::string>();
    const char* v = std::getenv(env);
    if (!v || !*v) return "auto";
    const std::string s(v);
    if (s.find_first_of(",^") != std::string::npos)
      throw std::invalid_argument(std::string(env) + "=" + s + ": gradwire takes one name there (or --" + option + ")");
    return s;
  };
  req.algorithm = engine::parse_algorithm(pick("algo", "NCCL_ALGO"));
  req.protocol = engine::parse_protocol(pick("proto", "NCCL_PROTO"));
}

void print(Printer& printer, const Meta& meta, const engine::CollectiveRequest& req, const std::vector<double>& sizes,
           const Timed& timed) {
  const std::vector<double>& times = timed.times;
  const CollectiveOp op = req.op;
  const double factor = bus_bandwidth_factor(op, meta.gpus);
  const NcclShape shape = collective_shape(*meta.cluster, meta.gpus);
  printer.begin(meta);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    Row r;
    const auto pick = choose_collective(op, req.algorithm, req.protocol, *meta.cluster, shape, sizes[i]);
    r.algorithm = to_string(pick.algorithm);
    r.protocol = to_string(pick.protocol);
    r.bytes = sizes[i];
    r.count = std::floor(sizes[i] / 4);
    r.time = times[i];
    r.algbw = r.time > 0 ? sizes[i] / r.time : 0;
    r.busbw = r.algbw * factor;
    if (!timed.source.empty()) r.source = timed.source[i];
    printer.row(r);
  }
  printer.end();
}

// The op a log measured: the log's own, checked against an explicit --op.
CollectiveOp log_op(const nccl_tests::Log& log, const po::variables_map& vm) {
  const bool named = !vm["op"].defaulted();
  if (!log.op) {
    if (!named)
      throw std::invalid_argument(log.file + ": the log does not say which collective it measured (" +
                                  (log.binary.empty() ? std::string("no binary name") : log.binary) +
                                  "): name it with --op");
    return parse_collective_op(vm["op"].as<std::string>());
  }
  if (named && parse_collective_op(vm["op"].as<std::string>()) != *log.op)
    throw std::invalid_argument("--op " + vm["op"].as<std::string>() + " but " + log.file + " measured " +
                                to_string(*log.op));
  return *log.op;
}

// The run of --compare's log: its only run, or, in a log of appended runs,
// the one of --op (nccl_tests::select_runs); the runs and rows left out are
// said on stderr.
nccl_tests::Log compare_run(const po::variables_map& vm) {
  std::vector<nccl_tests::Log> runs = nccl_tests::load_runs(vm["compare"].as<std::string>());  // InputError: exit 2
  if (runs.size() > 1) {
    std::vector<CollectiveOp> ops;
    if (!vm["op"].defaulted()) ops.push_back(parse_collective_op(vm["op"].as<std::string>()));
    const std::string pick = "choose one with --op OP";
    std::vector<std::string> left_out;
    runs = nccl_tests::select_runs(std::move(runs), ops, pick, &left_out);
    if (runs.size() > 1)
      throw InputError(runs[1].file, runs[1].line, 1, "",
                       "a second run to compare (line " + std::to_string(runs[0].line) + ": " + runs[0].describe() +
                           "; line " + std::to_string(runs[1].line) + ": " + runs[1].describe() + "): " + pick);
    for (const auto& l : left_out) std::cerr << "gradwire collective: note: " << l << "\n";
  }
  for (const auto& n : runs.front().notes)
    std::cerr << "gradwire collective: note: " << nccl_tests::format_note(runs.front(), n) << "\n";
  return std::move(runs.front());
}

// --compare LOG: the log's op at its sizes on its rank count.
int compare(const po::variables_map& vm, const ClusterScenario& cs, const std::string& path,
            engine::CollectiveRequest base, const std::string& format) {
  const Scenario& scenario = cs.scenario;
  const nccl_tests::Log log = compare_run(vm);
  base.op = log_op(log, vm);
  const int gpus = log.world_size();
  if (gpus < 2 || gpus > scenario.cluster.world_size())
    throw std::invalid_argument(log.file + " ran on " + std::to_string(gpus) + " ranks; the cluster of " + path +
                                " has " + std::to_string(scenario.cluster.world_size()));
  for (int r = 0; r < gpus; ++r) base.ranks.push_back(r);
  const validate::CollectiveCase c =
      validate::case_from_log(log, base.op, gpus, path, engine::to_string(base.algorithm));
  if (c.points.empty()) throw std::invalid_argument(log.file + ": no size above 0 B with a time");
  std::vector<double> sizes;
  for (const auto& p : c.points) sizes.push_back(p.bytes);
  const Timed timed = time_sizes(cs, base, gpus, sizes, path);
  const auto result = validate::score_case(c, gpus, timed.times);
  if (format == "json") {
    if (!timed.note.empty())
      std::cerr << kCmd << ": note: times measured on this cluster's shape: " << timed.note << "\n";
    std::cout << validate::render_compare_json(result);
    return kExitOk;
  }
  const int nodes = (gpus + scenario.cluster.gpus_per_node - 1) / scenario.cluster.gpus_per_node;
  std::cout << "# gradwire collective --compare " << log.file << ": " << to_string(base.op) << " on " << gpus
            << " GPUs (" << log.nodes() << " node(s) measured" << (log.gpu().empty() ? "" : ", " + log.gpu())
            << "), simulated as " << engine::to_string(base.algorithm) << " on the first " << gpus << " GPUs (" << nodes
            << " node(s)) of " << path << "\n"
            << (timed.note.empty() ? "" : "# times measured on this cluster's shape: " + timed.note + "\n")
            << validate::render_comparison(result);
  return kExitOk;
}

}  // namespace

int cmd_collective(int argc, char** argv) {
  const po::options_description opts = options();
  po::options_description hidden;
  hidden.add_options()("input", po::value<std::string>());
  po::positional_options_description pos;
  pos.add("input", 1);
  const CommandLine parsed = parse_command(argc, argv, bad_option_usage(kCmd, opts), opts, hidden, pos, "", kExamples);
  if (parsed.exit) return *parsed.exit;  // --help, or a bad option
  const po::variables_map& vm = parsed.vm;
  if (vm.count("input") && vm.count("scenario"))
    return usage_error("give the scenario once: SCENARIO or --scenario FILE, not both", opts);
  if (!vm.count("input") && !vm.count("scenario")) return usage_error("a scenario file is required", opts);

  engine::CollectiveRequest base;
  std::vector<double> sizes;
  std::unique_ptr<Printer> printer;
  const std::string gran = vm["granularity"].as<std::string>();
  const std::string format = vm["format"].as<std::string>();
  try {
    base.op = parse_collective_op(vm["op"].as<std::string>());
    choose_pair(vm, base);
    base.granularity = parse_granularity(gran);
    sizes = requested_sizes(vm);
    printer = make_printer(format);
    if (vm.count("compare") && format == "csv") throw std::invalid_argument("--compare prints a table or json");
    if (vm.count("compare") && (vm.count("gpus") || vm.count("minbytes") || vm.count("maxbytes") ||
                                vm.count("stepfactor") || !vm["sizes"].defaulted()))
      throw std::invalid_argument("--compare takes the sizes and the GPU count from the log");
  } catch (const std::invalid_argument& e) {
    return usage_error(e.what(), opts);
  }

  const std::string path = vm[vm.count("input") ? "input" : "scenario"].as<std::string>();
  const ClusterScenario cs = load_cluster_scenario(path);
  const Scenario& scenario = cs.scenario;
  if (vm.count("compare")) {
    try {
      return compare(vm, cs, path, base, format);
    } catch (const std::invalid_argument& e) {
      std::cerr << kCmd << ": " << e.what() << "\n";
      return kExitInput;
    }
  }
  const int world = scenario.cluster.world_size();
  int gpus = world;
  if (vm.count("gpus")) {
    gpus = vm["gpus"].as<int>();
    if (gpus < 1 || gpus > world)
      return usage_error("--gpus must be between 1 and the cluster's " + std::to_string(world) + " GPUs", opts);
    for (int r = 0; r < gpus; ++r) base.ranks.push_back(r);
  }

  const std::string label = "gradwire collective: simulating " + std::to_string(gpus) + " GPUs";
  engine::enable_progress(label);                               // stderr, once the run takes long
  engine::announce_simulation_memory(label, scenario.cluster);  // stderr, at once for a large run
  const Timed timed = time_sizes(cs, base, gpus, sizes, path);
  Meta meta;
  meta.scenario = path;
  meta.op = to_string(base.op);
  meta.algorithm = engine::to_string(base.algorithm);
  meta.protocol = engine::to_string(base.protocol);
  meta.granularity = gran;
  meta.gpus = gpus;
  meta.collective = base.op;
  meta.cluster = &scenario.cluster;
  meta.sizes = sizes;
  meta.measured = timed.note;
  print(*printer, meta, base, sizes, timed);
  return kExitOk;
}

}  // namespace gw::cli
