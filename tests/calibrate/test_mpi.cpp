// The MPI calibration for real: `mpirun -np 4 gradwire-calibrate --mpi
// --device cpu --quick` on this machine (MPI's own collectives over shared
// memory), its profile loaded by `gradwire simulate`; `gradwire calibrate
// --mpi` handing over to gradwire-calibrate; and the rule that no image
// holds both SimGrid (whose SMPI defines MPI_Init) and MPI.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gradwire/model/profile.hpp"
#include "run_util.hpp"

namespace fs = std::filesystem;

namespace {

/// mpirun's path, or empty when it is not installed.
std::string find_mpirun() {
  auto r = gw::test::run_command("command -v mpirun 2>/dev/null");
  while (!r.out.empty() && (r.out.back() == '\n' || r.out.back() == ' ')) r.out.pop_back();
  return r.exit_code == 0 ? r.out : std::string();
}

/// mpirun -np 4 (more ranks than cores is fine here: --oversubscribe, unless
/// `args` has it) with `args`, its session files under `dir` (two jobs
/// creating Open MPI's shared session folder in /tmp at once can fail).
gw::test::RunResult mpirun4(const std::string& mpirun, const fs::path& dir, std::vector<std::string> args) {
  std::vector<std::string> cmd = {mpirun, "-np", "4"};
  if (std::find(args.begin(), args.end(), "--oversubscribe") == args.end()) cmd.push_back("--oversubscribe");
  if (::getuid() == 0) cmd.push_back("--allow-run-as-root");  // Open MPI refuses root otherwise
  cmd.insert(cmd.end(), args.begin(), args.end());
  gw::test::RunOptions o;
  o.timeout_s = 900;  // a guard against a hung job, not a time goal: a busy machine is slow
  o.env = {"TMPDIR=" + dir.string()};
  for (auto& e : gw::test::mpi_child_env()) o.env.push_back(std::move(e));
  return gw::test::run(cmd, o);
}

fs::path temp_dir() {
  const fs::path dir = fs::temp_directory_path() / ("gw-mpi-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

std::string all_notes(const gw::Profile& p) {
  std::string out;
  for (const auto& n : p.notes) out += n + "\n";
  return out;
}

bool has_note(const gw::Profile& p, const std::string& text) {
  for (const auto& n : p.notes) {
    if (n.find(text) != std::string::npos) return true;
  }
  return false;
}

/// The checks every 4-rank CPU profile passes, whatever this machine's
/// timings: the five collectives over 4 ranks on 1 node, each fitted over the
/// requested sizes (all of them, or the first ones with a note saying that the
/// time budget cut the rest), or absent with a note saying why; and notes
/// saying what was measured. On a busy machine a slow run is cut by the
/// budget, and MPI's small sizes can take a scheduler time slice each (a fit
/// then refused): nothing here depends on how long anything took.
void expect_cpu_mpi_profile(const fs::path& path) {
  const gw::Profile p = gw::load_profile_file(path.string());
  EXPECT_EQ(p.source, "measured");
  EXPECT_EQ(p.device.rfind("CPU", 0), 0u) << p.device;
  EXPECT_NE(p.command.find("--mpi"), std::string::npos) << p.command;
  // --quick on the CPU: 4 KiB .. 4 MiB in x4 steps.
  const std::vector<double> sizes = {4096, 16384, 65536, 262144, 1048576, 4194304};
  for (const auto& info : gw::collective_ops()) {
    SCOPED_TRACE(info.name);
    const std::string name = info.name;
    const gw::CollectiveCost* c = nullptr;
    for (const auto& e : p.collectives) c = e.op == info.op ? &e : c;
    if (c == nullptr) {
      EXPECT_TRUE(has_note(p, name + " on 4 ranks: no alpha-beta fit") ||
                  has_note(p, name + " on 4 ranks not measured (time budget)"))
          << all_notes(p);
      continue;
    }
    EXPECT_EQ(c->gpus, 4);
    EXPECT_EQ(c->nodes, 1);
    ASSERT_GE(c->points.size(), 2u);
    ASSERT_LE(c->points.size(), sizes.size());
    for (std::size_t i = 0; i < c->points.size(); ++i) EXPECT_EQ(c->points[i].x, sizes[i]);
    const std::string cut =
        name + " on 4 ranks: " + std::to_string(c->points.size()) + " of 6 sizes measured (time budget";
    EXPECT_EQ(has_note(p, cut), c->points.size() < sizes.size()) << all_notes(p);
    EXPECT_GT(c->fit.beta, 0);  // the fit exists only where time grows with size
  }
  ASSERT_FALSE(p.collectives.empty()) << all_notes(p);
  EXPECT_TRUE(has_note(p, "MPI: ")) << "the MPI library and version";
  // Interference beside MPI's all-reduce over the 4 ranks (a GEMM thread on
  // rank 0): measured, in the loader's range.
  ASSERT_TRUE(p.interference.compute_under_nccl.has_value()) << all_notes(p);
  EXPECT_GE(*p.interference.compute_under_nccl, 0);
  EXPECT_LE(*p.interference.compute_under_nccl, gw::kMaxInterference);
  EXPECT_TRUE(has_note(p, "all-reduces on 4 ranks")) << all_notes(p);
  EXPECT_TRUE(has_note(p, "(--mpi --device cpu): 4 ranks, one process each, on 1 node"));
  EXPECT_TRUE(has_note(p, "MPI_Reduce_scatter_block"));
  EXPECT_TRUE(has_note(p, "collectives are the MPI library's own"));
}

}  // namespace

namespace {

/// The README's mpirun line (its tour), as words: "mpirun -np 4 ... --out
/// /tmp/mpi.yaml", and its comment (on the line, or the next one, indented).
struct ReadmeLine {
  std::vector<std::string> words;
  std::string comment;
};

ReadmeLine readme_mpirun_line() {
  std::ifstream in(GW_SOURCE_DIR "/README.md");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("mpirun ", 0) != 0) continue;
    auto hash = line.find('#');
    ReadmeLine out{gw::test::words(line.substr(0, hash)), hash == std::string::npos ? "" : line.substr(hash)};
    std::string next;
    if (out.comment.empty() && std::getline(in, next) && (hash = next.find('#')) != std::string::npos &&
        next.find_first_not_of(' ') == hash)
      out.comment = next.substr(hash);
    return out;
  }
  return {};
}

}  // namespace

