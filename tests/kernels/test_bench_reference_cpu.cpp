// gw_kernels_bench compares each decoder with the same-traffic reference of
// its own write/read ratio; the choice for every decoder's real traffic.
#include <gtest/gtest.h>

#include "gradwire/kernels/traffic.hpp"
#include "reference_choice.hpp"

namespace gw::kernels {
namespace {

constexpr int kMax = 7;
constexpr std::size_t kN = std::size_t{1} << 26;

bench::ReferenceChoice for_decode(const traffic::Sizes& s) {
  const double write = 4.0 * static_cast<double>(kN);  // every decoder writes n floats
  return bench::same_traffic_reference(s.decode - write, write, kMax);
}

TEST(BenchReference, EachDecoderGetsTheExpansionOfItsTraffic) {
  EXPECT_EQ(for_decode(traffic::cast(kN, false)).name, "expand1");             // reads 2n, writes 4n
  EXPECT_EQ(for_decode(traffic::int8(kN, 1024, false)).name, "expand2");       // n + scales
  EXPECT_EQ(for_decode(traffic::sign(kN, 1024, false)).name, "expand5");       // n/8 + scales: 31x
  EXPECT_EQ(for_decode(traffic::majority_vote(kN, 1024, 8)).name, "expand2");  // 8 messages: 3.9x
  EXPECT_EQ(for_decode(traffic::majority_vote(kN, 1024, 1)).name, "expand5");
  EXPECT_EQ(for_decode(traffic::randomk(kN, kN / 100, false)).name, "expand7");  // 4k read: 100x
}

TEST(BenchReference, EdgesAreCopyWriteOnlyAndTheLargestExpansion) {
  EXPECT_EQ(bench::same_traffic_reference(100, 100, kMax).shift, 0);
  EXPECT_EQ(bench::same_traffic_reference(200, 100, kMax).shift, 0);  // reads more: copy, not below
  EXPECT_EQ(bench::same_traffic_reference(0, 100, kMax).name, "write");
  EXPECT_EQ(bench::same_traffic_reference(-1, 100, kMax).shift, -1);
  EXPECT_EQ(bench::same_traffic_reference(1, 1e6, kMax).shift, kMax);
  // Rounding in log2: 2.8x -> 2^1 (log2 1.49), 2.9x -> 2^2 (log2 1.54).
  EXPECT_EQ(bench::same_traffic_reference(1, 2.8, kMax).shift, 1);
  EXPECT_EQ(bench::same_traffic_reference(1, 2.9, kMax).shift, 2);
}

}  // namespace
}  // namespace gw::kernels
