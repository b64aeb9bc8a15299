// The datapath's loops (kernels.hpp): the portable forms, compiled -O3 for the auto-vectoriser
// (cloned per x86-64 level), and the run-time choice of the AVX-512 (kernels_avx512.cpp) and AVX2
// (kernels_avx2.cpp) forms, which compute the same bytes.
#include "sim/core/kernels.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "sim/core/kernels_simd.hpp"

// Each loop is compiled once per x86-64 ISA level and picked by the CPU at load time (GCC
// ifunc), as compiler/targets/cpu/nhwc_kernels.cpp does; the results are the same on every
// level (integer arithmetic mod 2^32).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_ADDRESS__)
#define TESSEL_SIM_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define TESSEL_SIM_CLONES
#endif

namespace tessel::sim::kernels {

bool simd_kernels_enabled() {
  static const bool enabled = [] {
    const char* value = std::getenv("TESSEL_SIM_PORTABLE_KERNELS");
    return value == nullptr || value[0] == '\0' || std::strcmp(value, "0") == 0;
  }();
  return enabled;
}

bool avx512_kernels_enabled() {
  static const bool enabled = [] {
    const char* value = std::getenv("TESSEL_SIM_NO_AVX512");
    return simd_kernels_enabled() &&
           (value == nullptr || value[0] == '\0' || std::strcmp(value, "0") == 0);
  }();
  return enabled;
}

namespace {

/// A product in the ISA's int32 arithmetic: exact for int16 operands (|a * w| <= 2^30), then
/// taken mod 2^32 so that sums wrap instead of overflowing.
inline std::uint32_t product(std::int32_t a, std::int16_t w) {
  return static_cast<std::uint32_t>(a) * static_cast<std::uint32_t>(std::int32_t{w});
}

}  // namespace

namespace {

/// The portable dense conv: one pixel at a time, the output channels vectorised.
TESSEL_SIM_CLONES void conv_dense_generic(
    const std::uint8_t* image, const std::int64_t* pixel_offsets, std::int64_t pixel_count,
    const std::int64_t* tap_offsets, std::int64_t tap_count, std::int64_t in_pairs,
    const std::int16_t* w, std::int64_t out_channels, std::int64_t block, AccInit init,
    const std::uint8_t* bias, std::uint8_t* acc, const std::int64_t* slot_offsets) {
  std::vector<std::uint32_t> sums(static_cast<std::size_t>(out_channels));
  std::vector<std::int16_t> x(static_cast<std::size_t>(2 * in_pairs));
  for (std::int64_t p = 0; p < pixel_count; ++p) {
    std::fill(sums.begin(), sums.end(), 0u);
    for (std::int64_t t = 0; t < tap_count; ++t) {
      std::memcpy(x.data(), image + pixel_offsets[p] + tap_offsets[t],
                  static_cast<std::size_t>(4 * in_pairs));
      for (std::int64_t first = 0; first < out_channels; first += block) {
        const std::int64_t width = std::min(block, out_channels - first);
        const std::int16_t* wt =
            w + dense_index(t, 0, first, tap_count, in_pairs, out_channels, block);
        std::uint32_t* __restrict out = sums.data() + first;
        for (std::int64_t k = 0; k < in_pairs; ++k) {
          const std::int16_t a0 = x[static_cast<std::size_t>(2 * k)];
          const std::int16_t a1 = x[static_cast<std::size_t>(2 * k + 1)];
          const std::int16_t* __restrict wk = wt + 2 * k * width;
          for (std::int64_t o = 0; o < width; ++o)
            out[o] += product(a0, wk[2 * o]) + product(a1, wk[2 * o + 1]);
        }
      }
    }
    std::uint8_t* slot = acc + slot_offsets[p];
    const std::uint8_t* start = init == AccInit::kBias   ? bias
                                : init == AccInit::kSelf ? slot
                                                         : nullptr;
    store_accumulators(sums.data(), start, out_channels, slot);
  }
}

}  // namespace

std::int64_t dense_block(std::int64_t out_channels) {
#ifdef TESSEL_SIM_VNNI
  if (!detail::cpu_has_vnni() && detail::cpu_has_avx2()) return 16;
#endif
  return out_channels;
}

void conv_dense(const std::uint8_t* image, const std::int64_t* pixel_offsets,
                std::int64_t pixel_count, const std::int64_t* tap_offsets, std::int64_t tap_count,
                std::int64_t in_pairs, const std::int16_t* w, std::int64_t out_channels,
                std::int64_t block, AccInit init, const std::uint8_t* bias, std::uint8_t* acc,
                const std::int64_t* slot_offsets) {
#ifdef TESSEL_SIM_VNNI
  // The VNNI loop reads one block (its 64-channel chunks would straddle narrower ones).
  if (detail::cpu_has_vnni() && block >= out_channels) {
    detail::conv_dense_vnni(image, pixel_offsets, pixel_count, tap_offsets, tap_count, in_pairs, w,
                            out_channels, init, bias, acc, slot_offsets);
    return;
  }
  if (detail::cpu_has_avx2()) {
    detail::conv_dense_avx2_blocks(image, pixel_offsets, pixel_count, tap_offsets, tap_count,
                                   in_pairs, w, out_channels, block, init, bias, acc, slot_offsets);
    return;
  }
#endif
  conv_dense_generic(image, pixel_offsets, pixel_count, tap_offsets, tap_count, in_pairs, w,
                     out_channels, block, init, bias, acc, slot_offsets);
}

bool conv_dense_avx2(const std::uint8_t* image, const std::int64_t* pixel_offsets,
                     std::int64_t pixel_count, const std::int64_t* tap_offsets,
                     std::int64_t tap_count, std::int64_t in_pairs, const std::int16_t* w,
                     std::int64_t out_channels, std::int64_t block, AccInit init,
                     const std::uint8_t* bias, std::uint8_t* acc,
                     const std::int64_t* slot_offsets) {
#ifdef TESSEL_SIM_VNNI
  if (detail::cpu_has_avx2()) {
    detail::conv_dense_avx2_blocks(image, pixel_offsets, pixel_count, tap_offsets, tap_count,
                                   in_pairs, w, out_channels, block, init, bias, acc, slot_offsets);
    return true;
  }
#endif
  return false;
}

std::vector<std::int32_t> drop_zero_pairs(PairWeights& w, std::int64_t tap_count,
                                          std::int64_t in_pairs, std::int64_t out_channels,
                                          std::int64_t block) {
  // Pair k's weights in tap t of the block starting at channel `first`: one run of 2 * width.
  const auto run = [&](std::int64_t pairs, std::int64_t first, std::int64_t t, std::int64_t k) {
    return dense_index(t, 2 * k, first, tap_count, pairs, out_channels, block);
  };
  // One pass in memory order; a pair found nonzero is not read again.
  std::vector<char> nonzero(static_cast<std::size_t>(in_pairs), 0);
  for (std::int64_t first = 0; first < out_channels; first += block) {
    const std::int64_t width = std::min(block, out_channels - first);
    for (std::int64_t t = 0; t < tap_count; ++t)
      for (std::int64_t k = 0; k < in_pairs; ++k) {
        char& seen = nonzero[static_cast<std::size_t>(k)];
        if (seen) continue;
        const std::int16_t* pair = w.data() + run(in_pairs, first, t, k);
        seen = std::any_of(pair, pair + 2 * width, [](std::int16_t v) { return v != 0; });
      }
  }
  std::vector<std::int64_t> kept;
  for (std::int64_t k = 0; k < in_pairs; ++k)
    if (nonzero[static_cast<std::size_t>(k)]) kept.push_back(k);
  const auto count = static_cast<std::int64_t>(kept.size());
  if (count == 0 || 4 * count > 3 * in_pairs) return {};
  // In place, front to back (block, tap, kept pair): each run moves to where the narrower
  // layout puts it, never past where it came from, and the destinations ascend.
  for (std::int64_t first = 0; first < out_channels; first += block) {
    const std::int64_t width = std::min(block, out_channels - first);
    for (std::int64_t t = 0; t < tap_count; ++t)
      for (std::int64_t j = 0; j < count; ++j)
        std::memmove(w.data() + run(count, first, t, j),
                     w.data() + run(in_pairs, first, t, kept[static_cast<std::size_t>(j)]),
                     static_cast<std::size_t>(2 * width) * sizeof(std::int16_t));
  }
  w.resize(static_cast<std::size_t>(tap_count * count * 2 * out_channels));
  std::vector<std::int32_t> channels;
  for (const std::int64_t k : kept) {
    channels.push_back(static_cast<std::int32_t>(2 * k));
    channels.push_back(static_cast<std::int32_t>(2 * k + 1));
  }
  return channels;
}

void conv_dense_portable(const std::uint8_t* image, const std::int64_t* pixel_offsets,
                         std::int64_t pixel_count, const std::int64_t* tap_offsets,
                         std::int64_t tap_count, std::int64_t in_pairs, const std::int16_t* w,
                         std::int64_t out_channels, std::int64_t block, AccInit init,
                         const std::uint8_t* bias, std::uint8_t* acc,
                         const std::int64_t* slot_offsets) {
  conv_dense_generic(image, pixel_offsets, pixel_count, tap_offsets, tap_count, in_pairs, w,
                     out_channels, block, init, bias, acc, slot_offsets);
}

namespace {

/// round_half_away(t, r) (support/int_ops.hpp) without branches: on |t|, then the sign back;
/// r = 0 adds a half of 0. Exact for |t| < 2^62, as the scalar one.
inline std::int64_t round_half_away_lanes(std::int64_t t, std::int64_t r) {
  const std::int64_t sign = t >> 63;  // 0 or -1
  const std::int64_t magnitude = (t ^ sign) - sign;
  const std::int64_t half = (std::int64_t{1} << r) >> 1;
  const std::int64_t rounded = (magnitude + half) >> r;
  return (rounded ^ sign) - sign;
}

inline std::int32_t clamp_lanes(std::int64_t v, std::int32_t lo, std::int32_t hi) {
  return static_cast<std::int32_t>(std::min<std::int64_t>(std::max<std::int64_t>(v, lo), hi));
}

/// Little-endian signed loads (the scratchpads' byte order on every host; GCC merges the bytes

}  // namespace

using detail::load_i16;
using detail::load_i32;

TESSEL_SIM_CLONES void requantize(const std::uint8_t* src, std::int64_t count,
                                  const std::uint8_t* table, const intops::Requant& q,
                                  std::int32_t* out) {
  // The parameters in locals and `out` restrict: otherwise every store to `out` could change
  // `q`, and the loops stay scalar.
  std::int32_t* __restrict result = out;
  const std::int64_t multiplier = q.multiplier, shift = q.shift, zero_point = q.zero_point;
  const std::int32_t lo = q.lo, hi = q.hi;
  if (table == nullptr) {
    for (std::int64_t c = 0; c < count; ++c)
      result[c] = clamp_lanes(
          round_half_away_lanes(std::int64_t{load_i32(src + 4 * c)} * multiplier, shift) +
              zero_point,
          lo, hi);
    return;
  }
  for (std::int64_t c = 0; c < count; ++c)
    result[c] = clamp_lanes(
        round_half_away_lanes(std::int64_t{load_i32(src + 4 * c)} * load_i32(table + 8 * c),
                              std::int64_t{load_i32(table + 8 * c + 4)}) +
            zero_point,
        lo, hi);
}

void requantize_store(const std::uint8_t* src, std::int64_t count, const std::uint8_t* table,
                      const intops::Requant& q, std::uint64_t bytes, std::uint8_t* dst) {
  requantize_store_pixels(src, 0, 1, count, table, q, bytes, dst, 0);
}

void requantize_store_pixels(const std::uint8_t* src, std::int64_t src_step, std::int64_t pixels,
                             std::int64_t count, const std::uint8_t* table,
                             const intops::Requant& q, std::uint64_t bytes, std::uint8_t* dst,
                             std::int64_t dst_step) {
#ifdef TESSEL_SIM_VNNI
  if (detail::cpu_has_avx512() && (bytes == 1 || bytes == 2)) {
    detail::avx512_requantize_store_pixels(src, src_step, pixels, count, table, q, bytes, dst,
                                           dst_step);
    return;
  }
  if (detail::cpu_has_avx2() && (bytes == 1 || bytes == 2)) {
    detail::avx2_requantize_store_pixels(src, src_step, pixels, count, table, q, bytes, dst,
                                         dst_step);
    return;
  }
#endif
  // Portable: 8 channels at a time through a small buffer, the same read-before-write order.
  std::int32_t values[8];
  for (std::int64_t pixel = 0; pixel < pixels; ++pixel, src += src_step, dst += dst_step)
    for (std::int64_t c = 0; c < count; c += 8) {
      const std::int64_t n = std::min<std::int64_t>(8, count - c);
      requantize(src + 4 * c, n, table ? table + 8 * c : nullptr, q, values);
      store_elements(values, n, bytes, dst + static_cast<std::int64_t>(bytes) * c);
    }
}

void add_requantize_store(const std::uint8_t* a, const std::uint8_t* b, std::uint64_t bytes,
                          std::int64_t count, const intops::AddRequant& q, std::uint8_t* dst) {
#ifdef TESSEL_SIM_VNNI
  if (detail::cpu_has_avx512() && (bytes == 1 || bytes == 2)) {
    detail::avx512_add_requantize_store(a, b, bytes, count, q, dst);
    return;
  }
#endif
  const auto step = static_cast<std::int64_t>(bytes);
  std::int64_t done = 0;  // elements the AVX2 loops stored (whole steps), the rest below
#ifdef TESSEL_SIM_VNNI
  if (detail::cpu_has_avx2() && (bytes == 1 || bytes == 2))
    done = detail::avx2_add_requantize_store(a, b, bytes, count, q, dst);
#endif
  std::int32_t values[8];
  for (std::int64_t c = done; c < count; c += 8) {
    const std::int64_t n = std::min<std::int64_t>(8, count - c);
    add_requantize(a + step * c, b + step * c, bytes, n, q, values);
    store_elements(values, n, bytes, dst + step * c);
  }
}

TESSEL_SIM_CLONES void add_requantize(const std::uint8_t* a, const std::uint8_t* b,
                                      std::uint64_t bytes, std::int64_t count,
                                      const intops::AddRequant& q, std::int32_t* out) {
  std::int32_t* __restrict result = out;
  const std::int64_t multiplier_a = q.multiplier_a, multiplier_b = q.multiplier_b;
  const std::int64_t shift = q.shift, zero_point = q.zero_point;
  const std::int32_t lo = q.lo, hi = q.hi;
  if (bytes == 1) {
    for (std::int64_t c = 0; c < count; ++c)
      result[c] = clamp_lanes(
          round_half_away_lanes(std::int64_t{static_cast<std::int8_t>(a[c])} * multiplier_a +
                                    std::int64_t{static_cast<std::int8_t>(b[c])} * multiplier_b,
                                shift) +
              zero_point,
          lo, hi);
    return;
  }
  for (std::int64_t c = 0; c < count; ++c)
    result[c] =
        clamp_lanes(round_half_away_lanes(std::int64_t{load_i16(a + 2 * c)} * multiplier_a +
                                              std::int64_t{load_i16(b + 2 * c)} * multiplier_b,
                                          shift) +
                        zero_point,
                    lo, hi);
}

TESSEL_SIM_CLONES void store_elements(const std::int32_t* values, std::int64_t count,
                                      std::uint64_t bytes, std::uint8_t* dst) {
  std::uint8_t* __restrict out = dst;
  if (bytes == 1) {
    for (std::int64_t c = 0; c < count; ++c) out[c] = static_cast<std::uint8_t>(values[c]);
  } else if (bytes == 2) {
    for (std::int64_t c = 0; c < count; ++c) {
      const auto u = static_cast<std::uint32_t>(values[c]);
      out[2 * c] = static_cast<std::uint8_t>(u);
      out[2 * c + 1] = static_cast<std::uint8_t>(u >> 8);
    }
  } else {
    for (std::int64_t c = 0; c < count; ++c) {
      const auto u = static_cast<std::uint32_t>(values[c]);
      for (std::uint64_t k = 0; k < bytes; ++k)
        out[static_cast<std::int64_t>(bytes) * c + static_cast<std::int64_t>(k)] =
            static_cast<std::uint8_t>(u >> (8 * k));
    }
  }
}

TESSEL_SIM_CLONES void store_accumulators(const std::uint32_t* sums, const std::uint8_t* start,
                                          std::int64_t count, std::uint8_t* slot) {
  for (std::int64_t o = 0; o < count; ++o) {
    const std::uint32_t value =
        (start ? static_cast<std::uint32_t>(load_i32(start + 4 * o)) : 0u) + sums[o];
    std::uint8_t* p = slot + 4 * o;
    p[0] = static_cast<std::uint8_t>(value);
    p[1] = static_cast<std::uint8_t>(value >> 8);
    p[2] = static_cast<std::uint8_t>(value >> 16);
    p[3] = static_cast<std::uint8_t>(value >> 24);
  }
}

TESSEL_SIM_CLONES void max_elements(const std::uint8_t* src, std::int64_t count,
                                    std::uint64_t bytes, std::uint8_t* best) {
  // memcpy per element: unaligned, alias-safe loads the vectoriser turns into vector ones.
  std::uint8_t* __restrict out = best;
  if (bytes == 1) {
    for (std::int64_t c = 0; c < count; ++c) {
      const auto v = static_cast<std::int8_t>(src[c]);
      const auto b = static_cast<std::int8_t>(out[c]);
      out[c] = static_cast<std::uint8_t>(std::max(v, b));
    }
    return;
  }
  for (std::int64_t c = 0; c < count; ++c) {
    std::int16_t v, b;
    std::memcpy(&v, src + 2 * c, 2);
    std::memcpy(&b, out + 2 * c, 2);
    b = std::max(v, b);
    std::memcpy(out + 2 * c, &b, 2);
  }
}

void max_of_taps(const std::uint8_t* const* src, std::int64_t tap_count, std::int64_t count,
                 std::uint64_t bytes, std::uint8_t* best) {
#ifdef TESSEL_SIM_VNNI
  if (detail::cpu_has_avx512() && (bytes == 1 || bytes == 2)) {
    detail::avx512_max_of_taps(src, tap_count, count, bytes, best);
    return;
  }
#endif
  const std::uint32_t lowest = bytes == 1 ? 0x80u : 0x8000u;  // -128 / -32768, little-endian
  for (std::int64_t c = 0; c < count; ++c)
    for (std::uint64_t k = 0; k < bytes; ++k)
      best[static_cast<std::uint64_t>(c) * bytes + k] =
          static_cast<std::uint8_t>(lowest >> (8 * k));
  for (std::int64_t t = 0; t < tap_count; ++t) max_elements(src[t], count, bytes, best);
}

TESSEL_SIM_CLONES void add_elements(const std::uint8_t* src, std::int64_t count,
                                    std::uint64_t bytes, std::uint32_t* sums) {
  std::uint32_t* __restrict out = sums;
  if (bytes == 1) {
    for (std::int64_t c = 0; c < count; ++c)
      out[c] += static_cast<std::uint32_t>(std::int32_t{static_cast<std::int8_t>(src[c])});
    return;
  }
  for (std::int64_t c = 0; c < count; ++c) {
    std::int16_t v;
    std::memcpy(&v, src + 2 * c, 2);
    out[c] += static_cast<std::uint32_t>(std::int32_t{v});
  }
}

TESSEL_SIM_CLONES void accumulate_depthwise(const std::int32_t* a, const std::int16_t* w,
                                            std::int64_t channels, std::uint32_t* sums) {
  std::uint32_t* __restrict out = sums;
  for (std::int64_t c = 0; c < channels; ++c) out[c] += product(a[c], w[c]);
}

TESSEL_SIM_CLONES void accumulate_scaled(std::int32_t a, const std::int32_t* b, std::int64_t count,
                                         std::uint32_t* sums) {
  std::uint32_t* __restrict out = sums;
  const auto ua = static_cast<std::uint32_t>(a);
  for (std::int64_t n = 0; n < count; ++n) out[n] += ua * static_cast<std::uint32_t>(b[n]);
}

}  // namespace tessel::sim::kernels
