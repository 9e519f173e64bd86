// CPU twins of the PowerSGD steps (see powersgd.hpp for layouts and formulas).
#include "gradwire/kernels/powersgd.hpp"

#include <climits>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace gw::kernels {

void powersgd_check_sizes(std::int64_t m, std::int64_t n, int r) {
  if (m < 1 || n < 1 || m > INT_MAX || n > INT_MAX || m * n > INT_MAX) {
    throw std::invalid_argument("powersgd: matrix " + std::to_string(m) + " x " + std::to_string(n) +
                                " must be non-empty with m*n <= INT_MAX");
  }
  if (r < 1 || r > std::min(m, n)) {
    throw std::invalid_argument("powersgd: rank " + std::to_string(r) + " outside [1, min(m, n)]");
  }
}

std::pair<std::size_t, std::size_t> powersgd_matrix_shape(std::size_t n, std::size_t rows, std::size_t cols) {
  if (n == 0) throw std::invalid_argument("powersgd: no values");
  if (rows != 0 || cols != 0) {
    if (rows == 0 || cols == 0 || rows * cols != n) {
      throw std::invalid_argument("powersgd: rows x cols = " + std::to_string(rows) + " x " + std::to_string(cols) +
                                  " does not hold n = " + std::to_string(n) + " values");
    }
    return {rows, cols};
  }
  auto r = static_cast<std::size_t>(std::sqrt(static_cast<double>(n)));
  while (r * r > n) --r;
  while ((r + 1) * (r + 1) <= n) ++r;
  while (n % r != 0) --r;
  return {r, n / r};
}

void powersgd_init_q(float* q, std::int64_t n, int r, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  const std::int64_t count = n * r;
  auto uniform = [&gen] {  // (0, 1], 53 random bits
    return (static_cast<double>(gen() >> 11) + 1.0) * (1.0 / 9007199254740992.0);
  };
  for (std::int64_t i = 0; i < count; i += 2) {
    const double radius = std::sqrt(-2.0 * std::log(uniform()));
    const double angle = 2.0 * std::numbers::pi * uniform();
    q[i] = static_cast<float>(radius * std::cos(angle));
    if (i + 1 < count) q[i + 1] = static_cast<float>(radius * std::sin(angle));
  }
}

template <class T>
void powersgd_compute_p_cpu(const T* M, std::int64_t m, std::int64_t n, const T* Q, int r, T* P) {
  powersgd_check_sizes(m, n, r);
  for (std::int64_t i = 0; i < m; ++i) {
    const T* row = M + i * n;
    for (int j = 0; j < r; ++j) {
      const T* q = Q + static_cast<std::int64_t>(j) * n;
      double acc = 0.0;
      for (std::int64_t k = 0; k < n; ++k) acc += static_cast<double>(row[k]) * q[k];
      P[i + static_cast<std::int64_t>(j) * m] = static_cast<T>(acc);
    }
  }
}

template <class T>
void powersgd_orthogonalize_cpu(T* P, std::int64_t m, int r, double eps) {
  if (m < 1 || r < 1) throw std::invalid_argument("powersgd orthogonalize: empty P");
  std::vector<double> dots(static_cast<std::size_t>(r));
  for (int i = 0; i < r; ++i) {
    T* pi = P + static_cast<std::int64_t>(i) * m;
    for (int j = i; j < r; ++j) {
      const T* pj = P + static_cast<std::int64_t>(j) * m;
      double acc = 0.0;
      for (std::int64_t k = 0; k < m; ++k) acc += static_cast<double>(pi[k]) * pj[k];
      dots[static_cast<std::size_t>(j)] = acc;
    }
    const double d = std::sqrt(dots[static_cast<std::size_t>(i)]) + eps;
    if (d == 0.0) {
      for (std::int64_t k = 0; k < m; ++k) pi[k] = T(0);
      continue;
    }
    const double inv = 1.0 / d;
    for (std::int64_t k = 0; k < m; ++k) pi[k] = static_cast<T>(pi[k] * inv);
    for (int j = i + 1; j < r; ++j) {
      T* pj = P + static_cast<std::int64_t>(j) * m;
      const double c = dots[static_cast<std::size_t>(j)] * inv;
      for (std::int64_t k = 0; k < m; ++k) pj[k] = static_cast<T>(pj[k] - c * pi[k]);
    }
  }
}

template <class T>
void powersgd_compute_q_cpu(const T* M, std::int64_t m, std::int64_t n, const T* P, int r, T* Q) {
  powersgd_check_sizes(m, n, r);
  std::vector<double> acc(static_cast<std::size_t>(n * r), 0.0);
  for (std::int64_t i = 0; i < m; ++i) {
    const T* row = M + i * n;
    for (int j = 0; j < r; ++j) {
      const double p = P[i + static_cast<std::int64_t>(j) * m];
      double* a = acc.data() + static_cast<std::int64_t>(j) * n;
      for (std::int64_t k = 0; k < n; ++k) a[k] += p * row[k];
    }
  }
  for (std::size_t i = 0; i < acc.size(); ++i) Q[i] = static_cast<T>(acc[i]);
}

template <class T>
void powersgd_decompress_cpu(const T* P, const T* Q, std::int64_t m, std::int64_t n, int r, T* out) {
  powersgd_check_sizes(m, n, r);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t k = 0; k < n; ++k) {
      double acc = 0.0;
      for (int j = 0; j < r; ++j) {
        acc += static_cast<double>(P[i + static_cast<std::int64_t>(j) * m]) * Q[k + static_cast<std::int64_t>(j) * n];
      }
      out[i * n + k] = static_cast<T>(acc);
    }
  }
}

template <class T>
void powersgd_step_cpu(const T* M, std::int64_t m, std::int64_t n, int r, T* P, T* Q, T* out, double eps) {
  powersgd_compute_p_cpu(M, m, n, Q, r, P);
  powersgd_orthogonalize_cpu(P, m, r, eps);
  powersgd_compute_q_cpu(M, m, n, P, r, Q);
  powersgd_decompress_cpu(P, Q, m, n, r, out);
}

#define GW_POWERSGD_INSTANTIATE(T)                                                                   \
  template void powersgd_compute_p_cpu<T>(const T*, std::int64_t, std::int64_t, const T*, int, T*);  \
  template void powersgd_orthogonalize_cpu<T>(T*, std::int64_t, int, double);                        \
  template void powersgd_compute_q_cpu<T>(const T*, std::int64_t, std::int64_t, const T*, int, T*);  \
  template void powersgd_decompress_cpu<T>(const T*, const T*, std::int64_t, std::int64_t, int, T*); \
  template void powersgd_step_cpu<T>(const T*, std::int64_t, std::int64_t, int, T*, T*, T*, double);
GW_POWERSGD_INSTANTIATE(float)
GW_POWERSGD_INSTANTIATE(double)
#undef GW_POWERSGD_INSTANTIATE

}  // namespace gw::kernels
