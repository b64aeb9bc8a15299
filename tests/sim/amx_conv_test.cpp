// The AMX dense conv (sim/core/amx_conv.hpp) against kernels::conv_dense_portable, byte for
// byte, and against hand-computed sums that wrap in int32.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "sim/core/amx_conv.hpp"
#include "sim/core/datapath.hpp"
#include "sim/core/kernels.hpp"

namespace tessel::sim {
namespace {

#define TESSEL_SKIP_WITHOUT_AMX()                                                     \
  if (!kernels::amx::supported())                                                     \
  GTEST_SKIP() << "this CPU or OS has no AMX-TILE + AMX-INT8 + AVX-512 BW (or Linux " \
                  "refused the tile data state)"

/// One conv_dense case over random bytes: the AMX kernel's slots must equal the portable one's.
struct Case {
  std::int64_t pixels = 1, taps = 1, pairs = 1, out = 16;
  kernels::AccInit init = kernels::AccInit::kZero;
  bool odd_channels = false;  // the last pair's second weight 0, as an odd in_channels packs
  bool dense_rows = false;    // taps back to back in rows of 3 (a 3 x 3 window), as convs read
  /// k rows whose weights are 0 for every output: 0 none; 1 every tap's channels from 3 on
  /// (conv1's 3 input channels padded to 16); 2 about half of them, at random; 3 about half
  /// of the channels, at random, the same in every tap.
  int zero_rows = 0;
};

/// What the packing did with a case's zero rows.
struct Dropped {
  bool rows = false;      // k rows left out (Weights::k_source)
  bool channels = false;  // the same channels of every tap (Weights::channels)
};

Dropped expect_amx_equals_portable(const Case& c, std::mt19937& rng) {
  std::uniform_int_distribution<int> value(std::numeric_limits<std::int16_t>::min(),
                                           std::numeric_limits<std::int16_t>::max());
  const auto draw = [&] {
    switch (rng() % 8) {
      case 0:
        return std::numeric_limits<std::int16_t>::min();
      case 1:
        return std::numeric_limits<std::int16_t>::max();
      default:
        return static_cast<std::int16_t>(value(rng));
    }
  };
  // Taps and pixels at scattered, odd, non-uniform byte offsets.
  std::vector<std::int64_t> pixel_offsets, tap_offsets, slot_offsets;
  const std::int64_t tap_bytes = 4 * c.pairs + 6;
  for (std::int64_t t = 0; t < c.taps; ++t)
    tap_offsets.push_back(c.dense_rows ? t / 3 * (3 * tap_bytes + 2) + t % 3 * 4 * c.pairs
                                       : t * tap_bytes + 1 + (t % 2));
  const std::int64_t pixel_bytes = c.taps * tap_bytes + 8;
  std::int64_t at = 0;
  for (std::int64_t p = 0; p < c.pixels; ++p) {
    pixel_offsets.push_back(at);
    at += pixel_bytes + static_cast<std::int64_t>(rng() % 5);
    slot_offsets.push_back(p * (4 * c.out + 12) + 4 * (p % 3));
  }
  std::vector<std::uint8_t> image(static_cast<std::size_t>(at + pixel_bytes));
  for (std::size_t i = 0; i + 1 < image.size(); i += 2) {
    const auto x = static_cast<std::uint16_t>(draw());
    image[i] = static_cast<std::uint8_t>(x);
    image[i + 1] = static_cast<std::uint8_t>(x >> 8);
  }
  std::vector<std::int16_t> w(static_cast<std::size_t>(c.taps * 2 * c.pairs * c.out));
  for (auto& x : w) x = draw();
  std::int64_t kept = 0;  // k rows with a non-zero weight
  std::vector<bool> zero_channel(static_cast<std::size_t>(2 * c.pairs));
  for (std::int64_t i = 0; i < 2 * c.pairs; ++i)
    zero_channel[static_cast<std::size_t>(i)] = (c.zero_rows == 1 && i >= 3) ||
                                                (c.zero_rows == 3 && rng() % 2 == 0) ||
                                                (c.odd_channels && i == 2 * c.pairs - 1);
  for (std::int64_t t = 0; t < c.taps; ++t)
    for (std::int64_t i = 0; i < 2 * c.pairs; ++i) {
      const bool zero =
          zero_channel[static_cast<std::size_t>(i)] || (c.zero_rows == 2 && rng() % 2 == 0);
      kept += zero ? 0 : 1;
      if (zero)
        for (std::int64_t o = 0; o < c.out; ++o)
          w[static_cast<std::size_t>(t * 2 * c.pairs * c.out + kernels::pair_index(i, o, c.out))] =
              0;
    }
  std::vector<std::uint8_t> bias(static_cast<std::size_t>(4 * c.out));
  for (auto& byte : bias) byte = static_cast<std::uint8_t>(rng());
  std::vector<std::uint8_t> acc(static_cast<std::size_t>(c.pixels * (4 * c.out + 12) + 8));
  for (auto& byte : acc) byte = static_cast<std::uint8_t>(rng());
  std::vector<std::uint8_t> expected = acc;
  kernels::conv_dense_portable(image.data(), pixel_offsets.data(), c.pixels, tap_offsets.data(),
                               c.taps, c.pairs, w.data(), c.out, c.out, c.init, bias.data(),
                               expected.data(), slot_offsets.data());
  kernels::amx::Weights packed;
  kernels::amx::pack_weights(w.data(), c.taps, c.pairs, c.out, packed);
  kernels::amx::conv_dense(image.data(), pixel_offsets.data(), c.pixels, tap_offsets.data(), packed,
                           c.init, c.pixels > 0 ? bias.data() : nullptr, acc.data(),
                           slot_offsets.data());
  // The zero rows are dropped exactly when that saves 64-byte chunks (the image keeps
  // non-zero values there: reading a dropped row's input would show in the sums).
  const std::int64_t full = (c.taps * 2 * c.pairs + 63) / 64 * 64;
  const std::int64_t compact = kept == 0 ? full : (kept + 63) / 64 * 64;
  EXPECT_EQ(packed.k_bytes, std::min(full, compact));
  EXPECT_EQ(static_cast<std::int64_t>(packed.k_source.size()), compact < full ? kept : 0);
  // The same kept channels in every tap (always with one tap) are listed, and an image of
  // just those channels (each tap's values back to back) gives the same sums.
  const bool uniform = c.zero_rows != 2 || c.taps == 1;
  EXPECT_EQ(!packed.channels.empty(), compact < full && uniform);
  if (!packed.channels.empty()) {
    const auto kept_count = static_cast<std::int64_t>(packed.channels.size());
    std::vector<std::int64_t> narrow_pixels, narrow_taps;
    for (std::int64_t t = 0; t < c.taps; ++t) narrow_taps.push_back(t * 2 * kept_count);
    std::vector<std::uint8_t> narrow;
    for (std::int64_t p = 0; p < c.pixels; ++p) {
      narrow_pixels.push_back(static_cast<std::int64_t>(narrow.size()));
      for (std::int64_t t = 0; t < c.taps; ++t)
        for (const std::int32_t channel : packed.channels) {
          const std::uint8_t* v = image.data() + pixel_offsets[static_cast<std::size_t>(p)] +
                                  tap_offsets[static_cast<std::size_t>(t)] + 2 * channel;
          narrow.insert(narrow.end(), v, v + 2);
        }
    }
    std::vector<std::uint8_t> narrow_acc = expected;  // the slots as before the conv
    kernels::conv_dense_portable(image.data(), pixel_offsets.data(), c.pixels, tap_offsets.data(),
                                 c.taps, c.pairs, w.data(), c.out, c.out, kernels::AccInit::kZero,
                                 nullptr, narrow_acc.data(), slot_offsets.data());
    std::vector<std::uint8_t> narrow_expected = narrow_acc;
    kernels::amx::conv_dense(narrow.data(), narrow_pixels.data(), c.pixels, narrow_taps.data(),
                             packed, kernels::AccInit::kZero, nullptr, narrow_acc.data(),
                             slot_offsets.data(), /*kept_channels_only=*/true);
    EXPECT_EQ(narrow_acc, narrow_expected) << "kept channels only";
  }
  EXPECT_NE(acc, std::vector<std::uint8_t>(acc.size(), 0));
  EXPECT_EQ(acc, expected) << c.pixels << " pixels, " << c.taps << " taps, " << c.pairs
                           << " pairs, " << c.out << " out, init " << static_cast<int>(c.init)
                           << (c.odd_channels ? ", odd channels" : "")
                           << (c.dense_rows ? ", dense rows" : "") << ", zero rows " << c.zero_rows;
  return {!packed.k_source.empty(), !packed.channels.empty()};
}

/// A case of the given sizes whose init, odd channel count and dense rows vary with its number
/// `n`: dense rows in `dense_of_5` of every 5.
Case varied_case(std::int64_t pixels, std::int64_t taps, std::int64_t pairs, std::int64_t out,
                 int n, int dense_of_5) {
  Case c;
  c.pixels = pixels;
  c.taps = taps;
  c.pairs = pairs;
  c.out = out;
  c.init = static_cast<kernels::AccInit>(n % 3);
  c.odd_channels = n % 4 == 1;
  c.dense_rows = n % 5 < dense_of_5;
  return c;
}

// Every blocking: 1-40 pixels (full 16-pixel tiles, every partial one), 1 and 9 taps (apart,
// or back to back in rows of 3: merged into runs), channel pairs 1-40 (k per tap 2-80: partial
// and several 64-byte tiles, taps straddling them), 16-272 output channels with tails, odd input
// channel counts, each init.
TEST(SimAmxConv, equals_portable_conv_dense_on_every_blocking) {
  TESSEL_SKIP_WITHOUT_AMX();
  std::mt19937 rng(7);
  int cases = 0;
  for (const std::int64_t pixels : {1, 2, 15, 16, 17, 31, 32, 33, 40}) {
    for (const std::int64_t taps : {1, 9}) {
      for (const std::int64_t pairs : {1, 3, 8, 17, 32, 40}) {
        for (const std::int64_t out : {16, 17, 48, 64, 100, 272}) {
          expect_amx_equals_portable(varied_case(pixels, taps, pairs, out, cases++, 2), rng);
          if (HasFailure()) return;
        }
      }
    }
  }
  EXPECT_EQ(cases, 9 * 2 * 6 * 6);
}

// Weights whose k rows are 0 for every output (conv1's padding channels; a random half; a
// random half of the channels) are dropped from the tiles and the gathered planes when that
// saves chunks: the same slots as the portable loop, which reads every row, on 1-40 pixels,
// 1, 9 and 49 taps (apart or in runs of 3, cut into 32 values across the kept rows), 8-40
// channel pairs, 16-100 outputs; and from an image of the kept channels alone where they are
// the same in every tap.
TEST(SimAmxConv, dropped_zero_weight_rows_equal_portable) {
  TESSEL_SKIP_WITHOUT_AMX();
  std::mt19937 rng(13);
  int cases = 0, dropped_rows = 0, dropped_channels = 0;
  for (const std::int64_t pixels : {1, 16, 17, 40})
    for (const std::int64_t taps : {1, 9, 49})
      for (const std::int64_t pairs : {8, 17, 40})
        for (const std::int64_t out : {16, 48, 100})
          for (const int zero_rows : {1, 2, 3}) {
            Case c = varied_case(pixels, taps, pairs, out, cases++, 3);
            c.zero_rows = zero_rows;
            const Dropped dropped = expect_amx_equals_portable(c, rng);
            if (HasFailure()) return;
            dropped_rows += dropped.rows ? 1 : 0;
            dropped_channels += dropped.channels ? 1 : 0;
          }
  EXPECT_EQ(cases, 4 * 3 * 3 * 3 * 3);
  // Both paths taken often (each case checks that it is taken exactly when it pays).
  EXPECT_GT(dropped_rows, cases / 2);
  EXPECT_GT(dropped_channels, cases / 3);
}

// conv1 by hand: 7 x 7 taps of 16 channels (8 pairs) with weights only on channels 0-2: k =
// 16 t + c, 784 rows in 13 chunks; the 147 kept rows (16 t + 0, 1, 2) fit in 3.
TEST(SimAmxConv, conv1_keeps_three_channels_a_tap_in_three_chunks) {
  const std::int64_t taps = 49, pairs = 8, out = 64;
  std::vector<std::int16_t> w(static_cast<std::size_t>(taps * 2 * pairs * out), 0);
  for (std::int64_t t = 0; t < taps; ++t)
    for (std::int64_t i = 0; i < 3; ++i)
      w[static_cast<std::size_t>(t * 2 * pairs * out +
                                 kernels::pair_index(i, (t + i) % out, out))] =
          static_cast<std::int16_t>(t + 1);
  kernels::amx::Weights packed;
  kernels::amx::pack_weights(w.data(), taps, pairs, out, packed);
  EXPECT_EQ(packed.k_bytes, 192);
  ASSERT_EQ(packed.k_source.size(), std::size_t{147});
  EXPECT_EQ(packed.k_source[0], 0);
  EXPECT_EQ(packed.k_source[2], 2);
  EXPECT_EQ(packed.k_source[3], 16);
  EXPECT_EQ(packed.k_source[146], 16 * 48 + 2);
  EXPECT_EQ(packed.channels, (std::vector<std::int32_t>{0, 1, 2}));
  // k' = 3 (tap 1, channel 0, output 1, weight 2): tile (n 0, chunk 0), row 0, byte 4 + 3.
  EXPECT_EQ(packed.tiles[4 * 1 + 3 + 1024], 2);  // the lo plane
  EXPECT_EQ(packed.tiles[4 * 1 + 3], 0);         // the hi plane
  // All-zero weights keep every row too (nothing to keep is not "nothing dropped"), and the
  // conv adds 0 to each slot.
  std::fill(w.begin(), w.end(), std::int16_t{0});
  kernels::amx::pack_weights(w.data(), taps, pairs, out, packed);
  EXPECT_EQ(packed.k_bytes, 832);
  EXPECT_TRUE(packed.k_source.empty());
  if (kernels::amx::supported()) {
    std::vector<std::int16_t> image(static_cast<std::size_t>(taps * 2 * pairs), 7);
    std::vector<std::int64_t> tap_offsets;
    for (std::int64_t t = 0; t < taps; ++t) tap_offsets.push_back(t * 4 * pairs);
    std::vector<std::int32_t> slots(static_cast<std::size_t>(out), 5);
    const std::int64_t zero = 0;
    kernels::amx::conv_dense(reinterpret_cast<const std::uint8_t*>(image.data()), &zero, 1,
                             tap_offsets.data(), packed, kernels::AccInit::kSelf, nullptr,
                             reinterpret_cast<std::uint8_t*>(slots.data()), &zero);
    EXPECT_EQ(slots, std::vector<std::int32_t>(static_cast<std::size_t>(out), 5));
  }
  // Dense weights keep every row.
  std::fill(w.begin(), w.end(), std::int16_t{1});
  kernels::amx::pack_weights(w.data(), taps, pairs, out, packed);
  EXPECT_EQ(packed.k_bytes, 832);
  EXPECT_TRUE(packed.k_source.empty());
}

// A pixel of 54 products of -32768 x -32768 (9 taps x 3 channel pairs): 54 * 2^30 = 2^31 mod
// 2^32, the int32 minimum; the tiles' int32 sums wrap on the way (C1 alone reaches
// 54 * 2^14 * 65536 > 2^31) and must not saturate. With the bias 1 and 3: INT32_MIN + 1, + 3.
TEST(SimAmxConv, sums_past_int32_wrap_instead_of_saturating) {
  TESSEL_SKIP_WITHOUT_AMX();
  const std::int64_t taps = 9, pairs = 3, out = 2;
  std::vector<std::int16_t> image(static_cast<std::size_t>(taps * 2 * pairs), -32768);
  std::vector<std::int16_t> w(static_cast<std::size_t>(taps * 2 * pairs * out), -32768);
  std::vector<std::int64_t> tap_offsets;
  for (std::int64_t t = 0; t < taps; ++t) tap_offsets.push_back(t * 4 * pairs);
  const std::int64_t zero = 0;
  const std::int32_t bias[2] = {1, 3};
  kernels::amx::Weights packed;
  kernels::amx::pack_weights(w.data(), taps, pairs, out, packed);
  std::int32_t slot[2] = {};
  kernels::amx::conv_dense(reinterpret_cast<const std::uint8_t*>(image.data()), &zero, 1,
                           tap_offsets.data(), packed, kernels::AccInit::kBias,
                           reinterpret_cast<const std::uint8_t*>(bias),
                           reinterpret_cast<std::uint8_t*>(slot), &zero);
  EXPECT_EQ(slot[0], std::numeric_limits<std::int32_t>::min() + 1);
  EXPECT_EQ(slot[1], std::numeric_limits<std::int32_t>::min() + 3);
}

// Long reductions of extremes (3 x 3 x 512 channels, 4608 products a pixel): every tile sum
// wraps many times over.
TEST(SimAmxConv, long_reductions_of_extremes_equal_portable) {
  TESSEL_SKIP_WITHOUT_AMX();
  std::mt19937 rng(3);
  for (const auto init :
       {kernels::AccInit::kZero, kernels::AccInit::kBias, kernels::AccInit::kSelf}) {
    Case c;
    c.pixels = 20;
    c.taps = 9;
    c.pairs = 256;
    c.out = 32;
    c.init = init;
    expect_amx_equals_portable(c, rng);
  }
}

// The packed layout by hand: weight (tap 1, input channel 3, output channel 18) of a 2-tap,
// 2-pair (k = 4 a tap), 20-output conv is k = 7: tile (n 1, chunk 0), row 1, byte 4 * 2 + 3.
TEST(SimAmxConv, pack_weights_places_hi_and_lo_bytes_by_hand) {
  const std::int64_t taps = 2, pairs = 2, out = 20;
  std::vector<std::int16_t> w(static_cast<std::size_t>(taps * 2 * pairs * out), 0);
  w[static_cast<std::size_t>(1 * 2 * pairs * out + kernels::pair_index(3, 18, out))] = -2;
  kernels::amx::Weights packed;
  kernels::amx::pack_weights(w.data(), taps, pairs, out, packed);
  EXPECT_EQ(packed.k_bytes, 64);
  EXPECT_EQ(packed.out_blocks, 2);
  ASSERT_EQ(packed.tiles.size(), std::size_t{2 * 2 * 1024});
  const std::size_t hi = 2 * 1024 + 1 * 64 + 4 * 2 + 3;  // -2 = 0xfffe
  EXPECT_EQ(packed.tiles[hi], 0xff);
  EXPECT_EQ(packed.tiles[hi + 1024], 0xfe);
  std::size_t nonzero = 0;
  for (const std::uint8_t byte : packed.tiles) nonzero += byte != 0;
  EXPECT_EQ(nonzero, 2u);
}

// pack_weights_raw (vector where supported) and pack_weights_raw_portable from raw scratchpad
// bytes [ocb][icb][ky][kx][r][c] equal pack_weights from the same weights in pair_index layout:
// int8 (sign-extended hi plane) and int16 weights, odd rows (an odd input channel count, whose
// padding channel must read 0), columns 8, 16 (a block each), 20 and 24 (blocks straddling 16
// outputs), 128; k per tap from 3 to 256 (taps straddling 64-byte chunks); over a reused
// buffer of stale bytes.
TEST(SimAmxConv, pack_weights_raw_equals_pack_weights_of_the_pair_layout) {
  std::mt19937 rng(11);
  int cases = 0;
  for (const std::int64_t weight_bytes : {1, 2})
    for (const std::int64_t rows : {3, 8, 16})
      for (const std::int64_t cols : {8, 16, 20, 24, 128})
        for (const std::int64_t in_blocks : {1, 2})
          for (const std::int64_t out_blocks : {1, 3})
            for (const std::int64_t taps : {1, 9}) {
              if (rows * in_blocks * out_blocks * cols * taps > 40000) continue;
              const kernels::amx::RawWeightLayout layout{out_blocks, in_blocks, taps,
                                                         rows,       cols,      weight_bytes};
              const std::int64_t in = in_blocks * rows, out = out_blocks * cols;
              const std::int64_t pairs = kernels::channel_pairs(in);
              std::vector<std::uint8_t> raw(
                  static_cast<std::size_t>(taps * in * out * weight_bytes));
              for (auto& byte : raw) byte = static_cast<std::uint8_t>(rng());
              // The pair layout from the raw bytes, by definition (the odd channel's slot 0).
              std::vector<std::int16_t> pair(static_cast<std::size_t>(taps * 2 * pairs * out), 0);
              std::int64_t n = 0;
              for (std::int64_t ocb = 0; ocb < out_blocks; ++ocb)
                for (std::int64_t icb = 0; icb < in_blocks; ++icb)
                  for (std::int64_t t = 0; t < taps; ++t)
                    for (std::int64_t r = 0; r < rows; ++r)
                      for (std::int64_t c = 0; c < cols; ++c, ++n) {
                        const std::uint8_t* p = raw.data() + n * weight_bytes;
                        const std::int16_t v =
                            weight_bytes == 1 ? std::int16_t{static_cast<std::int8_t>(p[0])}
                                              : static_cast<std::int16_t>(
                                                    static_cast<std::uint16_t>(p[0] | (p[1] << 8)));
                        pair[static_cast<std::size_t>(
                            t * 2 * pairs * out +
                            kernels::pair_index(icb * rows + r, ocb * cols + c, out))] = v;
                      }
              kernels::amx::Weights expected, fast, portable;
              kernels::amx::pack_weights(pair.data(), taps, pairs, out, expected);
              // Stale bytes where the tiles go: packing must write or zero every byte.
              fast.tiles.assign(expected.tiles.size() + 4096, 0xa5);
              kernels::amx::pack_weights_raw(raw.data(), layout, fast);
              kernels::amx::pack_weights_raw_portable(raw.data(), layout, portable);
              const auto where = [&] {
                return ::testing::Message() << weight_bytes << "-byte weights, rows " << rows
                                            << ", cols " << cols << ", " << in_blocks << " x "
                                            << out_blocks << " blocks, " << taps << " taps";
              };
              ASSERT_EQ(fast.k_bytes, expected.k_bytes) << where();
              ASSERT_EQ(fast.out_blocks, expected.out_blocks) << where();
              ASSERT_EQ(fast.in_pairs, pairs) << where();
              ASSERT_EQ(fast.tiles, expected.tiles) << where();
              ASSERT_EQ(portable.tiles, expected.tiles) << where();
              ++cases;
            }
  EXPECT_EQ(cases, 234);
}

// By hand: int8 weight -3 (0xfd) at raw (ocb 1, icb 0, tap 1, r 2, c 1) of a 2-tap, 4-row,
// 8-col layout (4 input channels: k = 4 a tap) is input channel 2, output 9, k = 6: tile
// (n 0, chunk 0), row 1, byte 4 * 9 + 2; hi plane 0xff (the sign), lo plane 0xfd.
TEST(SimAmxConv, pack_weights_raw_sign_extends_int8_by_hand) {
  const kernels::amx::RawWeightLayout layout{2, 1, 2, 4, 8, 1};
  std::vector<std::uint8_t> raw(2 * 1 * 2 * 4 * 8, 0);
  raw[static_cast<std::size_t>((((1 * 1 + 0) * 2 + 1) * 4 + 2) * 8 + 1)] = 0xfd;
  kernels::amx::Weights packed;
  kernels::amx::pack_weights_raw(raw.data(), layout, packed);
  EXPECT_EQ(packed.k_bytes, 64);
  EXPECT_EQ(packed.out_blocks, 1);
  ASSERT_EQ(packed.tiles.size(), std::size_t{2 * 1024});
  const std::size_t hi = 1 * 64 + 4 * 9 + 2;
  EXPECT_EQ(packed.tiles[hi], 0xff);
  EXPECT_EQ(packed.tiles[hi + 1024], 0xfd);
  std::size_t nonzero = 0;
  for (const std::uint8_t byte : packed.tiles) nonzero += byte != 0;
  EXPECT_EQ(nonzero, 2u);
}

// Datapath level (the AMX path where available, else VNNI): dense convs back to back on one
// datapath, so the zero-padded input buffer and the weight cache hold the previous conv's
// bytes, equal the reference loop of docs/isa.md: padded (a copy with only its border zeroed)
// and not, int8 (always copied) and int16 inputs, odd channel counts (rows 3: the pair-filling
// channel holds stale bytes, against weights 0), pixels back to back in a row or not, 1 and 2
// threads (whole 16-pixel blocks per thread), weights only on every fifth channel (rows the
// AMX packing drops; the copy holds only those channels). Fails if a row's left padding is not
// re-zeroed.
TEST(SimAmxConv, datapath_convs_back_to_back_equal_the_reference_loop) {
  std::mt19937 rng(5);
  const auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (const int rows : {3, 16})
    for (const int bits : {8, 16})
      for (const int threads : {1, 2}) {
        HwConfig config;
        config.matrix = {rows, 16, bits, bits, 32, rows, 16};
        config.vector.lanes = 16;
        config.scratchpads = {{"unified",
                               1 << 18,
                               1,
                               4,
                               {DataKind::kActivations, DataKind::kWeights, DataKind::kAccumulators,
                                DataKind::kOutputs}}};
        std::vector<std::uint8_t> dram;
        Datapath fast(config, dram, false, threads), reference(config, dram, true);
        for (int trial = 0; trial < 12; ++trial) {
          isa::Conv conv;
          conv.elem = bits == 8 ? isa::Elem::kI8 : isa::Elem::kI16;
          conv.init = static_cast<isa::Init>(trial % 3);
          conv.kh = conv.kw = static_cast<std::uint32_t>(pick(0, 1) * 2 + 1);
          conv.stride_h = conv.stride_w = static_cast<std::uint32_t>(pick(1, 2));
          conv.dil_h = conv.dil_w = 1;
          conv.out_h = static_cast<std::uint32_t>(pick(1, 9));
          conv.out_w = static_cast<std::uint32_t>(pick(1, 9));
          conv.ic_blocks = static_cast<std::uint32_t>(pick(1, 3));
          conv.oc_blocks = static_cast<std::uint32_t>(pick(1, 3));
          const std::uint32_t pad = conv.kh == 3 ? static_cast<std::uint32_t>(pick(0, 1)) : 0;
          conv.pad_top = conv.pad_bottom = conv.pad_left = conv.pad_right = pad;
          const std::uint32_t in_h = (conv.out_h - 1) * conv.stride_h + conv.kh - 2 * pad;
          const std::uint32_t in_w = (conv.out_w - 1) * conv.stride_w + conv.kw - 2 * pad;
          const std::uint32_t channels = conv.ic_blocks * static_cast<std::uint32_t>(rows);
          const std::uint32_t out_channels = conv.oc_blocks * 16;
          const std::uint32_t e = static_cast<std::uint32_t>(bits / 8);
          conv.in_stride_x = channels + static_cast<std::uint32_t>(pick(0, 1));
          conv.in_stride_y = in_w * conv.in_stride_x;
          conv.in_addr = 0;
          conv.w_addr = (in_h * conv.in_stride_y * e + 64) & ~63u;
          conv.bias_addr = conv.w_addr + conv.kh * conv.kw * channels * out_channels * e;
          conv.acc_addr = conv.bias_addr + out_channels * 4;
          conv.acc_stride_x = out_channels;
          conv.acc_stride_y = conv.out_w * out_channels;
          ASSERT_LE(conv.acc_addr + conv.out_h * conv.acc_stride_y * 4, 1u << 18);
          auto fast_sp = fast.scratchpad(0), reference_sp = reference.scratchpad(0);
          for (std::size_t i = 0; i < fast_sp.size(); ++i)
            fast_sp[i] = reference_sp[i] = static_cast<std::uint8_t>(rng() >> 24);
          if (trial % 4 == 3) {
            // Weights only on input channels 1, 6, 11, ... and the last ([ocb][icb][ky][kx][r][c]),
            // as conv1's on 3 of 16: the AMX packing drops the other rows, the VNNI one the pairs
            // without a weight (with rows 3 x 3 blocks the kept pair (8, 9) lacks channel 9), and
            // the conv copies only those channels (its inputs elsewhere stay random).
            std::uint32_t at = conv.w_addr;
            for (std::uint32_t ocb = 0; ocb < conv.oc_blocks; ++ocb)
              for (std::uint32_t icb = 0; icb < conv.ic_blocks; ++icb)
                for (std::uint32_t tap = 0; tap < conv.kh * conv.kw; ++tap)
                  for (int r = 0; r < rows; ++r, at += 16 * e)
                    if (const std::uint32_t c =
                            icb * static_cast<std::uint32_t>(rows) + static_cast<std::uint32_t>(r);
                        c % 5 != 1 && c != channels - 1)
                      for (std::uint32_t b = 0; b < 16 * e; ++b)
                        fast_sp[at + b] = reference_sp[at + b] = 0;
          }
          for (int repeat = 0; repeat < 2; ++repeat) {  // the second from the weight cache
            fast.execute(conv);
            reference.execute(conv);
          }
          ASSERT_TRUE(std::equal(fast_sp.begin(), fast_sp.end(), reference_sp.begin()))
              << "rows " << rows << ", int" << bits << ", " << threads << " threads, trial "
              << trial << ": " << conv.kh << "x" << conv.kw << " stride " << conv.stride_h
              << " pad " << pad << ", " << conv.out_h << "x" << conv.out_w << " pixels";
        }
      }
}

}  // namespace
}  // namespace tessel::sim
