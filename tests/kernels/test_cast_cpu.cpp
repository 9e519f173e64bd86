#include <bit>
#include <cmath>

#include "gradwire/kernels/cast.hpp"
#include "kernel_test_util.hpp"

namespace gw::kernels {
namespace {

TEST(CastCpu, KnownHalfBitPatterns) {
  EXPECT_EQ(float_to_half_bits(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half_bits(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half_bits(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half_bits(65519.99f), 0x7bff);
  EXPECT_EQ(float_to_half_bits(65520.0f), 0x7c00);  // tie rounds to even = inf
  EXPECT_EQ(float_to_half_bits(-1e10f), 0xfc00);
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -25)), 0x0000);  // tie -> even (0)
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(float_to_half_bits(std::ldexp(3.0f, -25)), 0x0002);         // 1.5 units: tie -> 2
  EXPECT_EQ(float_to_half_bits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie -> even
  EXPECT_EQ(float_to_half_bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(float_to_half_bits(-0.0f), 0x8000);
  EXPECT_TRUE(std::isnan(half_bits_to_float(float_to_half_bits(std::nanf("")))));
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bf16_bits(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(float_to_bf16_bits(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(std::nanf("")))));
}

// Every finite half is a fixed point of widen-then-narrow, and the midpoint
// between two neighbours rounds to the one with an even mantissa.
TEST(CastCpu, HalfRoundingIsNearestEvenOverTheWholeRange) {
  for (std::uint32_t h = 0; h < 0x7c00; ++h) {
    const auto hb = static_cast<std::uint16_t>(h);
    const float a = half_bits_to_float(hb);
    ASSERT_EQ(float_to_half_bits(a), hb);
    ASSERT_EQ(float_to_half_bits(-a), static_cast<std::uint16_t>(hb | 0x8000));
    if (h + 1 < 0x7c00) {
      const float b = half_bits_to_float(static_cast<std::uint16_t>(h + 1));
      const float mid = (a + b) / 2;  // exact: fewer than 24 significant bits
      ASSERT_EQ(float_to_half_bits(mid), (h % 2 == 0) ? h : h + 1) << h;
      ASSERT_EQ(float_to_half_bits(std::nextafter(mid, 0.0f)), h);
      ASSERT_EQ(float_to_half_bits(std::nextafter(mid, 1e9f)), h + 1);
    }
  }
}

TEST(CastCpu, Bf16RoundingIsNearestEven) {
  for (std::uint32_t h = 0; h < 0x7f80; h += 7) {
    const auto hb = static_cast<std::uint16_t>(h);
    const float a = bf16_bits_to_float(hb);
    ASSERT_EQ(float_to_bf16_bits(a), hb);
    const float b = bf16_bits_to_float(static_cast<std::uint16_t>(h + 1));
    const float mid = std::bit_cast<float>(std::bit_cast<std::uint32_t>(a) + 0x8000U);
    ASSERT_GT(mid, a);
    ASSERT_LT(mid, b);
    ASSERT_EQ(float_to_bf16_bits(mid), (h % 2 == 0) ? h : h + 1);
  }
}

TEST(CastCpu, Fp16RoundTripRelativeErrorInRange) {
  const std::size_t n = 100003;
  auto x = test::random_uniform(n, 7, -65504.0f, 65504.0f);
  auto small = test::random_uniform(n, 8, -1.0f, 1.0f);
  x.insert(x.end(), small.begin(), small.end());
  std::vector<std::uint16_t> h(x.size());
  std::vector<float> y(x.size());
  cast_encode_cpu(CastKind::fp16, x.data(), x.size(), 1.0f, h.data());
  cast_decode_cpu(CastKind::fp16, h.data(), x.size(), y.data());
  const double bound = std::ldexp(1.0, -11);
  std::size_t checked = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::fabs(x[i]) < std::ldexp(1.0f, -14)) continue;  // subnormal halves: absolute error
    ++checked;
    ASSERT_LE(std::fabs((double(y[i]) - x[i]) / x[i]), bound) << x[i];
  }
  EXPECT_GT(checked, x.size() * 9 / 10);
}

TEST(CastCpu, Bf16RoundTripRelativeError) {
  auto x = test::random_gradient(50001, 9);
  std::vector<std::uint16_t> h(x.size());
  std::vector<float> y(x.size());
  cast_encode_cpu(CastKind::bf16, x.data(), x.size(), 1.0f, h.data());
  cast_decode_cpu(CastKind::bf16, h.data(), x.size(), y.data());
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (x[i] == 0.0f) {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(y[i]), std::bit_cast<std::uint32_t>(x[i]));
      continue;
    }
    ASSERT_LE(std::fabs((double(y[i]) - x[i]) / x[i]), std::ldexp(1.0, -8));
  }
}

TEST(CastCpu, PrescaleMultipliesBeforeTheCast) {
  auto x = test::random_gradient(4097, 10);
  const float p = 1.0f / 7.0f;
  std::vector<float> scaled(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) scaled[i] = p * x[i];
  for (CastKind kind : {CastKind::fp16, CastKind::bf16}) {
    std::vector<std::uint16_t> a(x.size()), b(x.size());
    cast_encode_cpu(kind, x.data(), x.size(), p, a.data());
    cast_encode_cpu(kind, scaled.data(), x.size(), 1.0f, b.data());
    EXPECT_EQ(a, b);
  }
}

TEST(CastCpu, ErrorFeedbackIdentityIsExact) {
  for (CastKind kind : {CastKind::fp16, CastKind::bf16}) {
    auto x = test::random_gradient(20011, 11, 100.0f);
    std::vector<std::uint16_t> h(x.size()), h2(x.size());
    std::vector<float> y(x.size()), r(x.size());
    cast_encode_ef_cpu(kind, x.data(), x.size(), 1.0f, h.data(), r.data());
    cast_encode_cpu(kind, x.data(), x.size(), 1.0f, h2.data());
    EXPECT_EQ(h, h2);
    cast_decode_cpu(kind, h.data(), x.size(), y.data());
    test::expect_ef_identity(x, y, r, /*always_exact=*/true);
  }
}

}  // namespace
}  // namespace gw::kernels
