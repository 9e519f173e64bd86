// The figures of `gradwire report`: gnuplot data files, scripts and the
// SVG/PNG they render (private to gw_plan; report.cpp writes the page).
//
// Labels (compressor, model and instance names are free strings) reach
// gnuplot only through data files, never its command text, where a newline,
// a backquote or `system(...)` would run commands (docs/hardening.md). The
// figures stay readable from 10 to 1,000 points (docs/planning.md, "Report"):
// one colour per compressor, one dash pattern per second dimension, legends
// outside the plot and in numeric order, small multiples instead of more than
// kMaxSeries lines in one panel, log axes only where values span a decade.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "gradwire/plan/planner.hpp"
#include "gradwire/plan/result_record.hpp"

namespace gw::plan::report_detail {

struct Figure {
  std::string name, title, caption;
};

/// Orders labels as people read them: runs of digits compare as numbers, so
/// "k=2" comes before "k=16" and "8 GPUs" before "64 GPUs".
bool natural_less(const std::string& a, const std::string& b);

/// `v` with printf format `f`.
std::string num(double v, const char* f = "%.4g");

/// A swept key without its section, as legends show it: "bucket_size" for
/// "workload.bucket_size".
std::string short_key(const std::string& key);
/// The swept keys of `r` (its params) that the figures' own dimensions do not
/// show (compressor, model, instance, GPU count, k, bandwidth): the bucket
/// size, the micro-batch, ... Each becomes a dimension of its own, so that
/// every label names every swept key.
std::vector<std::string> other_swept_keys(const ResultRecord& r);

/// The colour of a compressor, RRGGBB, the same in every report: a fixed
/// hue per kind (uncompressed dark grey, fp16 blue, PowerSGD red, Top-K
/// green, ...) and, for the variants of one kind, a shade picked by the
/// label's first number (rank 1, 2, 4, 8 or ratio 1%, 10% take different
/// shades; the kind's common variant, PowerSGD rank 4 or Top-K 1%, the hue
/// itself). An unknown kind is pink.
std::string compressor_colour(const std::string& kind, const std::string& label);

/// True when `gnuplot` starts (`gnuplot -e exit` exits 0).
bool gnuplot_available(const std::string& gnuplot);

/// Most lines one panel of a figure draws; more become small multiples.
inline constexpr std::size_t kMaxSeries = 10;
/// Most panels of one figure; the rest are named in the caption.
inline constexpr std::size_t kMaxPanels = 12;

struct FigureInputs {
  std::vector<const ResultRecord*> ok;  ///< the points with status ok
  std::vector<PlanPoint> points;        ///< priced points (time-to-train and cost)
  std::vector<std::size_t> front;       ///< Pareto front (indices into points)
  bool priced = true;                   ///< false: the points have no price (no cost axis)
  std::optional<PlanPoint> recommended, baseline;
};

struct Figures {
  std::vector<Figure> figures;
  std::vector<std::string> notes;  ///< sentences for the page: figures left out, and why
};

/// Writes the data, the scripts and the figures into `dir` (gnuplot runs
/// there). Throws std::runtime_error when gnuplot fails.
Figures write_figures(const std::string& gnuplot, const std::string& dir, const FigureInputs& in);

}  // namespace gw::plan::report_detail
