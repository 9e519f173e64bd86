// MPI path of the CUDA calibrator (gradwire-calibrate --mpi under mpirun, one
// rank per GPU, across nodes), built when CMake finds MPI, as nccl-tests does.
// Each rank takes the GPU of its local rank on its node; rank 0 creates the
// NCCL unique id and broadcasts it over MPI; ncclCommInitRank joins all ranks
// in one communicator. Rank 0 runs the whole pipeline (codecs, GEMM, copy on
// its own GPU through the ordinary CUDA backend) and, for each collective
// point, broadcasts a command; every rank then times the collective with CUDA
// events after an MPI barrier, rank 0 gathers the timings and keeps the
// slowest rank's time per repeat (ranks.hpp). Host-only C++ over MPI, the
// CUDA runtime and NCCL.
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "nccl_check.hpp"
#include "gradwire/cuda/event_timer.hpp"
#include "gradwire/calibrate/calibrate.hpp"
#include "gradwire/calibrate/ranks.hpp"
#include "gradwire/model/fit.hpp"
#include "nccl_launch.hpp"

namespace gw::calibrate {
namespace {

void check_mpi(int rc, const char* what, const char* file, int line) {
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING] = {0};
    int len = 0;
    MPI_Error_string(rc, text, &len);
    throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + what + ": " +
                             std::string(text, static_cast<std::size_t>(std::max(0, len))));
  }
}
#define GW_MPI(x) check_mpi((x), #x, __FILE__, __LINE__)

using ranks::Command;

/// The NCCL communicator over all ranks, this rank's GPU, stream and buffers.
class Collectives {
 public:
  Collectives(int rank, int world, int device, const ncclUniqueId& id) : world_(world), device_(device) {
    GW_CHECK(cudaSetDevice(device_));
    GW_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    timer_.emplace(stream_);
    GW_CHECK(ncclCommInitRank(&comm_, world, id, rank));
  }
  ~Collectives() {
    cudaSetDevice(device_);
    if (comm_ != nullptr) ncclCommDestroy(comm_);
    if (send_ != nullptr) cudaFree(send_);
    if (recv_ != nullptr) cudaFree(recv_);
    cudaStreamDestroy(stream_);
  }
  Collectives(const Collectives&) = delete;
  Collectives& operator=(const Collectives&) = delete;

  /// This rank's own event time of each timed repeat of the command's collective.
  std::vector<double> run(const Command& c) {
    GW_CHECK(cudaSetDevice(device_));
    const auto total = static_cast<std::size_t>(c.bytes);
    const std::size_t count = total / 4;   // fp32 elements of the nccl-tests "size"
    ensure(std::max<std::size_t>(total, 4));
    auto launch = [&] { detail::launch_nccl(c.op, send_, recv_, count, world_, comm_, stream_); };
    for (int i = 0; i < std::max(1, c.warmup); ++i) launch();
    GW_CHECK(cudaStreamSynchronize(stream_));
    std::vector<double> out;
    out.reserve(static_cast<std::size_t>(c.repeats));
    for (int i = 0; i < c.repeats; ++i) {
      // Start the ranks together: a rank that arrives late would otherwise
      // count as the collective's own time on the ranks waiting for it.
      GW_MPI(MPI_Barrier(MPI_COMM_WORLD));
      timer_->start();
      launch();
      timer_->stop();
      out.push_back(1e-3 * timer_->elapsed_ms());
    }
    return out;
  }

 private:
  void ensure(std::size_t bytes) {
    if (bytes <= bytes_) return;
    if (send_ != nullptr) GW_CHECK(cudaFree(send_));
    if (recv_ != nullptr) GW_CHECK(cudaFree(recv_));
    send_ = recv_ = nullptr;
    bytes_ = 0;
    GW_CHECK(cudaMalloc(&send_, bytes));
    GW_CHECK(cudaMalloc(&recv_, bytes));
    GW_CHECK(cudaMemset(send_, 0, bytes));
    bytes_ = bytes;
  }

  int world_;
  int device_;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  std::optional<gw::cuda::EventTimer> timer_;   ///< on stream_, made once it exists
  void* send_ = nullptr;
  void* recv_ = nullptr;
  std::size_t bytes_ = 0;
};

class MpiRunImpl;

