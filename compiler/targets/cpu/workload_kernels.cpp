// Vectorised kernels of the modern-workload integer ops: branch-free loops, cloned per x86-64
// ISA level (as nhwc_kernels.cpp).
#include "compiler/targets/cpu/workload_kernels.hpp"

#include <algorithm>

#include "compiler/targets/cpu/lanes.hpp"

namespace tessel::cpu::fast {
namespace {

using lanes::clamp_lane;
using lanes::rha_lane;

TESSEL_INLINE std::int64_t half_of(int shift) {
  return shift > 0 ? std::int64_t{1} << (shift - 1) : 0;
}

/// y[i] = one(a[i * as], b[i * bs]) for strides 0 or 1 (a broadcast operand is read once).
template <class T, class F>
TESSEL_INLINE void broadcast_apply(const T* a, std::int64_t as, const T* b, std::int64_t bs, T* y,
                                   std::int64_t n, const F& one) {
  if (as == 1 && bs == 1) {
    for (std::int64_t i = 0; i < n; ++i) y[i] = one(a[i], b[i]);
  } else if (as == 1) {
    const std::int64_t z = b[0];
    for (std::int64_t i = 0; i < n; ++i) y[i] = one(a[i], z);
  } else if (bs == 1) {
    const std::int64_t x = a[0];
    for (std::int64_t i = 0; i < n; ++i) y[i] = one(x, b[i]);
  } else {
    const T v = one(a[0], b[0]);
    for (std::int64_t i = 0; i < n; ++i) y[i] = v;
  }
}

template <class T>
TESSEL_INLINE void add_body(const T* a, std::int64_t as, const T* b, std::int64_t bs, T* y,
                            std::int64_t n, const intops::AddRequant& q) {
  const std::int64_t ma = q.multiplier_a, mb = q.multiplier_b, shift = q.shift;
  const std::int64_t half = half_of(q.shift), zp = q.zero_point, lo = q.lo, hi = q.hi;
  const auto one = [&](std::int64_t x, std::int64_t z) {
    return static_cast<T>(clamp_lane(rha_lane(x * ma + z * mb, half, shift) + zp, lo, hi));
  };
  broadcast_apply(a, as, b, bs, y, n, one);
}

template <class T>
TESSEL_INLINE void mul_body(const T* a, std::int64_t as, const T* b, std::int64_t bs, T* y,
                            std::int64_t n, const intops::Requant& q) {
  const std::int64_t m = q.multiplier, shift = q.shift;
  const std::int64_t half = half_of(q.shift), zp = q.zero_point, lo = q.lo, hi = q.hi;
  const auto one = [&](std::int64_t x, std::int64_t z) {
    return static_cast<T>(clamp_lane(rha_lane(x * z * m, half, shift) + zp, lo, hi));
  };
  broadcast_apply(a, as, b, bs, y, n, one);
}

template <class T>
TESSEL_INLINE void table8_body(const std::int8_t* x, const std::int32_t* table, T* y,
                               std::int64_t n) {
  const std::int32_t* centre = table + 128;
  for (std::int64_t i = 0; i < n; ++i) y[i] = static_cast<T>(centre[x[i]]);
}

template <class T>
TESSEL_INLINE void table16_body(const std::int16_t* x, const std::int32_t* table, T* y,
                                std::int64_t n, std::int32_t lo, std::int32_t hi) {
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int32_t v = x[i], h = (v >> 8) + 128, l = v & 255;
    const std::int64_t low = table[h], high = table[h + 1];
    constexpr int kShift = 8 + intops::kTableFractionBits;
    const std::int64_t r =
        rha_lane(low * 256 + (high - low) * l, std::int64_t{1} << (kShift - 1), kShift);
    y[i] = static_cast<T>(clamp_lane(r, lo, hi));
  }
}

template <class T>
TESSEL_INLINE void softmax_body(const T* x, const std::uint8_t* keep, T* y, std::int64_t rows,
                                std::int64_t len, const intops::SoftmaxParams& p, std::int64_t* e) {
  const std::int32_t* high = p.exp_high.data();
  const std::int32_t* low = p.exp_low.data();
  const std::int64_t m_out = p.output.multiplier, shift = p.output.shift;
  const std::int64_t half = half_of(p.output.shift), zp = p.output.zero_point;
  const std::int64_t lo = p.output.lo, hi = p.output.hi;
  for (std::int64_t r = 0; r < rows; ++r) {
    const T* row = x + r * len;
    const std::uint8_t* k = keep ? keep + r * len : nullptr;
    T* out = y + r * len;
    std::int32_t m = -65536;  // below every 16-bit code: stays when nothing is kept
    if (k) {
      for (std::int64_t j = 0; j < len; ++j) m = k[j] && row[j] > m ? row[j] : m;
    } else {
      for (std::int64_t j = 0; j < len; ++j) m = row[j] > m ? row[j] : m;
    }
    if (m == -65536) {  // a row masked whole
      for (std::int64_t j = 0; j < len; ++j) out[j] = 0;
      continue;
    }
    std::int64_t sum = 0;
    for (std::int64_t j = 0; j < len; ++j) {
      // u = m - x_j in [0, 65535] for kept j; a masked j reads any entry and gets 0.
      const std::int32_t u = (m - row[j]) & 65535;
      const std::int64_t v =
          rha_lane(std::int64_t{high[u >> 8]} * low[u & 255], std::int64_t{1} << 14, 15);
      e[j] = k && !k[j] ? 0 : v;
      sum += e[j];
    }
    const std::int64_t reciprocal = (std::int64_t{1} << 45) / sum;
    for (std::int64_t j = 0; j < len; ++j) {
      const std::int64_t probability = rha_lane(e[j] * reciprocal, std::int64_t{1} << 14, 15);
      const T v =
          static_cast<T>(clamp_lane(rha_lane(probability * m_out, half, shift) + zp, lo, hi));
      out[j] = k && !k[j] ? T{0} : v;
    }
  }
}

template <class T>
TESSEL_INLINE void norm_body(const T* x, T* y, std::int64_t rows, std::int64_t n, bool centre,
                             std::int64_t epsilon_term, const NormLanes& a, std::int32_t lo,
                             std::int32_t hi) {
  for (std::int64_t r = 0; r < rows; ++r) {
    const T* row = x + r * n;
    T* out = y + r * n;
    std::int64_t s1 = 0, s2 = 0;
    for (std::int64_t k = 0; k < n; ++k) {
      s1 += row[k];
      s2 += std::int64_t{row[k]} * row[k];
    }
    const auto [inv, g] = intops::norm_scale(n, s1, s2, centre, epsilon_term);
    const std::int64_t offset = centre ? s1 : 0, t_shift = 38 - g;
    const std::int64_t t_half = std::int64_t{1} << (t_shift - 1);
    for (std::int64_t k = 0; k < n; ++k) {
      const std::int64_t c = n * row[k] - offset;
      const std::int64_t t = rha_lane(c * inv, t_half, t_shift);
      const std::int64_t v = rha_lane(t * a.multiplier[k] + a.bias[k], a.half[k], a.shift[k]);
      out[k] = static_cast<T>(clamp_lane(v, lo, hi));
    }
  }
}

}  // namespace

