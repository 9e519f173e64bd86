// The MPI calibration job (gradwire-calibrate --mpi under mpirun or srun):
// MPI start-up, the ranks' places and hosts, rank 0's backend and the
// command loop of the other ranks. Rank 0 runs the whole pipeline (codecs,
// GEMM, copy on its own device through the ordinary CPU or CUDA backend) and,
// for each collective point, broadcasts a command; every rank then times the
// collective (RankCollectives: MPI's own on the CPU, NCCL on GPUs), rank 0
// gathers the timings and keeps the slowest rank's time per repeat
// (ranks.hpp). Only gradwire-calibrate links this (gw_calibrate_mpi):
// gradwire links SimGrid, whose SMPI defines the MPI symbols too.
#include <time.h>

#include <algorithm>
#include <cstring>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "gradwire/calibrate/calibrate.hpp"
#include "gradwire/model/fit.hpp"
#include "mpi_rank.hpp"

namespace gw::calibrate {
namespace mpi {

void check_mpi(int rc, const char* what, const char* file, int line) {
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING] = {0};
    int len = 0;
    MPI_Error_string(rc, text, &len);
    throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + what + ": " +
                             std::string(text, static_cast<std::size_t>(std::max(0, len))));
  }
}

std::vector<std::string> allgather_strings(const std::string& mine, int world) {
  constexpr int kLen = 256;
  char buf[kLen] = {0};
  mine.copy(buf, kLen - 1);
  std::vector<char> all(static_cast<std::size_t>(kLen) * static_cast<std::size_t>(world));
  GW_MPI(MPI_Allgather(buf, kLen, MPI_CHAR, all.data(), kLen, MPI_CHAR, MPI_COMM_WORLD));
  std::vector<std::string> out;
  for (int r = 0; r < world; ++r) out.emplace_back(all.data() + static_cast<std::ptrdiff_t>(r) * kLen);
  return out;
}

}  // namespace mpi

namespace {

using ranks::Command;

class MpiRunImpl;

/// Rank 0's backend: the ordinary backend for codecs, GEMM and copy;
/// collectives over all ranks of the MPI job.
class RootBackend final : public Backend {
 public:
  RootBackend(MpiRunImpl& run, std::unique_ptr<Backend> local) : run_(run), local_(std::move(local)) {}
  DeviceInfo info() override { return local_->info(); }
  std::vector<std::string> codec_names() override { return local_->codec_names(); }
  void verify_codec(const std::string& name, std::size_t n) override { local_->verify_codec(name, n); }
  void time_codec(const std::string& name, std::size_t n, int warmup, int repeats, std::vector<double>& enc,
                  std::vector<double>& dec, const std::function<void()>& ready) override {
    local_->time_codec(name, n, warmup, repeats, enc, dec, ready);
  }
  std::vector<double> time_gemm(const std::string& precision, int m, int n, int k, int warmup, int repeats) override {
    return local_->time_gemm(precision, m, n, k, warmup, repeats);
  }
  std::unique_ptr<GemmBatch> start_gemm_batch(const std::string& precision, int m, int n, int k, int count) override;
  std::vector<double> time_copy(double bytes, int warmup, int repeats) override {
    return local_->time_copy(bytes, warmup, repeats);
  }
  int collective_gpus() override;
  std::vector<int> collective_gpu_counts() override;
  int collective_nodes(int gpus) override;
  std::vector<double> time_collective(CollectiveOp op, int gpus, double bytes, int warmup, int repeats) override;
  std::map<std::string, std::string> nccl_env() override { return local_->nccl_env(); }
  std::vector<std::string> run_notes() override;