/// Rank 0's backend: the ordinary CUDA backend for codecs, GEMM and copy;
/// collectives over all ranks of the MPI job.
class RootBackend final : public Backend {
 public:
  RootBackend(MpiRunImpl& run, std::unique_ptr<Backend> local) : run_(run), local_(std::move(local)) {}
  DeviceInfo info() override { return local_->info(); }
  std::vector<std::string> codec_names() override { return local_->codec_names(); }
  void verify_codec(const std::string& name, std::size_t n) override { local_->verify_codec(name, n); }
  void time_codec(const std::string& name, std::size_t n, int warmup, int repeats, std::vector<double>& enc,
                  std::vector<double>& dec) override {
    local_->time_codec(name, n, warmup, repeats, enc, dec);
  }
  std::vector<double> time_gemm(const std::string& precision, int m, int n, int k, int warmup, int repeats) override {
    return local_->time_gemm(precision, m, n, k, warmup, repeats);
  }
  std::vector<double> time_copy(double bytes, int warmup, int repeats) override {
    return local_->time_copy(bytes, warmup, repeats);
  }
  int collective_gpus() override;
  std::vector<int> collective_gpu_counts() override;
  int collective_nodes(int gpus) override;
  std::vector<double> time_collective(CollectiveOp op, int gpus, double bytes, int warmup,
                                      int repeats) override;
  std::map<std::string, std::string> nccl_env() override { return local_->nccl_env(); }
  std::vector<std::string> run_notes() override;

 private:
  MpiRunImpl& run_;
  std::unique_ptr<Backend> local_;
  std::map<std::string, std::pair<double, double>> imbalance_;   ///< op -> (bytes, median imbalance) at the largest size
};

