// `gradwire report`: plots (gnuplot, SVG and PNG) and an HTML page from a
// sweep's results. The directory is built beside the target and renamed into
// place, so a reader never sees half a report. Plain C++; gnuplot is run as a
// child process.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gw::plan {

struct ReportSummary {
  std::string dir;
  std::vector<std::string> files;                               ///< relative to dir
  int points = 0, ok = 0, no_fit = 0, invalid = 0, errors = 0;  ///< distinct points (duplicates counted once)
  std::size_t duplicates = 0;                                   ///< records dropped as repeats of a point's record
  bool figures = true;  ///< false: gnuplot did not start, the page has the tables alone
};

struct ReportOptions {
  std::string gnuplot = "gnuplot";
  std::optional<double> budget;          ///< USD, as `plan --budget`
  std::optional<double> deadline_hours;  ///< as `plan --deadline`
};

/// Renders the report of `results` into `out_dir`: figures when gnuplot
/// starts, else the page with its tables alone (and a sentence saying so).
/// Throws InputError for a bad results file and std::runtime_error when
/// gnuplot fails on a figure.
ReportSummary render_report(const std::string& results, const std::string& out_dir, const ReportOptions& options);
ReportSummary render_report(const std::string& results, const std::string& out_dir,
                            const std::string& gnuplot = "gnuplot");

}  // namespace gw::plan
