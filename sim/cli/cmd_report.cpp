// gradwire report RESULTS [--out DIR]: plots (SVG, PNG) and index.html.
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>

#include "commands.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/core/options.hpp"
#include "gradwire/plan/report.hpp"

namespace po = boost::program_options;

namespace gw::cli {

int cmd_report(int argc, char** argv) {
  po::options_description opts("gradwire report RESULTS [--out DIR] : plots and an HTML page from sweep results");
  opts.add_options()("help,h", "show this help")("results", po::value<std::string>(), "results file")(
      "out,o", po::value<std::string>(), "output directory (default: RESULTS without .jsonl, plus -report)")(
      "gnuplot", po::value<std::string>()->default_value("gnuplot"), "gnuplot executable");
  po::positional_options_description pos;
  pos.add("results", 1);
  std::optional<po::variables_map> parsed;
  try {
    parsed = gw::parse_options(argc, argv, opts, pos,
                               "\nExample: gradwire sweep scenarios/study-accumulation.yaml -o /tmp/accumulation.jsonl\n"
                               "Example: gradwire report /tmp/accumulation.jsonl -o /tmp/accumulation-report\n");
  } catch (const po::error& e) {
    std::cerr << "gradwire report: " << e.what() << "\n" << opts;
    return kExitInput;
  }
  if (!parsed) return kExitOk;
  const po::variables_map& vm = *parsed;
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
  const auto sum = plan::render_report(results, out, vm["gnuplot"].as<std::string>());
  std::cout << "report: " << sum.dir << "/index.html (" << sum.points << " points, " << sum.ok << " predicted)\n";
  for (const auto& f : sum.files) std::cout << "  " << f << "\n";
  return kExitOk;
}

}  // namespace gw::cli