 private:
  MpiRunImpl& run_;
  std::unique_ptr<Backend> local_;
  std::map<std::string, std::pair<double, double>> imbalance_;  ///< op -> (bytes, median imbalance) at the largest size
};

std::string trimmed_first_line(const char* s, int len) {
  // Open MPI counts the terminating NUL in len.
  std::string t(s, ::strnlen(s, static_cast<std::size_t>(std::max(0, len))));
  t = t.substr(0, t.find('\n'));
  while (!t.empty() && (t.back() == ' ' || t.back() == '\r' || t.back() == '\t')) t.pop_back();
  return t;
}

/// The command from rank 0 (every rank calls it). A non-blocking broadcast
/// polled with short sleeps: the ranks waiting while rank 0 times its codecs
/// and GEMMs leave the CPU to it instead of spinning in MPI_Bcast (on a CPU
/// run, or with more ranks than cores, a spinning rank would slow rank 0).
void broadcast_command(std::array<double, ranks::kCommandDoubles>& msg, bool root) {
  MPI_Request req = MPI_REQUEST_NULL;
  GW_MPI(MPI_Ibcast(msg.data(), ranks::kCommandDoubles, MPI_DOUBLE, 0, MPI_COMM_WORLD, &req));
  if (root) {
    GW_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    return;
  }
  const timespec nap{0, 200'000};  // 0.2 ms
  for (int done = 0;;) {
    GW_MPI(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
    if (done) return;
    nanosleep(&nap, nullptr);
  }
}

class MpiRunImpl final : public MpiRun {
 public:
  explicit MpiRunImpl(std::string device) : device_(std::move(device)) {
    int inited = 0;
    GW_MPI(MPI_Initialized(&inited));
    if (!inited) {
      // FUNNELED: the CPU interference phase runs a GEMM thread on rank 0
      // beside the main thread's MPI calls; only the main thread calls MPI.
      GW_MPI(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &thread_level_));
      owns_mpi_ = true;
    } else {
      GW_MPI(MPI_Query_thread(&thread_level_));
    }
  }
  /// Whether this process may run threads beside the one that calls MPI.
  bool threads_allowed() const { return thread_level_ >= MPI_THREAD_FUNNELED; }
  const std::string& device() const { return device_; }

  /// Everything after MPI_Init; an exception here ends the job (abort()).
  void start() {
    GW_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &place_.rank));
    GW_MPI(MPI_Comm_size(MPI_COMM_WORLD, &place_.world));
    GW_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, place_.rank, MPI_INFO_NULL, &node_comm_));
    GW_MPI(MPI_Comm_rank(node_comm_, &place_.local_rank));
    GW_MPI(MPI_Comm_size(node_comm_, &place_.local_size));
    char name[MPI_MAX_PROCESSOR_NAME] = {0};
    int len = 0;
    GW_MPI(MPI_Get_processor_name(name, &len));
    place_.host = std::string(name, static_cast<std::size_t>(std::max(0, len)));
    hosts_ = mpi::allgather_strings(place_.host, place_.world);
    nodes_ = ranks::distinct_hosts(hosts_);
    coll_ = device_ == "cpu" ? mpi::make_host_collectives(place_) : mpi::make_nccl_collectives(place_);
    if (place_.rank == 0) {
      std::string why;
      auto local = device_ == "cpu" ? make_cpu_backend() : make_cuda_backend(&why);
      if (!local) throw std::runtime_error("rank 0: no usable CUDA GPU: " + why);
      root_ = std::make_unique<RootBackend>(*this, std::move(local));
    }
  }

  ~MpiRunImpl() override {
    if (place_.rank == 0 && !finished_ && coll_) {
      try {
        finish(false);
      } catch (...) {
      }
    }
    root_.reset();
    coll_.reset();
    if (node_comm_ != MPI_COMM_NULL) MPI_Comm_free(&node_comm_);
    if (owns_mpi_) MPI_Finalize();
  }
  MpiRunImpl(const MpiRunImpl&) = delete;
  MpiRunImpl& operator=(const MpiRunImpl&) = delete;

  int rank() const override { return place_.rank; }
  int world_size() const override { return place_.world; }
  Backend& backend() override {
    if (!root_) throw std::logic_error("MpiRun::backend() on a rank other than 0");
    return *root_;
  }

  bool follow() override {
    for (;;) {
      std::array<double, ranks::kCommandDoubles> msg{};
      try {
        broadcast_command(msg, false);
        const Command c = ranks::decode(msg);
        if (c.kind != Command::kCollective) return c.kind == Command::kStopOk;
        const auto mine = coll_->run(c);
        GW_MPI(MPI_Gather(mine.data(), c.repeats, MPI_DOUBLE, nullptr, c.repeats, MPI_DOUBLE, 0, MPI_COMM_WORLD));
      } catch (const std::exception& e) {
        fail_in_collective(e);
      }
    }
  }

  void finish(bool ok) override {
    if (place_.rank != 0 || finished_) return;
    finished_ = true;
    Command c;
    c.kind = ok ? Command::kStopOk : Command::kStopFailed;
    auto msg = ranks::encode(c);
    broadcast_command(msg, true);
  }

  [[noreturn]] void abort(int code) override {
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);  // MPI_Abort does not return; in case an implementation does
  }

  [[noreturn]] void fail_in_collective(const std::exception& e) {
    // One write, so that the ranks' messages do not interleave.
    std::cerr << ("gradwire calibrate: rank " + std::to_string(place_.rank) + " on " + place_.host + " (" +
                  coll_->where() + "): " + e.what() +
                  "\n(ending the MPI job: the other ranks may be waiting in the collective)\n")
              << std::flush;
    abort(kExitFailureCode);
  }

  /// Rank 0: one collective point over all ranks; the slowest rank's time per repeat.
  std::vector<double> collective(const Command& c, std::vector<double>* imbalance) {
    try {
      auto msg = ranks::encode(c);
      broadcast_command(msg, true);
      const auto mine = coll_->run(c);
      std::vector<double> all(static_cast<std::size_t>(place_.world) * static_cast<std::size_t>(c.repeats));
      GW_MPI(MPI_Gather(mine.data(), c.repeats, MPI_DOUBLE, all.data(), c.repeats, MPI_DOUBLE, 0, MPI_COMM_WORLD));
      if (imbalance != nullptr) *imbalance = ranks::rank_imbalance(all, place_.world, c.repeats);
      return ranks::max_over_ranks(all, place_.world, c.repeats);
    } catch (const std::exception& e) {
      fail_in_collective(e);
    }
  }

  int nodes() const { return nodes_; }

  std::vector<std::string> notes() const {
    std::vector<std::string> out;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
    int len = 0;
    int major = 0, minor = 0;
    MPI_Get_library_version(lib, &len);
    MPI_Get_version(&major, &minor);
    out.push_back("MPI: " + trimmed_first_line(lib, len) + " (MPI standard " + std::to_string(major) + "." +
                  std::to_string(minor) + ")");
    out.push_back("MPI run (--mpi --device " + device_ + "): " + std::to_string(place_.world) +
                  (place_.world == 1 ? " rank, " : " ranks, ") +
                  (device_ == "cpu" ? "one process each" : "one GPU each (the local rank)") + ", on " +
                  ranks::hosts_summary(hosts_));
    for (auto& n : coll_->notes()) out.push_back(std::move(n));
    if (place_.world < 2) {
      out.push_back(
          "MPI job of 1 rank: no collectives (start one rank per " +
          std::string(device_ == "cpu" ? "process, e.g. mpirun -np 4" : "GPU, e.g. mpirun -np 16 -npernode 8") + ")");
    }
    return out;
  }

  static constexpr int kExitFailureCode = 1;

 private:
  std::string device_;
  bool owns_mpi_ = false;
  bool finished_ = false;
  mpi::RankPlace place_;
  int nodes_ = 1;
  MPI_Comm node_comm_ = MPI_COMM_NULL;
  std::vector<std::string> hosts_;
  std::unique_ptr<mpi::RankCollectives> coll_;
  std::unique_ptr<RootBackend> root_;
  int thread_level_ = MPI_THREAD_SINGLE;
};

