// Measured compute (schema gradwire-compute/1): one model's forward pass,
// per-tensor gradient-ready times, backward pass and optimizer step timed on
// one real device at one micro-batch and precision (`gradwire model measure`,
// bridge/gradwire_torch/measure.py). A scenario names such a document with
// `workload.compute: FILE`; prepare_iteration() then takes the forward time,
// each tensor's backward share and the optimizer step from it instead of
// FLOPs / (compute_efficiency x GEMM rate) (docs/model.md, "Measured compute").
//
// The document must match the scenario: the same model (name and parameter
// count), micro-batch, gradient precision, the same set of tensor names, and
// the optimizer when the document has one. A mismatch is an input error
// (exit 2), never a silent fallback. Plain C++, no SimGrid.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gw {

inline constexpr const char* kComputeSchema = "gradwire-compute/1";

/// One timed quantity over the repeats: the median and the interquartile
/// range (75th - 25th percentile), in seconds.
struct Timing {
  double median = 0;
  double spread = 0;
};

struct MeasuredTensor {
  std::string name;
  Timing ready;  ///< from the start of the backward pass to this gradient's post-accumulate hook
};

struct MeasuredCompute {
  std::string path;  ///< the file it was loaded from
  std::string device, date, host;
  std::string tool;                         ///< e.g. "gradwire model measure"
  std::string torch_version, cuda_version;  ///< cuda_version empty on the CPU
  std::string timer;                        ///< "cuda-events" or "perf-counter"
  std::string model;
  std::int64_t parameters = 0;
  int micro_batch = 1;
  std::int64_t sequence_length = 0;  ///< tokens per sample of a sequence model, else 0
  std::string compute_precision;     ///< fp32, tf32, fp16, bf16, amp-fp16, amp-bf16
  std::string gradient_precision;    ///< fp32, bf16, fp16 (the parameters' gradients)
  int repeats = 0, warmup = 0;
  Timing forward;
  Timing backward;                      ///< the whole backward pass (>= the last tensor's ready time)
  std::vector<MeasuredTensor> tensors;  ///< gradient-ready order, ready medians non-decreasing
  std::string optimizer;                ///< empty when not measured
  Timing optimizer_step;
  std::optional<Timing> bucket_copy;    ///< copying all gradients into flat buckets and back (recorded)
  std::optional<Timing> hook_dispatch;  ///< one DDP comm-hook call returning a completed future (recorded)
  /// Local work of PyTorch's DDP communication hooks at the model's shapes,
  /// by hook name (fp16_compress, bf16_compress, powersgd_rank4, ...): recorded
  /// for the compression implementation, not used by simulate yet.
  std::vector<std::pair<std::string, Timing>> comm_hooks;

  /// "measured on DEVICE, DATE": what the outputs print.
  std::string label() const;
};

/// Loads and checks a measured-compute document. Errors (gw::InputError):
/// file, line, column and key of the first problem.
MeasuredCompute load_measured_compute(const std::string& path);
/// The document as YAML that load_measured_compute reads back (round trip).
std::string measured_compute_yaml(const MeasuredCompute& m);

struct ModelDesc;
struct WorkloadSpec;

/// Checks that `m` was measured for this model and workload (model name,
/// parameter count and sequence length, micro-batch, gradient precision, tensor names, optimizer
/// when measured). Throws std::invalid_argument naming the first mismatch.
void check_measured_matches(const MeasuredCompute& m, const ModelDesc& model, const WorkloadSpec& workload);

/// Per-tensor backward durations in the document's ready order: ready_j -
/// ready_{j-1}, the last one also taking the backward pass's remainder after
/// the last gradient (so they add up to the measured backward).
std::vector<double> measured_tensor_backward(const MeasuredCompute& m);

}  // namespace gw
