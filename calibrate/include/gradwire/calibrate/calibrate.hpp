// The calibrator: measures codec kernels, NCCL collectives, GEMM throughput and
// copy bandwidth on this machine and writes a gradwire-profile/1 file
// (docs/calibrate.md, docs/profiles.md). Host-only header.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gradwire/model/collectives.hpp"
#include "gradwire/model/profile.hpp"

namespace gw::calibrate {

struct Options {
  std::string device = "cuda";            ///< "cuda" or "cpu"
  std::string out;                        ///< profile path (written atomically)
  std::string name;                       ///< profile name; default "<device>-measured-<date>"
  std::vector<double> sizes;              ///< codec sizes in elements; empty = device default
  std::vector<double> collective_sizes;   ///< collective sizes in bytes (nccl-tests "size"); empty = default
  std::vector<std::string> codecs;        ///< empty = every codec of the compressor table the backend has
  std::vector<CollectiveOp> collectives;  ///< empty = all five
  int repeats = 0;                        ///< 0 = device default
  int warmup = -1;                        ///< -1 = device default
  double max_seconds = 0;                 ///< total budget; 0 = device default
  bool quick = false;
  bool mpi = false;          ///< --mpi: collectives across the ranks of an MPI job (cuda: NCCL; cpu: MPI's own)
  bool interference = true;  ///< measure the slow-downs under concurrency (--no-interference: off)
  std::string command;       ///< the command line, recorded in the profile
};

/// Facts about the measured device.
struct DeviceInfo {
  std::string device;
  int sm_count = 0;
  double memory_bytes = 0;
  double l2_bytes = 0;
  std::string driver, cuda, nccl;
  int visible_gpus = 0;
};

/// GEMMs issued back to back on a stream (CUDA) or a thread (CPU) of their
/// own, running while the caller does other work: the interference phase
/// (docs/calibrate.md, "Interference"). Destroying it waits for it.
class GemmBatch {
 public:
  virtual ~GemmBatch() = default;
  /// Waits for the batch to end; its time in seconds, from the first GEMM's
  /// start to the last one's end.
  virtual double wait() = 0;
};

/// One measuring backend (CPU twins, or CUDA + NCCL + cuBLAS). Every timing
/// function returns one wall/event time in seconds per repeat.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual DeviceInfo info() = 0;
  /// Codec names this backend can time.
  virtual std::vector<std::string> codec_names() = 0;
  /// Checks the codec's decoded result against its CPU twin at n elements;
  /// throws std::runtime_error on a mismatch. (The CPU backend checks that
  /// decode(encode(x)) has the right size and is finite.)
  virtual void verify_codec(const std::string& name, std::size_t n) = 0;
  /// Encode and decode times of `name` at n elements. `ready`, when set, is
  /// called once after the set-up and the warm-up, with the device idle,
  /// just before the timed repeats (the interference phase starts a GEMM
  /// batch there).
  virtual void time_codec(const std::string& name, std::size_t n, int warmup, int repeats,
                          std::vector<double>& encode_s, std::vector<double>& decode_s,
                          const std::function<void()>& ready) = 0;
  /// One GEMM C[m x n] = A[m x k] B[k x n] in a precision (fp32, tf32, bf16,
  /// fp16). Throws std::runtime_error when the precision is not available.
  virtual std::vector<double> time_gemm(const std::string& precision, int m, int n, int k, int warmup, int repeats) = 0;
  /// Starts `count` GEMMs C[m x n] = A[m x k] B[k x n] in `precision`
  /// beside whatever the caller runs next, and returns at once. Throws
  /// std::runtime_error when the precision is not available, or when the
  /// backend cannot run a GEMM beside other work (this default).
  virtual std::unique_ptr<GemmBatch> start_gemm_batch(const std::string& precision, int m, int n, int k, int count);
  /// One device-to-device copy of `bytes`.
  virtual std::vector<double> time_copy(double bytes, int warmup, int repeats) = 0;
  /// GPUs available to collectives (0 or 1: none can be measured).
  virtual int collective_gpus() = 0;
  /// The GPU counts to measure collectives at: every count from 2 to
  /// collective_gpus() (one process), or only the world size (MPI).
  virtual std::vector<int> collective_gpu_counts() {
    std::vector<int> out;
    for (int g = 2; g <= collective_gpus(); ++g) out.push_back(g);
    return out;
  }
  /// Nodes (machines) that `gpus` GPUs of collective_gpu_counts() span.
  virtual int collective_nodes(int /*gpus*/) { return 1; }
  /// One collective over `gpus` GPUs; bytes as nccl-tests "size" (the whole
  /// buffer of one rank for allreduce/broadcast/alltoall, the gathered total
  /// for allgather/reducescatter).
  virtual std::vector<double> time_collective(CollectiveOp op, int gpus, double bytes, int warmup, int repeats) = 0;
  /// NCCL_* variables in the environment (recorded in the profile).
  virtual std::map<std::string, std::string> nccl_env() { return {}; }
  /// Facts about the run for the profile's notes (MPI library, hosts, ...).
  virtual std::vector<std::string> run_notes() { return {}; }
};