#define TESSEL_BINARY(T)                                                                      \
  TESSEL_CLONES void add_requantize(const T* a, std::int64_t as, const T* b, std::int64_t bs, \
                                    T* y, std::int64_t n, const intops::AddRequant& q) {      \
    add_body(a, as, b, bs, y, n, q);                                                          \
  }                                                                                           \
  TESSEL_CLONES void mul_requantize(const T* a, std::int64_t as, const T* b, std::int64_t bs, \
                                    T* y, std::int64_t n, const intops::Requant& q) {         \
    mul_body(a, as, b, bs, y, n, q);                                                          \
  }
TESSEL_BINARY(std::int8_t)
TESSEL_BINARY(std::int16_t)
#undef TESSEL_BINARY

TESSEL_CLONES void table_lookup(const std::int8_t* x, const std::int32_t* table, std::int8_t* y,
                                std::int64_t n) {
  table8_body(x, table, y, n);
}
TESSEL_CLONES void table_lookup(const std::int8_t* x, const std::int32_t* table, std::int16_t* y,
                                std::int64_t n) {
  table8_body(x, table, y, n);
}
TESSEL_CLONES void table_lookup(const std::int16_t* x, const std::int32_t* table, std::int8_t* y,
                                std::int64_t n, std::int32_t lo, std::int32_t hi) {
  table16_body(x, table, y, n, lo, hi);
}
TESSEL_CLONES void table_lookup(const std::int16_t* x, const std::int32_t* table, std::int16_t* y,
                                std::int64_t n, std::int32_t lo, std::int32_t hi) {
  table16_body(x, table, y, n, lo, hi);
}

