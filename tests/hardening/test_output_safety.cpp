// The output-safety matrix (docs/hardening.md, "Outputs"): every command that
// writes a file, against every kind of target a user can name, through the
// real binary. The temporary tree is hashed before and after each run
// (contents, types, modes, link targets, device numbers), so a command that
// replaces a device, follows a link into the wrong place, deletes a
// directory, leaves a temporary file behind or writes over its own input is
// caught, whatever it printed.
//
//   targets: a new path, an existing regular file, the command's own input,
//            a directory, a FIFO, a character device (mknod), a link to a
//            regular file, a dangling link, a path in a read-only file system
//            and one in a full file system (tmpfs mounts; skipped where the
//            test cannot mount)
//   commands: simulate --trace, calibrate --out, calibrate --from-nccl-tests
//            LOG --write-cluster, sweep --out, plan SWEEP
//            RESULTS (runs the sweep), merge OUT, report --out; collective
//            writes only to standard output.
#include <gtest/gtest.h>

#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "run_util.hpp"

namespace fs = std::filesystem;
using gw::test::looks_like_crash;
using gw::test::run;

namespace {

const std::string kBin = GW_GRADWIRE_BIN;
const fs::path kSource = GW_SOURCE_ROOT;

void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// --- The tree's fingerprint ----------------------------------------------------

/// One line per entry: type, mode, and what identifies its content.
std::map<std::string, std::string> fingerprint(const fs::path& root) {
  std::map<std::string, std::string> out;
  std::function<void(const fs::path&)> walk = [&](const fs::path& dir) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      struct stat st {};
      if (::lstat(e.path().c_str(), &st) != 0) continue;
      const std::string rel = e.path().lexically_relative(root).string();  // not fs::relative: it follows links
      std::string id = std::to_string(st.st_mode);
      if (S_ISREG(st.st_mode)) {
        id += " file " + std::to_string(std::hash<std::string>{}(gw::test::read_text(e.path()))) + " " +
              std::to_string(st.st_size) + " ino " + std::to_string(st.st_ino);
      } else if (S_ISLNK(st.st_mode)) {
        id += " link " + fs::read_symlink(e.path()).string();
      } else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
        id += " dev " + std::to_string(major(st.st_rdev)) + "," + std::to_string(minor(st.st_rdev));
      } else if (S_ISDIR(st.st_mode)) {
        id += " dir";
        walk(e.path());
      }
      out[rel] = id;
    }
  };
  walk(root);
  return out;
}

/// The entries that differ (added, removed or changed) between two prints.
std::set<std::string> changed(const std::map<std::string, std::string>& a,
                              const std::map<std::string, std::string>& b) {
  std::set<std::string> out;
  for (const auto& [k, v] : a)
    if (!b.count(k) || b.at(k) != v) out.insert(k);
  for (const auto& [k, v] : b)
    if (!a.count(k)) out.insert(k);
  return out;
}

std::string show(const std::set<std::string>& s) {
  std::string o;
  for (const auto& x : s) o += (o.empty() ? "" : ", ") + x;
  return o.empty() ? "(nothing)" : o;
}

// --- Targets ---------------------------------------------------------------------

enum class Target { New, Regular, Input, Directory, Fifo, CharDevice, LinkToRegular, DanglingLink, ReadOnlyFs, FullFs };

const char* name_of(Target t) {
  switch (t) {
    case Target::New:
      return "new";
    case Target::Regular:
      return "regular";
    case Target::Input:
      return "input";
    case Target::Directory:
      return "directory";
    case Target::Fifo:
      return "fifo";
    case Target::CharDevice:
      return "chardev";
    case Target::LinkToRegular:
      return "link";
    case Target::DanglingLink:
      return "dangling";
    case Target::ReadOnlyFs:
      return "readonly";
    case Target::FullFs:
      return "fullfs";
  }
  return "?";
}