int RootBackend::collective_gpus() { return run_.world_size(); }

std::vector<int> RootBackend::collective_gpu_counts() {
  if (run_.world_size() < 2) return {};
  return {run_.world_size()};
}

int RootBackend::collective_nodes(int) { return run_.nodes(); }

std::vector<double> RootBackend::time_collective(CollectiveOp op, int gpus, double bytes, int warmup, int repeats) {
  if (gpus != run_.world_size()) {
    throw std::logic_error("MPI run: collectives are measured over all " + std::to_string(run_.world_size()) +
                           " ranks, not " + std::to_string(gpus));
  }
  Command c;
  c.kind = Command::kCollective;
  c.op = op;
  c.bytes = bytes;
  c.warmup = warmup;
  c.repeats = repeats;
  std::vector<double> imbalance;
  auto out = run_.collective(c, &imbalance);
  auto& seen = imbalance_[to_string(op)];
  if (bytes >= seen.first) seen = {bytes, fit::median(imbalance)};
  return out;
}

std::unique_ptr<GemmBatch> RootBackend::start_gemm_batch(const std::string& precision, int m, int n, int k, int count) {
  // The CPU backend's batch is a thread; a CUDA batch is a stream.
  if (run_.device() == "cpu" && !run_.threads_allowed()) {
    throw std::runtime_error("the MPI library gives no MPI_THREAD_FUNNELED, so no GEMM thread may run beside it");
  }
  return local_->start_gemm_batch(precision, m, n, k, count);
}

std::vector<std::string> RootBackend::run_notes() {
  auto out = run_.notes();
  for (const auto& [op, v] : imbalance_) {
    std::ostringstream os;
    os.precision(3);
    os << "MPI " << op << " at " << v.first << " B: median rank imbalance (slowest - fastest) / slowest "
       << 100 * v.second << "%";
    out.push_back(os.str());
  }
  return out;
}

}  // namespace

std::unique_ptr<MpiRun> start_mpi_run(const Options& opt, std::string* why) {
  if (opt.device == "cuda" && !mpi::nccl_collectives_built()) {
    // Refused before MPI starts: every rank says so and exits 2.
    if (why) *why = "this gradwire-calibrate was built without CUDA: use --device cpu (MPI's own collectives)";
    return nullptr;
  }
  auto run = std::make_unique<MpiRunImpl>(opt.device);
  try {
    run->start();
  } catch (const std::exception& e) {
    int rank = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char name[MPI_MAX_PROCESSOR_NAME] = {0};
    int len = 0;
    MPI_Get_processor_name(name, &len);
    std::cerr << ("gradwire calibrate: rank " + std::to_string(rank) + " on " + name + ": " + e.what() +
                  "\n(ending the MPI job)\n")
              << std::flush;
    run->abort(MpiRunImpl::kExitFailureCode);
  }
  return run;
}

}  // namespace gw::calibrate
