// One data-parallel training iteration (PyTorch DDP) as a plan of work on two
// streams of a representative rank, and its closed-form evaluation.
//
//   compute stream : forward, then backward tensor by tensor (gradient-ready
//                    order); bucket b is ready when its last gradient is.
//   comm stream    : buckets in order; each runs its steps (encode,
//                    collective(s), decode) one after another; a later bucket
//                    never overtakes an earlier one.
//   optimizer      : after the backward pass and the last bucket.
//   PyTorch hooks  : the steps before a bucket's first collective run on the
//                    compute stream after its last tensor (the bucket is ready
//                    after them); those after its last collective on a side
//                    stream that does not hold the comm stream
//                    (BucketComm::on_compute_stream / on_side_stream).
//   codecs         : a codec step that starts before the backward's end takes
//                    (1 + codec_interference) times its time.
//
// Gradient accumulation (k micro-steps under no_sync): k-1 micro-steps of
// forward + backward without communication, then one that synchronizes.
// Closed forms (docs/model.md):
//   no overlap : T = k (F + B) + sum_b comm_b + O
//   overlap    : start_b = max(ready_b, end_{b-1}); end_b = start_b + comm_b;
//                T = (k-1)(F + B) + F + max(B, end_last) + O  (times from the backward start)
// with comm_b the sum of bucket b's steps. Without no_sync
// (workload.no_sync: false) every micro-step synchronizes as the last one
// does: with S the synchronizing micro-step from its forward to the end of
// its copy-out, T = k S + O (+ W), each sync waiting for the slowest rank of
// one micro-step. Plain C++, no SimGrid.
// DDP overheads (docs/model.md, "DDP overheads"; workload.ddp_overheads):
//   copy-in  : tensor j's backward takes d_j + c_j, c_j = 2 bytes_j / copy_bw
//   host     : at bucket b's last tensor l_b the autograd thread adds
//              h_b = h x (b's collectives) before b is ready (tensor_host)
//   launch   : bucket b's comm starts L x (its collectives) after start_b
//   copy-out : o = backward_end; o = max(o, end_b) + c_b per bucket in order;
//              the optimizer starts at o
//   fixed    : W = tensors x L after the optimizer (derived optimizer only)
// Input bound (workload.input_rate r): T = max(T, b k / r).
// Stragglers (workload.compute_jitter cv; stragglers.hpp): bucket b's
// collective starts D_b = cv mu_N sqrt((k-1) C^2 + (F + R_b)^2) after it is
// ready on the representative rank (the expected slowest of N ranks); the
// last bucket's D is the straggler wait. The band (stragglers.hpp): low and
// high around T from the profile's spread, the jitter and the validation
// residuals.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gradwire/model/buckets.hpp"
#include "gradwire/model/collectives.hpp"
#include "gradwire/model/compression.hpp"
#include "gradwire/model/interference.hpp"
#include "gradwire/model/measured_collective.hpp"
#include "gradwire/model/model_desc.hpp"
#include "gradwire/model/scenario.hpp"
#include "gradwire/model/stragglers.hpp"

