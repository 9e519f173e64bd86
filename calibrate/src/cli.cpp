// Command-line front end of the calibrator (gradwire-calibrate, which
// `gradwire calibrate` execs): parse, run, write; one place maps errors to exit codes.
#include <boost/program_options.hpp>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "gradwire/core/atomic_file.hpp"
#include "gradwire/calibrate/calibrate.hpp"
#include "gradwire/calibrate/ranks.hpp"
#include "gradwire/model/compressors.hpp"
#include "gradwire/core/error.hpp"
#include "gradwire/core/options.hpp"
#include "gradwire/model/cluster_fit.hpp"
#include "gradwire/model/nccl_tests_log.hpp"
#include "gradwire/model/transports.hpp"

namespace gw::calibrate {
namespace {

namespace po = boost::program_options;

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string t; std::getline(ss, t, ',');) {
    if (!t.empty()) out.push_back(t);
  }
  return out;
}

std::string shell_quote(const std::string& a) {
  if (!a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=./:^,+") ==
                        std::string::npos) {
    return a;
  }
  std::string out = "'";
  for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// SIGINT / SIGTERM: a calibration is all or nothing (a half-measured profile
// would predict wrong numbers), so the handler stops the process at once with
// exit 130. The profile is only ever written by write_file_atomic (temporary
// file + rename) with both signals blocked, so an interrupted run leaves no
// file, or the previous one intact, and no temporary file behind.
volatile sig_atomic_t g_profile_written = 0;

extern "C" void on_calibrate_signal(int) {
  static const char before[] =
      "\ngradwire calibrate: interrupted; no profile written (an existing file is left as it was)\n";
  static const char after[] = "\ngradwire calibrate: interrupted after the profile was written\n";
  if (g_profile_written) {
    (void)!::write(2, after, sizeof after - 1);
  } else {
    (void)!::write(2, before, sizeof before - 1);
  }
  ::_exit(kExitInterrupted);
}

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_calibrate_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

/// Writes `text` atomically with SIGINT/SIGTERM held back until it is in
/// place (never over one of `inputs`).
void write_held(const std::string& path, const std::string& text, const std::vector<std::string>& inputs = {}) {
  sigset_t stop, old;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, &old);
  try {
    write_file_atomic(path, text, inputs);
  } catch (...) {
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    throw;
  }
  g_profile_written = 1;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

/// Writes the profile with SIGINT/SIGTERM held back until it is in place,
/// after reading it back as gradwire will: a profile the loader would refuse
/// (a fit outside its plausible range, a codec time falling with size) is
/// never written; the calibration fails (exit 1) naming what would not load.
void write_profile(const std::string& path, const Profile& p) {
  const std::string text = profile_to_yaml(p);
  try {
    (void)parse_profile_text(text, path);
  } catch (const InputError& e) {
    throw std::runtime_error(std::string("the profile made here would not load, so nothing is written: ") + e.what());
  }
  write_held(path, text);
}

/// --mpi: every rank of the job runs this; rank 0 calibrates and writes the
/// profile, the other ranks take part in its collectives (docs/calibrate.md).
/// `mpi_start` null: this executable has no MPI path (exit 2).
int run_mpi(const Options& opt, MpiStart mpi_start) {
  if (mpi_start == nullptr) {
    std::cerr << "gradwire calibrate: --mpi: this executable has no MPI path (run gradwire-calibrate)\n";
    return kExitInput;
  }
  std::string why;
  std::unique_ptr<MpiRun> run;
  try {
    run = mpi_start(opt, &why);  // ends the whole job itself on an error after MPI_Init
  } catch (const std::exception& e) {
    std::cerr << "gradwire calibrate: " << e.what() << "\n";
    return kExitFailure;
  }
  if (!run) {
    std::cerr << "gradwire calibrate: --mpi: " << why << "\n";
    return kExitInput;
  }
  if (run->rank() != 0) return run->follow() ? kExitOk : kExitFailure;
  int rc = kExitOk;
  try {
    Profile p = run_calibration(opt, run->backend());
    write_profile(opt.out, p);
    std::cerr << "gradwire calibrate: wrote " << opt.out << " (" << p.codecs.size() << " codecs, "
              << p.collectives.size() << " collective fits over " << run->world_size() << " MPI ranks)\n";
  } catch (const std::invalid_argument& e) {
    std::cerr << "gradwire calibrate: " << e.what() << "\n";
    rc = kExitInput;
  } catch (const std::exception& e) {
    std::cerr << "gradwire calibrate: " << e.what() << "\n";
    rc = kExitFailure;
  }
  run->finish(rc == kExitOk);
  return rc;
}

/// What the command line gave besides Options' own fields.
struct RawOptions {
  std::string sizes, codecs, collectives, collective_sizes;
  std::vector<std::string> logs;  ///< --from-nccl-tests
  std::string base;               ///< --profile
  std::string cluster_out;        ///< --write-cluster
  int nics = 0;                   ///< --nics (0: one per GPU)
  std::string nic_transport;      ///< --nic-transport
};

po::options_description describe(Options& opt, RawOptions& raw) {
  static const std::string codecs_help =
      "comma list of codecs (default: all of " + join_names(compressor_codec_names(), ",") + ")";
  static const std::string collectives_help =
      "comma list of " + collective_op_list(",") + " (default all); with --from-nccl-tests the runs to fit";
  po::options_description desc(
      "gradwire calibrate: measure this machine's codec kernels, NCCL collectives, GEMM throughput and copy\n"
      "bandwidth and write a gradwire-profile/1 file (docs/calibrate.md)\n\nOptions");
  desc.add_options()("help,h", "show this help")("device", po::value<std::string>(&opt.device)->default_value("cuda"),
                                                 "cuda or cpu (CPU twins; exercises the tool, not for predictions)")(
      "out,o", po::value<std::string>(&opt.out), "profile file to write (atomically); required")(
      "name", po::value<std::string>(&opt.name), "profile name (default <device>-measured-<date>)")(
      "sizes", po::value<std::string>(&raw.sizes),
      "codec sizes in bytes of fp32 gradient (4 B per element): "
      "MIN:MAX[:FACTOR] (x2 steps when FACTOR is left out), one size "
      "or a comma list, e.g. 4KiB:1GiB (default 4KiB:1GiB on cuda, "
      "4KiB:1MiB on cpu: 2^10..2^28 and 2^10..2^18 elements)")("codecs", po::value<std::string>(&raw.codecs),
                                                               codecs_help.c_str())(
      "collectives", po::value<std::string>(&raw.collectives), collectives_help.c_str())(
      "collective-sizes", po::value<std::string>(&raw.collective_sizes),
      "collective sizes in bytes (nccl-tests "
      "\"size\"), same grammar as --sizes (default 1KiB:1GiB:4, quick "
      "4KiB:256MiB:16; cpu --mpi 1KiB:64MiB:4, quick 4KiB:4MiB:4)")("repeats", po::value<int>(&opt.repeats),
                                                                    "timed repeats per point (default 20 cuda, 5 cpu)")(
      "warmup", po::value<int>(&opt.warmup), "untimed warm-up runs per point (default 5 cuda, 1 cpu)")(
      "max-seconds", po::value<double>(&opt.max_seconds),
      "time budget in seconds (default 110 cuda, 15 cpu, 25 cpu --mpi)")("quick", po::bool_switch(&opt.quick),
                                                                         "fewer sizes and repeats (smoke test)")(
      "no-interference", po::bool_switch(),
      "skip the interference phase (a GEMM stream beside NCCL and each "
      "codec; the profile then has no interference: section)")(
      "mpi", po::bool_switch(&opt.mpi),
      "collectives over all ranks of an MPI job, across nodes (mpirun/srun -n N "
      "gradwire-calibrate --mpi ...; one rank per GPU, or per process with --device "
      "cpu, which times MPI's own collectives; rank 0 writes the profile); needs a "
      "build with MPI")(
      "from-nccl-tests", po::value<std::vector<std::string>>(&raw.logs)->multitoken(),
      "measure nothing: fit the collectives of existing nccl-tests logs (any *_perf output; per op, GPU count "
      "and node count; each run of an appended log on its own, rows that cannot be measurements left out with "
      "a note) into a copy of --profile")("profile", po::value<std::string>(&raw.base),
                                          "with --from-nccl-tests: the profile to start from (name or path); "
                                          "with --write-cluster: the one whose all-reduce fit gives the "
                                          "intra-node link (default: the log's GPU's)")(
      "write-cluster", po::value<std::string>(&raw.cluster_out),
      "with --from-nccl-tests (a log across nodes): write a scenario file whose cluster's NIC bandwidth and "
      "latency are fitted to the log, instead of a profile (no --out)")(
      "nics", po::value<int>(&raw.nics), "with --write-cluster: NICs per node (default: one per GPU)")(
      "nic-transport", po::value<std::string>(&raw.nic_transport),
      "with --write-cluster: the NICs' transport (network: as fitted, the default; ib, roce, efa, socket, tcpx)");
  return desc;
}

void check_name(const std::string& name) {
  // The name is written into the profile and printed with every prediction.
  if (name.empty() || name.size() > 128) throw std::invalid_argument("--name must have 1 to 128 characters");
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7F)
      throw std::invalid_argument("--name must not contain control characters (newline, tab, escape, ...)");
  }
}