TEST(MpiCalibration, FourRanksOnTheCpuWriteAProfileThatSimulateLoads) {
  const std::string mpirun = find_mpirun();
  if (mpirun.empty()) GTEST_SKIP() << "mpirun not found (install openmpi-bin, as setup.sh does)";
  if (!GW_HAVE_MPI_BUILD) GTEST_SKIP() << "this build has no MPI path (MPI not found at configure time)";
  const fs::path dir = temp_dir();
  const fs::path profile = dir / "P.yaml";
  // The README's line as written, with this build's executable and a
  // private output; as root with --allow-run-as-root, which its comment says.
  const ReadmeLine readme = readme_mpirun_line();
  ASSERT_GE(readme.words.size(), 6u) << "README.md has no line starting with 'mpirun '";
  EXPECT_NE(readme.comment.find("as root add --allow-run-as-root"), std::string::npos) << readme.comment;
  std::vector<std::string> args(readme.words.begin() + 3, readme.words.end());  // after "mpirun -np 4"
  ASSERT_EQ(std::vector<std::string>(readme.words.begin(), readme.words.begin() + 3),
            (std::vector<std::string>{"mpirun", "-np", "4"}));
  for (auto& a : args) {
    if (a == "$B/gradwire-calibrate") a = GW_CALIBRATE_EXE;
    if (a == "/tmp/mpi.yaml") a = profile.string();
  }
  ASSERT_NE(std::find(args.begin(), args.end(), std::string(GW_CALIBRATE_EXE)), args.end())
      << "README: $B/gradwire-calibrate";
  ASSERT_NE(std::find(args.begin(), args.end(), profile.string()), args.end()) << "README: --out /tmp/mpi.yaml";
  // A budget no busy machine reaches: the profile is then the same on a busy
  // machine as on an idle one (the budget only ever cuts; it never waits).
  args.insert(args.end(), {"--max-seconds", "600"});
  const auto r = mpirun4(mpirun, dir, args);
  ASSERT_EQ(r.exit_code, 0) << r.all();
  EXPECT_NE(r.err.find("collective fits over 4 MPI ranks"), std::string::npos) << r.err;
  expect_cpu_mpi_profile(profile);

  if (std::string(GW_GRADWIRE_BIN).empty()) return;  // GPU-only build: no simulator
  const auto sim = gw::test::run({GW_GRADWIRE_BIN, "simulate", GW_SOURCE_DIR "/scenarios/default.yaml", "--profile",
                                  profile.string(), "--format", "json"});
  EXPECT_EQ(sim.exit_code, 0) << sim.all();
  EXPECT_NE(sim.out.find("\"source\": \"measured\""), std::string::npos) << sim.out;
  fs::remove_all(dir);
}

