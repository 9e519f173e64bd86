#include "child_results.hpp"

#include <deque>
#include <type_traits>

#include "gradwire/core/wire.hpp"

namespace gw {

// The fields of the structs the key and the child's message are made of,
// for gw::wire (found by argument-dependent lookup). Each is listed by hand:
// a field added to one of them must be added here too, or two plans that
// differ in it would share a key (and a reused outcome), or the parent would
// not receive it. Their sizes on the platforms gradwire builds on (LP64,
// libstdc++) stop the build until that is done.
namespace {
template <class T, class U>
concept Is = std::same_as<std::remove_const_t<T>, U>;
}  // namespace

static_assert(sizeof(void*) != 8 || sizeof(Bucket) == 40, "Bucket changed: list the new field below");
static_assert(sizeof(void*) != 8 || sizeof(CommStep) == 112, "CommStep changed: list the new field below");
static_assert(sizeof(void*) != 8 || sizeof(BucketComm) == 96, "BucketComm changed: list the new field below");
static_assert(sizeof(void*) != 8 || sizeof(StepTiming) == 72, "StepTiming changed: list the new field below");
static_assert(sizeof(void*) != 8 || sizeof(BucketTiming) == 104, "BucketTiming changed: list the new field below");
static_assert(sizeof(void*) != 8 || sizeof(BandTerms) == 56, "BandTerms changed: list the new field below");
static_assert(sizeof(void*) != 8 || sizeof(IterationResult) == 936,
              "IterationResult changed: list the new field below");

template <class S, class F>
requires Is<S, Bucket>
static void wire_fields(S& b, F&& f) { f(b.index), f(b.first_tensor), f(b.last_tensor), f(b.elements), f(b.bytes); }

template <class S, class F>
requires Is<S, CommStep>
static void wire_fields(S& s, F&& f) {
  f(s.kind), f(s.label), f(s.seconds), f(s.op), f(s.algorithm), f(s.bytes), f(s.contributed), f(s.measured_seconds);
}

template <class S, class F>
requires Is<S, BucketComm>
static void wire_fields(S& c, F&& f) {
  f(c.steps), f(c.encode), f(c.decode), f(c.contributed), f(c.error_feedback_bytes), f(c.state_bytes);
  f(c.wire_bytes_per_gpu), f(c.on_compute_stream), f(c.on_side_stream), f(c.blocks_host);
}

template <class S, class F>
requires Is<S, StepTiming>
static void wire_fields(S& s, F&& f) { f(s.label), f(s.kind), f(s.start), f(s.end), f(s.bytes), f(s.side_stream); }

template <class S, class F>
requires Is<S, BucketTiming>
static void wire_fields(S& b, F&& f) {
  f(b.index), f(b.tensors), f(b.elements), f(b.bytes), f(b.wire_bytes_per_gpu), f(b.ready), f(b.start), f(b.end);
  f(b.encode), f(b.decode), f(b.communication), f(b.steps);
}

template <class S, class F>
requires Is<S, BandTerms>
static void wire_fields(S& t, F&& f) {
  f(t.spread_low), f(t.spread_high), f(t.jitter_low), f(t.jitter_high), f(t.residual_low), f(t.residual_high);
  f(t.interference_high);
}

// Every field of IterationResult, in the order it declares them.
template <class S, class F>
requires Is<S, IterationResult>
static void wire_fields(S& r, F&& f) {
  f(r.scenario), f(r.model), f(r.compression), f(r.compute_precision), f(r.allreduce_algorithm);
  f(r.profile_name), f(r.profile_source), f(r.profile_detail), f(r.method), f(r.sharding);
  f(r.world_size), f(r.micro_batch), f(r.accumulation), f(r.sync_every_micro_step), f(r.overlap);
  f(r.hook_blocks_host);
  f(r.interference), f(r.interference_codec), f(r.codec_interference), f(r.interference_source);
  f(r.measured_collectives), f(r.overlapped_compute), f(r.compute_efficiency), f(r.compute_efficiency_default);
  f(r.compute_measured), f(r.global_batch), f(r.forward), f(r.backward), f(r.encode), f(r.decode);
  f(r.exposed_communication), f(r.optimizer), f(r.ddp_overheads), f(r.bucket_copy_in), f(r.bucket_host);
  f(r.bucket_copy_out);
  f(r.collective_launch), f(r.fixed_work), f(r.input_wait), f(r.compute_jitter), f(r.compute_jitter_source);
  f(r.straggler_wait), f(r.total), f(r.band_low), f(r.band_high), f(r.band), f(r.compute_spread);
  f(r.compute_spread_source), f(r.residual_low), f(r.residual_high), f(r.residual_cases);
  f(r.samples_per_second), f(r.wire_bytes_per_gpu), f(r.error_feedback_bytes), f(r.state_bytes), f(r.folded);
  f(r.forward_start), f(r.backward_start), f(r.backward_end), f(r.optimizer_start), f(r.tensor_names);
  f(r.tensor_end), f(r.buckets), f(r.simulated_activities), f(r.simulated_actors);
}

namespace detail {

// What the child sends: all of ChildOutcome but `reused` (the parent's own).
template <class S, class F>
requires Is<S, ChildOutcome>
static void wire_fields(S& o, F&& f) { f(o.exact), f(o.simulated), f(o.replayed), f(o.durations), f(o.result); }

namespace {

/// Calls f(dst.x, src.x) for every plan field the replay child reads: the
/// one list both child_plan (a copy) and child_key (the key) are made from.
template <class Dst, class F>
void child_fields(Dst& dst, const IterationPlan& src, F&& f) {
  f(dst.world_size, src.world_size);
  f(dst.overlap, src.overlap);
  f(dst.interference, src.interference);
  f(dst.interference_codec, src.interference_codec);
  f(dst.codec_interference, src.codec_interference);
  f(dst.forward, src.forward);
  f(dst.tensor_backward, src.tensor_backward);
  f(dst.tensor_copy_in, src.tensor_copy_in);
  f(dst.tensor_host, src.tensor_host);
  f(dst.buckets, src.buckets);
  f(dst.comm, src.comm);
  f(dst.bucket_launch, src.bucket_launch);
  f(dst.bucket_sync_delay, src.bucket_sync_delay);
}

struct Kept {
  ClusterSpec cluster;
  std::string key;
  ChildOutcome outcome;
};

std::deque<Kept>& kept() {
  static std::deque<Kept> k;
  return k;
}

}  // namespace

IterationPlan child_plan(const IterationPlan& plan) {
  IterationPlan child;
  child_fields(child, plan, [](auto& d, const auto& s) { d = s; });
  return child;
}

std::string child_key(const IterationPlan& child, int granularity, bool memo_on,
                      const CollectiveMemo::Durations& seed) {
  wire::Writer w;
  const IterationPlan unused;  // child_fields writes nothing to it here
  child_fields(unused, child, [&w](const auto&, const auto& s) { w.put(s); });
  w.put(granularity);
  w.put(memo_on);
  w.put(seed);
  return w.take();
}

const ChildOutcome* find_child_outcome(const ClusterSpec& cluster, const std::string& key) {
  for (const auto& k : kept())
    if (k.key == key && k.cluster == cluster) return &k.outcome;
  return nullptr;
}

void keep_child_outcome(const ClusterSpec& cluster, std::string key, const ChildOutcome& outcome) {
  auto& k = kept();
  if (k.size() == kChildOutcomes) k.pop_front();
  k.push_back({cluster, std::move(key), outcome});
}

void forget_child_outcomes() { kept().clear(); }

std::string encode_outcome(const ChildOutcome& outcome) {
  wire::Writer w;
  w.put(outcome);
  return wire::seal(kOutcomeKind, kOutcomeVersion, w.take());
}

ChildOutcome decode_outcome(std::string_view message) {
  const std::string what = "replay child's result";
  wire::Reader r(wire::open(message, kOutcomeKind, kOutcomeVersion, what), what);
  ChildOutcome out;
  r.get(out);
  r.finish();
  return out;
}

}  // namespace detail
}  // namespace gw
