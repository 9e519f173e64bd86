#include "gradwire/model/iteration_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "gradwire/model/closed_form.hpp"
#include "gradwire/model/measured_compute.hpp"

namespace gw {

double optimizer_bytes_per_parameter(const std::string& kind, double e) {
  int states = 0;
  bool norms = false;
  if (kind == "sgd") {
    states = 0;
  } else if (kind == "momentum") {
    states = 1;
  } else if (kind == "lars") {
    states = 1;
    norms = true;
  } else if (kind == "adam" || kind == "adamw") {
    states = 2;
  } else if (kind == "lamb") {
    states = 2;
    norms = true;
  } else {
    throw std::invalid_argument("unknown optimizer '" + kind + "' (expected sgd, momentum, adam, adamw, lamb or lars)");
  }
  return 3 * e + 8.0 * states + (norms ? e + 8 : 0);
}

double optimizer_step_time(const OptimizerSpec& optimizer, std::int64_t parameters, double e, double copy_bandwidth) {
  if (optimizer.step_time) return *optimizer.step_time;
  const double bytes = static_cast<double>(parameters) * optimizer_bytes_per_parameter(optimizer.kind, e);
  if (!(copy_bandwidth > 0))
    throw std::invalid_argument("the profile has no copy bandwidth: give workload.optimizer.step_time");
  return bytes / copy_bandwidth;
}

namespace {
FittedConstants& active_fitted_constants() {
  static FittedConstants active = kFittedConstants;
  return active;
}
}  // namespace

const FittedConstants& fitted_constants() { return active_fitted_constants(); }

ScopedFittedConstants::ScopedFittedConstants(const FittedConstants& values) : saved_(active_fitted_constants()) {
  active_fitted_constants() = values;
}

ScopedFittedConstants::~ScopedFittedConstants() { active_fitted_constants() = saved_; }

double IterationPlan::backward() const {
  double b = 0;
  for (double t : tensor_backward) b += t;
  return b;
}

double default_compute_efficiency(const ModelDesc& model, const std::string& compute_precision) {
  if (model.sequence_length > 0) return 0.5;
  // fp32 convolutions run on the CUDA cores at close to the (low) fp32 GEMM
  // rate; on tensor cores they reach a quarter of a much higher one.
  return compute_precision == "fp32" ? 0.69 : 0.25;
}

namespace {

/// Where a fitted constant's value is documented.
constexpr const char* kFittedSource = "fitted on the devset (docs/validation.md)";

/// Forward, per-tensor backward and optimizer from FLOPs / (efficiency x GEMM rate).
void plan_compute_from_flops(IterationPlan& p, const WorkloadSpec& w, const ModelDesc& model,
                             const DeviceCosts& costs) {
  p.compute_efficiency_default = !w.compute_efficiency.has_value();
  p.compute_efficiency = w.compute_efficiency.value_or(default_compute_efficiency(model, costs.compute_precision));
  const double mb = w.micro_batch;
  const double rate = costs.flops * p.compute_efficiency;
  p.forward = model.forward_flops_per_sample * mb / rate;
  const double backward = model.backward_flops_per_sample * mb / rate;
  const auto shares = backward_shares(model);
  p.tensor_backward.reserve(shares.size());
  for (std::size_t j = 0; j < shares.size(); ++j) {
    p.tensor_backward.push_back(backward * shares[j]);
    p.tensor_names.push_back(model.tensors[j].name);
  }
}

/// Forward, per-tensor backward (ready_j - ready_{j-1}) and the measured
/// optimizer step from a measured-compute document; the efficiency is what the
/// measurement reaches of the GEMM rate (reported, not used).
void plan_compute_measured(IterationPlan& p, const ModelDesc& model, const DeviceCosts& costs,
                           const MeasuredCompute& m) {
  p.compute_precision = m.compute_precision;
  p.compute_measured = m.label();
  p.forward = m.forward.median;
  p.tensor_backward = measured_tensor_backward(m);
  for (const auto& t : m.tensors) p.tensor_names.push_back(t.name);
  const double flops = (model.forward_flops_per_sample + model.backward_flops_per_sample) * m.micro_batch;
  p.compute_efficiency = flops / ((p.forward + m.backward.median) * costs.flops);
  p.compute_efficiency_default = false;
}

/// DDP's own overheads (docs/model.md, "DDP overheads"). Seconds per byte
/// copied in one direction: 2 / copy_bandwidth (read + write), or from the
/// measured document's bucket_copy (all gradients in and back).
void plan_ddp_overheads(IterationPlan& p, const WorkloadSpec& w, const ModelDesc& model, double e,
                        const DeviceCosts& costs, const MeasuredCompute* measured, bool optimizer_derived) {
  p.ddp_overheads = true;
  double gradient_bytes = 0;
  for (const auto& t : model.tensors) gradient_bytes += static_cast<double>(t.numel) * e;
  double per_byte = 0;
  if (!w.gradient_as_bucket_view) {
    if (measured && measured->bucket_copy && gradient_bytes > 0) {
      per_byte = measured->bucket_copy->median / (2 * gradient_bytes);
    } else {
      if (!(costs.copy_bandwidth > 0))
        throw std::invalid_argument("the profile has no copy bandwidth for DDP's bucket copies");
      per_byte = 2 / costs.copy_bandwidth;
    }
  }
  for (const auto& t : model.tensors) p.tensor_copy_in.push_back(static_cast<double>(t.numel) * e * per_byte);
  p.tensor_host.assign(model.tensors.size(), 0.0);
  for (std::size_t b = 0; b < p.buckets.size(); ++b) {
    p.bucket_copy_out.push_back(p.buckets[b].bytes * per_byte);
    int launches = 0;
    for (const auto& s : p.comm[b].steps) launches += s.kind == CommStep::Kind::Collective ? 1 : 0;
    p.bucket_launch.push_back(launches * kKernelLaunchSeconds);
    // The autograd thread's part (Reducer::mark_bucket_ready -> all_reduce_bucket
    // -> run_comm_hook -> ProcessGroupNCCL), before the next tensor's kernel.
    if (p.world_size > 1) p.tensor_host.at(p.buckets[b].last_tensor) += launches * costs.fitted.host_per_collective;
  }
  p.fixed_work = optimizer_derived ? static_cast<double>(model.tensors.size()) * kKernelLaunchSeconds : 0.0;
}

/// Interference (docs/model.md, section 7): workload.interference for both
/// compute slow-downs when given; else the profile's measured figures (the
/// run's own codec's where the profile has them); else the devset's fitted
/// value for both (FittedConstants::compute_under_nccl); else 0, with the
/// published upper end feeding the band.
void plan_interference(IterationPlan& p, const WorkloadSpec& w, const DeviceCosts& costs) {
  const InterferenceFigures m = costs.interference.for_codec(gradwire_codec_of(w.compression));
  p.codec_interference = m.codec_under_compute.value_or(0.0);
  if (w.interference) {
    p.interference = p.interference_codec = *w.interference;
    p.interference_source = "workload.interference";
  } else if (m.compute_under_nccl || m.compute_under_codec) {
    p.interference = m.compute_under_nccl.value_or(0.0);
    p.interference_codec = m.compute_under_codec.value_or(p.interference);
    p.interference_source = "profile (measured)";
  } else if (costs.fitted.compute_under_nccl > 0 && p.world_size > 1) {
    p.interference = p.interference_codec = costs.fitted.compute_under_nccl;
    p.interference_source = kFittedSource;
  } else {
    p.interference_range_high = kInterferenceRangeHigh;
    p.interference_source = "not measured: 0, band to 0.4 (Lee et al. 2025)";
  }
}

/// Collectives measured on the cluster (docs/model.md): a collective step
/// whose op the profile measured on exactly the cluster's shape (its GPU and
/// node counts) takes the measured time at its bytes, as nccl-tests counts
/// them (MeasuredCollective::seconds: the curve within the measured sizes,
/// beyond them the closed form joined to it at the nearer end), under
/// NCCL's choice and under any pin NCCL accepts (nccl_accepts: the
/// measurement already is NCCL's choice); gradwire's own hierarchical
/// schedule keeps the model. The label says which collectives, and how many
/// steps fell outside the measured sizes.
void plan_measured_collectives(IterationPlan& p, const ClusterSpec& cluster, const DeviceCosts& costs) {
  if (p.world_size < 2 || costs.cluster_collectives.empty()) return;
  const CollectiveTimeFn model = closed_form_collective_time(cluster);
  const NcclShape shape = collective_shape(cluster, p.world_size);
  for (const CollectiveOp op : {CollectiveOp::AllReduce, CollectiveOp::AllGather}) {
    const MeasuredCollective* m = measured_collective_for(costs.cluster_collectives, op, cluster, p.world_size);
    if (!m) continue;
    const CommOp comm_op = op == CollectiveOp::AllGather ? CommOp::AllGather : CommOp::AllReduce;
    int steps = 0, outside = 0;
    for (auto& bc : p.comm) {
      for (auto& s : bc.steps) {
        if (s.kind != CommStep::Kind::Collective || s.op != comm_op) continue;
        const Algorithm a = op == CollectiveOp::AllGather ? Algorithm::Auto : parse_algorithm(s.algorithm);
        if (!nccl_accepts(op, a, Protocol::Auto, cluster, shape)) continue;
        const CommStep step = s;
        s.measured_seconds = m->seconds(s.bytes, [&](double bytes) {
          CommStep at = step;
          at.bytes = bytes;
          return model(at);
        });
        ++steps;
        outside += m->in_range(s.bytes) ? 0 : 1;
      }
    }
    if (steps == 0) continue;
    std::string label = m->label();
    if (outside > 0)
      label += " (" + std::to_string(outside) + " of " + std::to_string(steps) + " steps outside the measured " +
               m->range() + ": the model, joined to the curve's end)";
    p.measured_collectives.push_back(std::move(label));
  }
}

/// Interquartile range of a normal / its standard deviation: 2 Phi^-1(0.75).
constexpr double kIqrPerSigma = 1.3489795003921634;

/// Stragglers and band term (a) (docs/model.md, "Stragglers", "The band"):
/// cv given, else from the measured document's forward and backward IQRs
/// (sigma = IQR / 1.349, the two independent), else the devset's fitted
/// FittedConstants::rank_jitter (more than one rank), else 0; the collective of
/// bucket b waits D_b for the slowest rank. The measured spread of the GEMM
/// rate (compute from FLOPs only) feeds the band.
void plan_stragglers(IterationPlan& p, const WorkloadSpec& w, const DeviceCosts& costs,
                     const MeasuredCompute* measured) {
  const double step = p.forward + p.backward();
  if (w.compute_jitter) {
    p.compute_jitter = *w.compute_jitter;
    p.compute_jitter_source = "workload.compute_jitter";
  } else if (measured && step > 0) {
    p.compute_jitter = std::hypot(measured->forward.spread, measured->backward.spread) / kIqrPerSigma / step;
    p.compute_jitter_source = "measured compute: forward and backward interquartile ranges / 1.349";
  } else if (costs.fitted.rank_jitter > 0 && p.world_size > 1) {
    p.compute_jitter = costs.fitted.rank_jitter;
    p.compute_jitter_source = kFittedSource;
    p.compute_jitter_fitted = true;
  }
  if (!measured && costs.flops_spread > 0) {
    p.compute_spread = costs.flops_spread;
    p.compute_spread_source = "profile: repeats' range of the " + gemm_rate_of(p.compute_precision) + " GEMM rate";
  }
  if (!(p.compute_jitter > 0) || p.world_size <= 1) return;
  std::vector<double> ready(p.buckets.size());
  std::vector<double> cumulative(p.tensor_backward.size());
  double t = p.forward;
  for (std::size_t j = 0; j < cumulative.size(); ++j) cumulative[j] = t += p.tensor_backward[j];
  for (std::size_t b = 0; b < ready.size(); ++b) ready[b] = cumulative.at(p.buckets[b].last_tensor);
  // Each synchronization waits for the slowest rank's compute since the last
  // one: k micro-steps under no_sync, one without it.
  const int since_last_sync = p.sync_every_micro_step ? 1 : p.accumulation;
  p.bucket_sync_delay = straggler_delays(p.compute_jitter, p.world_size, since_last_sync, step, ready);
  // A hook that blocks the host (PowerSGD's synchronize) has every rank at
  // the slowest one's time when it returns: a later bucket waits only for
  // the spread of the compute since.
  const double mu = expected_max_normal(p.world_size);
  double synced = -1;
  for (std::size_t b = 0; b < ready.size(); ++b) {
    if (synced >= 0) p.bucket_sync_delay[b] = p.compute_jitter * mu * (ready[b] - synced);
    if (p.comm[b].blocks_host) synced = ready[b];
  }
}

}  // namespace

IterationPlan plan_iteration(const WorkloadSpec& w, const ClusterSpec& cluster, const ModelDesc& model,
                             const DeviceCosts& costs, const MeasuredCompute* measured) {
  if (!(costs.flops > 0)) throw std::invalid_argument("compute rate must be positive");
  if (w.micro_batch < 1 || w.accumulation < 1) throw std::invalid_argument("micro_batch and accumulation must be >= 1");
  IterationPlan p;
  p.model = model.name;
  p.compression = w.compression.kind;
  p.compute_precision = costs.compute_precision;
  p.allreduce_algorithm = resolve_allreduce_algorithm(w.allreduce_algorithm, cluster);
  p.world_size = cluster.world_size();
  p.micro_batch = w.micro_batch;
  p.accumulation = w.accumulation;
  p.sync_every_micro_step = !w.no_sync && w.accumulation > 1;
  p.overlap = w.overlap;
  plan_interference(p, w, costs);
  if (measured) {
    plan_compute_measured(p, model, costs, *measured);
  } else {
    plan_compute_from_flops(p, w, model, costs);
  }
  const double e = bytes_per_element(w.precision);
  p.buckets = assign_buckets(model, e, w.first_bucket_size, w.bucket_size);
  // A PyTorch hook's kernels are launched from Python (kPythonOpSeconds).
  const HookCosts hook{costs.copy_bandwidth, costs.gradient_gemm_flops > 0 ? costs.gradient_gemm_flops : costs.flops,
                       kKernelLaunchSeconds + kPythonOpSeconds};
  for (const auto& b : p.buckets) {
    auto c = plan_bucket_comm(w.compression, model, b, e, cluster, p.allreduce_algorithm, costs.codec_time, hook);
    p.error_feedback_bytes += c.error_feedback_bytes;
    p.state_bytes += c.state_bytes;
    for (const auto& s : c.steps)
      if (s.kind == CommStep::Kind::Collective)
        c.wire_bytes_per_gpu += sent_bytes_per_gpu(s.op, s.algorithm, s.bytes, cluster);
    p.wire_bytes_per_gpu += c.wire_bytes_per_gpu;
    p.comm.push_back(std::move(c));
  }
  plan_measured_collectives(p, cluster, costs);
  const bool optimizer_measured = measured && !w.optimizer.step_time && !measured->optimizer.empty();
  if (optimizer_measured) {
    p.optimizer = measured->optimizer_step.median;
  } else {
    p.optimizer = optimizer_step_time(w.optimizer, model.parameters, e, costs.copy_bandwidth);
  }
  if (w.input_rate) p.input_time = w.micro_batch * static_cast<double>(w.accumulation) / *w.input_rate;
  if (w.ddp_overheads)
    plan_ddp_overheads(p, w, model, e, costs, measured, !optimizer_measured && !w.optimizer.step_time);
  plan_stragglers(p, w, costs, measured);
  return p;
}

CommActivity side_stream_activity(const IterationResult& r, std::size_t buckets, double s) {
  for (std::size_t b = 0; b < buckets && b < r.buckets.size(); ++b)
    for (const auto& st : r.buckets[b].steps)
      if (st.side_stream && st.start <= s && s < st.end) return CommActivity::Codec;
  return CommActivity::Idle;
}

CommActivity comm_activity_at(const IterationResult& r, std::size_t buckets, double s, bool overlap) {
  for (std::size_t b = 0; b < buckets && b < r.buckets.size(); ++b) {
    const auto& bt = r.buckets[b];
    // A bucket that becomes ready exactly now has not started yet when the
    // compute stream launches its next tensor.
    const bool starting_now = overlap && bt.start == s && bt.ready == s;
    // The comm stream holds the bucket from its start to its last step off
    // the side stream (steps before the start ran on the compute stream).
    double stream_end = bt.end;
    bool side = false;
    for (const auto& st : bt.steps) side = side || st.side_stream;
    if (side) {
      stream_end = bt.start;
      for (const auto& st : bt.steps)
        if (!st.side_stream) stream_end = std::max(stream_end, st.end);
    }
    if (!(bt.start <= s && s < stream_end) || starting_now) continue;
    for (const auto& st : bt.steps)
      if (!st.side_stream && st.kind != CommStep::Kind::Collective && st.start <= s && s < st.end)
        return CommActivity::Codec;
    return CommActivity::Collective;  // a collective or the bucket's launches
  }
  return side_stream_activity(r, buckets, s);
}

double codec_step_seconds(const IterationPlan& plan, double seconds, bool beside_compute) {
  return beside_compute ? seconds * (1 + plan.codec_interference) : seconds;
}

void mark_side_streams(const IterationPlan& plan, IterationResult& r) {
  for (std::size_t b = 0; b < r.buckets.size() && b < plan.comm.size(); ++b) {
    auto& steps = r.buckets[b].steps;
    const std::size_t side = std::min(plan.comm[b].on_side_stream, steps.size());
    for (std::size_t i = 0; i < steps.size(); ++i) steps[i].side_stream = i >= steps.size() - side;
  }
}

double autograd_host_work(const IterationPlan& plan, std::size_t j) {
  return (j < plan.tensor_copy_in.size() ? plan.tensor_copy_in[j] : 0.0) +
         (j < plan.tensor_host.size() ? plan.tensor_host[j] : 0.0);
}

double interference_at(const IterationPlan& plan, CommActivity a) {
  if (a == CommActivity::Collective) return plan.interference;
  return a == CommActivity::Codec ? plan.interference_codec : 0.0;
}

namespace {

/// Backward time of the synchronizing micro-step whose tensors started while
/// the comm stream was busy (what interference slows).
double overlapped_compute(const IterationResult& r, bool overlap) {
  double sum = 0, start = r.backward_start;
  for (double end : r.tensor_end) {
    if (comm_activity_at(r, r.buckets.size(), start, overlap) != CommActivity::Idle) sum += end - start;
    start = end;
  }
  return sum;
}

}  // namespace

void shift_timeline(IterationResult& r, double dt) {
  r.forward_start += dt;
  r.backward_start += dt;
  r.backward_end += dt;
  for (auto& t : r.tensor_end) t += dt;
  for (auto& b : r.buckets) {
    b.ready += dt;
    b.start += dt;
    b.end += dt;
    for (auto& s : b.steps) {
      s.start += dt;
      s.end += dt;
    }
  }
}

namespace {

// Without no_sync: the k-1 micro-steps before the simulated one each ran as
// it did, from its forward to the end of its copy-out (`copy_out_end`).
// Moves the timeline after them, multiplies the per-micro-step terms of the
// critical path by k and returns the moved copy_out_end.
double repeat_synchronizing_micro_step(const IterationPlan& plan, IterationResult& r, double copy_out_end) {
  const double k = plan.accumulation;
  r.folded = (k - 1) * (copy_out_end - r.forward_start);
  shift_timeline(r, r.folded);
  r.encode *= k;
  r.decode *= k;
  r.collective_launch *= k;
  r.straggler_wait *= k;
  r.exposed_communication *= k;
  r.bucket_copy_out *= k;
  return copy_out_end + r.folded;
}

}  // namespace

void finish_band(const IterationPlan& plan, IterationResult& r) {
  r.compute_jitter = plan.compute_jitter;
  r.compute_jitter_source = plan.compute_jitter_source;
  r.compute_spread = plan.compute_spread;
  r.compute_spread_source = plan.compute_spread_source;
  r.residual_low = plan.residuals.low;
  r.residual_high = plan.residuals.high;
  r.residual_cases = plan.residuals.cases;
  // A fitted cv's spread is in the residuals (term c) already.
  r.band = band_terms(r.total, r.forward + r.backward, plan.compute_spread,
                      plan.compute_jitter_fitted ? 0.0 : plan.compute_jitter, plan.world_size, plan.accumulation,
                      plan.forward + plan.backward(), plan.residuals);
  r.overlapped_compute = plan.synchronizing_micro_steps() * overlapped_compute(r, plan.overlap);
  r.band.interference_high = r.overlapped_compute * plan.interference_range_high;
  band_bounds(r.total, r.band, r.band_low, r.band_high);
}

double host_blocked(const IterationPlan& plan, const IterationResult& r) {
  double blocked = 0;
  for (std::size_t b = 0; b < r.buckets.size() && b < plan.buckets.size(); ++b) {
    const std::size_t last = plan.buckets[b].last_tensor;
    if (last < r.tensor_end.size()) blocked += std::max(0.0, r.tensor_end[last] - r.buckets[b].ready);
  }
  return blocked;
}

void finish_result(const IterationPlan& plan, IterationResult& r) {
  mark_side_streams(plan, r);
  r.model = plan.model;
  r.compression = plan.compression;
  r.compute_precision = plan.compute_precision;
  r.allreduce_algorithm = plan.allreduce_algorithm;
  r.world_size = plan.world_size;
  r.micro_batch = plan.micro_batch;
  r.accumulation = plan.accumulation;
  r.sync_every_micro_step = plan.sync_every_micro_step;
  r.overlap = plan.overlap;
  r.hook_blocks_host =
      std::any_of(plan.comm.begin(), plan.comm.end(), [](const BucketComm& c) { return c.blocks_host; });
  r.interference = plan.interference;
  r.interference_codec = plan.interference_codec;
  r.codec_interference = plan.codec_interference;
  r.interference_source = plan.interference_source;
  r.measured_collectives = plan.measured_collectives;
  r.compute_efficiency = plan.compute_efficiency;
  r.compute_efficiency_default = plan.compute_efficiency_default;
  r.compute_measured = plan.compute_measured;
  r.global_batch = plan.global_batch();
  const double k = plan.accumulation;
  // n: the micro-steps that run as the simulated one (all k without no_sync,
  // else 1; the k-1 others run forward and a clean backward under no_sync).
  const double n = plan.synchronizing_micro_steps();
  r.forward = k * plan.forward;
  r.ddp_overheads = plan.ddp_overheads;
  r.bucket_copy_in = r.bucket_host = 0;
  for (double c : plan.tensor_copy_in) r.bucket_copy_in += c;
  for (double h : plan.tensor_host) r.bucket_host += h;
  const double blocked = host_blocked(plan, r);
  const double backward_span = r.backward_end - r.backward_start - blocked - r.bucket_host;
  r.backward = plan.sync_every_micro_step ? k * (backward_span - r.bucket_copy_in)
                                          : (k - 1) * plan.backward() + backward_span - r.bucket_copy_in;
  r.bucket_copy_in *= n;
  r.bucket_host *= n;
  r.encode = r.decode = r.collective_launch = 0;
  double comm_end = r.backward_end;
  double copy_out_end = r.backward_end;  // copy-out: bucket by bucket after its collective
  for (std::size_t b = 0; b < r.buckets.size(); ++b) {
    auto& bt = r.buckets[b];
    const auto& bk = plan.buckets.at(b);
    bt.index = bk.index;
    bt.tensors = static_cast<int>(bk.last_tensor - bk.first_tensor + 1);
    bt.elements = bk.elements;
    bt.bytes = bk.bytes;
    bt.encode = bt.decode = bt.communication = 0;
    bt.wire_bytes_per_gpu = plan.comm.at(b).wire_bytes_per_gpu;
    for (std::size_t s = 0; s < bt.steps.size(); ++s) {
      const auto& st = bt.steps[s];
      const double d = st.end - st.start;
      if (st.kind == CommStep::Kind::Encode) bt.encode += d;
      if (st.kind == CommStep::Kind::Decode) bt.decode += d;
      if (st.kind == CommStep::Kind::Collective) bt.communication += d;
    }
    r.encode += bt.encode;
    r.decode += bt.decode;
    if (b < plan.bucket_launch.size()) r.collective_launch += plan.bucket_launch[b];
    comm_end = std::max(comm_end, bt.end);
    copy_out_end = std::max(copy_out_end, bt.end) + (b < plan.bucket_copy_out.size() ? plan.bucket_copy_out[b] : 0.0);
  }
  r.straggler_wait = plan.bucket_sync_delay.empty() || r.buckets.empty() ? 0.0 : plan.bucket_sync_delay.back();
  r.exposed_communication = std::max(0.0, comm_end - r.backward_end - r.straggler_wait) + blocked;
  r.bucket_copy_out = copy_out_end - std::max(r.backward_end, comm_end);
  r.folded = plan.folded();
  if (plan.sync_every_micro_step) copy_out_end = repeat_synchronizing_micro_step(plan, r, copy_out_end);
  r.optimizer = plan.optimizer;
  r.fixed_work = plan.fixed_work;
  r.optimizer_start = copy_out_end;
  r.total = r.optimizer_start + plan.optimizer + plan.fixed_work;
  r.input_wait = std::max(0.0, plan.input_time - r.total);  // the loader prefetches beside the step
  r.total += r.input_wait;
  r.samples_per_second = r.total > 0 ? r.global_batch / r.total : 0;
  finish_band(plan, r);
  r.wire_bytes_per_gpu = n * plan.wire_bytes_per_gpu;
  r.error_feedback_bytes = plan.error_feedback_bytes;
  r.state_bytes = plan.state_bytes;
  r.tensor_names = plan.tensor_names;
}

namespace {

StepTiming timed_step(const CommStep& s, double start, double seconds, bool side) {
  StepTiming st;
  st.label = s.label;
  st.kind = s.kind;
  st.bytes = s.bytes;
  st.start = start;
  st.end = start + seconds;
  st.side_stream = side;
  return st;
}

// One closed-form pass with the backward assumed to run until
// `compute_until` (codec steps that start before it are beside compute).
class ClosedFormPass {
 public:
  ClosedFormPass(const IterationPlan& plan, const CollectiveTimeFn& collective_time, double compute_until)
      : plan_(plan), collective_time_(collective_time), compute_until_(compute_until) {}