/// A tmpfs mounted for one case, unmounted when the case ends.
struct Mount {
  fs::path at;
  bool ok = false;
  Mount(const fs::path& p, const std::string& opts) : at(p) {
    fs::create_directories(p);
    ok = ::mount("tmpfs", p.c_str(), "tmpfs", 0, opts.c_str()) == 0;
  }
  void remount_readonly() { ok = ok && ::mount("tmpfs", at.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, nullptr) == 0; }
  ~Mount() {
    if (ok) ::umount2(at.c_str(), MNT_DETACH);
  }
};

// --- Commands --------------------------------------------------------------------

/// What a command does with a target that already holds an unrelated
/// regular file: replace it (simulate, calibrate) or refuse it (a results
/// file that is not one of the sweep's, a report directory).
enum class OnRegular { Replace, Refuse };

struct Command {
  std::string name;
  OnRegular on_regular;
  bool target_is_dir = false;  ///< report --out names a directory
  /// argv for writing `out`; `dir` holds the inputs made by prepare().
  std::function<std::vector<std::string>(const fs::path& dir, const std::string& out)> args;
  /// The input that the "input" target names (empty: the command has none).
  std::function<fs::path(const fs::path& dir)> input;
};

/// The inputs every command may need, made once per case directory.
void prepare_inputs(const fs::path& dir) {
  fs::copy_file(kSource / "scenarios" / "default.yaml", dir / "scen.yaml");
  fs::copy_file(kSource / "tests" / "data" / "nccl-tests" / "a3mega-2x8-h100-all_reduce_perf.log", dir / "a3.log");
  // Priced (an instance and a training target), so that `plan` recommends.
  write(dir / "sweep.yaml",
        "name: tiny\nbase:\n  cluster: {instance: p3.16xlarge, nodes: 2}\n  workload: {model: resnet50, micro_batch: "
        "32}\n"
        "  training: {samples: 1000000}\naxes:\n  workload.accumulation: [1, 2, 4]\n");
  // Results made by the real binary; the two shards of `--shard i/2` are its
  // records of even and odd index (what the shards' own runs write).
  const auto r = run({kBin, "sweep", (dir / "sweep.yaml").string(), "--out", (dir / "results.jsonl").string(),
                      "--progress", "none", "-j", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.all();
  std::istringstream lines(gw::test::read_text(dir / "results.jsonl"));
  std::string shard[2];
  int i = 0;
  for (std::string line; std::getline(lines, line); ++i) shard[i % 2] += line + "\n";
  ASSERT_EQ(i, 3);
  write(dir / "shard0.jsonl", shard[0]);
  write(dir / "shard1.jsonl", shard[1]);
}

std::vector<Command> commands() {
  return {
      {"simulate", OnRegular::Replace, false,
       [](const fs::path& d, const std::string& o) {
         return std::vector<std::string>{kBin, "simulate", (d / "scen.yaml").string(), "--trace", o};
       },
       [](const fs::path& d) { return d / "scen.yaml"; }},
      {"calibrate",
       OnRegular::Replace,
       false,
       [](const fs::path&, const std::string& o) {
         return std::vector<std::string>{kBin, "calibrate", "--device", "cpu", "--quick", "--out", o};
       },
       {}},
      {"write_cluster", OnRegular::Replace, false,
       [](const fs::path& d, const std::string& o) {
         return std::vector<std::string>{
             kBin, "calibrate", "--from-nccl-tests", (d / "a3.log").string(), "--write-cluster", o};
       },
       [](const fs::path& d) { return d / "a3.log"; }},
      {"sweep", OnRegular::Refuse, false,
       [](const fs::path& d, const std::string& o) {
         return std::vector<std::string>{kBin, "sweep", (d / "sweep.yaml").string(), "--out", o, "--progress", "none"};
       },
       [](const fs::path& d) { return d / "sweep.yaml"; }},
      {"plan", OnRegular::Refuse, false,
       [](const fs::path& d, const std::string& o) {
         return std::vector<std::string>{kBin, "plan", (d / "sweep.yaml").string(), o};
       },
       [](const fs::path& d) { return d / "sweep.yaml"; }},
      {"merge", OnRegular::Refuse, false,
       [](const fs::path& d, const std::string& o) {
         return std::vector<std::string>{kBin, "merge", o, (d / "shard0.jsonl").string(),
                                         (d / "shard1.jsonl").string()};
       },
       [](const fs::path& d) { return d / "shard0.jsonl"; }},
      {"report", OnRegular::Refuse, true,
       [](const fs::path& d, const std::string& o) {
         return std::vector<std::string>{kBin, "report", (d / "results.jsonl").string(), "--out", o};
       },
       [](const fs::path& d) { return d / "results.jsonl"; }},
  };
}

struct Case {
  std::string command;
  Target target;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.command << " -> " << name_of(c.target); }

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const auto& c : commands())
    for (Target t : {Target::New, Target::Regular, Target::Input, Target::Directory, Target::Fifo, Target::CharDevice,
                     Target::LinkToRegular, Target::DanglingLink, Target::ReadOnlyFs, Target::FullFs})
      if (t != Target::Input || c.input) out.push_back({c.name, t});
  return out;
}

