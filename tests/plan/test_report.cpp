// `gradwire report` reads well from a few points to many (issue 16, item 5):
// legends in numeric order, small multiples instead of crowded panels, an
// iteration figure whenever a line can be drawn, the baseline beside the
// recommendation, --deadline/--budget, a page without gnuplot, the umask.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gradwire/core/atomic_file.hpp"
#include "gradwire/plan/planner.hpp"
#include "gradwire/plan/report.hpp"
#include "gradwire/plan/sweep.hpp"
#include "report_figures.hpp"
#include "sweep_test_util.hpp"

namespace gw::plan {
namespace {

using report_detail::natural_less;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The sweep tests' temporary directory, named as these tests use it.
struct Tmp {
  TempDir temp;
  const fs::path& dir = temp.path;
};

/// The sweep file `text` (as t.dir/s.yaml) run with the closed form into
/// t.dir/r.jsonl; returns its path.
std::string run_file(const Tmp& t, const std::string& text) {
  const fs::path sweep = t.dir / "s.yaml";
  write_file_atomic(sweep.string(), text);
  RunOptions o;
  o.jobs = 1;
  o.out = (t.dir / "r.jsonl").string();
  o.progress = RunOptions::Progress::None;
  const auto sum = run_sweep(load_sweep(sweep.string()), o, closed_form_iteration, "closed form");
  EXPECT_EQ(sum.failed, 0u);
  return o.out;
}

/// A sweep of ResNet-50 on p3.16xlarge with a training target, over `axes`
/// (YAML lines under `axes:`), run with the closed form; returns the results path.
std::string run(const Tmp& t, const std::string& axes) {
  return run_file(t,
                  "name: report-test\nbase:\n  name: report-test\n  cluster: {instance: p3.16xlarge, nodes: 1}\n"
                  "  workload: {model: resnet50, micro_batch: 32, precision: fp32, optimizer: {kind: momentum},\n"
                  "             compression: {kind: none}}\n  training: {samples: 1000000}\naxes:\n" +
                      axes);
}

/// run(), then the report of its results into t.dir/rep; returns the results path.
std::string run_report(const Tmp& t, const std::string& axes) {
  const std::string results = run(t, axes);
  render_report(results, (t.dir / "rep").string());
  return results;
}

/// The data blocks of a gnuplot data file: (title, the x values of its rows).
std::vector<std::pair<std::string, std::vector<double>>> blocks(const fs::path& dat) {
  std::vector<std::pair<std::string, std::vector<double>>> out;
  std::istringstream in(slurp(dat));
  bool block_start = true;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) {
      block_start = true;
      continue;
    }
    if (block_start && line[0] == '"')
      out.push_back({line.substr(1, line.find('"', 1) - 1), {}});
    else if (!out.empty() && line.rfind("NaN", 0) != 0 && line[0] != '#')
      out.back().second.push_back(std::stod(line));
    block_start = false;
  }
  return out;
}

/// The titles of the data blocks of a gnuplot data file (each block's first
/// line, `"title" "title"`), in file order.
std::vector<std::string> block_titles(const fs::path& dat) {
  std::vector<std::string> titles;
  for (const auto& b : blocks(dat)) titles.push_back(b.first);
  return titles;
}

TEST(Report, NaturalOrderReadsNumbersAsNumbers) {
  EXPECT_TRUE(natural_less("k=2", "k=16"));
  EXPECT_FALSE(natural_less("k=16", "k=2"));
  EXPECT_TRUE(natural_less("8 GPUs", "64 GPUs"));
  EXPECT_TRUE(natural_less("uncompressed, k=2, 8 GPUs", "uncompressed, k=16, 8 GPUs"));
  EXPECT_TRUE(natural_less("fp16", "PowerSGD rank 4"));  // letters without regard to case
  EXPECT_TRUE(natural_less("PowerSGD rank 4", "uncompressed"));
  EXPECT_TRUE(natural_less("k=1", "k=01") != natural_less("k=01", "k=1"));  // still a strict order
  EXPECT_FALSE(natural_less("k=4", "k=4"));
}

TEST(Report, LegendIsInNumericOrder) {
  Tmp t;
  run_report(t, "  cluster.nodes: [1, 2]\n  workload.accumulation: [1, 2, 16]\n");
  // Bandwidth does not vary: the GPU count is the x axis, one line per k.
  ASSERT_TRUE(fs::exists(t.dir / "rep" / "iteration-vs-gpus.svg"));
  EXPECT_EQ(block_titles(t.dir / "rep" / "iteration-vs-gpus.dat"),
            (std::vector<std::string>{"uncompressed, k=1", "uncompressed, k=2", "uncompressed, k=16"}));
}

