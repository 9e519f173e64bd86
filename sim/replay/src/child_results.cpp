#include "child_results.hpp"

#include <cstdint>
#include <cstring>
#include <deque>
#include <type_traits>

namespace gw::detail {
namespace {

/// An exact, unambiguous string of values: numbers by their bytes, strings
/// length-prefixed, sequences by their size then their elements.
class KeyWriter {
 public:
  template <class T>
    requires std::is_arithmetic_v<T> || std::is_enum_v<T>
  void put(T v) {
    char bytes[sizeof v];
    std::memcpy(bytes, &v, sizeof v);
    out_.append(bytes, sizeof bytes);
  }
  void put(const std::string& s) {
    put(s.size());
    out_ += s;
  }
  template <class T>
  void put(const std::vector<T>& v) {
    put(v.size());
    for (const auto& e : v) put(e);
  }
  // The three structs below are copied whole into the child's plan, and
  // their fields are listed here by hand: a field added to one of them must
  // be added to its put() too, or two plans that differ in it would share a
  // key (and a reused outcome). Their sizes on the platforms gradwire builds
  // on (LP64, libstdc++) stop the build until that is done.
  static_assert(sizeof(void*) != 8 || sizeof(Bucket) == 40, "Bucket changed: list the new field in put(Bucket)");
  static_assert(sizeof(void*) != 8 || sizeof(CommStep) == 112,
                "CommStep changed: list the new field in put(CommStep)");
  static_assert(sizeof(void*) != 8 || sizeof(BucketComm) == 88,
                "BucketComm changed: list the new field in put(BucketComm)");
  void put(const Bucket& b) {
    put(b.index);
    put(b.first_tensor);
    put(b.last_tensor);
    put(b.elements);
    put(b.bytes);
  }
  void put(const CommStep& s) {
    put(s.kind);
    put(s.label);
    put(s.seconds);
    put(s.op);
    put(s.algorithm);
    put(s.bytes);
    put(s.contributed);
    put(s.measured_seconds);
  }
  void put(const BucketComm& c) {
    put(c.steps);
    put(c.encode);
    put(c.decode);
    put(c.contributed);
    put(c.error_feedback_bytes);
    put(c.state_bytes);
    put(c.wire_bytes_per_gpu);
    put(c.on_compute_stream);
    put(c.on_side_stream);
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

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

std::string child_key(const IterationPlan& child, int granularity, bool memo_on, const std::string& seed) {
  KeyWriter w;
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

}  // namespace gw::detail