class OutputSafety : public ::testing::TestWithParam<Case> {};

TEST_P(OutputSafety, NothingButTheIntendedTargetChanges) {
  const Case& k = GetParam();
  Command cmd;
  for (const auto& c : commands())
    if (c.name == k.command) cmd = c;
  const std::string id = k.command + "_" + name_of(k.target);
  const fs::path scratch = fs::path(GW_HARDENING_SCRATCH) / "output_safety";
  fs::create_directories(scratch);
  const fs::path dir = scratch / id;
  ::umount2((dir / "mnt").c_str(), MNT_DETACH);  // left over from an aborted run
  fs::remove_all(dir);
  fs::create_directories(dir);
  prepare_inputs(dir);
  if (HasFatalFailure()) return;

  // The target, made as the case says. `changes_ok` are the entries that a
  // successful write may change: the target, or the file behind a link.
  std::string out = (dir / "out").string();
  std::set<std::string> changes_ok{"out"};
  bool expect_write = false;  // exit 0 and the target written
  std::unique_ptr<Mount> mnt;
  const std::string precious = "precious: not gradwire's\n";
  switch (k.target) {
    case Target::New:
      expect_write = true;
      break;
    case Target::Regular:
      write(out, precious);
      expect_write = cmd.on_regular == OnRegular::Replace;
      break;
    case Target::Input:
      out = cmd.input(dir).string();
      break;
    case Target::Directory:
      fs::create_directories(dir / "out");
      write(dir / "out" / "keep.txt", precious);
      break;
    case Target::Fifo:
      ASSERT_EQ(::mkfifo(out.c_str(), 0644), 0);
      break;
    case Target::CharDevice:
      // The null device's numbers, made here: writing to it would be harmless,
      // replacing it is what must not happen.
      if (::mknod(out.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) GTEST_SKIP() << "mknod not permitted here";
      break;
    case Target::LinkToRegular:
      write(dir / "behind-link", precious);
      fs::create_symlink("behind-link", out);
      changes_ok = {"behind-link"};
      expect_write = cmd.on_regular == OnRegular::Replace;
      break;
    case Target::DanglingLink:
      fs::create_symlink("nowhere/at-all", out);
      break;
    case Target::ReadOnlyFs:
      mnt = std::make_unique<Mount>(dir / "mnt", "size=1m");
      mnt->remount_readonly();
      if (!mnt->ok) GTEST_SKIP() << "cannot mount a read-only tmpfs here";
      out = (dir / "mnt" / "out").string();
      break;
    case Target::FullFs: {
      mnt = std::make_unique<Mount>(dir / "mnt", "size=64k");
      if (!mnt->ok) GTEST_SKIP() << "cannot mount a small tmpfs here";
      {
        std::ofstream fill(dir / "mnt" / "filler", std::ios::binary);
        const std::string block(4096, 'x');
        for (int i = 0; i < 64 && fill; ++i) fill << block;
      }
      out = (dir / "mnt" / "out").string();
      break;
    }
  }

  const auto before = fingerprint(dir);
  gw::test::RunOptions o;
  o.timeout_s = 120;
  const auto r = run(cmd.args(dir, out), o);
  const auto after = fingerprint(dir);
  const auto diff = changed(before, after);
  const std::string what = k.command + " -> " + name_of(k.target) + ": " + r.all();

  EXPECT_FALSE(r.timed_out) << what;
  EXPECT_FALSE(looks_like_crash(r.all())) << what;
  if (expect_write) {
    EXPECT_EQ(r.exit_code, 0) << what;
    for (const auto& c : diff) {
      const bool inside = std::any_of(changes_ok.begin(), changes_ok.end(),
                                      [&](const std::string& ok) { return c == ok || c.rfind(ok + "/", 0) == 0; });
      EXPECT_TRUE(inside) << "changed outside the target: " << c << "\n" << what;
    }
    EXPECT_FALSE(diff.empty()) << "the target was not written\n" << what;
    if (k.target == Target::LinkToRegular) {
      EXPECT_TRUE(fs::is_symlink(dir / "out")) << "the link itself was replaced\n" << what;
      EXPECT_NE(gw::test::read_text(dir / "behind-link"), precious) << what;
    }
    if (cmd.target_is_dir) {
      EXPECT_TRUE(fs::exists(fs::path(out) / "index.html")) << what;
    }
  } else {
    EXPECT_NE(r.exit_code, 0) << what;
    // A refusal is bad input (exit 2); a full file system is a run-time
    // failure (exit 1). Either way nothing changed.
    if (k.target != Target::FullFs) {
      EXPECT_EQ(r.exit_code, 2) << what;
    }
    EXPECT_TRUE(diff.empty()) << "changed: " << show(diff) << "\n" << what;
    // One clear line (calibrate's progress lines aside).
    std::size_t lines = 0;
    for (std::size_t p = 0; (p = r.err.find("gradwire ", p)) != std::string::npos; ++p)
      if (p == 0 || r.err[p - 1] == '\n') ++lines;
    EXPECT_EQ(lines, 1u) << "one clear line\n" << what;
  }
}

INSTANTIATE_TEST_SUITE_P(Matrix, OutputSafety, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           return i.param.command + "_" + name_of(i.param.target);
                         });

