// The functional datapath's hot loops: int32 (mod 2^32) multiply-accumulate over contiguous
// int16 operands, written for the auto-vectoriser (cloned per x86-64 ISA level) or, for the
// dense conv, with AVX-512 VNNI or AVX2 where the CPU has it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include "sim/core/default_init.hpp"
#include "sim/core/fresh_pages.hpp"
#include "support/int_ops.hpp"

namespace tessel::sim::kernels {

/// False when the environment sets TESSEL_SIM_PORTABLE_KERNELS (to anything but "" or "0"): then
/// every kernel here, and the AMX conv, runs its portable loop, what a CPU without AVX-512 runs
/// (read once per process; ctest's `sim_tests_portable_kernels` runs the kernel and datapath
/// tests so). True otherwise; each SIMD form still needs its CPU features.
bool simd_kernels_enabled();

/// False when simd_kernels_enabled() is, or when the environment sets TESSEL_SIM_NO_AVX512 (to
/// anything but "" or "0"): then the AVX-512 kernels (VNNI conv, vector unit) and the AMX conv
/// are off and the AVX2 ones run, what a CPU with AVX2 and no AVX-512 runs (read once per
/// process; ctest's `sim_tests_avx2` runs the kernel and datapath tests so).
bool avx512_kernels_enabled();

/// std::allocator whose value-initialisation (resize, the vector(n) constructor) leaves the
/// elements uninitialised: for buffers written in full before they are read, where the zero
/// fill would be one more pass over memory (packed weights: tens of MB a ResNet-50 run). Its
/// blocks are 64-byte aligned: malloc's large blocks start 16 bytes into a page, where each
/// 64-byte row of 16 packed output channels spans two cache lines and its second 32-byte
/// vector splits across them (the ResNet-50 programs simulate in 0.95x the time aligned).
/// Blocks of kHugeBlockBytes or more are fresh mappings on huge pages (map_fresh_pages).
template <class T>
struct UninitAllocator : std::allocator<T>, DefaultInitConstruct {
  template <class U>
  struct rebind {
    using other = UninitAllocator<U>;
  };
  UninitAllocator() = default;
  template <class U>
  explicit UninitAllocator(const UninitAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    if (n > SIZE_MAX / sizeof(T)) throw std::bad_alloc();
    if (n * sizeof(T) >= kHugeBlockBytes) return static_cast<T*>(map_fresh_pages(n * sizeof(T)));
    return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{kAlign}));
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n * sizeof(T) >= kHugeBlockBytes)
      unmap_fresh_pages(p, n * sizeof(T));
    else
      ::operator delete (p, std::align_val_t{kAlign});
  }
  static constexpr std::size_t kAlign = 64;
};

/// A dense conv's weights in pair_index layout, per tap (sized without a zero fill: the
/// packing writes every element).
using PairWeights = std::vector<std::int16_t, UninitAllocator<std::int16_t>>;

/// The input channels of one dense conv tap taken two at a time: `in_pairs` = ceil(in / 2).
inline std::int64_t channel_pairs(std::int64_t in_channels) {
  return (in_channels + 1) / 2;
}

/// Index of weight (input channel i, output channel o) of one tap in the pair-interleaved
/// layout: [i / 2][o][i % 2] (with an odd input channel count the last pair's second element
/// is 0). conv_dense's weights in one block (dense_index) are this layout, tap after tap.
inline std::int64_t pair_index(std::int64_t i, std::int64_t o, std::int64_t out_channels) {
  return ((i / 2) * out_channels + o) * 2 + (i % 2);
}

/// Index of weight (tap t, input channel i, output channel o) in the layout conv_dense reads:
/// the output channels in column blocks of `block` (the last block the rest), each block every
/// tap's pairs in turn, [o / block][t][i / 2][o % block][i % 2]. `block` is a multiple of 16
/// or at least `out_channels`, which gives one block: [t][i / 2][o][i % 2], pair_index per
/// tap. With blocks of 16 a 16-channel chunk's weights are one run (64 bytes a pair), which
/// the AVX2 loop streams from L1; one block's pair rows lie 4 * out_channels bytes apart.
inline std::int64_t dense_index(std::int64_t t, std::int64_t i, std::int64_t o,
                                std::int64_t tap_count, std::int64_t in_pairs,
                                std::int64_t out_channels, std::int64_t block) {
  const std::int64_t first = o - o % block;  // the block's first channel
  const std::int64_t width = std::min(block, out_channels - first);
  return first * tap_count * 2 * in_pairs + pair_index(i, o - first, width) +
         t * 2 * in_pairs * width;
}

/// The column block conv_dense reads fastest on this CPU (see dense_index): 16 where it takes
/// the AVX2 loop (the pair rows of one block would alias into a few L1 sets), else
/// `out_channels` (one block: the VNNI loop's 64-channel chunks).
std::int64_t dense_block(std::int64_t out_channels);

/// Where a dense conv's accumulators start (docs/isa.md `init`): at 0, at the bias row, or at
/// their own value (accumulate).
enum class AccInit { kZero, kBias, kSelf };