namespace gw {

struct Profile;
struct IterationResult;
struct MeasuredCompute;

/// The iteration model's constants that no source states, fitted once by
/// least squares over every scored case of the validation devset
/// (docs/validation.md, "Fitted constants"; `gradwire validate iterations
/// --fit` refits them; docs/model.md sections 7, 7a and "DDP overheads").
struct FittedConstants {
  /// M1: compute slow-down of a backward tensor that starts while a
  /// collective runs (section 7's tensor rule), where neither the profile
  /// nor workload.interference gives one.
  double compute_under_nccl = 0;
  /// M2: cv of one rank's micro-step compute (section 7a), where neither
  /// workload.compute_jitter nor a measured-compute document gives it.
  double rank_jitter = 0;
  /// M3: host seconds on the autograd thread per collective DDP launches
  /// for a bucket (Reducer::mark_bucket_ready .. ProcessGroupNCCL), before
  /// the next backward tensor.
  double host_per_collective = 0;
  bool operator==(const FittedConstants&) const = default;
};
/// The values compiled in (sim/model/src/fitted_constants.cpp: `gradwire
/// validate iterations --fit` prints its line from the devset;
/// tests/validate checks they are its fit).
extern const FittedConstants kFittedConstants;
/// The constants in effect: kFittedConstants unless a ScopedFittedConstants
/// is alive (the validation's fit evaluates the cases at other values).
const FittedConstants& fitted_constants();
/// Replaces fitted_constants() for its lifetime (one thread; not nested
/// across threads).
class ScopedFittedConstants {
 public:
  explicit ScopedFittedConstants(const FittedConstants& values);
  ~ScopedFittedConstants();
  ScopedFittedConstants(const ScopedFittedConstants&) = delete;
  ScopedFittedConstants& operator=(const ScopedFittedConstants&) = delete;