TEST(Report, ManyLinesBecomeSmallMultiplesWithSharedRanges) {
  Tmp t;
  run_report(t,
             "  cluster.nodes: [1, 2]\n  workload.accumulation: [1, 2, 4, 8, 16, 32]\n"
             "  workload.compression: [{kind: none}, {kind: fp16}]\n");
  // 12 lines would crowd one panel: one panel per k, two lines each.
  const std::string gp = slurp(t.dir / "rep" / "iteration-vs-gpus.gp");
  EXPECT_NE(gp.find("set multiplot layout 3,2"), std::string::npos) << gp;
  EXPECT_NE(gp.find("set yrange ["), std::string::npos) << gp;
  const auto titles = block_titles(t.dir / "rep" / "iteration-vs-gpus.dat");
  ASSERT_EQ(titles.size(), 18u);  // 6 panels: the panel's name, then its 2 lines
  EXPECT_EQ(titles[0], "k=1");
  EXPECT_EQ(titles[1], "fp16");
  EXPECT_EQ(titles[2], "uncompressed");
  EXPECT_EQ(titles[15], "k=32");
  // Labels stay in the data file: no compressor name in the script.
  EXPECT_EQ(gp.find("fp16"), std::string::npos);
}

TEST(Report, TheSpeedupMapShowsEachCompressorAgainstItsUncompressedTwin) {
  Tmp t;
  const auto results = run_report(t,
                                  "  cluster.nodes: [1, 4]\n  workload.compression: [{kind: none}, {kind: fp16}, "
                                  "{kind: topk, ratio: 0.01}]\n");
  // Expected: t_uncompressed / t_compressor per GPU count (one point per cell).
  std::map<std::pair<std::string, int>, double> t_of;  // (compression kind, GPUs) -> iteration
  for (const auto& l : read_results(results)) t_of[{*l.record.compression_kind, *l.record.world}] = *l.record.iteration;
  const auto titles = block_titles(t.dir / "rep" / "speedup-map.dat");
  ASSERT_EQ(titles, (std::vector<std::string>{"fp16", "Top-K 1%"}));
  std::istringstream in(slurp(t.dir / "rep" / "speedup-map.dat"));
  int panel = -1, cells = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("\"", 0) == 0 && line.find("NaN") == std::string::npos) ++panel;
    if (line.empty() || !std::isdigit(static_cast<unsigned char>(line[0]))) continue;
    std::istringstream f(line);
    int x = -1, y = -1;
    double log2_speedup = 0;
    f >> x >> y >> log2_speedup;
    const int gpus = y == 0 ? 8 : 32;  // rows in natural order: 8, 32 GPUs
    const std::string kind = panel == 0 ? "fp16" : "topk";
    EXPECT_NEAR(std::exp2(log2_speedup), t_of.at({"none", gpus}) / t_of.at({kind, gpus}), 1e-3) << line;
    ++cells;
  }
  EXPECT_EQ(cells, 4);
}

TEST(Report, ASweepWithoutALineSaysSoInsteadOfDroppingTheFigure) {
  Tmp t;
  const auto results = run(t, "  workload.compression: [{kind: none}, {kind: fp16}]\n");
  const auto sum = render_report(results, (t.dir / "rep").string());
  for (const auto& f : sum.files) EXPECT_EQ(f.rfind("iteration-vs-", 0), std::string::npos) << f;
  EXPECT_NE(slurp(t.dir / "rep" / "index.html").find("No iteration-time figure"), std::string::npos);
}

TEST(Report, TheBaselineStandsBesideTheRecommendation) {
  Tmp t;
  // One global batch (plan compares only points at the same one).
  const auto results = run_report(t, "  cluster.nodes: [2]\n  workload.compression: [{kind: none}, {kind: fp16}]\n");
  const auto points = plan_points(read_results(results), Pricing::OnDemand);
  const auto rec = recommend(points, std::nullopt, std::nullopt);
  ASSERT_TRUE(rec.found && rec.baseline);
  std::vector<std::string> bars;  // the label of each bar, in order
  std::istringstream in(slurp(t.dir / "rep" / "breakdown.dat"));
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] == '"') bars.push_back(line.substr(1, line.find('"', 1) - 1));
  ASSERT_GE(bars.size(), 1u);
  EXPECT_EQ(bars[0].rfind("baseline: uncompressed", 0), 0u) << bars[0];
  if (rec.choice.index != rec.baseline->index) {
    ASSERT_GE(bars.size(), 2u);
    EXPECT_EQ(bars[1].rfind("recommended: ", 0), 0u) << bars[1];
  }
  EXPECT_NE(slurp(t.dir / "rep" / "cost-vs-time.dat").find("\"recommended\""), std::string::npos);
}

