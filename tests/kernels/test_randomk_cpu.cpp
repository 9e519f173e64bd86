#include <algorithm>
#include <set>
#include <stdexcept>

#include "gradwire/kernels/codec.hpp"
#include "gradwire/kernels/counter_rng.hpp"
#include "gradwire/kernels/randomk.hpp"
#include "kernel_test_util.hpp"

namespace gw::kernels {
namespace {

TEST(RandomKCpu, SparseCount) {
  EXPECT_EQ(sparse_count(0, 0.01), 0u);
  EXPECT_EQ(sparse_count(1, 0.01), 1u);
  EXPECT_EQ(sparse_count(1000, 0.01), 10u);
  EXPECT_EQ(sparse_count(1001, 0.01), 11u);
  EXPECT_EQ(sparse_count(7, 1.0), 7u);
  EXPECT_THROW(sparse_count(7, 0.0), std::invalid_argument);
  EXPECT_THROW(sparse_count(7, 1.5), std::invalid_argument);
}

TEST(RandomKCpu, PermutationIsABijectionWithInverse) {
  for (std::size_t n : {1u, 2u, 7u, 4097u, 70000u}) {
    const FeistelPermutation p = make_randomk_permutation(n, 99, 5);
    std::vector<char> seen(n, 0);
    for (std::size_t j = 0; j < n; ++j) {
      const std::uint64_t i = p.forward(j);
      ASSERT_LT(i, n);
      ASSERT_FALSE(seen[i]) << "duplicate index " << i;
      seen[i] = 1;
      ASSERT_EQ(p.inverse(i), j);
    }
  }
}

TEST(RandomKCpu, IndicesIdenticalAcrossWorkersAndChangeWithStep) {
  const std::size_t n = (1 << 20) + 3;
  const RandomKParams p{sparse_count(n, 0.01), 1234, 17};
  // Two "workers" derive indices independently from (seed, step).
  const auto a = randomk_indices(n, p);
  const auto b = randomk_indices(n, RandomKParams{p.k, 1234, 17});
  EXPECT_EQ(a, b);
  EXPECT_EQ(std::set<std::uint64_t>(a.begin(), a.end()).size(), p.k);
  const auto c = randomk_indices(n, RandomKParams{p.k, 1234, 18});
  const auto d = randomk_indices(n, RandomKParams{p.k, 1235, 17});
  EXPECT_NE(a, c);
  EXPECT_NE(a, d);
  // Roughly uniform: each quarter of [0, n) receives about K/4 indices.
  std::size_t quarter[4] = {0, 0, 0, 0};
  for (auto i : a) ++quarter[i * 4 / n];
  for (auto q : quarter) EXPECT_NEAR(double(q), double(p.k) / 4, 5 * std::sqrt(double(p.k) / 4));
}

TEST(RandomKCpu, EncodeGathersDecodeScattersAndEfIsExact) {
  for (std::size_t n : {1u, 7u, 4097u}) {
    const auto x = test::random_gradient(n, static_cast<std::uint32_t>(n) + 1);
    const RandomKParams p{sparse_count(n, 0.3), 7, 3};
    const auto idx = randomk_indices(n, p);
    std::vector<float> v(p.k), v2(p.k), y(n, 5.0f), r(n);
    randomk_encode_cpu(x.data(), n, p, v.data());
    for (std::size_t j = 0; j < p.k; ++j) EXPECT_EQ(v[j], x[idx[j]]);
    randomk_decode_cpu(v.data(), n, p, y.data());
    std::vector<float> expect(n, 0.0f);
    for (std::size_t j = 0; j < p.k; ++j) expect[idx[j]] = x[idx[j]];
    EXPECT_EQ(y, expect);
    randomk_encode_ef_cpu(x.data(), n, p, v2.data(), r.data());
    EXPECT_EQ(v, v2);
    test::expect_ef_identity(x, y, r, /*always_exact=*/true);
  }
  std::vector<float> x(4), v(5);
  EXPECT_THROW(randomk_encode_cpu(x.data(), 4, RandomKParams{5, 0, 0}, v.data()), std::invalid_argument);
}

}  // namespace
}  // namespace gw::kernels
