// The dense conv (kernels::conv_dense's contract) on Intel AMX: int16 x int16 products exactly
// from four int8 tile dot products, where the CPU and the OS allow tiles.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>
#include <vector>

#include "sim/core/kernels.hpp"

namespace tessel::sim::kernels::amx {

/// Whether this process may run the AMX path: the CPU has AMX-TILE, AMX-INT8 and AVX-512 BW,
/// VL and VBMI, the kernel granted the tile data state (arch_prctl ARCH_REQ_XCOMP_PERM, asked once
/// per process, thread-safe), the environment variable TESSEL_SIM_NO_AMX is unset, empty or
/// "0", and kernels::avx512_kernels_enabled() (TESSEL_SIM_PORTABLE_KERNELS and
/// TESSEL_SIM_NO_AVX512 unset). Decided once per process.
bool available();

/// Whether the CPU and the OS allow tiles, whatever TESSEL_SIM_NO_AMX says (tests use it to run
/// the kernel directly).
bool supported();

/// Allocates on 64-byte boundaries: a tile row that straddles two cache lines loads at a
/// fraction of the speed.
template <class T>
struct CacheLineAllocator : DefaultInitConstruct {  // resize leaves bytes unset: packers write all
  using value_type = T;
  CacheLineAllocator() = default;
  template <class U>
  explicit CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new (n * sizeof(T), std::align_val_t{64}));
  }
  void deallocate(T* p, std::size_t n) {
    (void)
        n;  // the unsized aligned form: clang declares the sized one only with -fsized-deallocation
    ::operator delete (p, std::align_val_t{64});
  }
  template <class U>
  bool operator==(const CacheLineAllocator<U>&) const {
    return true;
  }
};

/// A dense conv's weights in AMX's layout, packed once from kernels::pair_index layout.
/// The reduction index k = t * 2 * in_pairs + i (tap t, input channel i) runs over
/// `k_bytes` = taps * 2 * in_pairs rounded up to 64, the output channels over
/// `out_blocks` x 16 (zeros beyond both). Each weight w = 256 * hi + lo (hi signed, lo
/// unsigned byte); tile (n, c) holds k in [64 c, 64 c + 64) and o in [16 n, 16 n + 16) as
/// 16 rows x 64 bytes, row r byte 4 o' + j = plane(k = 64 c + 4 r + j, o = 16 n + o'), the
/// hi plane's tile then the lo plane's: `tiles` = [n][c][hi, lo][16][64].
/// Rows of k whose weights are 0 for every output channel add nothing whatever the input
/// (x * 0 = 0, also in int32 wrap-around): when dropping them saves 64-byte chunks (a conv
/// whose input channels were padded with zero weights, as conv1's 3 of 16), the packers drop
/// them and k' indexes the rest: `k_source`[k'] is the k it stands for (ascending), and
/// `k_bytes` = their count rounded up to 64. `k_source` empty: nothing was dropped, k' = k
/// (also when every weight is 0). When the kept k are the same input channels of every tap
/// (k = t * 2 * in_pairs + channels[j], k' = t * channels.size() + j), `channels` lists them
/// (ascending), and conv_dense can read an image that holds only those (`kept_channels_only`).
/// A caller that copies its input anyway then copies fewer bytes, and each tap's values lie
/// back to back.
struct Weights {
  std::int64_t tap_count = 0;
  std::int64_t in_pairs = 0;
  std::int64_t out_channels = 0;
  std::int64_t k_bytes = 0;
  std::int64_t out_blocks = 0;
  std::vector<std::uint8_t, CacheLineAllocator<std::uint8_t>> tiles;  // 64-byte aligned
  std::vector<std::int32_t> k_source;
  std::vector<std::int32_t> channels;
};

/// Packs `w` (tap_count taps of 2 * in_pairs x out_channels weights in pair_index layout, as
/// conv_dense reads them) into `out`, dropping all-zero k rows where that saves chunks. Plain
/// C++ on any CPU (AVX-512 where supported()).
void pack_weights(const std::int16_t* w, std::int64_t tap_count, std::int64_t in_pairs,
                  std::int64_t out_channels, Weights& out);

/// Where a dense conv's weights lie in a scratchpad (docs/isa.md): [ocb][icb][ky][kx][r][c],
/// `weight_bytes` (1 or 2) little-endian signed bytes each, input channel icb * rows + r,
/// output channel ocb * cols + c.
struct RawWeightLayout {
  std::int64_t out_blocks = 0;  // ocb: output channels / cols
  std::int64_t in_blocks = 0;   // icb: input channels / rows
  std::int64_t tap_count = 0;   // ky * kx
  std::int64_t rows = 0;        // the matrix unit's rows (input channels per block)
  std::int64_t cols = 0;        // the matrix unit's columns (output channels per block)
  std::int64_t weight_bytes = 1;
};

/// The tiles pack_weights makes from the same weights in pair_index layout (in_pairs =
/// channel_pairs(in_blocks * rows), out_channels = out_blocks * cols), built straight from the
/// raw scratchpad bytes `raw` in `layout` (one pass; no int16 copy). AVX-512 where supported(),
/// else pack_weights_raw_portable.
void pack_weights_raw(const std::uint8_t* raw, const RawWeightLayout& layout, Weights& out);

/// pack_weights_raw one weight at a time on any CPU (the definition the vector path must
/// match; tests).
void pack_weights_raw_portable(const std::uint8_t* raw, const RawWeightLayout& layout,
                               Weights& out);

/// kernels::conv_dense with the weights packed by pack_weights (same tap_count, in_pairs and
/// out_channels; the other arguments as conv_dense's), bit-identical to it. Precondition:
/// supported(). Blocks of 16 output pixels: their taps x channels gathered into two int8
/// planes (x = 256 * hi + lo), then per 16 output channels and 64 k
///   C1 += hi.hi (TDPBSSD), C2 += hi.lo (TDPBSUD) + lo.hi (TDPBUSD), C3 += lo.lo (TDPBUUD),
/// each in int32 with wrap-around, and slot = start + 65536 C1 + 256 C2 + C3 mod 2^32.
/// Loads its tile configuration on entry and releases the tiles on return: any thread may
/// call it (each thread has its own tiles and configuration). Pixel blocks are 16 pixels from
/// the first: two threads that split a conv at a multiple of 16 pixels run whole tiles only.
/// `kept_channels_only` (precondition: w.channels not empty): each tap of `image` holds the
/// w.channels.size() int16 values of w.channels, in that order, instead of 2 * in_pairs.
void conv_dense(const std::uint8_t* image, const std::int64_t* pixel_offsets,
                std::int64_t pixel_count, const std::int64_t* tap_offsets, const Weights& w,
                AccInit init, const std::uint8_t* bias, std::uint8_t* acc,
                const std::int64_t* slot_offsets, bool kept_channels_only = false);

}  // namespace tessel::sim::kernels::amx
