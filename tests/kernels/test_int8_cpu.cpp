#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "gradwire/kernels/int8.hpp"
#include "kernel_test_util.hpp"

namespace gw::kernels {
namespace {

struct Int8Run {
  std::vector<std::int8_t> q;
  std::vector<float> scales, y, r;
};

Int8Run run_int8(const std::vector<float>& x, const Int8Params& p) {
  Int8Run o;
  o.q.assign(x.size(), 0);
  o.scales.assign(int8_scale_count(x.size(), p.chunk), -1.0f);
  o.y.assign(x.size(), -1.0f);
  o.r.assign(x.size(), -1.0f);
  int8_encode_ef_cpu(x.data(), x.size(), p, o.q.data(), o.scales.data(), o.r.data());
  int8_decode_cpu(o.q.data(), o.scales.data(), x.size(), p.chunk, o.y.data());
  return o;
}

TEST(Int8Cpu, ErrorAtMostAbsmaxOver127PerChunk) {
  for (std::size_t chunk : {32u, 256u, 1024u}) {
    for (std::size_t n : {1u, 7u, 4097u, 70001u}) {
      const auto x = test::random_gradient(n, static_cast<std::uint32_t>(n + chunk));
      const Int8Params p{chunk, false, 0};
      const Int8Run o = run_int8(x, p);
      ASSERT_EQ(o.scales.size(), (n + chunk - 1) / chunk);
      for (std::size_t c = 0; c < o.scales.size(); ++c) {
        const std::size_t b = c * chunk, e = std::min(n, b + chunk);
        float absmax = 0.0f;
        for (std::size_t i = b; i < e; ++i) absmax = std::max(absmax, std::fabs(x[i]));
        EXPECT_EQ(o.scales[c], absmax / 127.0f);
        for (std::size_t i = b; i < e; ++i) {
          ASSERT_LE(std::fabs(x[i] - o.y[i]), absmax / 127.0f) << "n=" << n << " i=" << i;
          ASSERT_LE(std::abs(int(o.q[i])), 127);
          if (std::fabs(x[i]) == absmax && absmax > 0) {
            ASSERT_EQ(std::abs(int(o.q[i])), 127);
          }
        }
      }
    }
  }
}

TEST(Int8Cpu, ZeroChunkDecodesToZero) {
  std::vector<float> x(100, 0.0f);
  for (std::size_t i = 64; i < 100; ++i) x[i] = static_cast<float>(i);
  const Int8Run o = run_int8(x, {32, false, 0});
  EXPECT_EQ(o.scales[0], 0.0f);
  EXPECT_EQ(o.scales[1], 0.0f);
  EXPECT_EQ(o.scales[3], 99.0f / 127.0f);
  for (std::size_t i = 0; i < 64; ++i) EXPECT_EQ(o.y[i], 0.0f);
  EXPECT_EQ(o.q[99], 127);
}

TEST(Int8Cpu, RejectsChunkNotMultipleOf32) {
  std::vector<float> x(64, 1.0f), s(4), y(64);
  std::vector<std::int8_t> q(64);
  EXPECT_THROW(int8_encode_cpu(x.data(), 64, {33, false, 0}, q.data(), s.data()), std::invalid_argument);
  EXPECT_THROW(int8_encode_cpu(x.data(), 64, {0, false, 0}, q.data(), s.data()), std::invalid_argument);
}

TEST(Int8Cpu, StochasticRoundingIsSeededUnbiasedAndBracketing) {
  // One element fixes absmax = 127 so scale = 1; the rest equal 0.3: q must be
  // 0 or 1 with mean 0.3.
  const std::size_t n = 1 << 17;
  std::vector<float> x(n, 0.3f);
  for (std::size_t c = 0; c < n; c += 1024) x[c] = 127.0f;
  const Int8Params p{1024, true, 42};
  const Int8Run a = run_int8(x, p);
  const Int8Run b = run_int8(x, p);
  EXPECT_EQ(a.q, b.q);
  const Int8Run other = run_int8(x, {1024, true, 43});
  EXPECT_NE(a.q, other.q);
  double sum = 0;
  std::size_t count = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (i % 1024 == 0) continue;
    ASSERT_TRUE(a.q[i] == 0 || a.q[i] == 1);
    sum += a.q[i];
    ++count;
  }
  const double mean = sum / double(count);
  const double sigma = std::sqrt(0.3 * 0.7 / double(count));
  EXPECT_NEAR(mean, 0.3, 5 * sigma);
}

TEST(Int8Cpu, ErrorFeedbackIdentity) {
  const auto x = test::random_gradient(30007, 5);
  const Int8Run nearest = run_int8(x, {256, false, 0});
  test::expect_ef_identity(x, nearest.y, nearest.r, /*always_exact=*/true);
  const Int8Run sr = run_int8(x, {256, true, 9});
  const std::size_t exact = test::expect_ef_identity(x, sr.y, sr.r, /*always_exact=*/false);
  EXPECT_GT(exact, x.size() / 2);
  // The fused kernel writes the same message as the plain encoder.
  std::vector<std::int8_t> q(x.size());
  std::vector<float> s(int8_scale_count(x.size(), 256));
  int8_encode_cpu(x.data(), x.size(), {256, true, 9}, q.data(), s.data());
  EXPECT_EQ(q, sr.q);
  EXPECT_EQ(s, sr.scales);
}

}  // namespace
}  // namespace gw::kernels
