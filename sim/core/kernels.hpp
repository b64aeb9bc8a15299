// The functional datapath's hot loops: int32 (mod 2^32) multiply-accumulate over contiguous
// int16 operands, written for the auto-vectoriser and cloned per x86-64 ISA level.
#pragma once

#include <cstdint>

namespace tessel::sim::kernels {

/// Dense conv taps: `sums[o] += a[i] * w[i * out_channels + o]` for every `i < in_channels`,
/// `o < out_channels`, in uint32 arithmetic (the ISA's int32 wrap-around; addition mod 2^32 is
/// associative, so the order of the terms does not change the result). `w` holds one weight
/// row of `out_channels` elements per input channel. The arrays must not overlap.
void accumulate_dense(const std::int32_t* a, std::int64_t in_channels, const std::int16_t* w,
                      std::int64_t out_channels, std::uint32_t* sums);

/// Depthwise conv tap: `sums[c] += a[c] * w[c]` for `c < channels`, uint32 arithmetic.
void accumulate_depthwise(const std::int32_t* a, const std::int16_t* w, std::int64_t channels,
                          std::uint32_t* sums);

}  // namespace tessel::sim::kernels