TEST(Report, DeadlineAndBudgetShapeTheRecommendation) {
  Tmp t;
  const auto results = run(t,
                           "  cluster.nodes: [2]\n  workload.compression: [{kind: none}, {kind: fp16}, "
                           "{kind: powersgd, rank: 4}]\n");
  const auto points = plan_points(read_results(results), Pricing::OnDemand);
  ASSERT_FALSE(points.empty());
  double fastest = 1e300;
  for (const auto& p : points) fastest = std::min(fastest, p.hours);
  ReportOptions o;
  o.deadline_hours = fastest * 1.0001;  // only the fastest point meets it
  render_report(results, (t.dir / "rep").string(), o);
  const auto rec = recommend(points, std::nullopt, o.deadline_hours);
  ASSERT_TRUE(rec.found);
  EXPECT_LE(rec.choice.hours, *o.deadline_hours);
  const std::string html = slurp(t.dir / "rep" / "index.html");
  EXPECT_NE(html.find("; deadline "), std::string::npos);
  EXPECT_NE(html.find(describe(rec.choice)), std::string::npos) << html.substr(0, 1500);

  ReportOptions broke;
  broke.budget = 1e-6;  // nothing is that cheap
  render_report(results, (t.dir / "rep2").string(), broke);
  const auto none = recommend(points, broke.budget, std::nullopt);
  EXPECT_FALSE(none.found);
  EXPECT_NE(slurp(t.dir / "rep2" / "index.html").find("budget"), std::string::npos);
}

TEST(Report, WithoutGnuplotThePageHasItsTables) {
  Tmp t;
  const auto results = run(t, "  workload.accumulation: [1, 2]\n");
  const auto sum = render_report(results, (t.dir / "rep").string(), (t.dir / "no-such-gnuplot").string());
  EXPECT_FALSE(sum.figures);
  EXPECT_EQ(sum.files, (std::vector<std::string>{"index.html"}));
  const std::string html = slurp(t.dir / "rep" / "index.html");
  EXPECT_NE(html.find("No figures: gnuplot"), std::string::npos);
  EXPECT_NE(html.find(">All points</h2>"), std::string::npos);
  EXPECT_NE(html.find(">Pareto front</h2>"), std::string::npos);
  // The table names the instance and the compressor and gives the band.
  EXPECT_NE(
      html.find(">instance / GPU</th><th>GPUs</th><th class=\"l\" title=\"workload.compression\">compressor</th>"),
      std::string::npos);
  EXPECT_NE(html.find("<th>band (ms)</th>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"l\">p3.16xlarge</td><td>8</td><td class=\"l\">uncompressed</td>"),
            std::string::npos);
}

TEST(Report, ASweepWhereNothingFitsStillHasAPage) {
  Tmp t;
  const std::string results =
      run_file(t,
               "name: nofit\nbase:\n  name: nofit\n  cluster: {instance: g5.48xlarge, nodes: 1}\n"
               "  workload: {model: llama2-7b, micro_batch: 8, precision: fp32, optimizer: {kind: adamw}}\n"
               "  training: {samples: 1000000}\naxes:\n  workload.accumulation: [1, 2]\n");
  const auto sum = render_report(results, (t.dir / "rep").string());
  EXPECT_EQ(sum.no_fit, 2);
  EXPECT_EQ(sum.ok, 0);
  const std::string html = slurp(t.dir / "rep" / "index.html");
  EXPECT_NE(html.find("No iteration-time figure"), std::string::npos);
  EXPECT_NE(html.find("2 do not fit in GPU memory"), std::string::npos);
}

