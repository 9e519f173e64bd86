// The calibrator end to end in CPU mode, and its refusal without a GPU.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "gradwire/model/profile.hpp"
#include "run_util.hpp"

namespace {

struct ToolRun {
  int status = -1;
  std::string output;
};

/// The tool with `env` (VAR=value ...) added to its environment.
ToolRun run_env(const std::string& env, const std::string& args) {
  ToolRun r;
  gw::test::RunOptions o;
  o.env = gw::test::words(env);
  // --mpi starts MPI (a singleton without a launcher): see mpi_child_env.
  if (args.find("--mpi") != std::string::npos) {
    for (auto& e : gw::test::mpi_child_env()) o.env.push_back(std::move(e));
  }
  const auto c = gw::test::run(gw::test::argv_of(GW_CALIBRATE_EXE, args), o);
  r.status = c.exit_code;
  r.output = c.all();
  return r;
}

ToolRun run(const std::string& args) { return run_env("", args); }

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("gw_tool_" + std::to_string(::getpid()) + "_" + name)).string();
}

}  // namespace

TEST(CalibrateTool, CpuModeRunsEndToEndAndTheProfileLoads) {
  const std::string out = temp_path("cpu.yaml");
  // A budget no busy machine reaches, so that every codec and size is
  // measured however slow this machine is now (the budget only ever cuts).
  ToolRun r = run("--device cpu --out " + out + " --quick --name ci-cpu --max-seconds 600");
  ASSERT_EQ(r.status, 0) << r.output;
  gw::Profile p = gw::load_profile_file(out);
  EXPECT_EQ(p.source, "measured");
  EXPECT_EQ(p.name, "ci-cpu");
  EXPECT_NE(p.command.find("--device cpu"), std::string::npos);
  EXPECT_FALSE(p.date.empty());
  // Every codec the CPU twins provide was timed over the quick sweep 2^10..2^16 (x4).
  ASSERT_TRUE(p.codecs.count("fp16")) << r.output;
  for (const auto& [name, c] : p.codecs) {
    SCOPED_TRACE(name);
    ASSERT_EQ(c.encode_points.size(), 4u);
    EXPECT_EQ(c.encode_points.front().x, 1024);
    EXPECT_EQ(c.encode_points.back().x, 65536);
    EXPECT_EQ(c.encode_points.front().repeats, 3);
    EXPECT_EQ(c.encode.knots.size(), 4u);
    for (const auto& pt : c.decode_points) EXPECT_GT(pt.seconds, 0);
  }
  // Bigger inputs cost more (64x the data, far above timer noise).
  EXPECT_GT(p.codec_time("fp16", true, 65536), p.codec_time("fp16", true, 1024));
  EXPECT_GT(p.flops("fp32"), 1e7);
  // CPU: only fp32 is timed; the other rates are left out, never copied from fp32.
  EXPECT_EQ(p.gemm_flops.count("bf16"), 0u);
  EXPECT_EQ(p.gemm_flops.count("tf32"), 0u);
  EXPECT_EQ(p.gemm_flops.count("fp16"), 0u);
  EXPECT_GT(p.copy_bandwidth, 1e8);
  EXPECT_TRUE(p.collectives.empty());
  bool noted = false;
  for (const auto& n : p.notes) noted = noted || n.find("CPU mode") != std::string::npos;
  EXPECT_TRUE(noted);
  // Interference: a GEMM thread beside the codecs (at least the first within
  // the budget), each figure in the loader's range; no collectives, so no
  // NCCL figure. The values are this machine's: only their range is checked.
  const auto& f = p.interference;
  EXPECT_FALSE(f.compute_under_nccl.has_value());
  ASSERT_FALSE(f.codecs.empty()) << r.output;
  EXPECT_TRUE(f.codecs.count("fp16"));  // the compressor table's first codec
  for (const auto& [codec, c] : f.codecs) {
    SCOPED_TRACE(codec);
    ASSERT_TRUE(c.compute_under_codec && c.codec_under_compute);
    EXPECT_GE(*c.compute_under_codec, 0);
    EXPECT_LE(*c.codec_under_compute, gw::kMaxInterference);
  }
  ASSERT_TRUE(f.compute_under_codec && f.codec_under_compute);
  std::filesystem::remove(out);

  // --no-interference: no section.
  r = run("--device cpu --out " + out + " --quick --no-interference");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(gw::load_profile_file(out).interference, gw::InterferenceFigures{});
  std::filesystem::remove(out);
}

