// The functional datapath's hot loops: int32 (mod 2^32) multiply-accumulate over contiguous
// int16 operands, written for the auto-vectoriser (cloned per x86-64 ISA level) or, for the
// dense conv, with AVX-512 VNNI where the CPU has it.
#pragma once

#include <cstdint>

#include "support/int_ops.hpp"

namespace tessel::sim::kernels {

/// Dense conv taps: `sums[o] += a[i] * w[i * out_channels + o]` for every `i < in_channels`,
/// `o < out_channels`, in uint32 arithmetic (the ISA's int32 wrap-around; addition mod 2^32 is
/// associative, so the order of the terms does not change the result). `w` holds one weight
/// row of `out_channels` elements per input channel. The arrays must not overlap.
void accumulate_dense(const std::int32_t* a, std::int64_t in_channels, const std::int16_t* w,
                      std::int64_t out_channels, std::uint32_t* sums);

/// The input channels of one dense conv tap taken two at a time: `in_pairs` = ceil(in / 2).
inline std::int64_t channel_pairs(std::int64_t in_channels) {
  return (in_channels + 1) / 2;
}

/// Index of weight (input channel i, output channel o) of one tap in the pair-interleaved
/// layout accumulate_dense_pairs reads: [i / 2][o][i % 2] (with an odd input channel count the
/// last pair's second element is 0).
inline std::int64_t pair_index(std::int64_t i, std::int64_t o, std::int64_t out_channels) {
  return ((i / 2) * out_channels + o) * 2 + (i % 2);
}

/// One dense conv tap over a run of output pixels:
///   sums[p * out_channels + o] += sum_{i < 2 * in_pairs} pixels[p * pixel_stride + i] * w(i, o)
/// for every p < pixel_count and o < out_channels, in uint32 arithmetic (exact int32 products of
/// int16 operands, summed mod 2^32, so the result does not depend on the order of the terms).
/// `w` is one tap's weights in pair_index layout; each pixel holds 2 * in_pairs int16 values
/// (an odd channel count padded with a 0). Several pixels share each weight load, and on CPUs
/// with AVX-512 VNNI one `vpdpwssd` does 32 multiply-accumulates. Arrays must not overlap.
void accumulate_dense_pairs(const std::int16_t* pixels, std::int64_t pixel_stride,
                            std::int64_t pixel_count, std::int64_t in_pairs, const std::int16_t* w,
                            std::int64_t out_channels, std::uint32_t* sums);

/// accumulate_dense_pairs without the VNNI path (what CPUs without AVX-512 VNNI run; tests
/// compare the two).
void accumulate_dense_pairs_portable(const std::int16_t* pixels, std::int64_t pixel_stride,
                                     std::int64_t pixel_count, std::int64_t in_pairs,
                                     const std::int16_t* w, std::int64_t out_channels,
                                     std::uint32_t* sums);

/// The vector unit's requantize of one pixel: `out[c] = intops::requantize(acc[c], q_c)` for
/// c < count, `acc` being `count` little-endian int32 at `src`; q_c is `q` with its multiplier
/// and shift replaced by the 8-byte table entry c (int32 multiplier, int32 shift) when `table`
/// is not null. Bit-identical to the scalar definition, in int64 lanes.
void requantize(const std::uint8_t* src, std::int64_t count, const std::uint8_t* table,
                const intops::Requant& q, std::int32_t* out);

/// The vector unit's residual add of one pixel: `out[c] = intops::add_requantize(a[c], b[c],
/// q)` for c < count, `a` and `b` holding little-endian signed elements of `bytes` (1 or 2).
void add_requantize(const std::uint8_t* a, const std::uint8_t* b, std::uint64_t bytes,
                    std::int64_t count, const intops::AddRequant& q, std::int32_t* out);

/// Stores `count` values as little-endian integers of `bytes` (1, 2 or 4) each at `dst`, keeping
/// the low bytes (as write_element does). `values` and `dst` must not overlap.
void store_elements(const std::int32_t* values, std::int64_t count, std::uint64_t bytes,
                    std::uint8_t* dst);

/// Writes one output pixel's accumulators: `count` little-endian int32 at `slot` become
/// `start[o] + sums[o]` (mod 2^32), `start` being `count` little-endian int32 (the bias, or
/// `slot` itself to accumulate) or, when null, 0.
void store_accumulators(const std::uint32_t* sums, const std::uint8_t* start, std::int64_t count,
                        std::uint8_t* slot);

/// Depthwise conv tap: `sums[c] += a[c] * w[c]` for `c < channels`, uint32 arithmetic.
void accumulate_depthwise(const std::int32_t* a, const std::int16_t* w, std::int64_t channels,
                          std::uint32_t* sums);

}  // namespace tessel::sim::kernels