/// One process of an MPI calibration (gradwire-calibrate --mpi under mpirun
/// or srun): MPI initialized; with --device cuda one GPU per rank (the local
/// rank) and an NCCL communicator over all ranks, with --device cpu MPI's own
/// collectives between the ranks' processes. Rank 0 runs the pipeline on
/// backend(); every other rank calls follow() and takes part in rank 0's
/// collectives until finish().
class MpiRun {
 public:
  virtual ~MpiRun() = default;  ///< finalizes MPI
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  /// Rank 0: codecs, GEMM and copy on its own device; collectives over all ranks.
  virtual Backend& backend() = 0;
  /// Ranks other than 0: runs the collectives rank 0 asks for; returns when
  /// rank 0 calls finish(), true when rank 0 finished without error.
  virtual bool follow() = 0;
  /// Rank 0: releases the followers (ok = the calibration succeeded).
  virtual void finish(bool ok) = 0;
  /// Any rank: ends the whole job after an error inside a collective (the
  /// other ranks may be blocked in it); does not return.
  [[noreturn]] virtual void abort(int code) = 0;
};

/// Initializes MPI (and NCCL over all ranks for --device cuda); nullptr with
/// *why set when this build cannot (no MPI; cuda without CUDA). On an error
/// after MPI_Init it ends the whole job. Defined in gw_calibrate_mpi, which
/// only gradwire-calibrate links: gradwire links SimGrid, whose SMPI defines
/// MPI_Init too, so no image may hold both (docs/calibrate.md).
std::unique_ptr<MpiRun> start_mpi_run(const Options& opt, std::string* why);

/// How the calibrator runs --mpi: start_mpi_run (gradwire-calibrate, the
/// only executable that runs calibrations: `gradwire calibrate` execs it), or
/// nullptr: --mpi is refused (exit 2).
using MpiStart = std::unique_ptr<MpiRun> (*)(const Options& opt, std::string* why);

std::unique_ptr<Backend> make_cpu_backend();
/// The CUDA backend, or nullptr with *why set when no GPU can be used (or the
/// build has no CUDA).
std::unique_ptr<Backend> make_cuda_backend(std::string* why);

/// Bytes of one gradient element as the calibration measures it (fp32): the
/// codecs run on fp32 gradients and the collectives move fp32 elements.
inline constexpr double kElementBytes = 4;

/// Codec sizes in elements from a --sizes text in bytes (the grammar of
/// gw::units::parse_size_range: "4KiB:1GiB", "4KiB:64MiB:4", "4KiB,16KiB");
/// every size a whole number of kElementBytes-byte elements. Throws
/// std::invalid_argument naming the problem.
std::vector<double> codec_sizes(const std::string& bytes_spec);
/// Collective sizes in bytes (nccl-tests "size") from a --collective-sizes
/// text of the same grammar; each at least one fp32 element. Throws
/// std::invalid_argument naming the problem.
std::vector<double> collective_byte_sizes(const std::string& bytes_spec);

/// Runs the whole pipeline on `backend` and returns the profile (not written).
/// Progress goes to stderr (one updating line on a terminal).
Profile run_calibration(const Options& opt, Backend& backend);

/// `gradwire-calibrate` (also run by `gradwire calibrate`, which execs it):
/// parses options, runs, writes.
/// `mpi_start`: how this executable runs --mpi (MpiStart).
/// Exit codes: 0 ok, 1 failure (no GPU, a kernel mismatch, I/O), 2 bad options.
int run_cli(int argc, char** argv, MpiStart mpi_start);

}  // namespace gw::calibrate
