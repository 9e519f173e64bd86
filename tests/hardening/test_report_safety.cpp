// `gradwire report` against hostile results and hostile --out paths, through
// the real binary and the real gnuplot (docs/hardening.md, "Outputs" and
// "Labels never reach gnuplot's command text").
//
// Both failed on f2c0d4f: `report R --out .` deleted the current directory,
// --out naming the folder of the results deleted the input, and a label with
// a newline followed by `!touch FILE` ran the command through gnuplot.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "run_util.hpp"

namespace fs = std::filesystem;
using gw::test::looks_like_crash;
using gw::test::read_text;
using gw::test::run;

namespace {

const std::string kBin = GW_GRADWIRE_BIN;
const fs::path kSource = GW_SOURCE_ROOT;

void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

/// A real results file (6 priced points on three instances: every figure is drawn).
fs::path make_results(const fs::path& dir) {
  const fs::path r = dir / "results.jsonl";
  const auto s = run({kBin, "sweep", (kSource / "scenarios" / "study-accumulation.yaml").string(), "--out", r.string(),
                      "--progress", "none", "-j", "2"});
  EXPECT_EQ(s.exit_code, 0) << s.all();
  return r;
}

/// Every regular file under `dir`, by path relative to it, with its contents.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file())
      out[e.path().lexically_relative(dir).string()] = read_text(e.path());
    else
      out[e.path().lexically_relative(dir).string()] = "<not a regular file>";
  return out;
}

TEST(ReportSafety, OutDotInTheResultsFolderIsRefusedAndNothingIsDeleted) {
  const auto dir = gw::test::scratch_dir("report_out_dot");
  const auto results = make_results(dir);
  write(dir / "precious.txt", "mine\n");
  const auto before = snapshot(dir);
  // `--out .` from inside the folder: run through sh so that the cwd is dir;
  // the arguments are fixed strings, not data.
  const auto r = run({"/bin/sh", "-c", "cd \"$0\" && exec \"$1\" report results.jsonl --out .", dir.string(), kBin});
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_NE(r.err.find("holds the results file"), std::string::npos) << r.err;
  EXPECT_EQ(snapshot(dir), before);
  // The folder that holds the results, by its path, and the results file itself.
  for (const std::string& out : {dir.string(), dir.string() + "/", results.string(), (dir / ".").string()}) {
    const auto o = run({kBin, "report", results.string(), "--out", out});
    EXPECT_EQ(o.exit_code, 2) << out << ": " << o.all();
    EXPECT_FALSE(looks_like_crash(o.all()));
    EXPECT_EQ(snapshot(dir), before) << out;
  }
  // An ancestor of the results folder.
  const auto up = run({kBin, "report", results.string(), "--out", dir.parent_path().string()});
  EXPECT_EQ(up.exit_code, 2) << up.all();
  EXPECT_TRUE(fs::exists(results));
}

