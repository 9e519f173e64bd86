// gradwire collective: simulate one collective over a doubling size sweep on a
// scenario's cluster and print it as nccl-tests does (size, count, type, time,
// algbw, busbw).
//
// All sizes run in ONE child process on ONE simulation, back to back: each
// collective waits for its last flow, so the next starts on an idle network and
// its time is the clock difference. (SimGrid allows one engine per process; a
// child per size would rebuild the platform for every row.)
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
#include "gradwire/collective_model.hpp"
#include "gradwire/engine.hpp"
#include "gradwire/error.hpp"
#include "gradwire/profile.hpp"
#include "gradwire/scenario.hpp"
#include "gradwire/units.hpp"

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

// "MIN:MAX" (or one size): MIN, 2 MIN, 4 MIN, ... while <= MAX.
std::vector<double> parse_sizes(const std::string& text) {
  const auto colon = text.find(':');
  const std::string lo = text.substr(0, colon);
  const std::string hi = colon == std::string::npos ? lo : text.substr(colon + 1);
  std::string why;
  const auto min = units::parse_size(lo, &why);
  if (!min) throw std::invalid_argument("--sizes: '" + lo + "': " + why);
  const auto max = units::parse_size(hi, &why);
  if (!max) throw std::invalid_argument("--sizes: '" + hi + "': " + why);
  if (!(*min >= 1)) throw std::invalid_argument("--sizes: the smallest size must be at least 1 B");
  if (*max < *min) throw std::invalid_argument("--sizes: MAX is smaller than MIN");
  // Beyond 1 PiB per rank the byte and element counts no longer fit the
  // table's integer columns and SimGrid's clock saturates: refuse.
  constexpr double kMaxBytes = 1125899906842624.0;  // 1 PiB
  if (*max > kMaxBytes) throw std::invalid_argument("--sizes: '" + hi + "' is more than the 1PiB a rank may send");
  std::vector<double> sizes;
  for (double s = *min; s <= *max * (1 + 1e-12); s *= 2) sizes.push_back(s);
  return sizes;
}

double busbw_factor(engine::CollectiveOp op, int n) {
  switch (op) {
    case engine::CollectiveOp::AllReduce: return collective::allreduce_busbw_factor(n);
    case engine::CollectiveOp::AllGather: return collective::allgather_busbw_factor(n);
    case engine::CollectiveOp::ReduceScatter: return collective::reducescatter_busbw_factor(n);
    case engine::CollectiveOp::Broadcast: return collective::broadcast_busbw_factor(n);
    case engine::CollectiveOp::AllToAll: return collective::alltoall_busbw_factor(n);
  }
  return 1;
}

int usage_error(const std::string& msg, const po::options_description& opts) {
  std::cerr << kCmd << ": " << msg << "\n" << opts;
  return kExitInput;
}

}  // namespace

int cmd_collective(int argc, char** argv) {
  po::options_description opts(
      "gradwire collective --scenario FILE [options]: simulate one collective over a size sweep");
  // clang-format off
  opts.add_options()
      ("help,h", "show this help")
      ("scenario", po::value<std::string>(), "scenario file (its cluster is simulated)")
      ("op", po::value<std::string>()->default_value("allreduce"),
       "allreduce, allgather, reducescatter, broadcast, alltoall")
      ("algo", po::value<std::string>()->default_value("ring"),
       "ring, tree (allreduce), hierarchical (allreduce), direct (alltoall)")
      ("sizes", po::value<std::string>()->default_value("8B:1GiB"),
       "MIN:MAX, doubling from MIN while <= MAX (nccl-tests sizes: per-rank buffer for "
       "allreduce/broadcast, total for allgather/reducescatter/alltoall); 1GB = 1e9 B, 1GiB = 2^30 B")
      ("granularity", po::value<std::string>()->default_value("aggregated"),
       "aggregated (one flow per edge) or per-step (every chunk a message; slow beyond a few "
       "hundred GPUs)")
      ("format", po::value<std::string>()->default_value("table"), "table, csv or json")
      ("gpus", po::value<int>(), "use only the first N ranks (default: all)");
  // clang-format on
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(opts).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return usage_error(e.what(), opts);
  }
  if (vm.count("help")) {
    std::cout << opts;
    return kExitOk;
  }
  if (!vm.count("scenario")) return usage_error("--scenario FILE is required", opts);

  engine::CollectiveRequest base;
  std::vector<double> sizes;
  std::unique_ptr<Printer> printer;
  const std::string gran = vm["granularity"].as<std::string>();
  try {
    base.op = engine::parse_op(vm["op"].as<std::string>());
    base.algorithm = engine::parse_algorithm(vm["algo"].as<std::string>());
    if (gran == "aggregated")
      base.granularity = engine::Granularity::Aggregated;
    else if (gran == "per-step")
      base.granularity = engine::Granularity::PerStep;
    else
      throw std::invalid_argument("--granularity must be aggregated or per-step, not '" + gran +
                                  "'");
    sizes = parse_sizes(vm["sizes"].as<std::string>());
    printer = make_printer(vm["format"].as<std::string>());
  } catch (const std::invalid_argument& e) {
    return usage_error(e.what(), opts);
  }

  const std::string path = vm["scenario"].as<std::string>();
  Scenario scenario = load_scenario(path);  // InputError -> main: exit 2
  if (scenario.cluster.intra_node_from_profile) {
    // intra_node left out: taken from the profile's all-reduce fit (docs/scenarios.md).
    const Profile profile = load_profile(scenario.profile.empty() ? scenario.cluster.gpu : scenario.profile);
    scenario.cluster = resolve_cluster(scenario, profile);
  }
  const int world = scenario.cluster.world_size();
  int gpus = world;
  if (vm.count("gpus")) {
    gpus = vm["gpus"].as<int>();
    if (gpus < 1 || gpus > world)
      return usage_error("--gpus must be between 1 and the cluster's " + std::to_string(world) +
                         " GPUs",
                         opts);
    for (int r = 0; r < gpus; ++r) base.ranks.push_back(r);
  }

  engine::enable_progress("gradwire collective: simulating " + std::to_string(gpus) +
                          " GPUs");  // stderr, once the run takes long
  const std::string out = engine::run_in_child([&] {
    engine::Simulation sim(scenario.cluster);
    std::vector<double> times;
    std::string error;
    sim.add_actor("collective", 0, [&] {
      try {
        for (double s : sizes) {
          auto req = base;
          req.bytes = s;
          times.push_back(sim.run_collective(req));
        }
      } catch (const std::invalid_argument& e) {
        error = e.what();
      }
    });
    sim.run();
    if (!error.empty()) throw InputError(path, 0, 0, "collective", error);
    std::ostringstream s;
    s.precision(17);
    for (double t : times) s << t << ' ';
    return s.str();
  });

  std::istringstream in(out);
  Meta meta{path, engine::to_string(base.op), engine::to_string(base.algorithm), gran, gpus};
  const double factor = busbw_factor(base.op, gpus);
  printer->begin(meta);
  for (double s : sizes) {
    Row r;
    r.bytes = s;
    r.count = std::floor(s / 4);
    if (!(in >> r.time)) throw std::runtime_error("collective: missing simulated time");
    r.algbw = r.time > 0 ? s / r.time : 0;
    r.busbw = r.algbw * factor;
    printer->row(r);
  }
  printer->end();
  return kExitOk;
}

}  // namespace gw::cli
