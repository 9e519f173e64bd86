// gradwire collective: simulate one collective over a size sweep on a
// scenario's cluster (engine::collective_times: every size back to back in one
// simulation) and print it as nccl-tests does (size, count, type, time, algbw,
// busbw).
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
#include "gradwire/model/collectives.hpp"
#include "gradwire/engine/engine.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/core/options.hpp"
#include "gradwire/model/profile.hpp"
#include "gradwire/model/scenario.hpp"
#include "gradwire/core/units.hpp"

namespace po = boost::program_options;

namespace gw::cli {
namespace {

constexpr const char* kCmd = "gradwire collective";

struct Row {
  double bytes = 0;
  double count = 0;  ///< float elements
  double time = 0;   ///< seconds
  double algbw = 0;  ///< bytes/s
  double busbw = 0;  ///< bytes/s
};

struct Meta {
  std::string scenario, op, algorithm, granularity;
  int gpus = 0;
};

// One column description shared by every format: key (CSV/JSON), the two
// table header lines, width, and the value.
struct Column {
  const char* key;
  const char* title;
  const char* unit;
  int width;
  int precision;  ///< -1: integer; -2: the type string
  double (*value)(const Row&);
};

const Column kColumns[] = {
    {"size_B", "size", "(B)", 12, -1, [](const Row& r) { return r.bytes; }},
    {"count", "count", "(elements)", 12, -1, [](const Row& r) { return r.count; }},
    {"type", "type", "", 7, -2, nullptr},
    {"time_us", "time", "(us)", 11, 2, [](const Row& r) { return r.time * 1e6; }},
    {"algbw_GBps", "algbw", "(GB/s)", 8, 2, [](const Row& r) { return r.algbw / 1e9; }},
    {"busbw_GBps", "busbw", "(GB/s)", 8, 2, [](const Row& r) { return r.busbw / 1e9; }},
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

class TablePrinter : public Printer {
 public:
  void begin(const Meta& m) override {
    std::cout << "# gradwire collective: " << m.op << " / " << m.algorithm << " / "
              << m.granularity << " on " << m.gpus << " GPUs of " << m.scenario
              << " (simulated)\n";
    for (int line = 0; line < 2; ++line) {
      std::cout << "#";
      for (const auto& c : kColumns)
        std::cout << std::setw(c.width) << (line == 0 ? c.title : c.unit) << " ";
      std::cout << "\n";
    }
  }
  void row(const Row& r) override {
    std::cout << " ";
    for (const auto& c : kColumns) std::cout << std::setw(c.width) << cell(c, r) << " ";
    std::cout << "\n";
  }
  void end() override {}
};

class CsvPrinter : public Printer {
 public:
  void begin(const Meta&) override {
    bool first = true;
    for (const auto& c : kColumns) {
      std::cout << (first ? "" : ",") << c.key;
      first = false;
    }
    std::cout << "\n";
  }
  void row(const Row& r) override {
    bool first = true;
    for (const auto& c : kColumns) {
      std::cout << (first ? "" : ",") << cell(c, r);
      first = false;
    }
    std::cout << "\n";
  }
  void end() override {}
};

class JsonPrinter : public Printer {
 public:
  void begin(const Meta& m) override {
    doc_ = {{"scenario", m.scenario}, {"op", m.op},       {"algorithm", m.algorithm},
            {"granularity", m.granularity}, {"gpus", m.gpus}, {"type", "float"},
            {"results", nlohmann::json::array()}};
  }
  void row(const Row& r) override {
    nlohmann::json j;
    for (const auto& c : kColumns) {
      if (!c.value) continue;
      if (c.precision == -1)
        j[c.key] = static_cast<long long>(c.value(r));
      else
        j[c.key] = c.value(r);
    }
    doc_["results"].push_back(std::move(j));
  }
  void end() override { std::cout << doc_.dump(2) << "\n"; }

 private:
  nlohmann::json doc_;
};

std::unique_ptr<Printer> make_printer(const std::string& format) {
  if (format == "table") return std::make_unique<TablePrinter>();
  if (format == "csv") return std::make_unique<CsvPrinter>();
  if (format == "json") return std::make_unique<JsonPrinter>();
  throw std::invalid_argument("--format must be table, csv or json, not '" + format + "'");
}

// The --sizes grammar of gradwire/core/units.hpp (bytes, nccl-tests sizes).
std::vector<double> parse_sizes(const std::string& text) {
  std::string why;
  const auto sizes = units::parse_size_range(text, &why);
  if (!sizes) throw std::invalid_argument("--sizes: " + why);
  // Beyond 1 PiB per rank the byte and element counts no longer fit the
  // table's integer columns and SimGrid's clock saturates: refuse.
  constexpr double kMaxBytes = 1125899906842624.0;  // 1 PiB
  if (sizes->back() > kMaxBytes) {
    throw std::invalid_argument("--sizes: '" + units::format_size(sizes->back()) +
                                "' is more than the 1PiB a rank may send");
  }
  return *sizes;
}

int usage_error(const std::string& msg, const po::options_description& opts) {
  std::cerr << kCmd << ": " << msg << "\n" << opts;
  return kExitInput;
}

po::options_description options() {
  static const std::string op_help = collective_op_list();
  po::options_description opts(
      "gradwire collective --scenario FILE [options]: simulate one collective over a size sweep");
  // clang-format off
  opts.add_options()
      ("help,h", "show this help")
      ("scenario", po::value<std::string>(), "scenario file (its cluster is simulated)")
      ("op", po::value<std::string>()->default_value("allreduce"), op_help.c_str())
      ("algo", po::value<std::string>()->default_value("ring"),
       "ring, tree (allreduce), hierarchical (allreduce), direct (alltoall)")
      ("sizes", po::value<std::string>()->default_value("8B:1GiB"),
       "bytes: MIN:MAX[:FACTOR] (MIN, MIN x FACTOR, ... while <= MAX; FACTOR 2 when left out), "
       "one size or a comma list (nccl-tests sizes: per-rank buffer for allreduce/broadcast, total "
       "for allgather/reducescatter/alltoall); 1GB = 1e9 B, 1GiB = 2^30 B")
      ("granularity", po::value<std::string>()->default_value("aggregated"),
       "aggregated (one flow per edge) or per-step (every chunk a message; slow beyond a few "
       "hundred GPUs)")
      ("format", po::value<std::string>()->default_value("table"), "table, csv or json")
      ("gpus", po::value<int>(), "use only the first N ranks (default: all)");
  // clang-format on
  return opts;
}

engine::Granularity parse_granularity(const std::string& gran) {
  if (gran == "aggregated") return engine::Granularity::Aggregated;
  if (gran == "per-step") return engine::Granularity::PerStep;
  throw std::invalid_argument("--granularity must be aggregated or per-step, not '" + gran + "'");
}

// The scenario, its intra-node links taken from the profile when left out.
Scenario load_cluster_scenario(const std::string& path) {
  Scenario scenario = load_scenario(path);  // InputError -> main: exit 2
  if (scenario.cluster.intra_node_from_profile) {
    // intra_node left out: taken from the profile's all-reduce fit (docs/scenarios.md).
    const Profile profile = load_profile(scenario.profile.empty() ? scenario.cluster.gpu : scenario.profile);
    scenario.cluster = resolve_cluster(scenario, profile);
  }
  return scenario;
}

void print(Printer& printer, const Meta& meta, CollectiveOp op, const std::vector<double>& sizes,
           const std::vector<double>& times) {
  const double factor = bus_bandwidth_factor(op, meta.gpus);
  printer.begin(meta);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    Row r;
    r.bytes = sizes[i];
    r.count = std::floor(sizes[i] / 4);
    r.time = times[i];
    r.algbw = r.time > 0 ? sizes[i] / r.time : 0;
    r.busbw = r.algbw * factor;
    printer.row(r);
  }
  printer.end();
}

}  // namespace

int cmd_collective(int argc, char** argv) {
  const po::options_description opts = options();
  po::variables_map vm;
  try {
    auto parsed = parse_options(argc, argv, opts, {}, "");
    if (!parsed) return kExitOk;  // --help
    vm = std::move(*parsed);
  } catch (const po::error& e) {
    return usage_error(e.what(), opts);
  }
  if (!vm.count("scenario")) return usage_error("--scenario FILE is required", opts);

  engine::CollectiveRequest base;
  std::vector<double> sizes;
  std::unique_ptr<Printer> printer;
  const std::string gran = vm["granularity"].as<std::string>();
  try {
    base.op = parse_collective_op(vm["op"].as<std::string>());
    base.algorithm = engine::parse_algorithm(vm["algo"].as<std::string>());
    base.granularity = parse_granularity(gran);
    sizes = parse_sizes(vm["sizes"].as<std::string>());
    printer = make_printer(vm["format"].as<std::string>());
  } catch (const std::invalid_argument& e) {
    return usage_error(e.what(), opts);
  }

  const std::string path = vm["scenario"].as<std::string>();
  const Scenario scenario = load_cluster_scenario(path);
  const int world = scenario.cluster.world_size();
  int gpus = world;
  if (vm.count("gpus")) {
    gpus = vm["gpus"].as<int>();
    if (gpus < 1 || gpus > world)
      return usage_error("--gpus must be between 1 and the cluster's " + std::to_string(world) + " GPUs", opts);
    for (int r = 0; r < gpus; ++r) base.ranks.push_back(r);
  }

  engine::enable_progress("gradwire collective: simulating " + std::to_string(gpus) +
                          " GPUs");  // stderr, once the run takes long
  const std::vector<double> times = engine::collective_times(scenario.cluster, base, sizes, path);
  const Meta meta{path, to_string(base.op), engine::to_string(base.algorithm), gran, gpus};
  print(*printer, meta, base.op, sizes, times);
  return kExitOk;
}

}  // namespace gw::cli