TEST(ReportSafety, OnlyADirectoryThatReportMadeIsReplaced) {
  const auto dir = gw::test::scratch_dir("report_replace");
  const auto results = make_results(dir);
  const std::string out = (dir / "rep").string();
  // A directory of the user's, even an empty one: refused, untouched.
  fs::create_directories(dir / "mine");
  write(dir / "mine" / "notes.txt", "keep\n");
  auto r = run({kBin, "report", results.string(), "--out", (dir / "mine").string()});
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_EQ(read_text(dir / "mine" / "notes.txt"), "keep\n");
  fs::create_directories(dir / "empty");
  r = run({kBin, "report", results.string(), "--out", (dir / "empty").string()});
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_TRUE(fs::is_directory(dir / "empty"));

  // Its own report: made, then replaced.
  r = run({kBin, "report", results.string(), "--out", out});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  ASSERT_TRUE(fs::exists(fs::path(out) / ".gradwire-report"));
  r = run({kBin, "report", results.string(), "--out", out});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_TRUE(fs::exists(fs::path(out) / "index.html"));

  // A file the user put into the report: the report is no longer only ours.
  write(fs::path(out) / "my-notes.txt", "keep\n");
  const auto before = snapshot(dir);
  r = run({kBin, "report", results.string(), "--out", out});
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_NE(r.err.find("my-notes.txt"), std::string::npos) << r.err;
  EXPECT_EQ(snapshot(dir), before);
  fs::remove(fs::path(out) / "my-notes.txt");

  // A marker that names a path outside the directory is no marker.
  write(fs::path(out) / ".gradwire-report",
        "# gradwire report directory: files made by `gradwire report`\n../results.jsonl\n");
  const auto before2 = snapshot(dir);
  r = run({kBin, "report", results.string(), "--out", out});
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_EQ(snapshot(dir), before2);

  // A regular file as --out, and a link to a directory.
  write(dir / "plain", "keep\n");
  r = run({kBin, "report", results.string(), "--out", (dir / "plain").string()});
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_EQ(read_text(dir / "plain"), "keep\n");
  fs::create_directory_symlink("mine", dir / "link-to-mine");
  r = run({kBin, "report", results.string(), "--out", (dir / "link-to-mine").string()});
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_EQ(read_text(dir / "mine" / "notes.txt"), "keep\n");
  // No temporary directory is left beside the target after any of this.
  for (const auto& e : fs::directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << e.path();
}

TEST(ReportSafety, LabelsNeverRunCommandsThroughGnuplot) {
  const auto dir = gw::test::scratch_dir("report_labels");
  const auto results = make_results(dir);
  // Every control character and gnuplot's command escapes, in every label
  // field (compression, model, instance), each followed by a command that
  // would leave a file behind if gnuplot ever read it as a command.
  std::vector<std::string> evil;
  for (int c = 0; c < 0x20; ++c) evil.push_back(std::string(1, static_cast<char>(c)));
  evil.push_back("\x7f");
  std::vector<std::string> payloads;
  int n = 0;
  auto pwn = [&](const std::string& how) {
    const std::string f = (dir / ("pwned_" + std::to_string(n++))).string();
    return how == "bang" ? "!touch " + f : how == "tick" ? "`touch " + f + "`" : "system(\"touch " + f + "\")";
  };
  for (const auto& c : evil) payloads.push_back("x" + c + pwn("bang"));
  for (const auto& c : evil) payloads.push_back("x\"" + c + "; " + pwn("sys") + "; \"");
  // gnuplot's printable escapes and quotes, which the results reader allows.
  for (const std::string c : {"\\", "'", "\"", "`", "!", "$", "@", ";", "#"}) {
    payloads.push_back("x" + c + pwn("bang"));
    payloads.push_back("x\"" + c + "; " + pwn("sys") + "; \"");
  }
  payloads.push_back(pwn("tick"));
  payloads.push_back("'" + pwn("tick") + "'");
  payloads.push_back("\"\n" + pwn("bang") + "\n\"");
  payloads.push_back("\\\"\n" + pwn("sys"));
  payloads.push_back("x'\n" + pwn("bang") + "\n'");

  std::istringstream in(read_text(results));
  std::vector<nlohmann::json> recs;
  for (std::string line; std::getline(in, line);) recs.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(recs.size(), 6u);
  // A label with a control character is refused when the results are read
  // (it could forge a line of plan's text, issue 29 item 7): exit 2, nothing
  // run. The others are drawn below.
  const auto has_control = [](const std::string& s) {
    return std::any_of(s.begin(), s.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; });
  };
  for (const auto& payload : payloads) {
    if (!has_control(payload)) continue;
    auto bad = recs;
    bad[0]["model"] = payload;
    std::string bad_text;
    for (const auto& r : bad) bad_text += r.dump() + "\n";
    write(dir / "control.jsonl", bad_text);
    const auto refused = run({kBin, "report", (dir / "control.jsonl").string(), "--out", (dir / "refused").string()});
    EXPECT_EQ(refused.exit_code, 2) << refused.all();
    EXPECT_FALSE(fs::exists(dir / "refused"));
  }
  payloads.erase(std::remove_if(payloads.begin(), payloads.end(), has_control), payloads.end());
  ASSERT_GE(payloads.size(), 18u);
  // Spread the payloads over the records' three label fields, several per
  // label, so that every payload is somewhere in the figures' series.
  std::size_t p = 0;
  for (int round = 0; p < payloads.size(); ++round)
    for (auto& r : recs)
      for (const char* field : {"compression", "model", "instance"}) {
        if (p >= payloads.size()) break;
        const std::string before = round == 0 ? std::string() : r[field].get<std::string>();
        r[field] = before + payloads[p++];
      }
  std::string text;
  for (const auto& r : recs) text += r.dump() + "\n";
  write(dir / "evil.jsonl", text);

  const auto r = run({kBin, "report", (dir / "evil.jsonl").string(), "--out", (dir / "rep").string()});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_FALSE(looks_like_crash(r.all()));
  for (const auto& e : fs::recursive_directory_iterator(dir))
    EXPECT_EQ(e.path().filename().string().rfind("pwned_", 0), std::string::npos) << "a command ran: " << e.path();
  // No label text in any gnuplot script: only the data files carry labels.
  int scripts = 0;
  bool labels_drawn = false;
  for (const auto& e : fs::directory_iterator(dir / "rep")) {
    const std::string name = e.path().filename().string();
    const std::string body = read_text(e.path());
    if (e.path().extension() == ".gp") {
      ++scripts;
      EXPECT_EQ(body.find("touch"), std::string::npos) << name;
      EXPECT_EQ(body.find("pwned"), std::string::npos) << name;
    }
    if (e.path().extension() == ".svg" && body.find("touch") != std::string::npos) labels_drawn = true;
    if (e.path().extension() == ".dat") {
      // One record per line: no label broke a line of the data file.
      std::istringstream lines(body);
      for (std::string line; std::getline(lines, line);)
        for (unsigned char c : line) EXPECT_FALSE(c < 0x20 && c != '\t') << name << ": " << line;
    }
  }
  EXPECT_GE(scripts, 3);
  EXPECT_TRUE(labels_drawn) << "the series titles should still show the (sanitised) labels";
}

}  // namespace

namespace {

TEST(ReportSafety, AnOutputNameTooLongIsRefusedForWhatItIs) {
  // A name the file system cannot take once made the containment check fail
  // open and blame the results file.
  const auto dir = gw::test::scratch_dir("report_long_name");
  const auto results = make_results(dir);
  const auto r = run({kBin, "report", results.string(), "--out", (dir / std::string(300, 'r')).string()});
  EXPECT_EQ(r.exit_code, 2) << r.all();
  EXPECT_EQ(r.err.find("holds the results file"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("File name too long"), std::string::npos) << r.err;
}

}  // namespace