std::string trimmed_first_line(const char* s, int len) {
  std::string t(s, static_cast<std::size_t>(std::max(0, len)));
  t = t.substr(0, t.find('\n'));
  while (!t.empty() && (t.back() == ' ' || t.back() == '\r' || t.back() == '\t')) t.pop_back();
  return t;
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

class MpiRunImpl final : public MpiRun {
 public:
  MpiRunImpl() {
    int inited = 0;
    GW_MPI(MPI_Initialized(&inited));
    if (!inited) {
      GW_MPI(MPI_Init(nullptr, nullptr));
      owns_mpi_ = true;
    }
  }

  /// Everything after MPI_Init; an exception here ends the job (abort()).
  void start() {
    GW_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
    GW_MPI(MPI_Comm_size(MPI_COMM_WORLD, &world_));
    GW_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node_comm_));
    GW_MPI(MPI_Comm_rank(node_comm_, &local_rank_));
    GW_MPI(MPI_Comm_size(node_comm_, &local_size_));
    char name[MPI_MAX_PROCESSOR_NAME] = {0};
    int len = 0;
    GW_MPI(MPI_Get_processor_name(name, &len));
    host_ = std::string(name, static_cast<std::size_t>(std::max(0, len)));
    hosts_ = allgather_strings(host_, world_);
    nodes_ = ranks::distinct_hosts(hosts_);

    int visible = 0;
    if (cudaGetDeviceCount(&visible) != cudaSuccess) visible = 0;
    device_ = ranks::local_device(local_rank_, local_size_, visible, host_);
    GW_CHECK(cudaSetDevice(device_));
    cudaDeviceProp prop{};
    GW_CHECK(cudaGetDeviceProperties(&prop, device_));
    gpu_names_ = allgather_strings(prop.name, world_);
    devices_ = allgather_strings(std::to_string(device_), world_);

    ncclUniqueId id{};
    if (rank_ == 0) GW_CHECK(ncclGetUniqueId(&id));
    GW_MPI(MPI_Bcast(&id, static_cast<int>(sizeof id), MPI_BYTE, 0, MPI_COMM_WORLD));
    coll_ = std::make_unique<Collectives>(rank_, world_, device_, id);

    if (rank_ == 0) {
      std::string why;
      auto local = make_cuda_backend(&why);
      if (!local) throw std::runtime_error("rank 0: no usable CUDA GPU: " + why);
      root_ = std::make_unique<RootBackend>(*this, std::move(local));
    }
  }

  ~MpiRunImpl() override {
    if (rank_ == 0 && !finished_ && coll_) {
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

  int rank() const override { return rank_; }
  int world_size() const override { return world_; }
  Backend& backend() override {
    if (!root_) throw std::logic_error("MpiRun::backend() on a rank other than 0");
    return *root_;
  }

  bool follow() override {
    for (;;) {
      std::array<double, ranks::kCommandDoubles> msg{};
      Command c;
      try {
        GW_MPI(MPI_Bcast(msg.data(), ranks::kCommandDoubles, MPI_DOUBLE, 0, MPI_COMM_WORLD));
        c = ranks::decode(msg);
        if (c.kind != Command::kCollective) return c.kind == Command::kStopOk;
        const auto mine = coll_->run(c);
        GW_MPI(MPI_Gather(mine.data(), c.repeats, MPI_DOUBLE, nullptr, c.repeats, MPI_DOUBLE, 0, MPI_COMM_WORLD));
      } catch (const std::exception& e) {
        fail_in_collective(e);
      }
    }
  }

  void finish(bool ok) override {
    if (rank_ != 0 || finished_) return;
    finished_ = true;
    Command c;
    c.kind = ok ? Command::kStopOk : Command::kStopFailed;
    auto msg = ranks::encode(c);
    GW_MPI(MPI_Bcast(msg.data(), ranks::kCommandDoubles, MPI_DOUBLE, 0, MPI_COMM_WORLD));
  }

  [[noreturn]] void abort(int code) override {
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);   // MPI_Abort does not return; in case an implementation does
  }

  [[noreturn]] void fail_in_collective(const std::exception& e) {
    // One write, so that the ranks' messages do not interleave.
    std::cerr << ("gradwire calibrate: rank " + std::to_string(rank_) + " on " + host_ + " (GPU " +
                  std::to_string(device_) + "): " + e.what() +
                  "\n(ending the MPI job: the other ranks may be waiting in the collective)\n")
              << std::flush;
    abort(kExitFailureCode);
  }

  /// Rank 0: one collective point over all ranks; the slowest rank's time per repeat.
  std::vector<double> collective(const Command& c, std::vector<double>* imbalance) {
    try {
      auto msg = ranks::encode(c);
      GW_MPI(MPI_Bcast(msg.data(), ranks::kCommandDoubles, MPI_DOUBLE, 0, MPI_COMM_WORLD));
      const auto mine = coll_->run(c);
      std::vector<double> all(static_cast<std::size_t>(world_) * static_cast<std::size_t>(c.repeats));
      GW_MPI(MPI_Gather(mine.data(), c.repeats, MPI_DOUBLE, all.data(), c.repeats, MPI_DOUBLE, 0, MPI_COMM_WORLD));
      if (imbalance != nullptr) *imbalance = ranks::rank_imbalance(all, world_, c.repeats);
      return ranks::max_over_ranks(all, world_, c.repeats);
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
    out.push_back("MPI run (--mpi): " + std::to_string(world_) + " ranks, one GPU each (the local rank), on " +
                  ranks::hosts_summary(hosts_));
    std::string mapping = "MPI ranks' GPUs (rank: device index, name):";
    bool same = true;
    for (int r = 0; r < world_; ++r) {
      const auto ri = static_cast<std::size_t>(r);
      mapping += (r > 0 ? "; " : " ") + std::to_string(r) + ": " + devices_[ri] + ", " + gpu_names_[ri];
      same = same && gpu_names_[ri] == gpu_names_[0];
    }
    out.push_back(mapping);
    if (!same) out.push_back("warning: the ranks' GPUs are not all of one type; codec and GEMM figures are rank 0's");
    out.push_back("MPI collectives: one NCCL communicator over all ranks (ncclCommInitRank); per point, after an "
                  "MPI_Barrier, each rank times the call with CUDA events on its own stream; a repeat's time is the "
                  "slowest rank's (gathered on rank 0), the point is the median of the repeats. Codecs, GEMM and "
                  "copy bandwidth are rank 0's GPU only; NCCL_* variables recorded are rank 0's");
    if (world_ < 2) {
      out.push_back("MPI job of 1 rank: no collectives (start one rank per GPU, e.g. mpirun -np 16 -npernode 8)");
    }
    return out;
  }

  static constexpr int kExitFailureCode = 1;

 private:
  bool owns_mpi_ = false;
  bool finished_ = false;
  int rank_ = 0, world_ = 1, local_rank_ = 0, local_size_ = 1, device_ = 0, nodes_ = 1;
  MPI_Comm node_comm_ = MPI_COMM_NULL;
  std::string host_;
  std::vector<std::string> hosts_, gpu_names_, devices_;
  std::unique_ptr<Collectives> coll_;
  std::unique_ptr<RootBackend> root_;
};

int RootBackend::collective_gpus() { return run_.world_size(); }

std::vector<int> RootBackend::collective_gpu_counts() {
  if (run_.world_size() < 2) return {};
  return {run_.world_size()};
}

int RootBackend::collective_nodes(int) { return run_.nodes(); }

std::vector<double> RootBackend::time_collective(CollectiveOp op, int gpus, double bytes, int warmup,
                                                 int repeats) {
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

bool mpi_built() { return true; }

std::unique_ptr<MpiRun> start_mpi_run(std::string* /*why*/) {
  auto run = std::make_unique<MpiRunImpl>();
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
