// The AMX dense conv (amx_conv.hpp): weight packing in plain C++, the kernel in AMX-TILE /
// AMX-INT8 / AVX-512 intrinsics behind a target attribute, chosen at run time.
#include "sim/core/amx_conv.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>

#include "sim/core/kernels.hpp"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#define TESSEL_SIM_AMX 1
#endif

namespace tessel::sim::kernels::amx {

namespace {

constexpr std::int64_t kTileRows = 16;   // pixels per block, k-groups of 4 per B tile
constexpr std::int64_t kTileBytes = 64;  // bytes per tile row: 64 int8 k, or 16 int32 / 16 x 4
constexpr std::int64_t kTileSize = kTileRows * kTileBytes;

#ifdef TESSEL_SIM_AMX
/// Linux's arch_prctl request for an extended state component, and the tile data's number.
constexpr long kArchReqXcompPerm = 0x1023;
constexpr long kXfeatureXtiledata = 18;

bool cpu_and_os_allow_tiles() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
  const bool amx_tile = (edx >> 24) & 1u;
  const bool amx_int8 = (edx >> 25) & 1u;
  if (!amx_tile || !amx_int8) return false;
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512bw") ||
      !__builtin_cpu_supports("avx512vl") || !__builtin_cpu_supports("avx512vbmi"))
    return false;
  // Linux hands out the 8 KiB tile state only on request (once per process, for all threads).
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}
#endif

bool disabled_by_environment() {
  const char* value = std::getenv("TESSEL_SIM_NO_AMX");
  return value != nullptr && value[0] != '\0' && std::strcmp(value, "0") != 0;
}

}  // namespace

bool supported() {
#ifdef TESSEL_SIM_AMX
  static const bool allowed = cpu_and_os_allow_tiles();  // thread-safe static initialisation
  return allowed;
#else
  return false;
#endif
}

bool available() {
  static const bool on =
      !disabled_by_environment() && kernels::avx512_kernels_enabled() && supported();
  return on;
}