/// A dense conv over a list of output pixels, every tap and input channel pair reduced in
/// registers before one store per accumulator:
///   slot(p)[o] = start(p)[o] + sum_{t < tap_count} sum_{i < 2 * in_pairs} x(p, t)[i] * w_t(i, o)
/// in uint32 arithmetic (exact int32 products of int16 operands summed mod 2^32: the order of the
/// terms cannot change the result), for p < pixel_count and o < out_channels, where
/// - x(p, t) is the 2 * in_pairs int16 values (little-endian, any alignment) at byte
///   `image + pixel_offsets[p] + tap_offsets[t]`;
/// - w_t(i, o) = `w[dense_index(t, i, o, tap_count, in_pairs, out_channels, block)]`;
/// - slot(p) is the `out_channels` little-endian int32 at byte `acc + slot_offsets[p]`;
/// - start(p) is 0, the `out_channels` little-endian int32 at `bias`, or slot(p) itself.
/// Slots must not overlap the image, the weights or the bias, nor each other. On CPUs with
/// AVX-512 VNNI: up to 6 pixels x 64 output channels of accumulators in registers, one
/// `vpdpwssd` (32 multiply-accumulates) per pixel, weight vector and channel pair; on CPUs with
/// AVX2 and not VNNI (conv_dense_avx2), or with weights in blocks narrower than out_channels:
/// 6 pixels x 16 output channels, one `vpmaddwd` + `vpaddd` (16 multiply-accumulates) per
/// pixel, weight vector and channel pair.
void conv_dense(const std::uint8_t* image, const std::int64_t* pixel_offsets,
                std::int64_t pixel_count, const std::int64_t* tap_offsets, std::int64_t tap_count,
                std::int64_t in_pairs, const std::int16_t* w, std::int64_t out_channels,
                std::int64_t block, AccInit init, const std::uint8_t* bias, std::uint8_t* acc,
                const std::int64_t* slot_offsets);

/// Drops the input channel pairs whose weights are 0 in every tap and output channel from `w`
/// (conv_dense's weights: tap_count taps of in_pairs pairs x out_channels in dense_index
/// layout with `block`). Such a pair adds nothing whatever the input (x * 0 = 0, in int32
/// wrap-around too), as the 13 zero channels conv1's 3 are padded with. When at least a quarter of
/// the pairs and not all of them are dropped, `w` becomes the kept pairs' weights (the same layout
/// with in_pairs = kept) and the result lists their input channels, two per kept pair (2k, 2k + 1,
/// ascending; 2k + 1 may be the missing channel of an odd count): conv_dense with in_pairs = size /
/// 2 on an image whose taps hold those channels (in that order, the missing one as 0) gives the
/// same sums. Else `w` is unchanged and the result empty: fewer dropped pairs do not pay for
/// narrowing the image.
std::vector<std::int32_t> drop_zero_pairs(PairWeights& w, std::int64_t tap_count,
                                          std::int64_t in_pairs, std::int64_t out_channels,
                                          std::int64_t block);

/// conv_dense's AVX2 path alone, on any CPU with AVX2 (so that tests check it on VNNI hosts
/// too): true when it ran; false, with nothing written, on a CPU without AVX2 or when
/// simd_kernels_enabled() is false.
bool conv_dense_avx2(const std::uint8_t* image, const std::int64_t* pixel_offsets,
                     std::int64_t pixel_count, const std::int64_t* tap_offsets,
                     std::int64_t tap_count, std::int64_t in_pairs, const std::int16_t* w,
                     std::int64_t out_channels, std::int64_t block, AccInit init,
                     const std::uint8_t* bias, std::uint8_t* acc, const std::int64_t* slot_offsets);

/// conv_dense without the VNNI and AVX2 paths (what other CPUs run; tests compare them).
void conv_dense_portable(const std::uint8_t* image, const std::int64_t* pixel_offsets,
                         std::int64_t pixel_count, const std::int64_t* tap_offsets,
                         std::int64_t tap_count, std::int64_t in_pairs, const std::int16_t* w,
                         std::int64_t out_channels, std::int64_t block, AccInit init,
                         const std::uint8_t* bias, std::uint8_t* acc,
                         const std::int64_t* slot_offsets);

/// The vector unit's requantize of one pixel: `out[c] = intops::requantize(acc[c], q_c)` for
/// c < count, `acc` being `count` little-endian int32 at `src`; q_c is `q` with its multiplier
/// and shift replaced by the 8-byte table entry c (int32 multiplier, int32 shift) when `table`
/// is not null. Bit-identical to the scalar definition, in int64 lanes.
void requantize(const std::uint8_t* src, std::int64_t count, const std::uint8_t* table,
                const intops::Requant& q, std::int32_t* out);

