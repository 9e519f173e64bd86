// What each executable loads. gradwire and gradwire-sim load no calibration
// back end: their dynamic dependencies (ldd: the whole closure the loader
// maps) and their own symbols hold no CUDA runtime, cuBLAS, NCCL or MPI;
// gradwire-calibrate, which `gradwire calibrate` execs, is where they are
// (the same check finds them there in a CUDA or MPI build, so it is not
// blind). gradwire loads no SimGrid either: the commands that simulate run
// in gradwire-sim. And the hand-overs: each command's help and refusals are
// the executable's it hands over to; without that one beside it, one line
// (exit 2, nothing written).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "run_util.hpp"

namespace {

namespace fs = std::filesystem;

const std::string kBin = GW_GRADWIRE_BIN;
const std::string kSim = GW_GRADWIRE_SIM_BIN;
const std::string kCalibrator = GW_CALIBRATE_EXE;

/// `tool`'s path on PATH (run() execs a path), or the bare name.
std::string on_path(const std::string& tool) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string d; std::getline(dirs, d, ':');)
    if (!d.empty() && ::access((fs::path(d) / tool).c_str(), X_OK) == 0) return (fs::path(d) / tool).string();
  return tool;
}

/// The shared objects the loader maps for `exe` (ldd's first column).
std::vector<std::string> loaded_libraries(const std::string& exe) {
  const auto r = gw::test::run({on_path("ldd"), exe});
  EXPECT_EQ(r.exit_code, 0) << r.all();
  std::vector<std::string> libs;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string name;
    if (words >> name) libs.push_back(fs::path(name).filename().string());
  }
  return libs;
}

/// The names of `exe`'s own symbols, defined or not (nm, and nm -D for a
/// stripped executable).
std::vector<std::string> symbols(const std::string& exe) {
  std::vector<std::string> names;
  for (const auto& args :
       {std::vector<std::string>{on_path("nm"), exe}, std::vector<std::string>{on_path("nm"), "-D", exe}}) {
    const auto r = gw::test::run(args);
    std::istringstream in(r.out);
    for (std::string line; std::getline(in, line);) names.push_back(line.substr(line.find_last_of(' ') + 1));
  }
  return names;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

/// A calibration back end's library: the CUDA runtime or driver, cuBLAS(Lt),
/// NCCL, MPI (Open MPI's, MPICH's).
bool backend_library(const std::string& lib) {
  for (const char* p : {"libcuda", "libcublas", "libnccl", "libmpi", "libopen-pal", "libopen-rte"})
    if (starts_with(lib, p)) return true;
  return false;
}

/// A symbol of one of those APIs (cudaMalloc, cublasCreate_v2, ncclCommInitRank, MPI_Init).
bool backend_symbol(const std::string& name) {
  if (name.size() > 4 && starts_with(name, "cuda") && std::isupper(static_cast<unsigned char>(name[4]))) return true;
  return starts_with(name, "cublas") || starts_with(name, "nccl") || starts_with(name, "MPI_") ||
         starts_with(name, "PMPI_");
}

std::vector<std::string> backend_libraries(const std::string& exe) {
  std::vector<std::string> out;
  for (const auto& l : loaded_libraries(exe))
    if (backend_library(l)) out.push_back(l);
  return out;
}

bool has_backend_symbol(const std::string& exe, const std::string& prefix) {
  for (const auto& s : symbols(exe))
    if (backend_symbol(s) && starts_with(s, prefix)) return true;
  return false;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + " ";
  return s;
}

}  // namespace

TEST(Images, GradwireAndGradwireSimLoadNoCudaCublasNcclOrMpi) {
  for (const auto& exe : {kBin, kSim}) {
    const auto libs = loaded_libraries(exe);
    EXPECT_NE(joined(libs).find("libyaml-cpp"), std::string::npos) << exe << ": " << joined(libs);  // ldd listed them
    EXPECT_TRUE(backend_libraries(exe).empty()) << exe << ": " << joined(backend_libraries(exe));
    for (const auto& s : symbols(exe)) EXPECT_FALSE(backend_symbol(s)) << exe << " has the symbol " << s;
  }
}

TEST(Images, OnlyGradwireSimLoadsSimGrid) {
  EXPECT_EQ(joined(loaded_libraries(kBin)).find("libsimgrid"), std::string::npos) << joined(loaded_libraries(kBin));
  EXPECT_NE(joined(loaded_libraries(kSim)).find("libsimgrid"), std::string::npos) << joined(loaded_libraries(kSim));
}