namespace {

/// pack_weights one weight at a time (CPUs without AMX; the layout's definition).
void pack_weights_scalar(const std::int16_t* w, Weights& out) {
  const std::int64_t tap_k = 2 * out.in_pairs, chunks = out.k_bytes / kTileBytes;
  const std::int64_t tap_weights = tap_k * out.out_channels;
  for (std::int64_t t = 0; t < out.tap_count; ++t)
    for (std::int64_t i = 0; i < tap_k; ++i) {
      const std::int64_t k = t * tap_k + i;
      const std::int64_t c = k / kTileBytes, r = (k % kTileBytes) / 4, j = k % 4;
      for (std::int64_t o = 0; o < out.out_channels; ++o) {
        const auto v =
            static_cast<std::uint16_t>(w[t * tap_weights + pair_index(i, o, out.out_channels)]);
        std::uint8_t* hi = out.tiles.data() + ((o / 16 * chunks + c) * 2) * kTileSize +
                           r * kTileBytes + (o % 16) * 4 + j;
        hi[0] = static_cast<std::uint8_t>(v >> 8);
        hi[kTileSize] = static_cast<std::uint8_t>(v & 0xffu);
      }
    }
}

#ifdef TESSEL_SIM_AMX
void pack_weights_avx512(const std::int16_t* w, Weights& out);
void pack_weights_raw_avx512(const std::uint8_t* raw, const RawWeightLayout& layout, Weights& out);
#endif

/// Sets `out`'s geometry and zeroed tiles for tap_count taps of 2 * in_pairs x out_channels.
/// (`zero`: the tiles all 0; else their bytes are left as they were, for a packer that writes
/// every byte.)
void shape_weights(std::int64_t tap_count, std::int64_t in_pairs, std::int64_t out_channels,
                   Weights& out, bool zero = true) {
  out.tap_count = tap_count;
  out.in_pairs = in_pairs;
  out.out_channels = out_channels;
  out.k_bytes = (tap_count * 2 * in_pairs + kTileBytes - 1) / kTileBytes * kTileBytes;
  out.out_blocks = (out_channels + 15) / 16;
  out.k_source.clear();
  out.channels.clear();
  const std::int64_t chunks = out.k_bytes / kTileBytes;
  const auto size = static_cast<std::size_t>(out.out_blocks * chunks * 2 * kTileSize);
  if (zero) {
    out.tiles.assign(size, 0);
  } else {
    out.tiles.resize(size);  // default-initialised: CacheLineAllocator does not zero
  }
}

/// Drops the k rows of `w` whose weights are 0 for every output channel (both planes) when
/// that makes fewer 64-byte chunks (Weights::k_source). First the rows that are 0 in the first
/// 16 output channels, read a tile row (4 k x 16 outputs) at a time: on dense weights there are
/// too few of them and nothing else is read; then only those rows in the other blocks.
void drop_zero_k(Weights& w) {
  const std::int64_t used = w.tap_count * 2 * w.in_pairs, chunks = w.k_bytes / kTileBytes;
  if (chunks <= 1) return;
  const std::int64_t need = used - (chunks - 1) * kTileBytes;  // zero rows that save a chunk
  const auto at = [](auto* tiles, std::int64_t chunk_count, std::int64_t n, std::int64_t k,
                     std::int64_t plane) {
    return tiles + ((n * chunk_count + k / kTileBytes) * 2 + plane) * kTileSize +
           (k % kTileBytes) / 4 * kTileBytes + k % 4;
  };
  // zero[k]: k's weights are 0 in output block 0 (then in every block).
  std::vector<std::uint8_t> zero(static_cast<std::size_t>(used), 0);
  std::int64_t candidates = 0;
  for (std::int64_t k0 = 0; k0 < used; k0 += 4) {
    // Byte 4 o + j of the row is (k0 + j, o): OR the row's 8-byte words, then fold the two
    // halves: byte j is non-zero iff k0 + j has a non-zero weight.
    std::uint64_t any = 0;
    for (std::int64_t plane = 0; plane < 2; ++plane) {
      const std::uint8_t* row = at(w.tiles.data(), chunks, 0, k0, plane);
      for (int word = 0; word < 8; ++word) {
        std::uint64_t x = 0;
        std::memcpy(&x, row + 8 * word, 8);
        any |= x;
      }
    }
    any |= any >> 32;
    for (std::int64_t j = 0; j < 4 && k0 + j < used; ++j)
      if (((any >> (8 * j)) & 0xffu) == 0) {
        zero[static_cast<std::size_t>(k0 + j)] = 1;
        ++candidates;
      }
  }
  if (candidates < need) return;
  std::vector<std::int32_t> kept;
  kept.reserve(static_cast<std::size_t>(used));
  for (std::int64_t k = 0; k < used; ++k) {
    bool is_zero = zero[static_cast<std::size_t>(k)] != 0;
    for (std::int64_t n = 1; n < w.out_blocks && is_zero; ++n)
      for (std::int64_t plane = 0; plane < 2 && is_zero; ++plane) {
        const std::uint8_t* p = at(w.tiles.data(), chunks, n, k, plane);
        for (std::int64_t o = 0; o < 16; ++o) is_zero = is_zero && p[4 * o] == 0;
      }
    if (!is_zero) kept.push_back(static_cast<std::int32_t>(k));
  }
  // All rows zero: nothing to keep, but an empty k_source means "nothing dropped"; the sums
  // are 0 either way, so the weights stay as they are.
  const auto count = static_cast<std::int64_t>(kept.size());
  if (count == 0) return;
  const std::int64_t new_chunks = (count + kTileBytes - 1) / kTileBytes;
  if (new_chunks >= chunks) return;
  std::vector<std::uint8_t, CacheLineAllocator<std::uint8_t>> tiles(
      static_cast<std::size_t>(w.out_blocks * new_chunks * 2 * kTileSize), 0);
  for (std::int64_t j = 0; j < count; ++j)
    for (std::int64_t n = 0; n < w.out_blocks; ++n)
      for (std::int64_t plane = 0; plane < 2; ++plane) {
        const std::uint8_t* src =
            at(w.tiles.data(), chunks, n, kept[static_cast<std::size_t>(j)], plane);
        std::uint8_t* dst = at(tiles.data(), new_chunks, n, j, plane);
        for (std::int64_t o = 0; o < 16; ++o) dst[4 * o] = src[4 * o];
      }
  w.tiles = std::move(tiles);
  w.k_bytes = new_chunks * kTileBytes;
  // The same channels in every tap: the first tap's kept k, repeated at each tap's offset.
  const std::int64_t tap_k = 2 * w.in_pairs;
  const auto first_tap = static_cast<std::size_t>(
      std::lower_bound(kept.begin(), kept.end(), static_cast<std::int32_t>(tap_k)) - kept.begin());
  bool uniform = first_tap > 0 && kept.size() == first_tap * static_cast<std::size_t>(w.tap_count);
  for (std::size_t j = first_tap; uniform && j < kept.size(); ++j)
    uniform = kept[j] == kept[j % first_tap] + static_cast<std::int64_t>(j / first_tap) * tap_k;
  if (uniform)
    w.channels.assign(kept.begin(), kept.begin() + static_cast<std::ptrdiff_t>(first_tap));
  w.k_source = std::move(kept);
}

void shape_weights(const RawWeightLayout& layout, Weights& out, bool zero = true) {
  shape_weights(layout.tap_count, (layout.in_blocks * layout.rows + 1) / 2,
                layout.out_blocks * layout.cols, out, zero);
}

}  // namespace

