// `gradwire report`: plots (gnuplot, SVG and PNG) and an HTML page from a
// sweep's results. The directory is built beside the target and renamed into
// place, so a reader never sees half a report. Plain C++; gnuplot is run as a
// child process.
#pragma once

#include <string>
#include <vector>

namespace gw::plan {

struct ReportSummary {
  std::string dir;
  std::vector<std::string> files;   ///< relative to dir
  int points = 0, ok = 0, no_fit = 0, invalid = 0, errors = 0;
};

/// Renders the report of `results` into `out_dir`. Throws InputError for a
/// bad results file and std::runtime_error when gnuplot fails.
ReportSummary render_report(const std::string& results, const std::string& out_dir,
                            const std::string& gnuplot = "gnuplot");

}  // namespace gw::plan
