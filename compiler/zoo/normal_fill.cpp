// Seeded normal floats 8 at a time (AVX-512 + libmvec) or 4 at a time (AVX2 + libmvec), each
// proven equal to the scalar draw.
//
// Compiled with -ffp-contract=off (CMakeLists.txt): every multiply and add below must round
// exactly as the scalar expression in ir::CounterRng::normal and its caller do (no FMA).
#include "compiler/zoo/normal_fill.hpp"

#include <immintrin.h>

#include <cmath>
#include <cstring>
#include <numbers>
#include <optional>

namespace tessel::zoo {

namespace {

#define TESSEL_NORMAL_FILL_TARGET __attribute__((target("avx512f,avx512dq,avx512vl")))

// glibc's libmvec: log and cos on 8 doubles (the AVX-512 variants GCC itself calls when it
// vectorises a loop of log/cos under -ffast-math).
extern "C" TESSEL_NORMAL_FILL_TARGET __m512d _ZGVeN8v_log(__m512d x);
extern "C" TESSEL_NORMAL_FILL_TARGET __m512d _ZGVeN8v_cos(__m512d x);

float scalar_draw(const ir::CounterRng& rng, double mean, double std_dev, std::uint64_t index) {
  return static_cast<float>(mean + std_dev * rng.normal(index));
}

// Eight lanes in GCC's vector extension: plain operators, each lane rounding as a scalar does.
using U64x8 = std::uint64_t __attribute__((vector_size(64)));
using F64x8 = double __attribute__((vector_size(64)));
using F32x8 = float __attribute__((vector_size(32)));

#define TESSEL_NORMAL_FILL_AVX2_TARGET __attribute__((target("avx2")))

// The splitmix64 bits of CounterRng::uniform, splitmix64(key ^ splitmix64(counter)), on each lane
// of a vector of 8 or 4 uint64, in place (AVX2 code, inlined into the AVX-512 path too; by
// reference, since a vector argument of another width than the target's changes the ABI).
template <class U64xN>
TESSEL_NORMAL_FILL_AVX2_TARGET inline void counter_bits(std::uint64_t key, U64xN& x) {
  for (int round = 0; round < 2; ++round) {
    if (round == 1) x ^= key;
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
  }
}

// CounterRng::uniform at 8 counters: (bits >> 11) * 2^-53, both steps exact.
TESSEL_NORMAL_FILL_TARGET inline F64x8 uniform_x8(std::uint64_t key, U64x8 counters) {
  U64x8 bits = counters;
  counter_bits(key, bits);
  return __builtin_convertvector(bits >> 11, F64x8) * 0x1.0p-53;
}

TESSEL_NORMAL_FILL_TARGET inline F64x8 magnitude(F64x8 x) {
  return x < 0.0 ? -x : x;
}

TESSEL_NORMAL_FILL_TARGET std::size_t fill_avx512(const ir::CounterRng& rng, double mean,
                                                  double std_dev, float* out, std::uint64_t first,
                                                  std::size_t count) {
  const std::uint64_t key = rng.key();
  const U64x8 lane = {0, 1, 2, 3, 4, 5, 6, 7};
  // Bounds (see normal_fill.hpp): libmvec's log and cos are within a few ulp (2^-50 relative)
  // of libm's; 2^-36 of the radius covers the log's relative and the cos's absolute error
  // with a factor of ~2^13 to spare. 2^-45 of the magnitudes covers the roundings of the two
  // results' products and sums, which may each differ by an ulp, and the rounding of x +- B.
  constexpr double kRadiusBound = 0x1.0p-36, kRoundingBound = 0x1.0p-45;
  const double abs_mean = std::fabs(mean), abs_std = std::fabs(std_dev);
  std::size_t scalar = 0, i = 0;
  for (; i + 8 <= count; i += 8) {
    const U64x8 index = (first + i) + lane;
    const U64x8 counter1 = 2 * index, counter2 = counter1 + 1;  // as normal() draws them
    const F64x8 u1 = 1.0 - uniform_x8(key, counter1);
    const F64x8 u2 = uniform_x8(key, counter2);
    // The maskz form: GCC 12 warns that the plain one's undefined passthrough is uninitialised.
    const F64x8 radius = _mm512_maskz_sqrt_pd(0xff, -2.0 * _ZGVeN8v_log(u1));
    const F64x8 normal = radius * _ZGVeN8v_cos(2.0 * std::numbers::pi * u2);
    const F64x8 product = std_dev * normal;
    const F64x8 x = mean + product;
    const F64x8 bound =
        abs_std * (radius * kRadiusBound) + kRoundingBound * (abs_mean + magnitude(product));
    const F32x8 value = __builtin_convertvector(x, F32x8);
    const F32x8 lo = __builtin_convertvector(x - bound, F32x8);
    const F32x8 hi = __builtin_convertvector(x + bound, F32x8);
    std::memcpy(out + i, &value, sizeof value);
    // Kept: x - B and x + B round to the same float as x, and that float is normal (not zero,
    // whose sign a tiny error could flip, nor subnormal); for normal floats == means same bits.
    const auto kept =
        (lo == value) & (hi == value) & ((value < 0.0f ? -value : value) >= 0x1.0p-126f);
    for (unsigned k = 0; k < 8; ++k)
      if (!kept[k]) {
        out[i + k] = scalar_draw(rng, mean, std_dev, first + i + k);
        ++scalar;
      }
  }
  for (; i < count; ++i, ++scalar) out[i] = scalar_draw(rng, mean, std_dev, first + i);
  return scalar;
}

// The same on 4 lanes for CPUs with AVX2 and not AVX-512 (session 17's AMD EPYC host), with
// libmvec's AVX2 log and cos (glibc documents the same few-ulp error for them) and the same
// bounds.
extern "C" TESSEL_NORMAL_FILL_AVX2_TARGET __m256d _ZGVdN4v_log(__m256d x);
extern "C" TESSEL_NORMAL_FILL_AVX2_TARGET __m256d _ZGVdN4v_cos(__m256d x);

using U64x4 = std::uint64_t __attribute__((vector_size(32)));
using F64x4 = double __attribute__((vector_size(32)));
using F32x4 = float __attribute__((vector_size(16)));

// The 53 bits as a double without a 64-bit integer conversion (AVX2 has none): each 32-bit half
// or'ed into the mantissa of 2^52 and 2^52 taken off (exact), then hi * 2^32 + lo (exact: < 2^53).
TESSEL_NORMAL_FILL_AVX2_TARGET inline F64x4 uniform_x4(std::uint64_t key, U64x4 counters) {
  U64x4 bits = counters;
  counter_bits(key, bits);
  bits >>= 11;
  const U64x4 exponent = U64x4{} + 0x4330000000000000ULL;  // the bits of 2^52
  const F64x4 high = __builtin_bit_cast(F64x4, (bits >> 32) | exponent) - 0x1.0p52;
  const F64x4 low = __builtin_bit_cast(F64x4, (bits & 0xffffffffULL) | exponent) - 0x1.0p52;
  return (high * 0x1.0p32 + low) * 0x1.0p-53;
}

TESSEL_NORMAL_FILL_AVX2_TARGET std::size_t fill_avx2(const ir::CounterRng& rng, double mean,
                                                     double std_dev, float* out,
                                                     std::uint64_t first, std::size_t count) {
  const std::uint64_t key = rng.key();
  const U64x4 lane = {0, 1, 2, 3};
  constexpr double kRadiusBound = 0x1.0p-36, kRoundingBound = 0x1.0p-45;  // as fill_avx512
  const double abs_mean = std::fabs(mean), abs_std = std::fabs(std_dev);
  std::size_t scalar = 0, i = 0;
  for (; i + 4 <= count; i += 4) {
    const U64x4 index = (first + i) + lane;
    const U64x4 counter1 = 2 * index, counter2 = counter1 + 1;
    const F64x4 u1 = 1.0 - uniform_x4(key, counter1);
    const F64x4 u2 = uniform_x4(key, counter2);
    const F64x4 radius = _mm256_sqrt_pd(-2.0 * _ZGVdN4v_log(u1));
    const F64x4 normal = radius * _ZGVdN4v_cos(2.0 * std::numbers::pi * u2);
    const F64x4 product = std_dev * normal;
    const F64x4 x = mean + product;
    const F64x4 bound = abs_std * (radius * kRadiusBound) +
                        kRoundingBound * (abs_mean + (product < 0.0 ? -product : product));
    const F32x4 value = __builtin_convertvector(x, F32x4);
    const F32x4 lo = __builtin_convertvector(x - bound, F32x4);
    const F32x4 hi = __builtin_convertvector(x + bound, F32x4);
    std::memcpy(out + i, &value, sizeof value);
    const auto kept =
        (lo == value) & (hi == value) & ((value < 0.0f ? -value : value) >= 0x1.0p-126f);
    for (unsigned k = 0; k < 4; ++k)
      if (!kept[k]) {
        out[i + k] = scalar_draw(rng, mean, std_dev, first + i + k);
        ++scalar;
      }
  }
  for (; i < count; ++i, ++scalar) out[i] = scalar_draw(rng, mean, std_dev, first + i);
  return scalar;
}

bool avx512_available() {
  static const bool available = __builtin_cpu_supports("avx512f") &&
                                __builtin_cpu_supports("avx512dq") &&
                                __builtin_cpu_supports("avx512vl");
  return available;
}

}  // namespace

int normal_fill_lanes() {
  static const int lanes = avx512_available() ? 8 : __builtin_cpu_supports("avx2") ? 4 : 1;
  return lanes;
}

std::size_t fill_normal_floats(const ir::CounterRng& rng, double mean, double std_dev,
                               std::span<float> out, std::uint64_t first_index) {
  switch (normal_fill_lanes()) {
    case 8:
      return fill_avx512(rng, mean, std_dev, out.data(), first_index, out.size());
    case 4:
      return fill_avx2(rng, mean, std_dev, out.data(), first_index, out.size());
    default:
      break;
  }
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = scalar_draw(rng, mean, std_dev, first_index + i);
  return out.size();
}

std::optional<std::size_t> fill_normal_floats_4_wide(const ir::CounterRng& rng, double mean,
                                                     double std_dev, std::span<float> out,
                                                     std::uint64_t first_index) {
  if (!__builtin_cpu_supports("avx2")) return std::nullopt;
  return fill_avx2(rng, mean, std_dev, out.data(), first_index, out.size());
}

}  // namespace tessel::zoo