void pack_weights_raw_portable(const std::uint8_t* raw, const RawWeightLayout& layout,
                               Weights& out) {
  shape_weights(layout, out);
  const std::int64_t tap_k = 2 * out.in_pairs, chunks = out.k_bytes / kTileBytes;
  std::int64_t n = 0;  // raw weight index, in layout order
  for (std::int64_t ocb = 0; ocb < layout.out_blocks; ++ocb)
    for (std::int64_t icb = 0; icb < layout.in_blocks; ++icb)
      for (std::int64_t t = 0; t < layout.tap_count; ++t)
        for (std::int64_t r = 0; r < layout.rows; ++r)
          for (std::int64_t c = 0; c < layout.cols; ++c, ++n) {
            const std::uint8_t* p = raw + n * layout.weight_bytes;
            const auto v = static_cast<std::uint16_t>(
                layout.weight_bytes == 2
                    ? static_cast<std::int16_t>(static_cast<std::uint16_t>(p[0] | (p[1] << 8)))
                    : static_cast<std::int16_t>(static_cast<std::int8_t>(p[0])));
            const std::int64_t k = t * tap_k + icb * layout.rows + r;
            const std::int64_t o = ocb * layout.cols + c;
            std::uint8_t* hi = out.tiles.data() +
                               ((o / 16 * chunks + k / kTileBytes) * 2) * kTileSize +
                               (k % kTileBytes) / 4 * kTileBytes + (o % 16) * 4 + k % 4;
            hi[0] = static_cast<std::uint8_t>(v >> 8);
            hi[kTileSize] = static_cast<std::uint8_t>(v & 0xffu);
          }
  drop_zero_k(out);
}

void pack_weights_raw(const std::uint8_t* raw, const RawWeightLayout& layout, Weights& out) {
#ifdef TESSEL_SIM_AMX
  if (supported()) {
    shape_weights(layout, out, /*zero=*/false);
    pack_weights_raw_avx512(raw, layout, out);
    drop_zero_k(out);
    return;
  }
#endif
  pack_weights_raw_portable(raw, layout, out);
}

void pack_weights(const std::int16_t* w, std::int64_t tap_count, std::int64_t in_pairs,
                  std::int64_t out_channels, Weights& out) {
  shape_weights(tap_count, in_pairs, out_channels, out);
#ifdef TESSEL_SIM_AMX
  if (supported()) {
    pack_weights_avx512(w, out);
    drop_zero_k(out);
    return;
  }
#endif
  pack_weights_scalar(w, out);
  drop_zero_k(out);
}

#ifdef TESSEL_SIM_AMX