TEST(CalibrateTool, CudaWithoutGpuFailsPlainly) {
  // This test is about machines without a usable GPU (the build machines).
  const std::string out = temp_path("cuda.yaml");
  ToolRun r = run("--device cuda --out " + out + " --quick");
  if (r.status == 0) GTEST_SKIP() << "a GPU is present here";
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("no usable CUDA GPU"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(CalibrateTool, BadOptionsExitWithInputError) {
  EXPECT_EQ(run("--device tpu --out x.yaml").status, 2);
  EXPECT_EQ(run("--device cpu").status, 2);  // no --out
  ToolRun r = run("--device cpu --out x.yaml --sizes 4MiB:4KiB");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("MAX is smaller than MIN"), std::string::npos) << r.output;
  // --sizes takes bytes, as `gradwire collective --sizes` does: the old
  // element-count form is refused, not read as bytes.
  r = run("--device cpu --out x.yaml --sizes 2^10:2^12");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("bytes with a unit"), std::string::npos) << r.output;
  EXPECT_EQ(run("--device cpu --out x.yaml --bogus").status, 2);
  EXPECT_EQ(run("--device cpu --out x.yaml --collectives allreduce,gossip").status, 2);
  EXPECT_EQ(run("--device cpu --out x.yaml --repeats 0").status, 2);
  EXPECT_EQ(run("--help").status, 0);
}

TEST(CalibrateTool, CodecAndSizeSelection) {
  const std::string out = temp_path("sel.yaml");
  ToolRun r = run("--device cpu --out " + out +
                  " --codecs int8,sign --sizes 16KiB,4KiB,64KiB --repeats 2 --warmup 0 --max-seconds 600");
  ASSERT_EQ(r.status, 0) << r.output;
  gw::Profile p = gw::load_profile_file(out);
  ASSERT_EQ(p.codecs.size(), 2u);
  ASSERT_EQ(p.codecs.at("int8").encode_points.size(), 3u);
  EXPECT_EQ(p.codecs.at("int8").encode_points[1].x, 4096);
  EXPECT_EQ(p.codecs.at("sign").decode_points[2].repeats, 2);
  std::filesystem::remove(out);
  EXPECT_EQ(run("--device cpu --out " + out + " --codecs qsgd").status, 2);
}

