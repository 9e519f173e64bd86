// gradwire report RESULTS [--out DIR] [--deadline D] [--budget USD]: plots (SVG, PNG) and index.html.
#include <cmath>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>

#include "commands.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/core/options.hpp"
#include "gradwire/plan/plan_file.hpp"
#include "gradwire/plan/report.hpp"
#include "gradwire/plan/results_file.hpp"

namespace po = boost::program_options;

namespace gw::cli {

int cmd_report(int argc, char** argv) {
  po::options_description opts(
      "gradwire report RESULTS [--out DIR] [--deadline DURATION] [--budget USD] : plots and an HTML page from sweep "
      "results");
  opts.add_options()("help,h", "show this help")("results", po::value<std::string>(), "results file")(
      "out,o", po::value<std::string>(), "output directory (default: RESULTS without .jsonl, plus -report)")(
      "deadline", po::value<std::string>(), "latest acceptable time-to-train for the recommendation, as in plan")(
      "budget", po::value<double>(), "largest acceptable cost for the recommendation, USD, as in plan")(
      "gnuplot", po::value<std::string>()->default_value("gnuplot"), "gnuplot executable");
  po::positional_options_description pos;
  pos.add("results", 1);
  const CommandLine parsed =
      parse_command(argc, argv, bad_option_usage("gradwire report", opts), opts, pos,
                    "\nExample: gradwire sweep scenarios/study-accumulation.yaml -o /tmp/accumulation.jsonl\n"
                    "Example: gradwire report /tmp/accumulation.jsonl -o /tmp/accumulation-report\n"
                    "Example: gradwire report /tmp/accumulation.jsonl --deadline 10h --budget 5000\n");
  if (parsed.exit) return *parsed.exit;
  const po::variables_map& vm = parsed.vm;
  if (!vm.count("results")) {
    std::cerr << "gradwire report: give a results file\n" << opts;
    return kExitInput;
  }
  const std::string results = vm["results"].as<std::string>();
  std::string out;
  if (vm.count("out")) {
    out = vm["out"].as<std::string>();
  } else {
    std::filesystem::path p(results);
    out = (p.parent_path() / (p.stem().string() + "-report")).string();
  }
  plan::ReportOptions ro;
  ro.gnuplot = vm["gnuplot"].as<std::string>();
  if (vm.count("budget")) {
    const double b = vm["budget"].as<double>();
    if (!(b > 0) || !std::isfinite(b)) {
      std::cerr << "gradwire report: --budget: must be a finite number of USD greater than 0\n";
      return kExitInput;
    }
    ro.budget = b;
  }
  if (vm.count("deadline")) {
    std::string why;
    ro.deadline_hours = plan::parse_deadline_hours(vm["deadline"].as<std::string>(), &why);
    if (!ro.deadline_hours) {
      std::cerr << "gradwire report: --deadline: " << why << "\n";
      return kExitInput;
    }
  }
  const auto sum = plan::render_report(results, out, ro);
  if (sum.duplicates > 0)
    std::cerr << "gradwire report: note: " << plan::duplicates_note(results, sum.duplicates) << "\n";
  std::cout << "report: " << sum.dir << "/index.html (" << sum.points << " points, " << sum.ok << " predicted)\n";
  if (!sum.figures)
    std::cerr << "gradwire report: " << ro.gnuplot << " did not start: the page has tables, no figures\n";
  for (const auto& f : sum.files) std::cout << "  " << f << "\n";
  return kExitOk;
}

}  // namespace gw::cli