namespace {

// GCC 12's AVX-512 headers pass _mm*_undefined_*() (a self-initialised variable) to the
// builtins of unmasked intrinsics, which -Wmaybe-uninitialized reports once they are inlined.
#pragma GCC diagnostic push
#if !defined(__clang__)  // clang has no -Wmaybe-uninitialized
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#define TESSEL_SIM_AMX_TARGET \
  __attribute__((target("amx-tile,amx-int8,avx512f,avx512bw,avx512vl,avx512vbmi")))

/// pack_weights a channel pair row at a time: the row's 16-output block is 64 bytes
/// [o][w0 lo, w0 hi, w1 lo, w1 hi]; one byte shuffle per plane puts (w0, w1) at bytes
/// 4 o + j, 4 o + j + 1 of the tile row (j = k % 4 is 0 or 2: k is even), stored under a mask.
TESSEL_SIM_AMX_TARGET void pack_weights_avx512(const std::int16_t* w, Weights& out) {
  const std::int64_t tap_k = 2 * out.in_pairs, chunks = out.k_bytes / kTileBytes;
  const std::int64_t tap_weights = tap_k * out.out_channels;
  // Sources per output channel o' (bytes 4 o' .. 4 o' + 3 = w0 lo, w0 hi, w1 lo, w1 hi).
  const __m512i hi_at_0 = _mm512_set4_epi32(0x80800f0d, 0x80800b09, 0x80800705, 0x80800301);
  const __m512i lo_at_0 = _mm512_set4_epi32(0x80800e0c, 0x80800a08, 0x80800604, 0x80800200);
  const __m512i hi_at_2 = _mm512_set4_epi32(0x0f0d8080, 0x0b098080, 0x07058080, 0x03018080);
  const __m512i lo_at_2 = _mm512_set4_epi32(0x0e0c8080, 0x0a088080, 0x06048080, 0x02008080);
  for (std::int64_t t = 0; t < out.tap_count; ++t)
    for (std::int64_t i = 0; i < tap_k; i += 2) {
      const std::int64_t k = t * tap_k + i;
      const std::int64_t c = k / kTileBytes, r = (k % kTileBytes) / 4, j = k % 4;
      const __m512i hi_shuffle = j == 0 ? hi_at_0 : hi_at_2;
      const __m512i lo_shuffle = j == 0 ? lo_at_0 : lo_at_2;
      const auto row_mask =
          static_cast<__mmask64>(j == 0 ? 0x3333333333333333ull : 0xccccccccccccccccull);
      const std::int16_t* src = w + t * tap_weights + i * out.out_channels;
      std::uint8_t* dst = out.tiles.data() + (2 * c) * kTileSize + r * kTileBytes;
      for (std::int64_t n = 0; n < out.out_blocks; ++n) {
        const std::int64_t left = std::min<std::int64_t>(16, out.out_channels - 16 * n);
        const auto mask = static_cast<__mmask16>(left == 16 ? 0xffffu : (1u << left) - 1u);
        const __m512i v = _mm512_maskz_loadu_epi32(mask, src + 32 * n);
        std::uint8_t* tile = dst + n * chunks * 2 * kTileSize;
        _mm512_mask_storeu_epi8(tile, row_mask, _mm512_shuffle_epi8(v, hi_shuffle));
        _mm512_mask_storeu_epi8(tile + kTileSize, row_mask, _mm512_shuffle_epi8(v, lo_shuffle));
      }
    }
}

/// pack_weights_raw a raw row (one tap, one input channel, `cols` outputs) at a time: the
/// row's outputs within one 16-output block widened to int32 lanes, each lane's low byte (lo
/// plane) or second byte (hi plane) shifted to byte k % 4 and stored under a mask at output
/// o % 16 of the tile row (4 bytes an output).
TESSEL_SIM_AMX_TARGET void pack_weights_raw_rows(const std::uint8_t* raw,
                                                 const RawWeightLayout& layout, Weights& out) {
  const std::int64_t tap_k = 2 * out.in_pairs, chunks = out.k_bytes / kTileBytes;
  const std::int64_t wb = layout.weight_bytes, cols = layout.cols;
  const std::uint8_t* row = raw;
  for (std::int64_t ocb = 0; ocb < layout.out_blocks; ++ocb)
    for (std::int64_t icb = 0; icb < layout.in_blocks; ++icb)
      for (std::int64_t t = 0; t < layout.tap_count; ++t)
        for (std::int64_t r = 0; r < layout.rows; ++r, row += cols * wb) {
          const std::int64_t k = t * tap_k + icb * layout.rows + r;
          const auto j = static_cast<unsigned>(k % 4);
          const auto lane_bytes = static_cast<__mmask64>(0x1111111111111111ull << j);
          std::uint8_t* tile_row = out.tiles.data() + (k / kTileBytes) * 2 * kTileSize +
                                   (k % kTileBytes) / 4 * kTileBytes;
          for (std::int64_t c = 0; c < cols;) {
            const std::int64_t o = ocb * cols + c;
            const std::int64_t count = std::min<std::int64_t>(16 - o % 16, cols - c);
            const auto lanes = static_cast<__mmask16>((1u << count) - 1u);
            const __m512i v =
                wb == 2 ? _mm512_cvtepi16_epi32(_mm256_maskz_loadu_epi16(lanes, row + 2 * c))
                        : _mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(lanes, row + c));
            const auto mask = static_cast<__mmask64>(
                lane_bytes & (count == 16 ? ~0ull : (1ull << (4 * count)) - 1ull));
            std::uint8_t* dst = tile_row + (o / 16) * chunks * 2 * kTileSize + (o % 16) * 4;
            _mm512_mask_storeu_epi8(dst, mask, _mm512_slli_epi32(_mm512_srai_epi32(v, 8), 8 * j));
            _mm512_mask_storeu_epi8(dst + kTileSize, mask, _mm512_slli_epi32(v, 8 * j));
            c += count;
          }
        }
}

