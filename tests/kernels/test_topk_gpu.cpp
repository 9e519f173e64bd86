// Top-K on the GPU against its CPU twin, bit for bit (indices and values),
// and against the cub::DeviceRadixSort baseline. Skips without a GPU.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gradwire/kernels/topk.hpp"
#include "gradwire/kernels/topk_cuda.hpp"
#include "kernel_test_util.hpp"
#include "kernel_test_util_gpu.hpp"

namespace {

using namespace gw::kernels;

template <class T>
using Dev = test::DeviceArray<T>;

std::vector<std::uint32_t> bits(const std::vector<float>& v) {
  std::vector<std::uint32_t> b(v.size());
  if (!v.empty()) std::memcpy(b.data(), v.data(), v.size() * sizeof(float));
  return b;
}

std::size_t first_mismatch(const std::vector<std::int32_t>& a, const std::vector<std::int32_t>& b) {
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i] != b[i]) return i;
  }
  return a.size() == b.size() ? a.size() : std::min(a.size(), b.size());
}

// Runs radix select (plain and EF) and the sort baseline on x for k and
// compares everything with the CPU twin bit for bit.
void check_against_cpu(const std::vector<float>& x, std::size_t k, const std::string& what, bool with_sort = true) {
  const std::size_t n = x.size();
  SCOPED_TRACE(what + " n=" + std::to_string(n) + " k=" + std::to_string(k));
  std::vector<float> ref_v(k), ref_r(n);
  std::vector<std::int32_t> ref_i(k);
  topk_encode_ef_cpu(x.data(), n, k, ref_v.data(), ref_i.data(), ref_r.data());

  Dev<float> dx(n), dv(k), dr(n);
  Dev<std::int32_t> di(k);
  dx.upload(x);
  Dev<unsigned char> ws(topk_workspace_bytes(n));
  ws.poison();  // the select must not rely on a zeroed workspace

  dv.poison();
  di.poison();
  GW_CUDA_OK(topk_encode_cuda(dx.get(), n, k, dv.get(), di.get(), ws.get(), ws.size(), nullptr));
  GW_CUDA_OK(cudaDeviceSynchronize());
  const auto gi = di.download();
  ASSERT_EQ(first_mismatch(gi, ref_i), k) << "indices differ from the CPU twin";
  EXPECT_EQ(bits(dv.download()), bits(ref_v));

  // Second run on the same (now dirty) workspace: same answer.
  dv.poison();
  di.poison();
  dr.poison();
  GW_CUDA_OK(topk_encode_ef_cuda(dx.get(), n, k, dv.get(), di.get(), dr.get(), ws.get(), ws.size(), nullptr));
  GW_CUDA_OK(cudaDeviceSynchronize());
  ASSERT_EQ(first_mismatch(di.download(), ref_i), k) << "EF indices differ";
  EXPECT_EQ(bits(dv.download()), bits(ref_v));
  const auto gr = dr.download();
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n && bad < 5; ++i) {
    const bool both_nan = std::isnan(gr[i]) && std::isnan(ref_r[i]);
    if (!both_nan && bits({gr[i]}) != bits({ref_r[i]})) {
      ++bad;
      ADD_FAILURE() << "residual differs at " << i << ": " << gr[i] << " vs " << ref_r[i];
    }
  }

  if (with_sort) {
    Dev<unsigned char> sws(topk_sort_workspace_bytes(n, k));
    dv.poison();
    di.poison();
    GW_CUDA_OK(topk_sort_encode_cuda(dx.get(), n, k, dv.get(), di.get(), sws.get(), sws.size(), nullptr));
    GW_CUDA_OK(cudaDeviceSynchronize());
    ASSERT_EQ(first_mismatch(di.download(), ref_i), k) << "radix-sort baseline differs";
    EXPECT_EQ(bits(dv.download()), bits(ref_v));
  }
}

std::size_t one_percent(std::size_t n) { return n == 0 ? 0 : std::max<std::size_t>(1, (n + 99) / 100); }

TEST(TopkGpu, MatchesCpuTwinOnAwkwardSizes) {
  GW_SKIP_WITHOUT_GPU();
  const std::size_t sizes[] = {1, 7, 4097, (std::size_t{1} << 20) + 3, std::size_t{1} << 26};
  std::uint32_t seed = 1;
  for (const std::size_t n : sizes) {
    const auto x = test::random_gradient(n, seed++);
    const bool big = n > (std::size_t{1} << 21);
    std::vector<std::size_t> ks = {1, one_percent(n), n};
    if (!big) {
      ks.push_back(n / 2);
      ks.push_back(n > 1 ? n - 1 : 1);
    }
    for (const std::size_t k : ks) check_against_cpu(x, k, "gaussian", !big || k == one_percent(n));
  }
}