TEST(CalibrateTool, MpiWithoutALauncherIsAOneRankJob) {
  const std::string out = temp_path("mpi.yaml");
  EXPECT_NE(run("--help").output.find("--mpi"), std::string::npos);
  if (!GW_HAVE_MPI_BUILD) {
    ToolRun r = run("--mpi --device cpu --out " + out + " --quick");
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("this gradwire-calibrate was built without MPI"), std::string::npos) << r.output;
    EXPECT_FALSE(std::filesystem::exists(out));
    return;
  }
  // No mpirun: an MPI singleton; on the CPU a profile without collectives
  // that says why (tests/calibrate/test_mpi.cpp runs 4 ranks).
  ToolRun cpu = run("--mpi --device cpu --out " + out + " --codecs fp16 --sizes 4KiB,16KiB --repeats 2");
  ASSERT_EQ(cpu.status, 0) << cpu.output;
  const gw::Profile p = gw::load_profile_file(out);
  EXPECT_TRUE(p.collectives.empty());
  bool noted = false;
  for (const auto& n : p.notes) noted = noted || n.find("MPI job of 1 rank: no collectives") != std::string::npos;
  EXPECT_TRUE(noted);
  std::filesystem::remove(out);
  // --device cuda: NCCL over the ranks' GPUs, which a build without CUDA
  // refuses before MPI starts and a machine without a GPU fails plainly.
  ToolRun r = run("--mpi --out " + out + " --codecs fp16 --sizes 4KiB --max-seconds 5 --collectives allreduce");
  if (r.status == 0) {
    std::filesystem::remove(out);
    GTEST_SKIP() << "a GPU is present here (exercise --mpi under mpirun)";
  }
  if (GW_HAVE_CUDA_BUILD) {
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("no CUDA GPU visible to this rank"), std::string::npos) << r.output;
  } else {
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find("built without CUDA: use --device cpu"), std::string::npos) << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(CalibrateTool, StartedByAnMpiLauncherWithoutMpiIsRefused) {
  // Every rank would calibrate on its own and write the same file.
  const std::string out = temp_path("ranks.yaml");
  ToolRun r = run_env("OMPI_COMM_WORLD_SIZE=4", "--device cpu --quick --out " + out);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("MPI launcher with 4 ranks but without --mpi"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(out));
  // One rank is an ordinary run.
  ToolRun one = run_env("PMI_SIZE=1", "--device cpu --quick --codecs fp16 --sizes 4KiB,16KiB --out " + out);
  EXPECT_EQ(one.status, 0) << one.output;
  std::filesystem::remove(out);
}

// A calibration takes minutes: an output it cannot write is refused in one
// line before anything is measured (no progress line), exit 2, nothing left.
TEST(CalibrateTool, AnOutputThatCannotBeWrittenIsRefusedBeforeMeasuring) {
  const std::filesystem::path dir = std::filesystem::path(temp_path("unwritable"));
  std::filesystem::create_directories(dir);
  const auto refused = [](const ToolRun& r, const std::string& why) {
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find(why), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("[calibrate"), std::string::npos) << "measured first:\n" << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  };
  // A place where no file can be created although the directory exists
  // (the pseudo file system /proc; as root permissions do not stop a write).
  refused(run("--device cpu --quick --out /proc/gw-calibrate-out.yaml"),
          "/proc/gw-calibrate-out.yaml: cannot create a file in its directory (");
  if (::getuid() != 0) {
    const auto ro = dir / "read-only";
    std::filesystem::create_directories(ro);
    std::filesystem::permissions(ro, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    refused(run("--device cpu --quick --out " + (ro / "p.yaml").string()), "cannot create a file in its directory (");
    std::filesystem::permissions(ro, std::filesystem::perms::owner_all);
    EXPECT_TRUE(std::filesystem::is_empty(ro));
  }
  refused(run("--device cpu --quick --out " + (dir / "missing" / "p.yaml").string()), "does not exist");
  refused(run("--device cpu --quick --out " + dir.string()), "is a directory");
  refused(run("--device cpu --quick --out /dev/null"), "an output may only replace a regular file");
  const auto fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  refused(run("--device cpu --quick --out " + fifo.string()), "an output may only replace a regular file");
  // The same checks with --from-nccl-tests, and never over a log.
  const std::string log = std::string(GW_SOURCE_DIR) + "/tests/data/nccl-tests/rtx2080ti-1x2-all_reduce_perf.log";
  refused(run("--from-nccl-tests " + log + " --profile h100 --out /proc/gw-calibrate-out.yaml"),
          "cannot create a file in its directory (");
  refused(run("--from-nccl-tests " + log + " --profile h100 --out " + log), "is an input of this command");
  // Nothing was left beside the outputs (the probe file is removed).
  std::vector<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(dir)) left.push_back(e.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"fifo"});
  std::filesystem::remove_all(dir);
}