/// pack_weights_raw a whole tile row at a time, for rows % 4 == 0 and cols % 16 == 0: raw
/// rows r .. r + 3 (k .. k + 3, k % 4 = 0: every tap starts on a 4-aligned k) of 16 outputs
/// hold the row's 64 weights, which one byte permutation per plane puts at byte 4 o + j (the
/// lo plane: the low bytes; the hi plane: the high bytes, or an int8's sign). Every tile byte
/// is stored once, whole rows; only the last chunk's rows past taps x channels are zeroed.
TESSEL_SIM_AMX_TARGET void pack_weights_raw_quads(const std::uint8_t* raw,
                                                  const RawWeightLayout& layout, Weights& out) {
  const std::int64_t tap_k = 2 * out.in_pairs, chunks = out.k_bytes / kTileBytes;
  const std::int64_t wb = layout.weight_bytes, cols = layout.cols, rows = layout.rows;
  const std::int64_t row_bytes = cols * wb;
  // Byte 4 o + j from source byte 32 j + 2 o (+ 1: the high byte) of rows r, r + 1 | r + 2,
  // r + 3 (int16), or from byte 16 j + o of the four rows' 16 bytes (int8).
  alignas(64) std::uint8_t lo16[64], hi16[64], lo8[64];
  for (int o = 0; o < 16; ++o)
    for (int j = 0; j < 4; ++j) {
      lo16[4 * o + j] = static_cast<std::uint8_t>(32 * j + 2 * o);
      hi16[4 * o + j] = static_cast<std::uint8_t>(32 * j + 2 * o + 1);
      lo8[4 * o + j] = static_cast<std::uint8_t>(16 * j + o);
    }
  const __m512i lo16_index = _mm512_load_si512(lo16), hi16_index = _mm512_load_si512(hi16);
  const __m512i lo8_index = _mm512_load_si512(lo8);
  std::uint8_t* tiles = out.tiles.data();
  for (std::int64_t ocb = 0; ocb < layout.out_blocks; ++ocb)
    for (std::int64_t icb = 0; icb < layout.in_blocks; ++icb)
      for (std::int64_t t = 0; t < layout.tap_count; ++t) {
        const std::uint8_t* block =
            raw + ((ocb * layout.in_blocks + icb) * layout.tap_count + t) * rows * row_bytes;
        for (std::int64_t r = 0; r < rows; r += 4) {
          const std::int64_t k = t * tap_k + icb * rows + r;
          std::uint8_t* tile_row =
              tiles + (k / kTileBytes) * 2 * kTileSize + (k % kTileBytes) / 4 * kTileBytes;
          const std::uint8_t* src = block + r * row_bytes;
          for (std::int64_t b = 0; b < cols / 16; ++b, src += 16 * wb) {
            std::uint8_t* dst = tile_row + (ocb * cols / 16 + b) * chunks * 2 * kTileSize;
            __m512i hi, lo;
            if (wb == 2) {
              const auto* row = reinterpret_cast<const __m256i*>(src);
              const std::int64_t step = row_bytes / 32;  // rows apart, in 32-byte units
              const __m512i a = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256(row)),
                                                   _mm256_loadu_si256(row + step), 1);
              const __m512i c =
                  _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256(row + 2 * step)),
                                     _mm256_loadu_si256(row + 3 * step), 1);
              lo = _mm512_permutex2var_epi8(a, lo16_index, c);
              hi = _mm512_permutex2var_epi8(a, hi16_index, c);
            } else {
              __m512i v =
                  _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src)));
              v = _mm512_inserti32x4(
                  v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + row_bytes)), 1);
              v = _mm512_inserti32x4(
                  v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * row_bytes)), 2);
              v = _mm512_inserti32x4(
                  v, _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 3 * row_bytes)), 3);
              lo = _mm512_permutexvar_epi8(lo8_index, v);
              hi = _mm512_movm_epi8(_mm512_movepi8_mask(lo));  // 0xff where negative
            }
            _mm512_store_si512(dst, hi);
            _mm512_store_si512(dst + kTileSize, lo);
          }
        }
      }
  // The rows of the last chunk past taps x channels (k beyond them reads 0).
  const std::int64_t used = layout.tap_count * tap_k;
  const std::int64_t first_zero_row = (used - (chunks - 1) * kTileBytes) / 4;
  for (std::int64_t n = 0; n < out.out_blocks; ++n)
    for (std::int64_t plane = 0; plane < 2; ++plane)
      std::memset(
          tiles + ((n * chunks + chunks - 1) * 2 + plane) * kTileSize + first_zero_row * kTileBytes,
          0, static_cast<std::size_t>((kTileRows - first_zero_row) * kTileBytes));
}

TESSEL_SIM_AMX_TARGET void pack_weights_raw_avx512(const std::uint8_t* raw,
                                                   const RawWeightLayout& layout, Weights& out) {
  if (layout.rows % 4 == 0 && layout.cols % 16 == 0) {
    pack_weights_raw_quads(raw, layout, out);
  } else {
    std::fill(out.tiles.begin(), out.tiles.end(), std::uint8_t{0});
    pack_weights_raw_rows(raw, layout, out);
  }
}