TEST(Images, TheSimulatingCommandsRunInGradwireSim) {
  for (const char* cmd : {"collective", "simulate", "sweep", "plan", "validate"}) {
    const auto via = gw::test::run({kBin, "help", cmd});
    EXPECT_EQ(via.exit_code, 0) << cmd << ": " << via.all();
    EXPECT_EQ(via.out, gw::test::run({kSim, cmd, "--help"}).out) << cmd;
  }
  const auto bad = gw::test::run({kBin, "simulate", "/nonexistent/s.yaml"});
  EXPECT_EQ(bad.exit_code, 2) << bad.all();
  EXPECT_EQ(bad.err, gw::test::run({kSim, "simulate", "/nonexistent/s.yaml"}).err);
}

TEST(Images, TheSameCheckFindsTheBackEndsInTheCalibrator) {
  const std::string found = joined(backend_libraries(kCalibrator));
  if (GW_HAVE_CUDA_BUILD) {
    EXPECT_NE(found.find("libcublas"), std::string::npos) << found;
    EXPECT_NE(found.find("libnccl"), std::string::npos) << found;
    EXPECT_TRUE(has_backend_symbol(kCalibrator, "cuda")) << "the static CUDA runtime's symbols";
  }
  if (GW_HAVE_MPI_BUILD) {
    EXPECT_NE(found.find("libmpi"), std::string::npos) << found;
    EXPECT_TRUE(has_backend_symbol(kCalibrator, "MPI_"));
  }
  if (!GW_HAVE_CUDA_BUILD && !GW_HAVE_MPI_BUILD) {
    EXPECT_TRUE(backend_libraries(kCalibrator).empty()) << found;
  }
}

TEST(Images, GradwireCalibrateIsTheCalibrator) {
  // The calibrator's own help, through the hand-over (both spellings).
  for (const auto& args :
       {std::vector<std::string>{kBin, "calibrate", "--help"}, std::vector<std::string>{kBin, "help", "calibrate"}}) {
    const auto r = gw::test::run(args);
    EXPECT_EQ(r.exit_code, 0) << r.all();
    EXPECT_EQ(r.out, gw::test::run({kCalibrator, "--help"}).out);
    EXPECT_NE(r.out.find("--from-nccl-tests"), std::string::npos) << r.out;
  }
  // A bad option is the calibrator's refusal, word for word.
  const auto bad = gw::test::run({kBin, "calibrate", "--device", "tpu", "--out", "/nonexistent/x.yaml"});
  EXPECT_EQ(bad.exit_code, 2) << bad.all();
  EXPECT_EQ(bad.err, gw::test::run({kCalibrator, "--device", "tpu", "--out", "/nonexistent/x.yaml"}).err);
}

TEST(Images, WithoutTheExecutableBesideItOneLineAndExit2) {
  const fs::path dir = fs::temp_directory_path() / ("gw-images-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path alone = dir / "gradwire";
  fs::copy_file(kBin, alone);
  const std::string out = (dir / "p.yaml").string();
  struct Case {
    std::vector<std::string> args;
    std::string line;
  };
  const std::vector<Case> cases = {
      {{"calibrate", "--device", "cpu", "--quick", "--out", out},
       "gradwire calibrate: the calibrator is gradwire-calibrate"},
      {{"calibrate", "--mpi", "--device", "cpu", "--out", out},
       "gradwire calibrate: the calibrator is gradwire-calibrate"},
      {{"simulate", GW_SOURCE_DIR "/scenarios/default.yaml", "--format", "json", "--trace", out},
       "gradwire simulate: the simulator is gradwire-sim"},
      {{"collective", GW_SOURCE_DIR "/scenarios/default.yaml"}, "gradwire collective: the simulator is gradwire-sim"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {alone.string()};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const auto r = gw::test::run(args);
    const std::string exe = c.line.substr(c.line.rfind(' ') + 1);
    EXPECT_EQ(r.exit_code, 2) << r.all();
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(c.line + " and there is none beside this gradwire (" + (dir / exe).string() + ")"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(dir / "p.yaml"));
  }
  // The commands that need neither run in gradwire itself.
  const auto version = gw::test::run({alone.string(), "--version"});
  EXPECT_EQ(version.exit_code, 0) << version.all();
  fs::remove_all(dir);
}
