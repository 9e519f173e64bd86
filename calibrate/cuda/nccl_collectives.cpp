// The NCCL side of the MPI calibration (gradwire-calibrate --mpi --device
// cuda, one rank per GPU, across nodes), as nccl-tests' MPI mode does it:
// each rank takes the GPU of its local rank on its node; rank 0 creates the
// NCCL unique id and broadcasts it over MPI; ncclCommInitRank joins all ranks
// in one communicator; every rank times each repeat with CUDA events on its
// own stream after an MPI barrier. Host-only C++ over MPI, the CUDA runtime
// and NCCL; the job itself is mpi_run.cpp's.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <cstddef>
#include <optional>

#include "../mpi/mpi_rank.hpp"
#include "gradwire/cuda/device_buffer.hpp"
#include "gradwire/cuda/event_timer.hpp"
#include "nccl_check.hpp"
#include "nccl_launch.hpp"

namespace gw::calibrate::mpi {
namespace {

using ranks::Command;

/// The NCCL communicator over all ranks, this rank's GPU, stream and buffers.
class NcclCollectives final : public RankCollectives {
 public:
  NcclCollectives(const RankPlace& place, int device, const ncclUniqueId& id) : world_(place.world), device_(device) {
    GW_CHECK(cudaSetDevice(device_));
    GW_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    timer_.emplace(stream_);
    GW_CHECK(ncclCommInitRank(&comm_, place.world, id, place.rank));
  }
  ~NcclCollectives() override {
    cudaSetDevice(device_);
    if (comm_ != nullptr) ncclCommDestroy(comm_);
    send_.release();
    recv_.release();
    cudaStreamDestroy(stream_);
  }
  NcclCollectives(const NcclCollectives&) = delete;
  NcclCollectives& operator=(const NcclCollectives&) = delete;

  std::vector<double> run(const Command& c) override {
    GW_CHECK(cudaSetDevice(device_));
    const auto total = static_cast<std::size_t>(c.bytes);
    const std::size_t count = total / 4;  // fp32 elements of the nccl-tests "size"
    ensure(std::max<std::size_t>(total, 4));
    auto launch = [&] { detail::launch_nccl(c.op, send_.get(), recv_.get(), count, world_, comm_, stream_); };
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

  std::string where() const override { return "GPU " + std::to_string(device_); }

  std::vector<std::string> notes() const override {
    std::string mapping = "MPI ranks' GPUs (rank: device index, name):";
    bool same = true;
    for (std::size_t r = 0; r < gpu_names_.size(); ++r) {
      mapping += (r > 0 ? "; " : " ") + std::to_string(r) + ": " + devices_[r] + ", " + gpu_names_[r];
      same = same && gpu_names_[r] == gpu_names_[0];
    }
    std::vector<std::string> out = {mapping};
    if (!same) out.push_back("warning: the ranks' GPUs are not all of one type; codec and GEMM figures are rank 0's");
    out.push_back(
        "MPI collectives: one NCCL communicator over all ranks (ncclCommInitRank); per point, after an "
        "MPI_Barrier, each rank times the call with CUDA events on its own stream; a repeat's time is the "
        "slowest rank's (gathered on rank 0), the point is the median of the repeats. Codecs, GEMM and "
        "copy bandwidth are rank 0's GPU only; NCCL_* variables recorded are rank 0's");
    return out;
  }

  /// Every rank's GPU index and name (gathered at start-up, for the notes).
  void set_rank_gpus(std::vector<std::string> devices, std::vector<std::string> names) {
    devices_ = std::move(devices);
    gpu_names_ = std::move(names);
  }

 private:
  /// Send and receive buffers of at least `bytes` each (zeroed send buffer when they grow).
  void ensure(std::size_t bytes) {
    if (bytes <= send_.size() && bytes <= recv_.size()) return;
    send_.ensure(device_, bytes);
    recv_.ensure(device_, bytes);
    GW_CHECK(cudaMemset(send_.get(), 0, bytes));
  }

  int world_;
  int device_;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  std::optional<gw::cuda::EventTimer> timer_;  ///< on stream_, made once it exists
  gw::cuda::DeviceBuffer<std::byte> send_, recv_;
  std::vector<std::string> devices_, gpu_names_;
};

}  // namespace

bool nccl_collectives_built() { return true; }

std::unique_ptr<RankCollectives> make_nccl_collectives(const RankPlace& place) {
  int visible = 0;
  if (cudaGetDeviceCount(&visible) != cudaSuccess) visible = 0;
  const int device = ranks::local_device(place.local_rank, place.local_size, visible, place.host);
  GW_CHECK(cudaSetDevice(device));
  cudaDeviceProp prop{};
  GW_CHECK(cudaGetDeviceProperties(&prop, device));
  auto names = allgather_strings(prop.name, place.world);
  auto devices = allgather_strings(std::to_string(device), place.world);

  ncclUniqueId id{};
  if (place.rank == 0) GW_CHECK(ncclGetUniqueId(&id));
  GW_MPI(MPI_Bcast(&id, static_cast<int>(sizeof id), MPI_BYTE, 0, MPI_COMM_WORLD));
  auto out = std::make_unique<NcclCollectives>(place, device, id);
  out->set_rank_gpus(std::move(devices), std::move(names));
  return out;
}

}  // namespace gw::calibrate::mpi