  IterationResult run() {
    r_.method = "closed form";
    const double folded = plan_.folded();
    r_.forward_start = folded;
    r_.backward_start = folded + plan_.forward;
    const std::size_t nb = plan_.buckets.size();
    r_.buckets.resize(nb);
    // Bucket index whose last tensor is j, or -1.
    std::vector<int> bucket_of_last(plan_.tensor_backward.size(), -1);
    for (std::size_t b = 0; b < nb; ++b) bucket_of_last.at(plan_.buckets[b].last_tensor) = static_cast<int>(b);
    double t = r_.backward_start;
    r_.tensor_end.resize(plan_.tensor_backward.size());
    for (std::size_t j = 0; j < plan_.tensor_backward.size(); ++j) {
      double d = plan_.tensor_backward[j];
      d *= 1 + interference_at(plan_, comm_activity_at(r_, scheduled_, t, plan_.overlap));
      d += autograd_host_work(plan_, j);  // DDP's copy into the bucket and per-bucket host work
      t += d;
      const int b = bucket_of_last[j];
      if (b >= 0) t = hook_on_compute_stream(static_cast<std::size_t>(b), t);
      if (b >= 0 && plan_.overlap) {
        const auto bu = static_cast<std::size_t>(b);
        schedule(bu, t, t + sync_delay(bu));
        // The hook holds the host until its chain ends: the next tensor waits.
        if (plan_.comm[bu].blocks_host && j + 1 < plan_.tensor_backward.size()) t = std::max(t, r_.buckets[bu].end);
      }
      r_.tensor_end[j] = t;
    }
    r_.backward_end = t;
    if (!plan_.overlap)
      for (std::size_t b = 0; b < nb; ++b)  // after the slowest rank's end
        schedule(b, r_.tensor_end[plan_.buckets[b].last_tensor], t + sync_delay(nb - 1));
    finish_result(plan_, r_);
    return r_;
  }