 private:
  FittedConstants saved_;
};

/// The per-GPU costs the iteration model needs, usually read from a profile.
struct DeviceCosts {
  std::string compute_precision;  ///< compute precision: a compute_precision_names() entry
  double flops = 0;               ///< achieved FLOP/s at its GEMM rate (gemm_rate_of)
  /// Relative spread (max - min) / median of the repeats of the largest GEMM
  /// the rate was measured on (profile gemm_points), 0 when not measured.
  double flops_spread = 0;
  double copy_bandwidth = 0;  ///< device memory bytes read + written per second
  /// GEMM rate at the gradient precision (the profile's fp32, bf16 or fp16
  /// rate: PyTorch's matmul does not use TF32 by default), for the pytorch
  /// implementation's matrix products; 0: `flops`.
  double gradient_gemm_flops = 0;
  CodecTimeFn codec_time;            ///< encode/decode seconds by codec and elements
  InterferenceFigures interference;  ///< measured slow-downs (profile `interference:`)
  /// The profile's measured collectives (measured_collectives: its points
  /// from `calibrate --mpi` or `--from-nccl-tests`): plan_iteration times a
  /// collective step with one measured on exactly the cluster's shape
  /// (docs/model.md, "Collectives measured on the cluster").
  std::vector<MeasuredCollective> cluster_collectives;
  /// The devset's fitted constants (device_costs: fitted_constants()); all 0
  /// for costs made by hand, which then get none of those terms.
  FittedConstants fitted;
};

/// The compute rate used for a gradient precision: fp32 -> the profile's tf32
/// rate when it has one (PyTorch runs fp32 convolutions in TF32 on Ampere and
/// later by default), else fp32; bf16 -> bf16; fp16 -> fp16.
std::string compute_precision_for(Precision gradient_precision, const Profile& profile);
/// The GEMM rates a profile has, "fp32, fp16, ..." (for messages).
std::string profile_gemm_rates(const Profile& profile);
/// DeviceCosts from a profile (defined in profile_costs.cpp): the rate of
/// `compute_precision` (workload.compute_precision; amp-* at the 16-bit rate),
/// or when it is empty the one compute_precision_for() picks. Throws
/// std::invalid_argument naming the rates the profile has when it lacks it.
DeviceCosts device_costs(const Profile& profile, Precision gradient_precision,
                         const std::string& compute_precision = "");

/// Bytes of device memory one optimizer step reads and writes per parameter:
/// parameter read+write and gradient read at the gradient precision (3e),
/// plus 8 bytes per fp32 state read+written (momentum/lars: 1 state,
/// adam/adamw/lamb: 2), plus e + 8 for the norm pass of lamb and lars.
/// Throws std::invalid_argument for an unknown optimizer.
double optimizer_bytes_per_parameter(const std::string& kind, double element_bytes);
/// step_time when given, else parameters x bytes per parameter / copy bandwidth.
double optimizer_step_time(const OptimizerSpec& optimizer, std::int64_t parameters, double element_bytes,
                           double copy_bandwidth);

/// Cost of one CUDA kernel launch on the host (s): the project's launch
/// constant (calibrate/profiles/make_datasheet_profiles.py, LAUNCH_OVERHEAD_S),
/// used for every launch DDP adds (docs/model.md, "DDP overheads").
inline constexpr double kKernelLaunchSeconds = 5e-6;

/// Extra host cost of one kernel launched from Python, as a PyTorch comm
/// hook's ops are (eager dispatcher, argument parsing) on top of
/// kKernelLaunchSeconds: 15.3 ms / (54 x 24) = 11.8 us per Gram-Schmidt
/// kernel measured on H200 (docs/kernels-topk-powersgd.md) less the 5 us
/// launch (docs/model.md, "DDP overheads"). Sourced, not fitted.
inline constexpr double kPythonOpSeconds = 6.8e-6;

/// Everything the replay and the closed forms need, independent of the network.
struct IterationPlan {
  std::string model;
  std::string compression;
  std::string compute_precision;
  std::string allreduce_algorithm;  ///< resolved (ring, tree, hierarchical)
  int world_size = 1;
  int micro_batch = 1;
  int accumulation = 1;
  /// k > 1 and workload.no_sync false: each of the k micro-steps
  /// synchronizes (all-reduces its gradients), not only the last.
  bool sync_every_micro_step = false;
  bool overlap = true;
  double interference = 0;             ///< compute slow-down while a collective (or its launch) runs
  double interference_codec = 0;       ///< compute slow-down while a codec runs
  double codec_interference = 0;       ///< codec slow-down while the backward runs (g)
  std::string interference_source;     ///< workload.interference, the profile, or the default
  double interference_range_high = 0;  ///< unmeasured: the published upper end (band), else 0
  /// The collectives whose steps take the profile's fit measured on this
  /// cluster, e.g. "allreduce on 16 GPUs, 2 nodes"; empty: all modelled.
  std::vector<std::string> measured_collectives;
  double compute_efficiency = 1;           ///< fraction of the GEMM rate used for compute
  bool compute_efficiency_default = true;  ///< true when not given by the scenario
  /// "measured on DEVICE, DATE" when forward, backward and optimizer come from
  /// a measured-compute document (workload.compute); empty otherwise.
  std::string compute_measured;
  double forward = 0;                   ///< one micro-step (s)
  std::vector<double> tensor_backward;  ///< one micro-step, per tensor (s), gradient-ready order
  std::vector<std::string> tensor_names;
  std::vector<Bucket> buckets;
  std::vector<BucketComm> comm;  ///< per bucket
  double optimizer = 0;
  bool ddp_overheads = false;           ///< the terms below are on
  std::vector<double> tensor_copy_in;   ///< per tensor: copy into its bucket (s), empty when off
  std::vector<double> bucket_copy_out;  ///< per bucket: copy back to the gradients (s), empty when off
  std::vector<double> bucket_launch;    ///< per bucket: launches before its first step (s), empty when off
  /// per tensor: DDP's host work on the autograd thread after it (s): at a
  /// bucket's last tensor, h x the bucket's collectives (FittedConstants::
  /// host_per_collective), else 0; empty when off
  std::vector<double> tensor_host;
  double fixed_work = 0;              ///< per iteration: zero_grad + optimizer launches (s)
  double input_time = 0;              ///< b x k / workload.input_rate (s), 0 when unbounded
  double compute_jitter = 0;          ///< cv of one rank's micro-step compute (stragglers.hpp)
  std::string compute_jitter_source;  ///< where cv comes from ("" when 0 by default)
  /// cv is FittedConstants::rank_jitter: the band's residuals (term c) hold
  /// its spread, so term (b) is left out
  bool compute_jitter_fitted = false;
  std::vector<double> bucket_sync_delay;  ///< per bucket: D_b (s), empty when no stragglers
  double compute_spread = 0;              ///< relative measured spread of the compute rate (band term a)
  std::string compute_spread_source;      ///< where it comes from ("" when none)
  ModelResiduals residuals;               ///< validation residuals (band term c); zero when not loaded
  double error_feedback_bytes = 0;        ///< per GPU, all buckets
  double state_bytes = 0;                 ///< per GPU, all buckets (PowerSGD P, Q)
  double wire_bytes_per_gpu = 0;          ///< sent by one GPU per iteration
  double backward() const;                ///< sum of tensor_backward
  /// The time before the simulated micro-step that is known before it runs:
  /// (k-1)(F + B), the micro-steps under no_sync; 0 when every micro-step
  /// synchronizes (finish_result places k-1 copies of the simulated one there).
  double folded() const { return sync_every_micro_step ? 0.0 : (accumulation - 1) * (forward + backward()); }
  /// Micro-steps per iteration that synchronize: k without no_sync, else 1.
  int synchronizing_micro_steps() const { return sync_every_micro_step ? accumulation : 1; }
  double global_batch() const { return static_cast<double>(micro_batch) * accumulation * world_size; }
};

/// Default fraction of the profile's GEMM rate reached by a whole training step
/// of `model` computing in `compute_precision` (docs/model.md, "Compute
/// efficiency"): for models without a sequence length (convolutional
/// networks) 0.69 in fp32, which runs on the CUDA cores, and 0.25 in the
/// tensor-core precisions (tf32, fp16, bf16, amp-*); 0.5 for sequence models
/// (transformers). From published training throughput, not measurements of
/// the user's job; a scenario overrides them with workload.compute_efficiency.
double default_compute_efficiency(const ModelDesc& model, const std::string& compute_precision);

/// Builds the plan. With `measured` (already checked against the model and
/// workload, its tensors in the model's order), the forward time, the
/// per-tensor backward times and the optimizer step (unless the scenario
/// gives step_time) come from it instead of FLOPs / (efficiency x rate).
/// Throws std::invalid_argument (unknown compressor, optimizer or algorithm)
/// and whatever the codec cost function throws.
IterationPlan plan_iteration(const WorkloadSpec& workload, const ClusterSpec& cluster, const ModelDesc& model,
                             const DeviceCosts& costs, const MeasuredCompute* measured = nullptr);

/// A scenario made ready to evaluate: its cluster with the profile-derived
/// parts resolved (resolve_cluster) and its iteration plan.
struct PreparedIteration {
  ClusterSpec cluster;
  IterationPlan plan;
};

/// Scenario + model + profile -> cluster and plan: the one path both the
/// SimGrid replay (simulate_iteration) and the closed form
/// (closed_form_iteration) take. Bad input (no workload, unknown compressor
/// or optimizer, a codec or GEMM rate the profile lacks) throws gw::InputError
/// naming the file and key.
PreparedIteration prepare_iteration(const Scenario& scenario, const ModelDesc& model, const Profile& profile);
/// device_costs() for a scenario with a workload; a GEMM rate the profile
/// lacks throws gw::InputError at workload.compute_precision (file:line:column)
/// when the scenario gives it, else at the profile's gemm_flops; its
/// codec_time throws gw::InputError at the profile's codecs.NAME for a codec
/// the profile lacks.
DeviceCosts scenario_device_costs(const Scenario& scenario, const Profile& profile);

/// "datasheet-derived" or "measured on DEVICE, DATE (HOST)".
std::string profile_detail(const Profile& profile);
/// Names a result after what it was computed from: the scenario's name, the
/// profile's name, source and detail.
void label_result(IterationResult& result, const Scenario& scenario, const Profile& profile);

// --- Results ----------------------------------------------------------------

struct StepTiming {
  std::string label;
  CommStep::Kind kind = CommStep::Kind::Collective;
  double start = 0, end = 0;
  double bytes = 0;  ///< collectives: nccl-tests size
  /// On a stream of its own beside the comm stream (a PyTorch hook's `then`
  /// work after its last collective; BucketComm::on_side_stream).
  bool side_stream = false;
};

struct BucketTiming {
  int index = 0;
  int tensors = 0;
  std::int64_t elements = 0;
  double bytes = 0;  ///< uncompressed gradient bytes
  double wire_bytes_per_gpu = 0;
  double ready = 0, start = 0, end = 0;              ///< iteration timeline (s)
  double encode = 0, decode = 0, communication = 0;  ///< durations (s)
  std::vector<StepTiming> steps;
};

/// The predicted iteration. Times are on one timeline starting at 0; the
/// first accumulation-1 micro-steps occupy [0, folded) and are not simulated
/// (without no_sync each is a copy of the simulated one).
struct IterationResult {
  std::string scenario, model, compression, compute_precision, allreduce_algorithm;
  std::string profile_name, profile_source, profile_detail;  ///< detail: "datasheet-derived" or "measured on ..."
  std::string method;                                        ///< "simulation" or "closed form"
  std::string sharding;  ///< workload.sharding "scheme (framework)"; empty under DDP (sharded_iteration.hpp)
  int world_size = 1, micro_batch = 1, accumulation = 1;
  bool sync_every_micro_step = false;  ///< workload.no_sync false with k > 1
  bool overlap = true;
  /// A hook held the host until its bucket's steps ended (BucketComm::
  /// blocks_host): its codec steps off the compute stream overlap nothing.
  bool hook_blocks_host = false;
  double interference = 0;        ///< compute slow-down under NCCL
  double interference_codec = 0;  ///< compute slow-down under a codec
  double codec_interference = 0;  ///< codec slow-down while the backward runs
  std::string interference_source;
  std::vector<std::string> measured_collectives;  ///< IterationPlan::measured_collectives
  double overlapped_compute = 0;                  ///< backward time that started beside communication (s)
  double compute_efficiency = 1;
  bool compute_efficiency_default = true;
  std::string compute_measured;  ///< "measured on DEVICE, DATE", or empty (FLOPs / efficiency x rate)
  double global_batch = 0;
  double forward = 0, backward = 0;  ///< all micro-steps
  double encode = 0, decode = 0;     ///< codec work on the comm stream (may be hidden)
  /// From the end of the backward pass to the end of the last bucket, plus
  /// the time blocking hooks held the backward (host_blocked).
  double exposed_communication = 0;
  double optimizer = 0;
  bool ddp_overheads = false;
  double bucket_copy_in = 0;     ///< copies into buckets on the autograd thread (on the compute timeline)
  double bucket_host = 0;        ///< DDP's per-bucket host work on the autograd thread (IterationPlan::tensor_host)
  double bucket_copy_out = 0;    ///< exposed copy-out: from the later of backward end and last bucket to the optimizer
  double collective_launch = 0;  ///< launches on the comm stream, all buckets (may be hidden)
  double fixed_work = 0;         ///< per-iteration fixed work after the optimizer
  double input_wait = 0;         ///< waiting for the input pipeline: max(0, b k / rate - the rest)
  double compute_jitter = 0;     ///< cv of one rank's micro-step compute
  std::string compute_jitter_source;
  double straggler_wait = 0;           ///< expected wait for the slowest rank at the last synchronization
  double total = 0;                    ///< the prediction: the band's median
  double band_low = 0, band_high = 0;  ///< the band around total (docs/model.md, "The band")
  BandTerms band;                      ///< what the band is made of
  double compute_spread = 0;           ///< band term (a)'s relative spread
  std::string compute_spread_source;
  double residual_low = 0, residual_high = 0;  ///< band term (c)'s quantiles
  int residual_cases = 0;
  double samples_per_second = 0;
  double wire_bytes_per_gpu = 0;
  double error_feedback_bytes = 0, state_bytes = 0;
  double folded = 0;  ///< the k-1 micro-steps before the simulated one, added analytically
  double forward_start = 0, backward_start = 0, backward_end = 0, optimizer_start = 0;
  std::vector<std::string> tensor_names;
  /// Backward end of each tensor in the synchronizing micro-step; at a
  /// blocking hook's bucket (BucketComm::blocks_host), the end of the wait.
  std::vector<double> tensor_end;
  std::vector<BucketTiming> buckets;
  long simulated_activities = 0;  ///< sleeps and collectives the actors ran (0 for closed form)
  int simulated_actors = 0;
};

/// Collective duration for one step (closed-form network model).
using CollectiveTimeFn = std::function<double(const CommStep& step)>;

/// What the comm stream of `result` runs at time s (its first `buckets`
/// buckets): a codec step, a collective or the bucket's launches, or nothing;
/// with overlap a bucket that becomes ready at s has not started. The closed
/// form and the band use it; the replay tracks it as it runs.
CommActivity comm_activity_at(const IterationResult& result, std::size_t buckets, double s, bool overlap);
/// Codec work on a side stream (StepTiming::side_stream) at time s among the
/// first `buckets` buckets: Codec or Idle. comm_activity_at falls back on it
/// when the comm stream is idle.
CommActivity side_stream_activity(const IterationResult& result, std::size_t buckets, double s);
/// Host work on the autograd thread after tensor j's backward kernel, on the
/// compute timeline (neither evaluator slows it by interference): DDP's
/// copy into the bucket (tensor_copy_in) plus, at a bucket's last tensor,
/// its per-bucket host work (tensor_host).
double autograd_host_work(const IterationPlan& plan, std::size_t j);
/// The compute slow-down for an activity: interference, interference_codec or 0.
double interference_at(const IterationPlan& plan, CommActivity activity);
/// Seconds of a codec step that starts while the backward runs (beside
/// compute): seconds x (1 + plan.codec_interference); otherwise seconds.
double codec_step_seconds(const IterationPlan& plan, double seconds, bool beside_compute);
/// Marks the steps of each bucket of `result` that ran on a side stream
/// (the plan's BucketComm::on_side_stream last steps).
void mark_side_streams(const IterationPlan& plan, IterationResult& result);

/// Evaluates the plan with the closed forms above. Interference: a tensor's
/// backward that starts while the comm stream runs a collective (or its
/// launches) takes (1 + interference) times as long, while it runs a codec
/// (1 + interference_codec) (the same tensor-granularity rule as the replay);
/// a codec step that starts before the backward's end takes
/// (1 + codec_interference) times as long. PyTorch hooks' steps run where
/// BucketComm places them: before the first collective on the compute stream
/// at the bucket's last tensor (the bucket is ready after them), after the
/// last collective on a side stream that does not hold the comm stream. A
/// hook that blocks the host (BucketComm::blocks_host) holds the backward's
/// next tensor, and the next bucket, until its bucket's last step ends.
IterationResult evaluate_closed_form(const IterationPlan& plan, const CollectiveTimeFn& collective_time);

/// Moves every time of r's timeline (forward, backward, tensors, buckets and
/// their steps) on by dt seconds.
void shift_timeline(IterationResult& r, double dt);

/// Seconds the hooks held the host during the backward (BucketComm::
/// blocks_host): the sum over buckets of the end of the bucket's last tensor
/// (after the wait) less the bucket's ready time; 0 for the other hooks.
/// finish_result counts them as exposed communication, not backward.
double host_blocked(const IterationPlan& plan, const IterationResult& result);

/// Fills the totals of a result (forward, backward, exposed communication,
/// total, samples/s, ...) from its timeline and the plan. Used by both the
/// closed form and the replay so they cannot drift.
void finish_result(const IterationPlan& plan, IterationResult& result);
/// The band of a finished result (finish_result calls it): the jitter and
/// spread it comes from, its terms, low and high around total.
void finish_band(const IterationPlan& plan, IterationResult& result);

}  // namespace gw
