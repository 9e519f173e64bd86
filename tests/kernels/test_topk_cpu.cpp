// Top-K CPU twin against a brute-force reference (full stable sort).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <random>
#include <stdexcept>
#include <vector>

#include "gradwire/kernels/topk.hpp"
#include "kernel_test_util.hpp"

namespace {

using gw::kernels::topk_encode_cpu;
using gw::kernels::topk_key;
using gw::kernels::test::gaussian;

// Brute force: sort all indices by (|x| key descending, index ascending),
// keep the first k, return them by ascending index.
void reference_topk(const std::vector<float>& x, std::size_t k, std::vector<float>& values,
                    std::vector<std::int32_t>& indices) {
  std::vector<std::int32_t> order(x.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
    const auto ka = topk_key(x[static_cast<std::size_t>(a)]);
    const auto kb = topk_key(x[static_cast<std::size_t>(b)]);
    return ka != kb ? ka > kb : a < b;
  });
  order.resize(k);
  std::sort(order.begin(), order.end());
  indices = order;
  values.clear();
  for (const auto i : order) values.push_back(x[static_cast<std::size_t>(i)]);
}

void expect_matches_reference(const std::vector<float>& x, std::size_t k) {
  const std::size_t n = x.size();
  std::vector<float> values(k, -12345.0f);
  std::vector<std::int32_t> indices(k, -7);
  topk_encode_cpu(x.data(), n, k, values.data(), indices.data());
  std::vector<float> ref_values;
  std::vector<std::int32_t> ref_indices;
  reference_topk(x, k, ref_values, ref_indices);
  ASSERT_EQ(indices, ref_indices) << "n=" << n << " k=" << k;
  for (std::size_t i = 0; i < values.size(); ++i) {
    // Bit-exact: compare the representations (also for -0.0 and NaN).
    EXPECT_EQ(topk_key(values[i]) | (std::signbit(values[i]) ? 0x80000000u : 0u),
              topk_key(ref_values[i]) | (std::signbit(ref_values[i]) ? 0x80000000u : 0u))
        << "position " << i;
  }
}

TEST(TopkCpu, MatchesBruteForceOnAwkwardSizes) {
  for (const std::size_t n : {1u, 2u, 7u, 31u, 33u, 1000u, 4097u, 65539u}) {
    const auto x = gaussian(n, static_cast<std::uint32_t>(n));
    for (const std::size_t k : {std::size_t{0}, std::size_t{1}, n / 100, n / 3, n - 1, n}) {
      expect_matches_reference(x, k);
    }
  }
}

TEST(TopkCpu, TiesLowerIndexWins) {
  // Many exact ties, both signs: |x| takes only 4 distinct values.
  std::mt19937 gen(7);
  std::uniform_int_distribution<int> pick(0, 7);
  std::vector<float> x(5003);
  for (auto& v : x) {
    const int c = pick(gen);
    v = static_cast<float>(c % 4) * 0.5f * (c >= 4 ? -1.0f : 1.0f);
  }
  for (const std::size_t k : {1u, 2u, 100u, 1250u, 2500u, 4000u, 5002u, 5003u}) {
    expect_matches_reference(x, k);
  }
  // All equal (including +0/-0): exactly the first k indices.
  std::vector<float> zeros(100, 0.0f);
  for (std::size_t i = 0; i < zeros.size(); i += 3) zeros[i] = -0.0f;
  std::vector<float> values(10);
  std::vector<std::int32_t> indices(10);
  topk_encode_cpu(zeros.data(), 100, 10, values.data(), indices.data());
  for (std::int32_t i = 0; i < 10; ++i) EXPECT_EQ(indices[static_cast<std::size_t>(i)], i);
  expect_matches_reference(zeros, 37);
}

TEST(TopkCpu, NegativesKeepSignAndRankByMagnitude) {
  const std::vector<float> x = {1.0f, -5.0f, 3.0f, -3.0f, 0.5f, -0.25f, 5.0f};
  std::vector<float> values(4);
  std::vector<std::int32_t> indices(4);
  topk_encode_cpu(x.data(), 7, 4, values.data(), indices.data());
  // |x| = 1 5 3 3 .5 .25 5 -> top 4: idx 1 (-5), 6 (5), 2 (3), 3 (-3 tie, lower index 2 first)
  EXPECT_EQ(indices, (std::vector<std::int32_t>{1, 2, 3, 6}));
  EXPECT_EQ(values, (std::vector<float>{-5.0f, 3.0f, -3.0f, 5.0f}));
  topk_encode_cpu(x.data(), 7, 3, values.data(), indices.data());
  EXPECT_EQ(std::vector<std::int32_t>(indices.begin(), indices.begin() + 3), (std::vector<std::int32_t>{1, 2, 6}));
}

TEST(TopkCpu, NanAndInfinityRankAboveFinite) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {1.0f, -inf, 2.0f, nan, 3.0f, 1e30f};
  std::vector<float> values(2);
  std::vector<std::int32_t> indices(2);
  topk_encode_cpu(x.data(), 6, 2, values.data(), indices.data());
  EXPECT_EQ(indices, (std::vector<std::int32_t>{1, 3}));
  EXPECT_TRUE(std::isnan(values[1]));
  EXPECT_EQ(values[0], -inf);
  expect_matches_reference(x, 4);
}