/// The output can be written, checked before anything is measured (a
/// calibration takes minutes): checked_output_path's rules (a regular file or
/// a new name in an existing directory, never an input), and a file can be
/// created beside it, as write_file_atomic will (a read-only or pseudo file
/// system, a directory without write permission). The probe file is made
/// with mkstemp and removed at once. Throws InputError (exit 2).
void check_output_writable(const std::string& out, const std::vector<std::string>& inputs = {}) {
  const std::string target = checked_output_path(out, inputs);
  std::string probe = target + ".probe.XXXXXX";
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) {
    const std::string why = std::strerror(errno);
    throw InputError(out, 0, 0, "",
                     "cannot create a file in its directory (" + why + "); nothing measured, choose another output");
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

void check_launch(const Options& opt) {
  if (opt.mpi) return;
  // Started by mpirun without --mpi, every rank would calibrate on its own
  // and write the same file.
  const int ranks = ranks::launcher_world_size([](const char* v) { return std::getenv(v); });
  if (ranks > 1) {
    throw std::invalid_argument("started by an MPI launcher with " + std::to_string(ranks) +
                                " ranks but without --mpi: add --mpi (one rank per GPU; rank 0 writes the "
                                "profile), or run one process");
  }
}

std::vector<CollectiveOp> parse_collectives(const std::string& list) {
  std::vector<CollectiveOp> ops;
  for (const auto& c : split_list(list)) {
    const auto op = find_collective_op(c);
    if (!op) throw std::invalid_argument("unknown collective \"" + c + "\" (" + collective_op_list() + ")");
    ops.push_back(*op);
  }
  return ops;
}

/// Checks the parsed options and fills in the rest; throws std::invalid_argument
/// (or InputError for a refused --out).
void validate(const po::variables_map& vm, const RawOptions& raw, Options& opt) {
  if (opt.device != "cuda" && opt.device != "cpu") throw std::invalid_argument("--device must be cuda or cpu");
  const bool cluster = !raw.cluster_out.empty();
  if (cluster && !opt.out.empty())
    throw std::invalid_argument("--write-cluster FILE writes a cluster, --out FILE a profile: give one");
  if (!cluster && opt.out.empty()) throw std::invalid_argument("--out FILE is required");
  if (vm.count("name")) check_name(opt.name);
  if (!cluster)
    check_output_writable(opt.out);  // a device, FIFO, directory, dangling link or read-only place: before measuring
  check_launch(opt);
  if (vm.count("repeats") && (opt.repeats < 1 || opt.repeats > 10000))
    throw std::invalid_argument("--repeats must be in 1..10000");
  if (vm.count("warmup") && (opt.warmup < 0 || opt.warmup > 10000))
    throw std::invalid_argument("--warmup must be in 0..10000");
  if (vm.count("max-seconds") && !(opt.max_seconds > 0)) throw std::invalid_argument("--max-seconds must be positive");
  if (!raw.sizes.empty()) opt.sizes = codec_sizes(raw.sizes);
  if (!raw.collective_sizes.empty()) opt.collective_sizes = collective_byte_sizes(raw.collective_sizes);
  opt.codecs = split_list(raw.codecs);
  opt.collectives = parse_collectives(raw.collectives);
  opt.interference = !vm["no-interference"].as<bool>();
}

/// The runs of the --from-nccl-tests logs to fit (nccl_tests::select_runs),
/// their skipped rows and the runs of other ops noted on stderr, so that no
/// run is dropped silently.
std::vector<nccl_tests::Log> select_logs(const Options& opt, const RawOptions& raw) {
  std::vector<nccl_tests::Log> logs;
  const std::string pick = "choose with --collectives OP (" + collective_op_list() + "), or split the file";
  for (const auto& f : raw.logs) {
    std::vector<std::string> left_out;
    auto runs = nccl_tests::select_runs(nccl_tests::load_runs(f), opt.collectives, pick, &left_out);
    for (const auto& l : left_out) std::cerr << "gradwire calibrate: note: " << l << "\n";
    for (auto& log : runs) {
      for (const auto& n : log.notes)
        std::cerr << "gradwire calibrate: note: " << nccl_tests::format_note(log, n) << "\n";
      logs.push_back(std::move(log));
    }
  }
  return logs;
}

/// --from-nccl-tests and what goes with it: --profile (a profile's fits),
/// or --write-cluster with --nics and --nic-transport.
void check_log_modes(const po::variables_map& vm, const RawOptions& raw, const Options& opt) {
  const bool cluster = !raw.cluster_out.empty();
  if (cluster && raw.logs.empty())
    throw std::invalid_argument(
        "--write-cluster FILE fits a cluster to nccl-tests logs: give --from-nccl-tests LOG...");
  if (!cluster && raw.logs.empty() != raw.base.empty())
    throw std::invalid_argument("--from-nccl-tests LOG... and --profile BASE go together");
  if (!raw.logs.empty() && opt.mpi) throw std::invalid_argument("--from-nccl-tests measures nothing: no --mpi");
  if (!cluster && (vm.count("nics") || vm.count("nic-transport")))
    throw std::invalid_argument("--nics and --nic-transport describe the cluster of --write-cluster");
  if (vm.count("nics") && (raw.nics < 1 || raw.nics > 64)) throw std::invalid_argument("--nics must be in 1..64");
  if (vm.count("nic-transport") && find_transport(raw.nic_transport, TransportPlace::Network) == nullptr) {
    std::string names;
    for (const auto& n : transport_names(TransportPlace::Network)) names += (names.empty() ? "" : ", ") + n;
    throw std::invalid_argument("--nic-transport must be one of " + names + ", not \"" + raw.nic_transport + "\"");
  }
}

/// Runs one of the --from-nccl-tests modes: a refused input (a log, an
/// output, a profile) is one line and exit 2, any other failure exit 1.
template <class Body>
int run_log_mode(Body&& body) {
  try {
    body();
    return kExitOk;
  } catch (const InputError& e) {
    std::cerr << "gradwire calibrate: " << e.what() << "\n";
    return kExitInput;
  } catch (const std::exception& e) {
    std::cerr << "gradwire calibrate: " << e.what() << "\n";
    return kExitFailure;
  }
}

/// --from-nccl-tests: the base profile with the logs' collective fits.
int run_from_logs(const Options& opt, const RawOptions& raw) {
  return run_log_mode([&] {
    Profile p = load_profile(raw.base);
    std::vector<std::string> inputs = raw.logs;
    inputs.push_back(p.path);
    check_output_writable(opt.out, inputs);  // never over a log or the base profile
    const std::vector<nccl_tests::Log> logs = select_logs(opt, raw);
    const auto fits = nccl_tests::collective_fits(logs);
    nccl_tests::add_collective_fits(p, fits, logs);
    p.name = opt.name.empty() ? p.name + "-nccl-tests" : opt.name;
    p.command = opt.command;
    write_profile(opt.out, p);
    std::cerr << "gradwire calibrate: wrote " << opt.out << " (" << fits.size() << " collective fits from "
              << logs.size() << " nccl-tests logs over " << raw.base << ")\n";
  });
}

/// --from-nccl-tests LOG... --write-cluster FILE: a scenario file whose
/// cluster's NICs are fitted to the logs (gw::cluster_from_logs).
int run_write_cluster(const Options& opt, const RawOptions& raw) {
  return run_log_mode([&] {
    ClusterFitOptions o;
    o.nics = raw.nics;
    o.profile = raw.base;
    o.name = opt.name;
    if (!raw.nic_transport.empty()) o.transport = find_transport(raw.nic_transport, TransportPlace::Network)->id;
    check_output_writable(raw.cluster_out, raw.logs);  // never over a log
    const ClusterFromLogs r = cluster_from_logs(select_logs(opt, raw), o);
    std::vector<std::string> inputs = raw.logs;
    inputs.push_back(r.profile_path);
    write_held(raw.cluster_out, r.yaml, inputs);
    std::cerr << "gradwire calibrate: wrote " << raw.cluster_out << " (" << fit_summary(r.fit) << ")\n";
  });
}

/// One process on this machine's GPUs (or the CPU twins).
int run_local(const Options& opt) {
  try {
    std::unique_ptr<Backend> backend;
    if (opt.device == "cpu") {
      backend = make_cpu_backend();
    } else {
      std::string why;
      backend = make_cuda_backend(&why);
      if (!backend) {
        std::cerr << "gradwire calibrate: no usable CUDA GPU: " << why
                  << "\n(run on a machine with an NVIDIA GPU, or use --device cpu to exercise the tool)\n";
        return kExitFailure;
      }
    }
    Profile p = run_calibration(opt, *backend);
    write_profile(opt.out, p);
    std::cerr << "gradwire calibrate: wrote " << opt.out << " (" << p.codecs.size() << " codecs, "
              << p.collectives.size() << " collective fits)\n";
    return kExitOk;
  } catch (const std::invalid_argument& e) {
    std::cerr << "gradwire calibrate: " << e.what() << "\n";
    return kExitInput;
  } catch (const InputError& e) {  // e.g. --out in a read-only directory
    std::cerr << "gradwire calibrate: " << e.what() << "\n";
    return kExitInput;
  } catch (const std::exception& e) {
    std::cerr << "gradwire calibrate: " << e.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace

int run_cli(int argc, char** argv, MpiStart mpi_start) {
  Options opt;
  RawOptions raw;
  const po::options_description desc = describe(opt, raw);
  try {
    // The cuda example needs an NVIDIA GPU (tests/cli skips it without one).
    const auto vm = parse_options(argc, argv, desc, {},
                                  "\nExample: gradwire calibrate --device cpu --quick --out /tmp/cpu-profile.yaml\n"
                                  "Example: gradwire calibrate --out /tmp/my-gpu.yaml\n");
    if (!vm) return kExitOk;  // --help
    validate(*vm, raw, opt);
    check_log_modes(*vm, raw, opt);
  } catch (const InputError& e) {  // a refused --out: one line
    std::cerr << "gradwire calibrate: " << e.what() << "\n";
    return kExitInput;
  } catch (const std::exception& e) {
    std::cerr << "gradwire calibrate: " << e.what() << "\n(see --help)\n";
    return kExitInput;
  }
  for (int i = 0; i < argc; ++i) {
    if (i > 0) opt.command += ' ';
    opt.command += shell_quote(argv[i]);
  }

  install_stop_handlers();
  if (!raw.cluster_out.empty()) return run_write_cluster(opt, raw);
  if (!raw.logs.empty()) return run_from_logs(opt, raw);
  if (opt.mpi) return run_mpi(opt, mpi_start);
  return run_local(opt);
}

}  // namespace gw::calibrate