/// requantize then store_elements in one pass: `count` values of `bytes` (1 or 2) at `dst`.
/// Reads channel c's accumulator before it writes channel c's output, 8 or 16 channels at a
/// time, so `dst` may overlap `src` only where it starts at or before `src` (an in-place
/// narrowing); `dst` must not overlap `table`. With AVX-512 on the CPU: 16 channels per step;
/// where every channel's multiplier is in [0, 2^31) and its shift in [32, 62] (and |z| <= 2^29)
/// in int32 lanes: the magnitude's products (vpmuludq on even and odd channels), their high
/// words gathered by one permutation, the sign back; else in int64 lanes (vpmuldq).
void requantize_store(const std::uint8_t* src, std::int64_t count, const std::uint8_t* table,
                      const intops::Requant& q, std::uint64_t bytes, std::uint8_t* dst);

/// requantize_store of `pixels` pixels: pixel p's `count` accumulators at `src + p * src_step`,
/// its outputs at `dst + p * dst_step` (steps in bytes), channel c of every pixel with table
/// entry c. Every pixel's output must lie apart from every pixel's accumulators, the other
/// outputs and the table (it goes 16 channels of all pixels at a time, loading their parameters
/// once); then the same bytes as `pixels` calls of requantize_store.
void requantize_store_pixels(const std::uint8_t* src, std::int64_t src_step, std::int64_t pixels,
                             std::int64_t count, const std::uint8_t* table,
                             const intops::Requant& q, std::uint64_t bytes, std::uint8_t* dst,
                             std::int64_t dst_step);

/// The vector unit's residual add of one pixel: `out[c] = intops::add_requantize(a[c], b[c],
/// q)` for c < count, `a` and `b` holding little-endian signed elements of `bytes` (1 or 2).
void add_requantize(const std::uint8_t* a, const std::uint8_t* b, std::uint64_t bytes,
                    std::int64_t count, const intops::AddRequant& q, std::int32_t* out);

/// add_requantize then store_elements (`bytes` each) in one pass, 8 to 64 channels at a time,
/// each step reading its channels of `a` and `b` before writing them: `dst` may be `a` or `b`
/// itself (an in-place add) or lie apart from both, not partly over either. With AVX-512 on the
/// CPU, by the parameters: a pass-through (shift 0, multipliers (1, 0) or (0, 1): a ReLU) clamps
/// the operand in its own width; shifts 17-46 with each multiplier's int16 halves (M = h * 2^16
/// + l, |h| < 2^15) go in int32 lanes (vpdpwssd on (a, b) pairs, AVX-512 VNNI); else int64 lanes.
void add_requantize_store(const std::uint8_t* a, const std::uint8_t* b, std::uint64_t bytes,
                          std::int64_t count, const intops::AddRequant& q, std::uint8_t* dst);

/// Stores `count` values as little-endian integers of `bytes` (1, 2 or 4) each at `dst`, keeping
/// the low bytes (as write_element does). `values` and `dst` must not overlap.
void store_elements(const std::int32_t* values, std::int64_t count, std::uint64_t bytes,
                    std::uint8_t* dst);

/// Writes one output pixel's accumulators: `count` little-endian int32 at `slot` become
/// `start[o] + sums[o]` (mod 2^32), `start` being `count` little-endian int32 (the bias, or
/// `slot` itself to accumulate) or, when null, 0.
void store_accumulators(const std::uint32_t* sums, const std::uint8_t* start, std::int64_t count,
                        std::uint8_t* slot);

/// Max pool step: `best[c] = max(best[c], src[c])` for c < count, both holding little-endian
/// signed elements of `bytes` (1 or 2). `best` must not overlap `src`.
void max_elements(const std::uint8_t* src, std::int64_t count, std::uint64_t bytes,
                  std::uint8_t* best);

/// A max pool's output pixel: `best[c]` = the max of `src[t][c]` over t < tap_count (the
/// element's minimum when tap_count = 0), all little-endian signed elements of `bytes` (1 or
/// 2). `best` must not overlap any `src[t]`. With AVX-512: 64 / bytes channels per step, the
/// max in a register over every tap, one store.
void max_of_taps(const std::uint8_t* const* src, std::int64_t tap_count, std::int64_t count,
                 std::uint64_t bytes, std::uint8_t* best);

/// Average pool step: `sums[c] += src[c]` (uint32, mod 2^32) for c < count, `src` holding
/// little-endian signed elements of `bytes` (1 or 2).
void add_elements(const std::uint8_t* src, std::int64_t count, std::uint64_t bytes,
                  std::uint32_t* sums);

/// Depthwise conv tap: `sums[c] += a[c] * w[c]` for `c < channels`, uint32 arithmetic.
void accumulate_depthwise(const std::int32_t* a, const std::int16_t* w, std::int64_t channels,
                          std::uint32_t* sums);

/// Matmul row step: `sums[n] += a * b[n]` for `n < count`, uint32 arithmetic (mod 2^32, which
/// the int32 accumulators wrap to anyway).
void accumulate_scaled(std::int32_t a, const std::int32_t* b, std::int64_t count,
                       std::uint32_t* sums);

}  // namespace tessel::sim::kernels