TEST(TopkGpu, KZeroWritesNothingAndCopiesResidual) {
  GW_SKIP_WITHOUT_GPU();
  const auto x = test::random_gradient(1000, 3);
  Dev<float> dx(1000), dr(1000), dv(1);
  Dev<std::int32_t> di(1);
  Dev<unsigned char> ws(topk_workspace_bytes(1000));
  dx.upload(x);
  dv.poison();
  di.poison();
  dr.poison();
  GW_CUDA_OK(topk_encode_ef_cuda(dx.get(), 1000, 0, dv.get(), di.get(), dr.get(), ws.get(), ws.size(), nullptr));
  GW_CUDA_OK(cudaDeviceSynchronize());
  EXPECT_EQ(bits(dr.download()), bits(x));
  EXPECT_EQ(di.download()[0], -1);  // untouched poison
  EXPECT_EQ(topk_encode_cuda(dx.get(), 1000, 1001, dv.get(), di.get(), ws.get(), ws.size(), nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(topk_encode_cuda(dx.get(), 1000, 10, dv.get(), di.get(), ws.get(), ws.size() - 1, nullptr),
            cudaErrorInvalidValue);
  cudaGetLastError();
}

TEST(TopkGpu, TieHeavyInputs) {
  GW_SKIP_WITHOUT_GPU();
  // Magnitudes from 5 values, both signs and +-0: ties straddle the threshold.
  for (const std::size_t n : {std::size_t{4097}, (std::size_t{1} << 20) + 3, std::size_t{5} << 20}) {
    std::mt19937 gen(static_cast<std::uint32_t>(n));
    std::uniform_int_distribution<int> pick(0, 9);
    std::vector<float> x(n);
    for (auto& v : x) {
      const int c = pick(gen);
      v = static_cast<float>(c % 5) * 0.25f * (c >= 5 ? -1.0f : 1.0f);
    }
    for (const std::size_t k : {std::size_t{1}, one_percent(n), n / 5, n / 3, n - 3}) {
      check_against_cpu(x, k, "five magnitudes", n < (std::size_t{2} << 20));
    }
  }
  // All equal (zeros of both signs): exactly the first k indices.
  std::vector<float> zeros((std::size_t{1} << 20) + 3, 0.0f);
  for (std::size_t i = 0; i < zeros.size(); i += 7) zeros[i] = -0.0f;
  check_against_cpu(zeros, 12345, "all zero");
  check_against_cpu(zeros, zeros.size(), "all zero k=n");
}

TEST(TopkGpu, NanAndInfinityFollowTheKeyOrder) {
  GW_SKIP_WITHOUT_GPU();
  auto x = test::random_gradient(100003, 5);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  x[10] = nan;
  x[99] = -inf;
  x[5000] = inf;
  x[70000] = -nan;
  check_against_cpu(x, 2, "nan/inf");
  check_against_cpu(x, 1001, "nan/inf");
}

TEST(TopkGpu, DecodersMatchCpu) {
  GW_SKIP_WITHOUT_GPU();
  const std::size_t n = (std::size_t{1} << 20) + 3, k = one_percent(n), workers = 4;
  std::vector<float> values;
  std::vector<std::int32_t> indices;
  for (std::size_t w = 0; w < workers; ++w) {
    const auto x = test::random_gradient(n, 40u + static_cast<std::uint32_t>(w));
    std::vector<float> v(k);
    std::vector<std::int32_t> idx(k);
    topk_encode_cpu(x.data(), n, k, v.data(), idx.data());
    values.insert(values.end(), v.begin(), v.end());
    indices.insert(indices.end(), idx.begin(), idx.end());
  }
  Dev<float> dv(values.size()), dy(n);
  Dev<std::int32_t> di(indices.size());
  dv.upload(values);
  di.upload(indices);
  std::vector<float> ref(n);

  dy.poison();
  GW_CUDA_OK(topk_decode_cuda(dv.get(), di.get(), k, n, dy.get(), nullptr));
  GW_CUDA_OK(cudaDeviceSynchronize());
  topk_decode_cpu(values.data(), indices.data(), k, n, ref.data());
  EXPECT_EQ(bits(dy.download()), bits(ref));

  dy.poison();
  GW_CUDA_OK(topk_decode_gathered_cuda(dv.get(), di.get(), workers, k, n, dy.get(), nullptr));
  GW_CUDA_OK(cudaDeviceSynchronize());
  topk_decode_gathered_cpu(values.data(), indices.data(), workers, k, n, ref.data());
  EXPECT_EQ(bits(dy.download()), bits(ref));
}

}  // namespace