TEST(Report, TheDirectoryTakesTheUmasksMode) {
  Tmp t;
  const auto results = run(t, "  workload.accumulation: [1, 2]\n");
  const mode_t old = ::umask(022);
  render_report(results, (t.dir / "open").string(), (t.dir / "no-such-gnuplot").string());
  ::umask(077);
  render_report(results, (t.dir / "private").string(), (t.dir / "no-such-gnuplot").string());
  ::umask(old);
  struct stat st {};
  ASSERT_EQ(::stat((t.dir / "open").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);
  ASSERT_EQ(::stat((t.dir / "private").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

// --- Issue 29, item 11: reports with any swept key ----------------------------------------

// A swept key the figures did not know (the bucket size) stacked every point
// of a line in one vertical column: now it is a dimension like the others,
// named in every line's title, and no line has two points at one x.
TEST(Report, AnUnplottedSweptKeyBecomesLinesNamedByItsKey) {
  Tmp t;
  run_report(t,
             "  cluster.nodes: [1, 2, 4]\n  workload.bucket_size: [5MiB, 25MiB, 100MiB]\n"
             "  workload.compression: [{kind: none}, {kind: fp16}]\n");
  ASSERT_TRUE(fs::exists(t.dir / "rep" / "iteration-vs-gpus.dat"));
  const auto lines = blocks(t.dir / "rep" / "iteration-vs-gpus.dat");
  // A factored legend (2 compressors, 3 bucket sizes: 5 entries), then 6 lines of 3 points each.
  ASSERT_EQ(lines.size(), 11u);
  EXPECT_EQ(lines[2].first, "bucket_size=5MiB");
  EXPECT_EQ(lines[5].first, "fp16, bucket_size=5MiB");
  for (std::size_t i = 5; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i].second, (std::vector<double>{8, 16, 32})) << lines[i].first;
    EXPECT_NE(lines[i].first.find("bucket_size="), std::string::npos) << lines[i].first;
  }
  // Labels stay in the data file (docs/hardening.md): not one in the script.
  EXPECT_EQ(slurp(t.dir / "rep" / "iteration-vs-gpus.gp").find("MiB"), std::string::npos);
  // The page's tables name the key: a column of its own, and the Pareto front's configurations.
  const std::string html = slurp(t.dir / "rep" / "index.html");
  EXPECT_NE(html.find("<th class=\"l\">workload.bucket_size</th>"), std::string::npos);
  EXPECT_NE(html.find("; workload.bucket_size="), std::string::npos);
}

// When nothing the figures know varies, a swept key whose values are numbers
// (sizes here) is the x axis: an axis that varies, in MiB.
TEST(Report, ASweptNumberIsTheXAxisWhenNothingElseVaries) {
  Tmp t;
  run_report(t,
             "  workload.bucket_size: [1MiB, 25MiB, 100MiB]\n"
             "  workload.compression: [{kind: none}, {kind: fp16}]\n");
  const fs::path dat = t.dir / "rep" / "iteration-vs-workload-bucket-size.dat";
  ASSERT_TRUE(fs::exists(dat));
  const auto lines = blocks(dat);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].first, "fp16");
  EXPECT_EQ(lines[0].second, (std::vector<double>{1, 25, 100}));
  const std::string gp = slurp(t.dir / "rep" / "iteration-vs-workload-bucket-size.gp");
  EXPECT_NE(gp.find("set xlabel 'bucket size (MiB)' noenhanced"), std::string::npos) << gp;
  EXPECT_NE(gp.find("set logscale x"), std::string::npos) << gp;
}

// More dimensions than one figure can show: lines while a panel keeps to 10,
// one dimension as panels, the rest held at the recommendation's values and
// said so; still no line with two points at one x.
TEST(Report, TooManyDimensionsAreHeldAtTheRecommendationsValuesAndSaid) {
  Tmp t;
  const auto results = run_report(t,
                                  "  cluster.nodes: [1, 2]\n  workload.accumulation: [1, 2, 4, 8]\n"
                                  "  workload.bucket_size: [5MiB, 25MiB, 100MiB, 400MiB]\n"
                                  "  workload.compression: [{kind: none}, {kind: fp16}, {kind: topk, ratio: 0.01}]\n");
  // The anchor: the recommendation when the points make one group, else the fastest point.
  const auto lines_read = read_results(results);
  const auto points = plan_points(lines_read, Pricing::OnDemand);
  std::string bucket;
  auto bucket_of = [](const StringPairs& params) {
    for (const auto& [k, v] : params)
      if (k == "workload.bucket_size") return v;
    return std::string();
  };
  if (comparable_groups(points, nullptr).size() == 1) {
    bucket = bucket_of(recommend(points, std::nullopt, std::nullopt).choice.params);
  } else {
    const ResultRecord* fastest = &lines_read.front().record;
    for (const auto& l : lines_read)
      if (*l.record.iteration < *fastest->iteration) fastest = &l.record;
    bucket = bucket_of(*fastest->params);
  }
  ASSERT_FALSE(bucket.empty());
  const std::string html = slurp(t.dir / "rep" / "index.html");
  // 3 compressors x 4 k = 12 lines > 10: k becomes panels; 3 x 4 bucket sizes too: the bucket size is held.
  EXPECT_NE(html.find("the points at bucket_size=" + bucket + " (the recommendation's, else the fastest point's)"),
            std::string::npos)
      << html.substr(0, 3000);
  EXPECT_NE(html.find("One panel per accumulation k"), std::string::npos);
  const auto lines = blocks(t.dir / "rep" / "iteration-vs-gpus.dat");
  std::size_t drawn = 0;
  for (const auto& [title, xs] : lines) {
    if (xs.empty()) continue;  // a panel's name or a legend entry
    EXPECT_EQ(xs, (std::vector<double>{8, 16})) << title;
    ++drawn;
  }
  EXPECT_EQ(drawn, 12u);  // 4 panels x 3 compressors
}