TESSEL_CLONES void softmax_rows(const std::int8_t* x, const std::uint8_t* keep, std::int8_t* y,
                                std::int64_t rows, std::int64_t len, const intops::SoftmaxParams& p,
                                std::int64_t* scratch) {
  softmax_body(x, keep, y, rows, len, p, scratch);
}
TESSEL_CLONES void softmax_rows(const std::int16_t* x, const std::uint8_t* keep, std::int16_t* y,
                                std::int64_t rows, std::int64_t len, const intops::SoftmaxParams& p,
                                std::int64_t* scratch) {
  softmax_body(x, keep, y, rows, len, p, scratch);
}

TESSEL_CLONES void norm_rows(const std::int8_t* x, std::int8_t* y, std::int64_t rows,
                             std::int64_t n, bool centre, std::int64_t epsilon_term,
                             const NormLanes& affine, std::int32_t lo, std::int32_t hi) {
  norm_body(x, y, rows, n, centre, epsilon_term, affine, lo, hi);
}
TESSEL_CLONES void norm_rows(const std::int16_t* x, std::int16_t* y, std::int64_t rows,
                             std::int64_t n, bool centre, std::int64_t epsilon_term,
                             const NormLanes& affine, std::int32_t lo, std::int32_t hi) {
  norm_body(x, y, rows, n, centre, epsilon_term, affine, lo, hi);
}

TESSEL_CLONES void matmul_f32_rows(const float* a, const float* b, float* y, std::int64_t m0,
                                   std::int64_t m1, std::int64_t k, std::int64_t n) {
  constexpr std::int64_t kRows = 4, kCols = 256;
  alignas(64) double acc[kRows][kCols];
  for (std::int64_t c0 = 0; c0 < n; c0 += kCols) {
    const std::int64_t cols = std::min(kCols, n - c0);
    for (std::int64_t r0 = m0; r0 < m1; r0 += kRows) {
      const std::int64_t rows = std::min(kRows, m1 - r0);
      for (std::int64_t r = 0; r < kRows; ++r)
        for (std::int64_t j = 0; j < kCols; ++j) acc[r][j] = 0.0;
      for (std::int64_t t = 0; t < k; ++t) {
        const float* brow = b + t * n + c0;
        if (rows == kRows) {
          const double x0 = a[r0 * k + t], x1 = a[(r0 + 1) * k + t], x2 = a[(r0 + 2) * k + t],
                       x3 = a[(r0 + 3) * k + t];
          for (std::int64_t j = 0; j < cols; ++j) {
            const double v = brow[j];
            acc[0][j] += x0 * v;
            acc[1][j] += x1 * v;
            acc[2][j] += x2 * v;
            acc[3][j] += x3 * v;
          }
        } else {
          for (std::int64_t r = 0; r < rows; ++r) {
            const double x = a[(r0 + r) * k + t];
            for (std::int64_t j = 0; j < cols; ++j) acc[r][j] += x * brow[j];
          }
        }
      }
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t j = 0; j < cols; ++j)
          y[(r0 + r) * n + c0 + j] = static_cast<float>(acc[r][j]);
    }
  }
}

TESSEL_CLONES void gemm_f32_rows(const float* a, std::int64_t lda, const float* b_kn, float* acc,
                                 std::int64_t rows, std::int64_t k, std::int64_t n) {
  constexpr std::int64_t kCols = 512;
  for (std::int64_t c0 = 0; c0 < n; c0 += kCols) {
    const std::int64_t c1 = std::min(n, c0 + kCols);
    for (std::int64_t t = 0; t < k; ++t) {
      const float* bp = b_kn + t * n;
      for (std::int64_t r = 0; r < rows; ++r) {
        const float aval = a[r * lda + t];
        float* ar = acc + r * n;
        for (std::int64_t j = c0; j < c1; ++j) ar[j] += aval * bp[j];
      }
    }
  }
}

}  // namespace tessel::cpu::fast