/// The 64-byte tile configuration (palette 1): tiles 0-1 the A planes (hi, lo) and 4-6 the
/// sums C1-C3, `rows` rows each; tiles 2-3 the B planes, 16 rows. Every row 64 bytes.
struct alignas(64) TileConfig {
  std::uint8_t palette = 1;
  std::uint8_t start_row = 0;
  std::uint8_t reserved[14] = {};
  std::uint16_t colsb[16] = {};
  std::uint8_t rows[16] = {};
};

TileConfig tile_config(std::int64_t rows) {
  TileConfig config;
  for (int tile = 0; tile < 8; ++tile) {
    config.colsb[tile] = kTileBytes;
    config.rows[tile] = static_cast<std::uint8_t>(tile == 2 || tile == 3 ? kTileRows : rows);
  }
  return config;
}

/// Byte b of a 64-byte vector of 32 int16 gathers byte 2 b (the low bytes, b < 32) or byte
/// 2 (b - 32) + 1 (the high bytes): one permutation splits 32 values into the two planes.
constexpr std::array<std::uint8_t, 64> kSplitPlanes = [] {
  std::array<std::uint8_t, 64> index{};
  for (int b = 0; b < 64; ++b)
    index[static_cast<std::size_t>(b)] =
        static_cast<std::uint8_t>(b < 32 ? 2 * b : 2 * (b - 32) + 1);
  return index;
}();

/// A block's gathered inputs: two int8 planes of 16 rows x k_bytes, and how to gather a row
/// (thread-local to reuse the allocations; the split runner's helper thread has its own).
struct Staging {
  std::vector<std::uint8_t, CacheLineAllocator<std::uint8_t>> bytes;
  /// Taps whose inputs lie back to back in the image (a conv's kx taps over a dense row) as
  /// one run: `count` int16 values at byte `offset` past the pixel, at k = `k`.
  struct Run {
    std::int64_t offset = 0;
    std::int64_t k = 0;
    std::int64_t count = 0;
  };
  std::vector<Run> runs;
  /// With k rows dropped (Weights::k_source): up to 32 int16 values of a run at byte `offset`
  /// past the pixel (`load_mask`: which), whose kept ones (`store_mask`: how many) go to
  /// k' = `k`, k + 1, ... of both planes, split by the 64-byte permutation at `indexes` +
  /// `index` (kept value j's low byte to byte j, its high byte to 32 + j). Empty otherwise.
  struct Piece {
    std::int64_t offset = 0;
    std::int64_t k = 0;
    std::uint32_t load_mask = 0;
    std::uint32_t store_mask = 0;
    std::int64_t index = 0;
  };
  std::vector<Piece> pieces;
  std::vector<std::uint8_t, CacheLineAllocator<std::uint8_t>> indexes;

  /// The runs of `w` with taps at `tap_offsets` (`tap_k` values a tap), and with w.k_source
  /// the pieces (`pieces`): each run cut into 32 values, of which only the kept k are stored,
  /// packed together.
  void plan(const std::int64_t* tap_offsets, const Weights& w, std::int64_t tap_k,
            bool with_pieces) {
    runs.clear();
    for (std::int64_t t = 0; t < w.tap_count; ++t) {
      if (!runs.empty() && runs.back().offset + 2 * runs.back().count == tap_offsets[t]) {
        runs.back().count += tap_k;
      } else {
        runs.push_back({tap_offsets[t], t * tap_k, tap_k});
      }
    }
    pieces.clear();
    indexes.clear();
    if (!with_pieces) return;
    const auto mask = [](std::int64_t n) {
      return n >= 32 ? ~0u : (1u << static_cast<unsigned>(n)) - 1u;
    };
    std::size_t next = 0;  // the next kept k (w.k_source is ascending, and so are the runs)
    for (const Run& run : runs)
      for (std::int64_t i = 0; i < run.count; i += 32) {
        const std::int64_t n = std::min<std::int64_t>(32, run.count - i);
        const std::int64_t first = run.k + i;
        const auto begin = static_cast<std::int64_t>(next);
        std::array<std::uint8_t, 64> index{};
        std::int64_t j = 0;
        for (; next < w.k_source.size() && w.k_source[next] < first + n; ++next, ++j) {
          const auto byte = static_cast<std::uint8_t>(2 * (w.k_source[next] - first));
          index[static_cast<std::size_t>(j)] = byte;
          index[static_cast<std::size_t>(32 + j)] = static_cast<std::uint8_t>(byte + 1);
        }
        if (j == 0) continue;
        const auto where = static_cast<std::int64_t>(indexes.size());
        indexes.insert(indexes.end(), index.begin(), index.end());
        pieces.push_back({run.offset + 2 * i, begin, mask(n), mask(j), where});
      }
  }
};

