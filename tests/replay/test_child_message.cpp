// The replay child's message to its parent (src/child_results.hpp,
// encode_outcome / decode_outcome): a typed, versioned, length-checked
// encoding of its outcome, separate from the public JSON. Every field comes
// back exactly (a double by its bits: NaN, infinities and -0 too, which the
// JSON output cannot carry), and a message cut short, of another version or
// with bytes left over is refused with a message saying which.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "child_results.hpp"
#include "gradwire/core/wire.hpp"
#include "gradwire/replay/replay.hpp"

namespace gw {
namespace {

using detail::ChildOutcome;

std::uint64_t bits(double d) { return std::bit_cast<std::uint64_t>(d); }

/// An outcome with every kind of field set away from its default.
ChildOutcome sample() {
  ChildOutcome o;
  o.exact = false;
  o.simulated = 7;
  o.replayed = -3;
  o.durations[std::string("a\n b:c\0\xff", 9)] = 0.1 + 0.2;  // any byte in a key
  o.durations["x"] = 5e-324;
  IterationResult& r = o.result;
  r.scenario = "s\"\\\n";
  r.model = "m";
  r.method = "simulation";
  r.profile_name = "p";
  r.world_size = 16;
  r.micro_batch = 3;
  r.accumulation = 4;
  r.sync_every_micro_step = true;
  r.overlap = false;
  r.interference = 0.125;
  r.measured_collectives = {"allreduce on 16 GPUs, 2 nodes", ""};
  r.compute_efficiency_default = false;
  r.forward = 1.0 / 3.0;
  r.total = 2.0 / 3.0;
  r.band = {1, 2, 3, 4, 5, 6, 7};
  r.residual_cases = 9;
  r.tensor_names = {"w0", "w1"};
  r.tensor_end = {0.5, 0.75};
  r.simulated_activities = 1234567890123;
  r.simulated_actors = 2;
  BucketTiming b;
  b.index = 1;
  b.tensors = 2;
  b.elements = std::int64_t{1} << 40;
  b.end = 0.875;
  b.steps.push_back({"allreduce", CommStep::Kind::Collective, 0.25, 0.5, 1e9, false});
  b.steps.push_back({"decode", CommStep::Kind::Decode, 0.5, 0.625, 0, true});
  r.buckets = {b, BucketTiming{}};
  return o;
}

TEST(ReplayChildMessage, EveryFieldComesBackExactly) {
  const ChildOutcome o = sample();
  const std::string m = detail::encode_outcome(o);
  const ChildOutcome back = detail::decode_outcome(m);
  EXPECT_EQ(back.exact, o.exact);
  EXPECT_EQ(back.simulated, o.simulated);
  EXPECT_EQ(back.replayed, o.replayed);
  EXPECT_EQ(back.durations, o.durations);
  EXPECT_FALSE(back.reused);
  // Every public field, byte for byte (result_to_json writes each).
  EXPECT_EQ(result_to_json(back.result, -1), result_to_json(o.result, -1));
  // What the JSON does not carry.
  ASSERT_EQ(back.result.buckets.size(), 2u);
  EXPECT_TRUE(back.result.buckets[0].steps[1].side_stream);
  EXPECT_FALSE(back.result.buckets[0].steps[0].side_stream);
  EXPECT_EQ(back.result.sync_every_micro_step, true);
  // Decoding reads every byte, and encoding the result gives the same bytes.
  EXPECT_EQ(detail::encode_outcome(back), m);
}

TEST(ReplayChildMessage, NaNInfinityAndNegativeZeroCrossBitForBit) {
  ChildOutcome o = sample();
  const double payload_nan = std::bit_cast<double>(std::uint64_t{0x7ff800000000abcd});
  o.result.total = payload_nan;
  o.result.band_high = std::numeric_limits<double>::infinity();
  o.result.band_low = -std::numeric_limits<double>::infinity();
  o.result.forward = -0.0;
  o.result.buckets[0].steps[0].start = std::numeric_limits<double>::denorm_min();
  o.durations["nan"] = std::numeric_limits<double>::quiet_NaN();
  const ChildOutcome back = detail::decode_outcome(detail::encode_outcome(o));
  EXPECT_EQ(bits(back.result.total), bits(payload_nan));
  EXPECT_EQ(bits(back.result.band_high), bits(o.result.band_high));
  EXPECT_EQ(bits(back.result.band_low), bits(o.result.band_low));
  EXPECT_EQ(bits(back.result.forward), bits(-0.0));
  EXPECT_EQ(bits(back.result.buckets[0].steps[0].start), bits(std::numeric_limits<double>::denorm_min()));
  EXPECT_TRUE(std::isnan(back.durations.at("nan")));
}

std::string refusal(const std::string& message) {
  try {
    (void)detail::decode_outcome(message);
  } catch (const wire::Malformed& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(ReplayChildMessage, ATruncatedOrForeignMessageIsRefused) {
  const std::string m = detail::encode_outcome(sample());
  // Cut anywhere: refused, and said to be truncated.
  for (std::size_t n = 0; n < m.size(); n += 1 + n / 16)
    EXPECT_EQ(refusal(m.substr(0, n)).rfind("replay child's result: truncated (", 0), 0u) << n << " bytes";
  EXPECT_EQ(refusal(m + '\0'),
            "replay child's result: 1 bytes after the " + std::to_string(m.size() - 18) + "-byte payload");
  const std::string payload(m.substr(18));
  EXPECT_EQ(refusal(wire::seal(detail::kOutcomeKind, detail::kOutcomeVersion + 1, payload)),
            "replay child's result: version " + std::to_string(detail::kOutcomeVersion + 1) +
                ", this gradwire reads version " + std::to_string(detail::kOutcomeVersion));
  EXPECT_EQ(refusal(wire::seal("JSON", detail::kOutcomeVersion, payload)), "replay child's result: not a RPLY message");
  // A payload whose own lengths disagree with it (its last byte dropped,
  // the header's length made to match): refused too.
  EXPECT_EQ(refusal(wire::seal(detail::kOutcomeKind, detail::kOutcomeVersion, payload.substr(0, payload.size() - 1)))
                .rfind("replay child's result: truncated (", 0),
            0u);
  // The first field is a bool: any other byte there is refused.
  std::string bad_bool = payload;
  bad_bool[0] = '\x02';
  EXPECT_EQ(refusal(wire::seal(detail::kOutcomeKind, detail::kOutcomeVersion, bad_bool)),
            "replay child's result: a bool is neither 0 nor 1");
}

}  // namespace
}  // namespace gw