 private:
  // The slowest rank reaches bucket b D_b after the representative one.
  double sync_delay(std::size_t b) const {
    return b < plan_.bucket_sync_delay.size() ? plan_.bucket_sync_delay[b] : 0.0;
  }

  // A PyTorch hook's steps before its first collective, on the compute
  // stream right after the bucket's last tensor (not slowed: nothing else
  // runs on that stream).
  double hook_on_compute_stream(std::size_t b, double t) {
    const auto& bc = plan_.comm[b];
    for (std::size_t i = 0; i < bc.on_compute_stream; ++i) {
      r_.buckets[b].steps.push_back(timed_step(bc.steps[i], t, bc.steps[i].seconds, false));
      t += bc.steps[i].seconds;
    }
    return t;
  }

  // The bucket's comm-stream steps from the latest of `earliest`, the end of
  // the previous bucket on the comm stream and the end of the previous
  // blocking hook (BucketComm::blocks_host), then its side-stream steps
  // from their end.
  void schedule(std::size_t b, double ready, double earliest) {
    auto& bt = r_.buckets[b];
    const auto& bc = plan_.comm[b];
    bt.ready = ready;
    bt.start = std::max({earliest, comm_free_, host_free_});
    double t = bt.start + (b < plan_.bucket_launch.size() ? plan_.bucket_launch[b] : 0.0);
    const std::size_t side_from = bc.steps.size() - bc.on_side_stream;
    for (std::size_t i = bc.on_compute_stream; i < side_from; ++i) {
      const auto& s = bc.steps[i];
      const double d = s.kind == CommStep::Kind::Collective
                           ? (s.measured_seconds > 0 ? s.measured_seconds : collective_time_(s))
                           : codec_step_seconds(plan_, s.seconds, !bc.blocks_host && t < compute_until_);
      bt.steps.push_back(timed_step(s, t, d, false));
      t += d;
    }
    comm_free_ = t;
    // The side chain starts beside compute or not (a blocking hook's never is).
    const bool beside = !bc.blocks_host && t < compute_until_;
    for (std::size_t i = side_from; i < bc.steps.size(); ++i) {
      const double d = codec_step_seconds(plan_, bc.steps[i].seconds, beside);
      bt.steps.push_back(timed_step(bc.steps[i], t, d, true));
      t += d;
    }
    bt.end = t;
    if (bc.blocks_host) host_free_ = t;  // the host calls the next hook after this one returns
    ++scheduled_;
  }