// Colours belong to compressors, not to their rank in one report: fp16 is
// the same blue whether or not other compressors are in the sweep.
TEST(Report, ColoursAreFixedPerCompressor) {
  using report_detail::compressor_colour;
  EXPECT_EQ(compressor_colour("none", "uncompressed"), "4d4d4d");
  EXPECT_EQ(compressor_colour("fp16", "fp16"), "1f77b4");
  EXPECT_EQ(compressor_colour("powersgd", "PowerSGD rank 4"), "d62728");
  EXPECT_EQ(compressor_colour("topk", "Top-K 1%"), "2ca02c");
  EXPECT_EQ(compressor_colour("sign", "signSGD"), "ff7f0e");
  // Variants of one kind: shades of its hue, different for ranks 1, 2, 4 and 8.
  std::set<std::string> ranks;
  for (const char* r : {"PowerSGD rank 1", "PowerSGD rank 2", "PowerSGD rank 4", "PowerSGD rank 8"})
    ranks.insert(compressor_colour("powersgd", r));
  EXPECT_EQ(ranks.size(), 4u);
  EXPECT_EQ(compressor_colour("mine", "my codec 2"), "e377c2");
  EXPECT_EQ(compressor_colour("int8", "int8"), "9467bd");  // a number in a name is no variant

  Tmp a, b;
  render_report(run(a, "  cluster.nodes: [1, 2]\n  workload.compression: [{kind: fp16}]\n"), (a.dir / "rep").string());
  render_report(run(b, "  cluster.nodes: [1, 2]\n  workload.compression: [{kind: none}, {kind: sign}, {kind: fp16}]\n"),
                (b.dir / "rep").string());
  for (const Tmp* t : {&a, &b}) {
    const std::string gp = slurp(t->dir / "rep" / "cost-vs-time.gp");
    EXPECT_NE(gp.find("lc rgb '#801f77b4'"), std::string::npos) << gp;
  }
}

/// The [lo:hi] of "set AXISrange [lo:hi]" in `gp`.
std::pair<double, double> range_of(const std::string& gp, const std::string& axis) {
  const auto at = gp.find("set " + axis + "range [");
  EXPECT_NE(at, std::string::npos) << gp;
  if (at == std::string::npos) return {0, 0};
  const auto open = gp.find('[', at), colon = gp.find(':', open);
  return {std::stod(gp.substr(open + 1)), std::stod(gp.substr(colon + 1))};
}