/// Gathers pixel rows [0, rows) of a block into the hi and lo planes (row stride k_bytes):
/// with nothing dropped, each run's 32 values per byte permutation (kSplitPlanes); else piece
/// by piece (Staging::plan). k' beyond them stays 0.
TESSEL_SIM_AMX_TARGET void gather(const std::uint8_t* image, const std::int64_t* pixel_offsets,
                                  std::int64_t rows, const Staging& staging, std::int64_t k_bytes,
                                  std::uint8_t* hi, std::uint8_t* lo) {
  const __m512i split = _mm512_loadu_si512(kSplitPlanes.data());
  if (staging.pieces.empty()) {
    for (std::int64_t m = 0; m < rows; ++m) {
      std::uint8_t* hi_row = hi + m * k_bytes;
      std::uint8_t* lo_row = lo + m * k_bytes;
      for (const Staging::Run& run : staging.runs) {
        const std::uint8_t* src = image + pixel_offsets[m] + run.offset;
        std::int64_t i = 0;
        for (; i + 32 <= run.count; i += 32) {
          const __m512i planes = _mm512_permutexvar_epi8(split, _mm512_loadu_si512(src + 2 * i));
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(lo_row + run.k + i),
                              _mm512_castsi512_si256(planes));
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(hi_row + run.k + i),
                              _mm512_extracti64x4_epi64(planes, 1));
        }
        if (i < run.count) {
          const auto mask = static_cast<__mmask32>((1u << (run.count - i)) - 1u);
          const __m512i planes =
              _mm512_permutexvar_epi8(split, _mm512_maskz_loadu_epi16(mask, src + 2 * i));
          _mm256_mask_storeu_epi8(lo_row + run.k + i, mask, _mm512_castsi512_si256(planes));
          _mm256_mask_storeu_epi8(hi_row + run.k + i, mask, _mm512_extracti64x4_epi64(planes, 1));
        }
      }
    }
    return;
  }
  const std::uint8_t* indexes = staging.indexes.data();
  for (std::int64_t m = 0; m < rows; ++m) {
    std::uint8_t* hi_row = hi + m * k_bytes;
    std::uint8_t* lo_row = lo + m * k_bytes;
    const std::uint8_t* pixel = image + pixel_offsets[m];
    for (const Staging::Piece& piece : staging.pieces) {
      const __m512i planes =
          _mm512_permutexvar_epi8(_mm512_load_si512(indexes + piece.index),
                                  _mm512_maskz_loadu_epi16(piece.load_mask, pixel + piece.offset));
      _mm256_mask_storeu_epi8(lo_row + piece.k, piece.store_mask, _mm512_castsi512_si256(planes));
      _mm256_mask_storeu_epi8(hi_row + piece.k, piece.store_mask,
                              _mm512_extracti64x4_epi64(planes, 1));
    }
  }
}