  const IterationPlan& plan_;
  const CollectiveTimeFn& collective_time_;
  double compute_until_;
  IterationResult r_;
  double comm_free_ = 0;  // end of the previous bucket on the comm stream
  double host_free_ = 0;  // end of the previous bucket whose hook blocked the host
  std::size_t scheduled_ = 0;
};

}  // namespace

IterationResult evaluate_closed_form(const IterationPlan& plan, const CollectiveTimeFn& collective_time) {
  // A codec step is slowed when it starts before the backward's end, which
  // the comm stream's interference may itself move: the end is found by
  // fixed-point iteration from the pass without codec slow-down (one more
  // pass when nothing slows the backward, where the end does not move).
  IterationResult r = ClosedFormPass(plan, collective_time, -1.0).run();
  if (!(plan.codec_interference > 0)) return r;
  for (int pass = 0; pass < 16; ++pass) {
    // A pass starts at plan.folded(); without no_sync finish_result moved the
    // result on by the k-1 micro-steps before it, which the pass has not.
    const double backward_end = r.backward_end - (r.folded - plan.folded());
    IterationResult next = ClosedFormPass(plan, collective_time, backward_end).run();
    const bool fixed = next.backward_end == r.backward_end;
    r = std::move(next);
    if (fixed) break;
  }
  return r;
}

}  // namespace gw