TEST(MpiCalibration, GradwireCalibrateMpiHandsOverToGradwireCalibrate) {
  if (std::string(GW_GRADWIRE_BIN).empty()) GTEST_SKIP() << "GPU-only build: no gradwire executable";
  const std::string mpirun = find_mpirun();
  if (mpirun.empty()) GTEST_SKIP() << "mpirun not found (install openmpi-bin, as setup.sh does)";
  if (!GW_HAVE_MPI_BUILD) GTEST_SKIP() << "this build has no MPI path";
  const fs::path dir = temp_dir();
  const fs::path profile = dir / "via-gradwire.yaml";
  // Every rank of gradwire replaces itself by gradwire-calibrate before MPI starts.
  const auto r = mpirun4(mpirun, dir,
                         {GW_GRADWIRE_BIN, "calibrate", "--mpi", "--device", "cpu", "--quick", "--codecs", "fp16",
                          "--collectives", "allreduce", "--collective-sizes", "4KiB:1MiB:16", "--out", profile.string(),
                          "--max-seconds", "600"});  // no size cut on a busy machine
  ASSERT_EQ(r.exit_code, 0) << r.all();
  const gw::Profile p = gw::load_profile_file(profile.string());
  EXPECT_NE(p.command.find("gradwire-calibrate"), std::string::npos) << p.command;
  EXPECT_TRUE(has_note(p, "(--mpi --device cpu): 4 ranks, one process each")) << r.all();
  for (const auto& c : p.collectives) {  // the fit of a 3-size curve may be refused on a loaded machine
    EXPECT_EQ(c.op, gw::CollectiveOp::AllReduce);
    EXPECT_EQ(c.points.size() == 3u, !has_note(p, "sizes measured (time budget")) << all_notes(p);  // 4KiB, 64KiB, 1MiB
  }
  // Bad options are refused by the calibrator gradwire hands over to.
  const auto bad = gw::test::run({GW_GRADWIRE_BIN, "calibrate", "--mpi", "--device", "cpu", "--out",
                                  (dir / "x.yaml").string(), "--collective-sizes", "2B"});
  EXPECT_EQ(bad.exit_code, 2) << bad.all();
  EXPECT_NE(bad.err.find("less than one 4-byte fp32 element"), std::string::npos) << bad.all();
  fs::remove_all(dir);
}

TEST(MpiCalibration, NoImageHoldsBothSimGridAndMpi) {
  // gradwire (SimGrid, which carries SMPI's MPI_Init) must not link MPI;
  // gradwire-calibrate (MPI) must not link SimGrid.
  const auto libs = [](const std::string& exe) { return gw::test::run_command("ldd '" + exe + "' 2>&1").out; };
  const std::string calibrate = libs(GW_CALIBRATE_EXE);
  EXPECT_EQ(calibrate.find("libsimgrid"), std::string::npos) << calibrate;
  if (GW_HAVE_MPI_BUILD) {
    EXPECT_NE(calibrate.find("libmpi"), std::string::npos) << calibrate;
  }
  if (std::string(GW_GRADWIRE_BIN).empty()) return;
  // gradwire-sim is the executable with SimGrid (gradwire execs it to simulate).
  const std::string gradwire = libs(GW_GRADWIRE_SIM_BIN);
  EXPECT_NE(gradwire.find("libsimgrid"), std::string::npos) << gradwire;
  EXPECT_EQ(gradwire.find("libmpi"), std::string::npos) << gradwire;
  // Nor any MPI function left for the loader to find (in SimGrid's SMPI).
  const auto undefined = gw::test::run_command("nm -D --undefined-only '" + std::string(GW_GRADWIRE_SIM_BIN) +
                                               "' | grep -c ' MPI_' ; true");
  EXPECT_EQ(undefined.out, "0\n") << "gradwire-sim refers to MPI functions";
}