/// One block of `rows` <= 16 pixels (the tile configuration loaded for `rows`), every output
/// channel block.
TESSEL_SIM_AMX_TARGET void conv_block(const std::uint8_t* hi, const std::uint8_t* lo,
                                      std::int64_t rows, const Weights& w, AccInit init,
                                      const std::uint8_t* bias, std::uint8_t* acc,
                                      const std::int64_t* slot_offsets) {
  const std::int64_t chunks = w.k_bytes / kTileBytes;
  alignas(64) std::int32_t sums[4][kTileRows * 16];
  for (std::int64_t n = 0; n < w.out_blocks; ++n) {
    _tile_zero(4);
    _tile_zero(5);
    _tile_zero(6);
    _tile_zero(7);
    const std::uint8_t* b = w.tiles.data() + n * chunks * 2 * kTileSize;
    for (std::int64_t c = 0; c < chunks; ++c) {
      _tile_loadd(0, hi + c * kTileBytes, w.k_bytes);
      _tile_loadd(1, lo + c * kTileBytes, w.k_bytes);
      _tile_loadd(2, b + 2 * c * kTileSize, kTileBytes);
      _tile_loadd(3, b + (2 * c + 1) * kTileSize, kTileBytes);
      _tile_dpbssd(4, 0, 2);  // hi x hi
      _tile_dpbsud(5, 0, 3);  // hi x lo
      _tile_dpbusd(7, 1, 2);  // lo x hi
      _tile_dpbuud(6, 1, 3);  // lo x lo
    }
    _tile_stored(4, sums[0], kTileBytes);
    _tile_stored(5, sums[1], kTileBytes);
    _tile_stored(6, sums[2], kTileBytes);
    _tile_stored(7, sums[3], kTileBytes);
    const std::int64_t left = std::min<std::int64_t>(16, w.out_channels - 16 * n);
    const auto mask = static_cast<__mmask16>(left == 16 ? 0xffffu : (1u << left) - 1u);
    const __m512i start =
        init == AccInit::kBias ? _mm512_maskz_loadu_epi32(mask, bias + 64 * n) : __m512i{};
    for (std::int64_t m = 0; m < rows; ++m) {
      std::uint8_t* slot = acc + slot_offsets[m] + 64 * n;
      const __m512i c1 = _mm512_load_si512(sums[0] + 16 * m);
      const __m512i c2 = _mm512_add_epi32(_mm512_load_si512(sums[1] + 16 * m),
                                          _mm512_load_si512(sums[3] + 16 * m));
      const __m512i c3 = _mm512_load_si512(sums[2] + 16 * m);
      __m512i value = _mm512_add_epi32(
          _mm512_add_epi32(_mm512_slli_epi32(c1, 16), _mm512_slli_epi32(c2, 8)), c3);
      value = _mm512_add_epi32(
          value, init == AccInit::kSelf ? _mm512_maskz_loadu_epi32(mask, slot) : start);
      _mm512_mask_storeu_epi32(slot, mask, value);
    }
  }
}

TESSEL_SIM_AMX_TARGET void conv_dense_tiles(
    const std::uint8_t* image, const std::int64_t* pixel_offsets, std::int64_t pixel_count,
    const std::int64_t* tap_offsets, const Weights& w, AccInit init, const std::uint8_t* bias,
    std::uint8_t* acc, const std::int64_t* slot_offsets, bool kept_channels_only) {
  thread_local Staging staging;
  const auto plane = static_cast<std::size_t>(kTileRows * w.k_bytes);
  if (staging.bytes.size() < 2 * plane) staging.bytes.resize(2 * plane);
  std::uint8_t* hi = staging.bytes.data();
  std::uint8_t* lo = hi + plane;
  // The padding k (beyond taps x channels; gather writes the rest) must read 0 in every row.
  const std::int64_t used = w.k_source.empty() ? w.tap_count * 2 * w.in_pairs
                                               : static_cast<std::int64_t>(w.k_source.size());
  for (std::int64_t m = 0; m < 2 * kTileRows; ++m)
    std::memset(hi + m * w.k_bytes + used, 0, static_cast<std::size_t>(w.k_bytes - used));
  // Each tap of the image: the kept channels only (k' = t * their count + j: runs, as with
  // nothing dropped), or 2 * in_pairs values of which the pieces keep w.k_source.
  const std::int64_t tap_k =
      kept_channels_only ? static_cast<std::int64_t>(w.channels.size()) : 2 * w.in_pairs;
  staging.plan(tap_offsets, w, tap_k, !kept_channels_only && !w.k_source.empty());
  std::int64_t configured_rows = 0;
  for (std::int64_t p0 = 0; p0 < pixel_count; p0 += kTileRows) {
    const std::int64_t rows = std::min<std::int64_t>(kTileRows, pixel_count - p0);
    if (rows != configured_rows) {
      const TileConfig config = tile_config(rows);
      _tile_loadconfig(&config);
      configured_rows = rows;
    }
    gather(image, pixel_offsets + p0, rows, staging, w.k_bytes, hi, lo);
    conv_block(hi, lo, rows, w, init, bias, acc, slot_offsets + p0);
  }
  if (configured_rows != 0) _tile_release();
}

#pragma GCC diagnostic pop

}  // namespace

void conv_dense(const std::uint8_t* image, const std::int64_t* pixel_offsets,
                std::int64_t pixel_count, const std::int64_t* tap_offsets, const Weights& w,
                AccInit init, const std::uint8_t* bias, std::uint8_t* acc,
                const std::int64_t* slot_offsets, bool kept_channels_only) {
  conv_dense_tiles(image, pixel_offsets, pixel_count, tap_offsets, w, init, bias, acc, slot_offsets,
                   kept_channels_only);
}

#else

void conv_dense(const std::uint8_t*, const std::int64_t*, std::int64_t, const std::int64_t*,
                const Weights&, AccInit, const std::uint8_t*, std::uint8_t*, const std::int64_t*,
                bool) {
  std::abort();  // precondition supported() never holds here
}

#endif

}  // namespace tessel::sim::kernels::amx