TEST(OutputSafety, CollectiveWritesOnlyToStandardOutput) {
  const auto dir = gw::test::scratch_dir("output_safety_collective");
  fs::copy_file(kSource / "scenarios" / "default.yaml", dir / "scen.yaml");
  const auto before = fingerprint(dir);
  for (const char* format : {"table", "csv", "json"}) {
    const auto r = run({kBin, "collective", "--scenario", (dir / "scen.yaml").string(), "--op", "allreduce", "--algo",
                        "ring", "--sizes", "8B:64KiB", "--format", format});
    EXPECT_EQ(r.exit_code, 0) << r.all();
    EXPECT_FALSE(r.out.empty()) << format;
  }
  EXPECT_TRUE(changed(before, fingerprint(dir)).empty());
}

TEST(OutputSafety, SimulateWritesTheTraceToStandardOutputWithADash) {
  const auto dir = gw::test::scratch_dir("output_safety_dash");
  fs::copy_file(kSource / "scenarios" / "default.yaml", dir / "scen.yaml");
  const auto before = fingerprint(dir);
  const auto r = run({kBin, "simulate", (dir / "scen.yaml").string(), "--trace", "-"});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  EXPECT_EQ(r.out.substr(0, 1), "{") << r.out.substr(0, 200);
  EXPECT_NE(r.out.find("\"traceEvents\""), std::string::npos);
  EXPECT_TRUE(changed(before, fingerprint(dir)).empty());
  // /dev/stdout is a link to a pipe here: refused, the link left alone.
  const auto s = run({kBin, "simulate", (dir / "scen.yaml").string(), "--trace", "/dev/stdout"});
  EXPECT_EQ(s.exit_code, 2) << s.all();
  EXPECT_NE(s.err.find("use - for standard output"), std::string::npos) << s.err;
  EXPECT_TRUE(fs::is_symlink("/dev/stdout"));
  // An empty path is refused, not taken as the current directory.
  const auto e = run({kBin, "simulate", (dir / "scen.yaml").string(), "--trace", ""});
  EXPECT_EQ(e.exit_code, 2) << e.all();
}

}  // namespace