// The cost figure draws the Pareto front's region with the recommendation
// and its baseline inside the frame, and counts the dominated points beyond it.
TEST(Report, TheCostFigureZoomsToTheFrontWithTheStarInsideTheFrame) {
  Tmp t;
  const auto results = run_report(t,
                                  "  cluster.nodes: [1, 2, 4, 8, 16]\n  workload.accumulation: [1, 4]\n"
                                  "  workload.compression: [{kind: none}, {kind: fp16}, {kind: sign}]\n");
  const auto points = plan_points(read_results(results), Pricing::OnDemand);
  const auto front = pareto_front(points);
  const auto rec = recommend(points, std::nullopt, std::nullopt);
  ASSERT_TRUE(rec.found);
  const std::string gp = slurp(t.dir / "rep" / "cost-vs-time.gp");
  const auto [x_lo, x_hi] = range_of(gp, "x");
  const auto [y_lo, y_hi] = range_of(gp, "y");
  // Strictly inside, with room (at least 3% of the axis from each edge): the
  // marker does not sit on the frame.
  auto at = [&](double v, double lo, double hi, const char* axis) {
    const bool log = gp.find(std::string("set logscale ") + axis) != std::string::npos;
    return log ? std::log(v / lo) / std::log(hi / lo) : (v - lo) / (hi - lo);
  };
  for (const double f : {at(rec.choice.hours, x_lo, x_hi, "x"), at(rec.choice.cost, y_lo, y_hi, "y")}) {
    EXPECT_GT(f, 0.03);
    EXPECT_LT(f, 0.97);
  }
  std::size_t inside = 0;
  for (const auto& p : points) inside += p.hours >= x_lo && p.hours <= x_hi && p.cost >= y_lo && p.cost <= y_hi;
  for (std::size_t i : front) {
    EXPECT_GE(points[i].hours, x_lo);
    EXPECT_LE(points[i].hours, x_hi);
  }
  const std::string html = slurp(t.dir / "rep" / "index.html");
  if (inside < points.size()) {
    EXPECT_NE(html.find(std::to_string(points.size() - inside) + " points beyond it"), std::string::npos);
  }
  // The drawn points are the ones inside, once each (blocks before the front's).
  std::size_t drawn = 0;
  for (const auto& [title, xs] : blocks(t.dir / "rep" / "cost-vs-time.dat")) {
    if (title == "Pareto front") break;
    drawn += xs.size();
  }
  EXPECT_EQ(drawn, inside);
}

// Clusters of one's own (an on-prem price, no catalog instance) are marked in
// the cost figure and named so in the tables.
TEST(Report, OnPremPointsAreMarked) {
  Tmp t;
  const std::string results = run(t,
                                  "  cluster:\n    - {instance: p3.16xlarge, nodes: 2}\n"
                                  "    - {nodes: 2, gpus_per_node: 8, gpu: v100, intra_node: {bandwidth: 150GB/s, "
                                  "latency: 1us},\n       nics: {count: 1, bandwidth: 25Gbps, latency: 5us}, "
                                  "fabric: {topology: switch, latency: 1us},\n       cloud: onprem, "
                                  "price_per_gpu_hour: 1.5}\n  workload.compression: [{kind: none}, {kind: fp16}]\n");
  render_report(results, (t.dir / "rep").string());
  std::size_t own = 0;
  for (const auto& [title, xs] : blocks(t.dir / "rep" / "cost-vs-time.dat"))
    if (title == "own cluster (on-prem price)") own = xs.size();
  EXPECT_GE(own, 1u);  // the on-prem points in the figure's region (the Pareto front's) are ringed
  const std::string html = slurp(t.dir / "rep" / "index.html");
  EXPECT_NE(html.find("own cluster (v100)"), std::string::npos);
  EXPECT_NE(html.find("GPUs (own cluster)"), std::string::npos);  // the Pareto front's words
}

// The tables fit the page (a scroll container) and sort and filter with the
// page's own script: no external asset, no data in the script.
TEST(Report, TablesScrollSortAndFilterWithAnInlineScript) {
  Tmp t;
  run_report(t, "  cluster.nodes: [1, 2]\n  workload.bucket_size: [5MiB, 25MiB]\n");
  const std::string html = slurp(t.dir / "rep" / "index.html");
  EXPECT_NE(html.find("<div class=\"scroll\"><table id=\"all\"><thead>"), std::string::npos);
  EXPECT_NE(html.find("<div class=\"scroll\"><table id=\"front\"><thead>"), std::string::npos);
  EXPECT_NE(html.find("<input type=\"search\" data-table=\"all\""), std::string::npos);
  const auto open = html.find("<script>"), close = html.find("</script>");
  ASSERT_NE(open, std::string::npos);
  ASSERT_NE(close, std::string::npos);
  const std::string script = html.substr(open, close - open);
  EXPECT_NE(script.find("function gwSort"), std::string::npos);
  EXPECT_NE(script.find("function gwFilter"), std::string::npos);
  EXPECT_EQ(script.find("MiB"), std::string::npos) << "no data in the script";
  EXPECT_EQ(html.find("<script", close), std::string::npos) << "one script";
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);
  EXPECT_EQ(html.find("href=\"http"), std::string::npos);
}

}  // namespace
}  // namespace gw::plan