TEST(TopkCpu, RejectsBadSizes) {
  std::vector<float> x(4, 1.0f), v(5);
  std::vector<std::int32_t> i(5);
  EXPECT_THROW(topk_encode_cpu(x.data(), 4, 5, v.data(), i.data()), std::invalid_argument);
  EXPECT_THROW(gw::kernels::topk_check_sizes(std::size_t{1} << 31, 1), std::invalid_argument);
  EXPECT_NO_THROW(gw::kernels::topk_check_sizes((std::size_t{1} << 31) - 1, 1));
  EXPECT_NO_THROW(topk_encode_cpu(x.data(), 0, 0, v.data(), i.data()));
}

TEST(TopkCpu, DecodeRoundTrip) {
  const auto x = gaussian(4097, 3);
  const std::size_t k = 41;
  std::vector<float> values(k), dense(x.size(), 99.0f);
  std::vector<std::int32_t> indices(k);
  topk_encode_cpu(x.data(), 4097, k, values.data(), indices.data());
  gw::kernels::topk_decode_cpu(values.data(), indices.data(), k, 4097, dense.data());
  std::size_t nonzero = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const bool kept = std::binary_search(indices.begin(), indices.end(), static_cast<std::int32_t>(i));
    EXPECT_EQ(dense[i], kept ? x[i] : 0.0f);
    nonzero += dense[i] != 0.0f ? 1 : 0;
  }
  EXPECT_EQ(nonzero, static_cast<std::size_t>(k));
  // Every dropped element is no larger in magnitude than every kept one.
  float min_kept = std::numeric_limits<float>::infinity(), max_dropped = 0.0f;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (dense[i] != 0.0f) {
      min_kept = std::min(min_kept, std::fabs(x[i]));
    } else {
      max_dropped = std::max(max_dropped, std::fabs(x[i]));
    }
  }
  EXPECT_LE(max_dropped, min_kept);
  std::vector<std::int32_t> bad = {0, 5000};
  EXPECT_THROW(gw::kernels::topk_decode_cpu(values.data(), bad.data(), 2, 4097, dense.data()), std::invalid_argument);
}

TEST(TopkCpu, ErrorFeedbackIdentityIsExact) {
  auto x = gaussian(3001, 17);
  x[5] = 0.0f;
  x[6] = -0.0f;
  const std::size_t k = 300;
  std::vector<float> values(k), residual(x.size(), 7.0f), y(x.size());
  std::vector<std::int32_t> indices(k);
  gw::kernels::topk_encode_ef_cpu(x.data(), x.size(), k, values.data(), indices.data(), residual.data());
  std::vector<float> plain_values(k);
  std::vector<std::int32_t> plain_indices(k);
  topk_encode_cpu(x.data(), x.size(), k, plain_values.data(), plain_indices.data());
  EXPECT_EQ(indices, plain_indices);
  EXPECT_EQ(values, plain_values);
  gw::kernels::topk_decode_cpu(values.data(), indices.data(), k, x.size(), y.data());
  std::size_t zero_residuals = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(y[i] + residual[i], x[i]) << i;
    zero_residuals += residual[i] == 0.0f ? 1 : 0;
  }
  EXPECT_GE(zero_residuals, k);
}

TEST(TopkCpu, GatheredDecodeSumsWorkersInOrder) {
  const std::size_t workers = 5, n = 1031, k = 97;
  std::vector<float> values, expected(n, 0.0f);
  std::vector<std::int32_t> indices;
  for (std::size_t w = 0; w < workers; ++w) {
    const auto x = gaussian(n, 100u + static_cast<std::uint32_t>(w));
    std::vector<float> v(k);
    std::vector<std::int32_t> idx(k);
    topk_encode_cpu(x.data(), n, k, v.data(), idx.data());
    values.insert(values.end(), v.begin(), v.end());
    indices.insert(indices.end(), idx.begin(), idx.end());
    for (std::size_t i = 0; i < idx.size(); ++i) {
      expected[static_cast<std::size_t>(idx[i])] += v[i];
    }
  }
  std::vector<float> dense(n, -1.0f);
  gw::kernels::topk_decode_gathered_cpu(values.data(), indices.data(), workers, k, n, dense.data());
  EXPECT_EQ(dense, expected);
}

}  // namespace

#include "gradwire/kernels/codec.hpp"

namespace {

TEST(TopkCpu, CodecRunsTheTwin) {
  const std::size_t n = 4097;
  const auto x = gaussian(n, 61);
  gw::kernels::CodecConfig cfg;
  cfg.ratio = 0.03;
  const std::size_t k = gw::kernels::sparse_count(n, cfg.ratio);
  std::vector<float> values(k), expected(n);
  std::vector<std::int32_t> indices(k);
  topk_encode_cpu(x.data(), n, k, values.data(), indices.data());
  gw::kernels::topk_decode_cpu(values.data(), indices.data(), k, n, expected.data());
  for (const char* name : {"topk", "topk_ef"}) {
    auto codec = gw::kernels::make_cpu_codec(name, n, cfg);
    EXPECT_EQ(codec->wire_bytes(), 8 * k);
    codec->set_input(x.data());
    codec->encode();
    codec->decode();
    EXPECT_EQ(codec->decoded(), expected) << name;
    if (std::string(name) == "topk_ef") {
      const auto r = codec->residual();
      ASSERT_EQ(r.size(), n);
      for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(expected[i] + r[i], x[i]) << i;
    } else {
      EXPECT_TRUE(codec->residual().empty());
    }
  }
}

}  // namespace
