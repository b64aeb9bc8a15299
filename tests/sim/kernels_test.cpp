// The datapath's multiply-accumulate kernels against scalar int64 sums taken mod 2^32.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "sim/core/amx_conv.hpp"
#include "sim/core/datapath.hpp"
#include "sim/core/kernels.hpp"
#include "sim/core/kernels_simd.hpp"

namespace tessel::sim {
namespace {

bool env_set(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' && std::strcmp(value, "0") != 0;
}

// ctest runs these tests again with a SIMD form switched off (tests/sim/CMakeLists.txt). Where
// this CPU lacks that form anyway (no AMX: the default run already takes the VNNI conv; no
// AVX-512: already the AVX2 kernels), the run would repeat the default one test for test: it
// is skipped, saying why (a third of the sim tests' time under the sanitizers).
class RepeatsTheDefaultRun : public ::testing::Environment {
 public:
  void SetUp() override {
    if (env_set("TESSEL_SIM_PORTABLE_KERNELS")) return;  // never the default on a SIMD CPU
    if (env_set("TESSEL_SIM_NO_AVX512") && !kernels::detail::cpu_has_avx512())
      GTEST_SKIP() << "TESSEL_SIM_NO_AVX512: this CPU has no AVX-512, the default run is this one";
    if (env_set("TESSEL_SIM_NO_AMX") && !kernels::amx::supported())
      GTEST_SKIP() << "TESSEL_SIM_NO_AMX: this CPU has no AMX, the default run is this one";
  }
};
[[maybe_unused]] ::testing::Environment* const kRepeats =
    ::testing::AddGlobalTestEnvironment(new RepeatsTheDefaultRun);

// The switch ctest's sim_tests_portable_kernels sets: with TESSEL_SIM_PORTABLE_KERNELS=1 every
// SIMD form (AVX-512, VNNI, AMX) is off, so that run's SimKernels and SimDatapath tests check the
// portable loops a CPU without AVX-512 runs; without it the SIMD forms are allowed.
TEST(SimKernels, portable_switch_turns_every_simd_form_off) {
  const char* value = std::getenv("TESSEL_SIM_PORTABLE_KERNELS");
  const bool portable = value != nullptr && value[0] != '\0' && std::strcmp(value, "0") != 0;
  EXPECT_EQ(kernels::simd_kernels_enabled(), !portable);
  if (portable) {
    EXPECT_FALSE(kernels::amx::available());
  }
}

// The switch ctest's sim_tests_no_amx sets: TESSEL_SIM_NO_AMX=1 turns the AMX conv off and
// leaves the other SIMD forms as they were.
TEST(SimKernels, no_amx_switch_turns_only_the_amx_conv_off) {
  const auto set = [](const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr && value[0] != '\0' && std::strcmp(value, "0") != 0;
  };
  if (set("TESSEL_SIM_NO_AMX")) {
    EXPECT_FALSE(kernels::amx::available());
    EXPECT_EQ(kernels::simd_kernels_enabled(), !set("TESSEL_SIM_PORTABLE_KERNELS"));
  } else if (!set("TESSEL_SIM_PORTABLE_KERNELS") && !set("TESSEL_SIM_NO_AVX512")) {
    EXPECT_EQ(kernels::amx::available(), kernels::amx::supported());
  }
}

// The switch ctest's sim_tests_avx2 sets: TESSEL_SIM_NO_AVX512=1 turns the AVX-512 forms and
// the AMX conv off and leaves the AVX2 ones on (simd_kernels_enabled() stays true).
TEST(SimKernels, no_avx512_switch_turns_the_avx512_forms_and_amx_off) {
  const auto set = [](const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr && value[0] != '\0' && std::strcmp(value, "0") != 0;
  };
  const bool portable = set("TESSEL_SIM_PORTABLE_KERNELS");
  const bool no_avx512 = set("TESSEL_SIM_NO_AVX512");
  EXPECT_EQ(kernels::avx512_kernels_enabled(), !portable && !no_avx512);
  EXPECT_EQ(kernels::simd_kernels_enabled(), !portable);
  if (no_avx512) {
    EXPECT_FALSE(kernels::amx::available());
  }
}

// kernels::conv_dense (VNNI where the CPU has it), conv_dense_avx2 (where it has AVX2) and
// conv_dense_portable against int64 sums taken mod 2^32, on every blocking: 1-17 pixels (full
// blocks of 5, 6 or 8 and every rest), 1-3 taps at scattered offsets, 1-2 and 16 channel pairs,
// every output channel count 1-65 (one to four vectors in the last 64-channel chunk, one or two
// in the last 16-channel one, each tail mask) and several chunks, each init; the weights in
// one column block and in blocks of 16 and 32 (kernels::dense_index: the expected sums read
// the weights through its definition, so a kernel that reads another layout fails).
TEST(SimKernels, conv_dense_equals_int64_sums_mod_2_32_on_every_blocking) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> value(std::numeric_limits<std::int16_t>::min(),
                                           std::numeric_limits<std::int16_t>::max());
  const auto draw = [&] {
    // The extremes often: -32768 * -32768 pairs are where a 32-bit pair sum wraps.
    return static_cast<std::int16_t>(rng() % 4 == 0 ? std::numeric_limits<std::int16_t>::min()
                                                    : value(rng));
  };
  std::vector<std::int64_t> outs;
  for (std::int64_t out = 1; out <= 65; ++out) outs.push_back(out);
  for (const std::int64_t out : {113, 128, 144}) outs.push_back(out);
  int cases = 0, avx2_cases = 0;
  for (const std::int64_t pixels : {1, 5, 6, 7, 8, 9, 10, 11, 12, 17}) {
    for (const std::int64_t taps : {1, 3}) {
      for (const std::int64_t pairs : {1, 2, 16}) {
        for (const std::int64_t out : outs)
          for (const std::int64_t block : {out, std::int64_t{16}, std::int64_t{32}}) {
            const auto init = static_cast<kernels::AccInit>(cases++ % 3);
            // The image: pixels and taps at scattered, odd byte offsets (any alignment).
            std::vector<std::int64_t> pixel_offsets, tap_offsets, slot_offsets;
            for (std::int64_t t = 0; t < taps; ++t) tap_offsets.push_back(t * (4 * pairs + 6) + 1);
            const std::int64_t pixel_bytes = taps * (4 * pairs + 6) + 2;
            for (std::int64_t p = 0; p < pixels; ++p) {
              pixel_offsets.push_back(p * pixel_bytes + (p % 3));
              slot_offsets.push_back(p * (4 * out + 12) + 4 * (p % 2));
            }
            std::vector<std::uint8_t> image(static_cast<std::size_t>(pixels * pixel_bytes + 8));
            for (auto& byte : image) byte = static_cast<std::uint8_t>(rng());
            std::vector<std::int16_t> w(static_cast<std::size_t>(taps * 2 * pairs * out));
            for (auto& x : w) x = draw();
            std::vector<std::uint8_t> bias(static_cast<std::size_t>(4 * out));
            for (auto& byte : bias) byte = static_cast<std::uint8_t>(rng());
            std::vector<std::uint8_t> acc(static_cast<std::size_t>(pixels * (4 * out + 12) + 8));
            for (auto& byte : acc) byte = static_cast<std::uint8_t>(rng());
            const auto le = [](const std::uint8_t* q, int bytes) {
              std::uint32_t u = 0;
              for (int b = 0; b < bytes; ++b) u |= std::uint32_t{q[b]} << (8 * b);
              return u;
            };
            std::vector<std::uint8_t> expected = acc;
            for (std::int64_t p = 0; p < pixels; ++p)
              for (std::int64_t o = 0; o < out; ++o) {
                std::uint8_t* slot = expected.data() + slot_offsets[p] + 4 * o;
                std::int64_t sum = init == kernels::AccInit::kBias   ? le(bias.data() + 4 * o, 4)
                                   : init == kernels::AccInit::kSelf ? le(slot, 4)
                                                                     : 0;
                for (std::int64_t t = 0; t < taps; ++t)
                  for (std::int64_t i = 0; i < 2 * pairs; ++i) {
                    const auto x = static_cast<std::int16_t>(
                        le(image.data() + pixel_offsets[p] + tap_offsets[t] + 2 * i, 2));
                    sum += std::int64_t{x} * w[static_cast<std::size_t>(kernels::dense_index(
                                                 t, i, o, taps, pairs, out, block))];
                  }
                const auto u = static_cast<std::uint32_t>(sum);
                for (int b = 0; b < 4; ++b) slot[b] = static_cast<std::uint8_t>(u >> (8 * b));
              }
            std::vector<std::uint8_t> portable = acc;
            std::vector<std::uint8_t> avx2 = acc;
            if (kernels::conv_dense_avx2(image.data(), pixel_offsets.data(), pixels,
                                         tap_offsets.data(), taps, pairs, w.data(), out, block,
                                         init, bias.data(), avx2.data(), slot_offsets.data())) {
              ++avx2_cases;
              ASSERT_EQ(avx2, expected)
                  << pixels << " pixels, " << taps << " taps, " << pairs << " pairs, " << out
                  << " out, block " << block << " (AVX2)";
            }
            kernels::conv_dense(image.data(), pixel_offsets.data(), pixels, tap_offsets.data(),
                                taps, pairs, w.data(), out, block, init, bias.data(), acc.data(),
                                slot_offsets.data());
            kernels::conv_dense_portable(image.data(), pixel_offsets.data(), pixels,
                                         tap_offsets.data(), taps, pairs, w.data(), out, block,
                                         init, bias.data(), portable.data(), slot_offsets.data());
            ASSERT_EQ(acc, expected)
                << pixels << " pixels, " << taps << " taps, " << pairs << " pairs, " << out
                << " out, block " << block << ", init " << static_cast<int>(init);
            ASSERT_EQ(portable, expected) << pixels << " pixels, " << taps << " taps, " << pairs
                                          << " pairs, " << out << " out, block " << block;
          }
      }
    }
  }
  // The AVX2 path ran every case wherever the CPU has AVX2 and SIMD kernels are on.
#if defined(__x86_64__) && defined(__GNUC__)
  const bool avx2 = kernels::simd_kernels_enabled() && __builtin_cpu_supports("avx2");
#else
  const bool avx2 = false;
#endif
  EXPECT_EQ(avx2_cases, avx2 ? cases : 0);
}

// A hand case: 2 inputs x 1 output, both pairs at -32768: 2^30 + 2^30 = 2^31 wraps to INT32_MIN.
// drop_zero_pairs by hand: 2 taps x 4 channel pairs x 2 outputs (pair_index layout: per tap
// [pair][o][2]). Pair 1 has a weight only in tap 0, pair 3 only in tap 1 (its second channel
// only), pairs 0 and 2 none: both kept pairs move to the front of each tap, their channels are
// 2, 3, 6, 7. Three kept pairs of four (a quarter dropped) still narrow; all four, or none,
// leave the weights as they were.
TEST(SimKernels, drop_zero_pairs_keeps_the_pairs_with_a_weight_by_hand) {
  const auto weights = [](std::vector<std::pair<int, std::int16_t>> set) {
    kernels::PairWeights w(2 * 4 * 2 * 2, 0);
    for (const auto& [at, v] : set) w[static_cast<std::size_t>(at)] = v;
    return w;
  };
  // Tap t, pair k, output o, element e at ((t * 4 + k) * 2 + o) * 2 + e.
  kernels::PairWeights w = weights({{(0 * 4 + 1) * 4 + 0, 5},        // t0 k1 o0 e0
                                    {(0 * 4 + 1) * 4 + 3, -7},       // t0 k1 o1 e1
                                    {(1 * 4 + 3) * 4 + 3, 32767}});  // t1 k3 o1 e1
  EXPECT_EQ(kernels::drop_zero_pairs(w, 2, 4, 2, 2), (std::vector<std::int32_t>{2, 3, 6, 7}));
  EXPECT_EQ(w, (kernels::PairWeights{5, 0, 0, -7, 0, 0, 0, 0,        // tap 0: k1, k3
                                     0, 0, 0, 0, 0, 0, 0, 32767}));  // tap 1: k1, k3

  kernels::PairWeights three =
      weights({{(0 * 4 + 0) * 4 + 1, 1}, {(1 * 4 + 2) * 4 + 2, 2}, {(1 * 4 + 3) * 4 + 0, 3}});
  EXPECT_EQ(kernels::drop_zero_pairs(three, 2, 4, 2, 2),
            (std::vector<std::int32_t>{0, 1, 4, 5, 6, 7}));
  EXPECT_EQ(three, (kernels::PairWeights{0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,     // tap 0
                                         0, 0, 0, 0, 0, 0, 2, 0, 3, 0, 0, 0}));  // tap 1

  kernels::PairWeights all = weights({{1, 1}, {4 + 1, 1}, {8 + 1, 1}, {16 + 12 + 1, 1}});
  const kernels::PairWeights all_before = all;
  EXPECT_TRUE(kernels::drop_zero_pairs(all, 2, 4, 2, 2).empty());
  EXPECT_EQ(all, all_before);

  kernels::PairWeights none = weights({});
  EXPECT_TRUE(kernels::drop_zero_pairs(none, 2, 4, 2, 2).empty());
  EXPECT_EQ(none.size(), 32u);
}

// drop_zero_pairs on column blocks by hand: 1 tap x 3 pairs x 18 outputs in blocks of 16 (block
// 0: 16 channels at 0-95, [pair][16][2]; block 1: 2 channels at 96-107). Pair 2 has a weight at
// output 0 (index 2 * 16 * 2 = 64), pair 1 one at output 17's second element (96 + (1 * 2 + 1)
// * 2 + 1 = 103), pair 0 none: pairs 1 and 2 stay, and with 2 pairs block 0 is 0-63 and block 1
// 64-71, so the weights move to 64 -> (1 * 16 + 0) * 2 = 32 and 103 -> 64 + 3 = 67.
TEST(SimKernels, drop_zero_pairs_moves_each_column_block_by_hand) {
  kernels::PairWeights w(108, 0);
  w[64] = 9;
  w[103] = -4;
  EXPECT_EQ(kernels::drop_zero_pairs(w, 1, 3, 18, 16), (std::vector<std::int32_t>{2, 3, 4, 5}));
  kernels::PairWeights expected(72, 0);
  expected[32] = 9;
  expected[67] = -4;
  EXPECT_EQ(w, expected);
}

TEST(SimKernels, conv_dense_pair_of_two_minimum_products_wraps_to_int32_min) {
  const std::int16_t a[2] = {-32768, -32768};
  const std::int16_t w[2] = {-32768, -32768};
  const std::int64_t zero = 0;
  for (const bool portable : {false, true}) {
    std::uint8_t slot[4] = {};
    (portable ? kernels::conv_dense_portable : kernels::conv_dense)(
        reinterpret_cast<const std::uint8_t*>(a), &zero, 1, &zero, 1, 1, w, 1, 1,
        kernels::AccInit::kZero, nullptr, slot, &zero);
    std::int32_t sum = 0;
    std::memcpy(&sum, slot, 4);
    EXPECT_EQ(sum, std::numeric_limits<std::int32_t>::min()) << "portable " << portable;
  }
  std::uint8_t slot[4] = {};
  if (kernels::conv_dense_avx2(reinterpret_cast<const std::uint8_t*>(a), &zero, 1, &zero, 1, 1, w,
                               1, 1, kernels::AccInit::kZero, nullptr, slot, &zero)) {
    std::int32_t sum = 0;
    std::memcpy(&sum, slot, 4);
    EXPECT_EQ(sum, std::numeric_limits<std::int32_t>::min()) << "AVX2";
  }
}

// The vector unit's kernels equal the scalar definitions (support/int_ops.hpp) element for
// element: accumulators at the int32 extremes, shifts 0 (no rounding) to 62, negative ties.
TEST(SimKernels, requantize_and_add_equal_int_ops_on_every_element) {
  std::mt19937 rng(11);
  const auto le32 = [](std::vector<std::uint8_t>& bytes, std::size_t at, std::int32_t v) {
    for (int k = 0; k < 4; ++k)
      bytes[at + static_cast<std::size_t>(k)] =
          static_cast<std::uint8_t>(static_cast<std::uint32_t>(v) >> (8 * k));
  };
  const std::int64_t count = 37;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::uint8_t> acc(4 * count), table(8 * count);
    std::vector<std::int32_t> acc_values(count);
    std::vector<intops::Requant> per_channel(count);
    intops::Requant q{static_cast<std::int32_t>(rng() >> 1), static_cast<int>(rng() % 63),
                      static_cast<std::int32_t>(rng() % 7) - 3, -128, 127};
    if (trial % 3 == 0) q.lo = 0;
    for (std::int64_t c = 0; c < count; ++c) {
      const auto k = static_cast<std::size_t>(c);
      acc_values[k] = trial % 5 == 0 && c < 4
                          ? std::array<std::int32_t, 4>{std::numeric_limits<std::int32_t>::min(),
                                                        std::numeric_limits<std::int32_t>::max(),
                                                        -(1 << 20), 1 << 20}[k]
                          : static_cast<std::int32_t>(rng());
      le32(acc, 4 * k, acc_values[k]);
      per_channel[k] = q;
      per_channel[k].multiplier = static_cast<std::int32_t>(rng() >> 1);
      // Every fourth trial every shift in [32, 62], the range of the SIMD forms' int32-lane
      // requantize (requant16_narrow, requant8_narrow), which then takes whole table steps.
      per_channel[k].shift =
          trial % 4 == 1 ? 32 + static_cast<int>(rng() % 31) : static_cast<int>(rng() % 63);
      le32(table, 8 * k, per_channel[k].multiplier);
      le32(table, 8 * k + 4, per_channel[k].shift);
    }
    std::vector<std::int32_t> got(count), got_table(count);
    kernels::requantize(acc.data(), count, nullptr, q, got.data());
    kernels::requantize(acc.data(), count, table.data(), q, got_table.data());
    for (std::int64_t c = 0; c < count; ++c) {
      const auto k = static_cast<std::size_t>(c);
      ASSERT_EQ(got[k], intops::requantize(acc_values[k], q)) << "trial " << trial << " c " << c;
      ASSERT_EQ(got_table[k], intops::requantize(acc_values[k], per_channel[k]))
          << "trial " << trial << " c " << c;
    }
    // requantize_store = requantize then store_elements, on every count of channels left after
    // the 8-channel steps, clamped or wide (the stored low bytes then truncate), into a separate
    // buffer and in place over the accumulators (dst == src).
    for (const std::uint64_t bytes : {1u, 2u}) {
      const std::int64_t n = 1 + trial % count;
      intops::Requant wide = q;
      if (trial % 2 == 0) wide.lo = std::numeric_limits<std::int32_t>::min();
      if (trial % 2 == 0) wide.hi = std::numeric_limits<std::int32_t>::max();
      for (const bool with_table : {false, true}) {
        const std::uint8_t* t = with_table ? table.data() : nullptr;
        std::vector<std::int32_t> values(static_cast<std::size_t>(n));
        kernels::requantize(acc.data(), n, t, wide, values.data());
        std::vector<std::uint8_t> expected(bytes * static_cast<std::uint64_t>(n));
        kernels::store_elements(values.data(), n, bytes, expected.data());
        std::vector<std::uint8_t> separate(expected.size() + 3, 0xab);
        kernels::requantize_store(acc.data(), n, t, wide, bytes, separate.data());
        std::vector<std::uint8_t> in_place = acc;
        kernels::requantize_store(in_place.data(), n, t, wide, bytes, in_place.data());
        ASSERT_TRUE(std::equal(expected.begin(), expected.end(), separate.begin()))
            << "trial " << trial << " bytes " << bytes << " n " << n << " table " << with_table;
        ASSERT_EQ(separate[expected.size()], 0xab) << "wrote past the last channel";
        ASSERT_TRUE(std::equal(expected.begin(), expected.end(), in_place.begin()))
            << "in place: trial " << trial << " bytes " << bytes << " n " << n;
      }
    }
    // Residual adds of 8- and 16-bit operands.
    for (const std::uint64_t bytes : {1u, 2u}) {
      intops::AddRequant add{static_cast<std::int32_t>(rng() >> 1),
                             static_cast<std::int32_t>(rng() >> 1),
                             static_cast<int>(rng() % 63),
                             static_cast<std::int32_t>(rng() % 5) - 2,
                             bytes == 1 ? -128 : -32768,
                             bytes == 1 ? 127 : 32767};
      // Every few trials a pass-through (shift 0, multipliers (1, 0) or (0, 1): a ReLU or a
      // copy), which the SIMD forms clamp in the element's own width.
      if (trial % 6 == 1 || trial % 6 == 3) {
        add.multiplier_a = trial % 6 == 1 ? 1 : 0;
        add.multiplier_b = 1 - add.multiplier_a;
        add.shift = 0;
        if (trial % 12 == 1) add.lo = 0;
      }
      std::vector<std::uint8_t> a(bytes * count), b(bytes * count);
      for (auto& v : a) v = static_cast<std::uint8_t>(rng());
      for (auto& v : b) v = static_cast<std::uint8_t>(rng());
      std::vector<std::int32_t> sum(count);
      kernels::add_requantize(a.data(), b.data(), bytes, count, add, sum.data());
      // add_requantize_store = add_requantize then store_elements, on a prefix of every length
      // (the 8-channel steps' tails), apart from the operands and in place over each.
      {
        const std::int64_t n = 1 + trial % count;
        std::vector<std::uint8_t> expected(bytes * static_cast<std::uint64_t>(n));
        kernels::store_elements(sum.data(), n, bytes, expected.data());
        std::vector<std::uint8_t> separate(expected.size() + 2, 0xcd);
        kernels::add_requantize_store(a.data(), b.data(), bytes, n, add, separate.data());
        ASSERT_TRUE(std::equal(expected.begin(), expected.end(), separate.begin()))
            << "trial " << trial << " bytes " << bytes << " n " << n;
        ASSERT_EQ(separate[expected.size()], 0xcd) << "wrote past the last channel";
        std::vector<std::uint8_t> over_a = a, over_b = b;
        kernels::add_requantize_store(over_a.data(), b.data(), bytes, n, add, over_a.data());
        kernels::add_requantize_store(a.data(), over_b.data(), bytes, n, add, over_b.data());
        ASSERT_TRUE(std::equal(expected.begin(), expected.end(), over_a.begin())) << "over a";
        ASSERT_TRUE(std::equal(expected.begin(), expected.end(), over_b.begin())) << "over b";
      }
      for (std::int64_t c = 0; c < count; ++c) {
        const auto k = static_cast<std::size_t>(c);
        const auto element = [&](const std::vector<std::uint8_t>& v) -> std::int32_t {
          return bytes == 1 ? static_cast<std::int8_t>(v[k])
                            : static_cast<std::int16_t>(
                                  static_cast<std::uint16_t>(v[2 * k] | (v[2 * k + 1] << 8)));
        };
        ASSERT_EQ(sum[k], intops::add_requantize(element(a), element(b), add))
            << "trial " << trial << " bytes " << bytes << " c " << c;
      }
    }
  }
}

// requantize_store_pixels over several pixels (strided accumulators and outputs, every channel
// count 1-40 so that every 16-channel tail occurs, per-channel tables with shifts 0-62 and
// multipliers up to 2^31 - 1, accumulators at the int32 extremes, clamped and wide) equals
// intops::requantize element by element, and writes nothing between or after the pixels.
TEST(SimKernels, requantize_store_pixels_equals_int_ops_on_every_pixel_and_tail) {
  std::mt19937 rng(23);
  for (std::int64_t count = 1; count <= 40; ++count) {
    for (const std::uint64_t bytes : {1u, 2u}) {
      for (const bool with_table : {false, true}) {
        const std::int64_t pixels = 1 + count % 7;
        const std::int64_t src_step = 4 * count + 4 * (count % 3);  // bytes, gaps between pixels
        const std::int64_t dst_step = static_cast<std::int64_t>(bytes) * count + 3;
        std::vector<std::uint8_t> src(static_cast<std::size_t>(pixels * src_step));
        std::vector<std::int32_t> acc(static_cast<std::size_t>(pixels * count));
        for (std::int64_t p = 0; p < pixels; ++p)
          for (std::int64_t c = 0; c < count; ++c) {
            const std::uint32_t pick = rng();
            // Small values too: with a small multiplier and shift their products stay inside
            // the clamp, so rounding (ties, negatives, shift 0) shows in the result.
            const std::int32_t v = pick % 11 == 0   ? std::numeric_limits<std::int32_t>::min()
                                   : pick % 11 == 1 ? std::numeric_limits<std::int32_t>::max()
                                   : p % 2 == 0     ? static_cast<std::int32_t>(rng() % 41) - 20
                                                    : static_cast<std::int32_t>(rng());
            acc[static_cast<std::size_t>(p * count + c)] = v;
            std::memcpy(&src[static_cast<std::size_t>(p * src_step + 4 * c)], &v, 4);
          }
        intops::Requant q{static_cast<std::int32_t>(count % 3 == 0 ? rng() % 4 : rng() >> 1),
                          static_cast<int>(count % 5 == 0 ? count % 3 : rng() % 63),
                          static_cast<std::int32_t>(rng() % 9) - 4, bytes == 1 ? -128 : -32768,
                          bytes == 1 ? 127 : 32767};
        if (count % 4 == 0) {  // wide: the stored low bytes truncate
          q.lo = std::numeric_limits<std::int32_t>::min();
          q.hi = std::numeric_limits<std::int32_t>::max();
        }
        std::vector<std::uint8_t> table(static_cast<std::size_t>(8 * count));
        std::vector<intops::Requant> per_channel(static_cast<std::size_t>(count), q);
        for (std::int64_t c = 0; c < count; ++c) {
          auto& entry = per_channel[static_cast<std::size_t>(c)];
          entry.multiplier = c % 9 == 0   ? std::numeric_limits<std::int32_t>::max()
                             : c % 3 == 1 ? static_cast<std::int32_t>(rng() % 4)
                                          : static_cast<std::int32_t>(rng() >> 1);
          entry.shift = c % 5 == 0   ? 0
                        : c % 5 == 1 ? 62
                        : c % 5 == 2 ? static_cast<int>(1 + rng() % 2)
                                     : static_cast<int>(rng() % 63);
          std::memcpy(&table[static_cast<std::size_t>(8 * c)], &entry.multiplier, 4);
          std::memcpy(&table[static_cast<std::size_t>(8 * c + 4)], &entry.shift, 4);
        }
        std::vector<std::uint8_t> dst(static_cast<std::size_t>(pixels * dst_step + 5), 0xee);
        kernels::requantize_store_pixels(src.data(), src_step, pixels, count,
                                         with_table ? table.data() : nullptr, q, bytes, dst.data(),
                                         dst_step);
        for (std::int64_t p = 0; p < pixels; ++p) {
          for (std::int64_t c = 0; c < count; ++c) {
            const std::int32_t want =
                intops::requantize(acc[static_cast<std::size_t>(p * count + c)],
                                   with_table ? per_channel[static_cast<std::size_t>(c)] : q);
            std::int32_t got = 0;
            const std::uint8_t* at =
                &dst[static_cast<std::size_t>(p * dst_step + static_cast<std::int64_t>(bytes) * c)];
            got = bytes == 1
                      ? static_cast<std::int8_t>(at[0])
                      : static_cast<std::int16_t>(static_cast<std::uint16_t>(at[0] | (at[1] << 8)));
            const std::int32_t want_low =
                bytes == 1 ? static_cast<std::int8_t>(want) : static_cast<std::int16_t>(want);
            ASSERT_EQ(got, want_low) << "count " << count << " bytes " << bytes << " table "
                                     << with_table << " pixel " << p << " channel " << c;
          }
          for (std::int64_t gap = static_cast<std::int64_t>(bytes) * count; gap < dst_step; ++gap)
            ASSERT_EQ(dst[static_cast<std::size_t>(p * dst_step + gap)], 0xee) << "gap written";
        }
        ASSERT_EQ(dst[static_cast<std::size_t>(pixels * dst_step)], 0xee) << "wrote past the end";
      }
    }
  }
}

// The int32-lane forms of add_requantize_store (shifts 17-46, multipliers split into int16
// halves) and of requantize_store (shifts 32-62), and the pass-through add (a ReLU: shift 0,
// multipliers (1, 0) or (0, 1)), against intops element by element: operands at the int16 /
// int8 extremes, multipliers whose halves sit at the split's limits (low half -2^15 or
// 2^15 - 1, high half +-(2^15 - 1) and the first multiplier past it), sums on exact ties and on
// negative multiples of 2^16, zero points up to the limits, every tail of a 32- or 64-element
// step, in place and apart.
TEST(SimKernels, narrow_add_and_requantize_equal_int_ops_at_the_limits) {
  std::mt19937 rng(41);
  const std::int32_t multipliers[] = {0,
                                      1,
                                      -1,
                                      65536,
                                      -65536,
                                      32767,
                                      -32768,
                                      32768,
                                      (32767 << 16) + 32767,
                                      (32767 << 16) + 32768,  // high half 2^15: not narrow
                                      -(32767 << 16) - 32768,
                                      std::numeric_limits<std::int32_t>::max(),
                                      std::numeric_limits<std::int32_t>::min(),
                                      1 << 30,
                                      1354679505,
                                      -2124053771};
  const auto element_of = [](const std::vector<std::uint8_t>& v, std::uint64_t bytes,
                             std::size_t k) -> std::int32_t {
    return bytes == 1 ? static_cast<std::int8_t>(v[k])
                      : static_cast<std::int16_t>(
                            static_cast<std::uint16_t>(v[2 * k] | (v[2 * k + 1] << 8)));
  };
  for (const std::uint64_t bytes : {1u, 2u}) {
    const std::int32_t type_max = bytes == 1 ? 127 : 32767;
    for (int trial = 0; trial < 600; ++trial) {
      const std::int64_t n = 1 + trial % 71;
      std::vector<std::uint8_t> a(bytes * static_cast<std::uint64_t>(n)), b(a.size());
      for (std::size_t k = 0; k < a.size() / bytes; ++k) {
        // Extremes, small values (ties and exact multiples show there) and random ones.
        for (auto* v : {&a, &b}) {
          const std::uint32_t pick = rng() % 6;
          const std::int32_t value = pick == 0   ? -type_max - 1
                                     : pick == 1 ? type_max
                                     : pick == 2 ? static_cast<std::int32_t>(rng() % 5) - 2
                                                 : static_cast<std::int32_t>(rng());
          for (std::uint64_t byte = 0; byte < bytes; ++byte)
            (*v)[bytes * k + byte] = static_cast<std::uint8_t>(value >> (8 * byte));
        }
      }
      intops::AddRequant q;
      if (trial % 4 == 0) {  // pass-through: a ReLU or a clamped copy
        q.multiplier_a = trial % 8 == 0 ? 1 : 0;
        q.multiplier_b = 1 - q.multiplier_a;
        q.shift = 0;
      } else {
        q.multiplier_a = trial % 3 == 0 ? static_cast<std::int32_t>(rng())
                                        : multipliers[rng() % std::size(multipliers)];
        q.multiplier_b = multipliers[rng() % std::size(multipliers)];
        q.shift = trial % 5 == 0 ? 17 : trial % 5 == 1 ? 46 : static_cast<int>(15 + rng() % 34);
      }
      q.zero_point = trial % 7 == 0   ? type_max
                     : trial % 7 == 1 ? -type_max - 1
                                      : static_cast<std::int32_t>(rng() % 9) - 4;
      q.lo = trial % 3 == 0 ? 0 : -type_max - 1 + static_cast<std::int32_t>(rng() % 3);
      q.hi = type_max - static_cast<std::int32_t>(rng() % 3);
      std::vector<std::uint8_t> separate(a.size() + 2, 0xcd), over_a = a, over_b = b;
      kernels::add_requantize_store(a.data(), b.data(), bytes, n, q, separate.data());
      kernels::add_requantize_store(over_a.data(), b.data(), bytes, n, q, over_a.data());
      kernels::add_requantize_store(a.data(), over_b.data(), bytes, n, q, over_b.data());
      ASSERT_EQ(separate[a.size()], 0xcd) << "wrote past the last element";
      for (std::int64_t c = 0; c < n; ++c) {
        const auto k = static_cast<std::size_t>(c);
        const std::int32_t want =
            intops::add_requantize(element_of(a, bytes, k), element_of(b, bytes, k), q);
        ASSERT_EQ(element_of(separate, bytes, k), want)
            << "bytes " << bytes << " trial " << trial << " element " << c << " M_a "
            << q.multiplier_a << " M_b " << q.multiplier_b << " r " << q.shift << " z "
            << q.zero_point;
        ASSERT_EQ(element_of(over_a, bytes, k), want) << "over a, trial " << trial;
        ASSERT_EQ(element_of(over_b, bytes, k), want) << "over b, trial " << trial;
      }
    }
  }
  // requantize_store: multipliers 0 .. 2^31 - 1 (and negative ones, which stay in int64),
  // shifts 31-62, accumulators at the extremes and on ties, zero points at +-2^29 and past.
  for (int trial = 0; trial < 400; ++trial) {
    const std::int64_t n = 1 + trial % 37;
    std::vector<std::uint8_t> acc(4 * static_cast<std::size_t>(n)), table(8 * acc.size() / 4);
    std::vector<intops::Requant> per_channel(static_cast<std::size_t>(n));
    intops::Requant q{trial % 5 == 0 ? std::numeric_limits<std::int32_t>::max()
                                     : static_cast<std::int32_t>(rng() >> 1),
                      static_cast<int>(31 + rng() % 32),
                      trial % 6 == 0   ? (1 << 29)
                      : trial % 6 == 1 ? -(1 << 29)
                      : trial % 6 == 2 ? (1 << 29) + 1
                                       : static_cast<std::int32_t>(rng() % 9) - 4,
                      trial % 2 == 0 ? std::numeric_limits<std::int32_t>::min() : -32768,
                      trial % 2 == 0 ? std::numeric_limits<std::int32_t>::max() : 32767};
    for (std::int64_t c = 0; c < n; ++c) {
      const auto k = static_cast<std::size_t>(c);
      const std::uint32_t pick = rng() % 5;
      const std::int32_t v = pick == 0   ? std::numeric_limits<std::int32_t>::min()
                             : pick == 1 ? std::numeric_limits<std::int32_t>::max()
                             : pick == 2 ? static_cast<std::int32_t>(rng() % 9) - 4
                                         : static_cast<std::int32_t>(rng());
      std::memcpy(&acc[4 * k], &v, 4);
      per_channel[k] = q;
      per_channel[k].multiplier = trial % 11 == 0 && c == n - 1 ? -5
                                  : c % 4 == 0 ? std::numeric_limits<std::int32_t>::max()
                                               : static_cast<std::int32_t>(rng() >> 1);
      per_channel[k].shift = c % 4 == 1 ? 32 : c % 4 == 2 ? 62 : static_cast<int>(31 + rng() % 32);
      std::memcpy(&table[8 * k], &per_channel[k].multiplier, 4);
      std::memcpy(&table[8 * k + 4], &per_channel[k].shift, 4);
    }
    for (const bool with_table : {false, true}) {
      std::vector<std::uint8_t> out(4 * acc.size() / 4 + 3, 0xee);
      kernels::requantize_store(acc.data(), n, with_table ? table.data() : nullptr, q, 4,
                                out.data());
      std::vector<std::uint8_t> narrow(2 * acc.size() / 4 + 3, 0xee);
      kernels::requantize_store(acc.data(), n, with_table ? table.data() : nullptr, q, 2,
                                narrow.data());
      for (std::int64_t c = 0; c < n; ++c) {
        const auto k = static_cast<std::size_t>(c);
        std::int32_t v;
        std::memcpy(&v, &acc[4 * k], 4);
        const std::int32_t want = intops::requantize(v, with_table ? per_channel[k] : q);
        ASSERT_EQ(element_of(narrow, 2, k), static_cast<std::int16_t>(want))
            << "trial " << trial << " table " << with_table << " channel " << c;
      }
      ASSERT_EQ(narrow[2 * static_cast<std::size_t>(n)], 0xee) << "wrote past the last channel";
    }
  }
}

// max_of_taps against the scalar max over every tap: 0-9 taps (none: the element's minimum),
// elements at the extremes (-128 / -32768 everywhere in some channels), every tail of a 64- or
// 32-channel step; nothing written past the last channel.
TEST(SimKernels, max_of_taps_equals_the_scalar_max_on_every_tail) {
  std::mt19937 rng(5);
  for (const std::uint64_t bytes : {1u, 2u}) {
    const std::int32_t lowest = bytes == 1 ? -128 : -32768;
    for (std::int64_t count = 1; count <= 70; ++count) {
      const std::int64_t taps = count % 10;
      std::vector<std::vector<std::uint8_t>> src(static_cast<std::size_t>(taps));
      std::vector<const std::uint8_t*> pointers;
      for (auto& tap : src) {
        tap.resize(bytes * static_cast<std::uint64_t>(count));
        for (std::int64_t c = 0; c < count; ++c) {
          // Channels 3k hold the minimum in every tap: the result must be it, not an initial 0.
          const std::int32_t v = c % 3 == 0 ? lowest : static_cast<std::int32_t>(rng());
          for (std::uint64_t k = 0; k < bytes; ++k)
            tap[bytes * static_cast<std::uint64_t>(c) + k] =
                static_cast<std::uint8_t>(v >> (8 * k));
        }
        pointers.push_back(tap.data());
      }
      std::vector<std::uint8_t> best(bytes * static_cast<std::uint64_t>(count) + 2, 0x5a);
      kernels::max_of_taps(pointers.data(), taps, count, bytes, best.data());
      for (std::int64_t c = 0; c < count; ++c) {
        std::int32_t want = lowest;
        const auto at = static_cast<std::size_t>(bytes * static_cast<std::uint64_t>(c));
        const auto element = [&](const std::uint8_t* p) -> std::int32_t {
          return bytes == 1 ? static_cast<std::int8_t>(p[at])
                            : static_cast<std::int16_t>(
                                  static_cast<std::uint16_t>(p[at] | (p[at + 1] << 8)));
        };
        for (const std::uint8_t* p : pointers) want = std::max(want, element(p));
        ASSERT_EQ(element(best.data()), want)
            << "bytes " << bytes << " count " << count << " taps " << taps << " channel " << c;
      }
      ASSERT_EQ(best[bytes * static_cast<std::uint64_t>(count)], 0x5a) << "wrote past the end";
    }
  }
}

// The datapath reuses a dense conv's repacked weights while the weight bytes and geometry stay
// the same: a conv after new weights were written (a reload), after new inputs, and after a
// depthwise conv in between must still equal the reference loop.
TEST(SimKernels, repacked_weights_follow_every_change_of_the_weight_bytes) {
  HwConfig config;
  config.matrix = {4, 4, 16, 16, 32, 4, 4};
  config.vector.lanes = 4;
  config.scratchpads = {
      {"unified",
       1 << 14,
       1,
       4,
       {DataKind::kActivations, DataKind::kWeights, DataKind::kAccumulators, DataKind::kOutputs}}};
  std::vector<std::uint8_t> dram;
  Datapath fast(config, dram), reference(config, dram, true);
  std::mt19937 rng(3);
  auto fast_sp = fast.scratchpad(0), reference_sp = reference.scratchpad(0);
  // Writes from outside go through a fresh scratchpad() (which drops the cached packings).
  const auto scribble = [&](std::uint64_t begin, std::uint64_t end) {
    fast_sp = fast.scratchpad(0);
    reference_sp = reference.scratchpad(0);
    for (std::uint64_t i = begin; i < end; ++i)
      fast_sp[i] = reference_sp[i] = static_cast<std::uint8_t>(rng());
  };
  scribble(0, fast_sp.size());
  isa::Conv conv;
  conv.elem = isa::Elem::kI16;
  conv.init = isa::Init::kBias;
  conv.kh = 3;
  conv.kw = 1;
  conv.stride_h = conv.stride_w = conv.dil_h = conv.dil_w = 1;
  conv.out_h = 2;
  conv.out_w = 5;
  conv.ic_blocks = 2;
  conv.oc_blocks = 3;
  conv.in_addr = 0;
  conv.in_stride_x = 8;
  conv.in_stride_y = 5 * 8;  // 4 x 5 pixels of 8 channels, 640 bytes
  conv.w_addr = 1024;        // 3 taps x 8 x 12 x 2 bytes = 576
  conv.bias_addr = 2048;     // 12 x 4
  conv.acc_addr = 4096;      // 2 x 5 x 12 x 4 = 480
  conv.acc_stride_x = 12;
  conv.acc_stride_y = 5 * 12;
  isa::Conv depthwise = conv;
  depthwise.depthwise = true;
  depthwise.ic_blocks = 1;
  depthwise.oc_blocks = 2;  // 8 channels, 3 taps x 8 x 2 bytes of weights at w_addr
  depthwise.acc_addr = 8192;
  depthwise.acc_stride_x = 8;
  depthwise.acc_stride_y = 5 * 8;
  const auto run = [&](const isa::Instruction& instruction, const char* step) {
    fast.execute(instruction);
    reference.execute(instruction);
    ASSERT_TRUE(std::equal(fast_sp.begin(), fast_sp.end(), reference_sp.begin())) << step;
  };
  run(conv, "first conv");
  scribble(0, 640);
  run(conv, "same weights, new inputs");
  scribble(1024 + 100, 1024 + 102);
  run(conv, "two weight bytes rewritten");
  run(depthwise, "depthwise in between");
  run(conv, "dense again after the depthwise conv");
}

// Little-endian low bytes, as write_element stores them, for every element width.
// The matmul's row step: uint32 sums mod 2^32, by hand at the limits (int16 operands after the
// operand shift: (-32768)^2 = 2^30, four of them wrap to 0) and on every tail length.
TEST(SimKernels, accumulate_scaled_wraps_mod_2_32) {
  std::vector<std::int32_t> b = {-32768, 32767, -1, 0, 5};
  std::vector<std::uint32_t> sums(5, 0);
  for (int i = 0; i < 4; ++i) kernels::accumulate_scaled(-32768, b.data(), 5, sums.data());
  EXPECT_EQ(sums[0], 0u);  // 4 * 2^30
  EXPECT_EQ(sums[1], static_cast<std::uint32_t>(std::int64_t{4} * -32768 * 32767));
  EXPECT_EQ(sums[2], static_cast<std::uint32_t>(4 * 32768));
  EXPECT_EQ(sums[3], 0u);
  EXPECT_EQ(sums[4], static_cast<std::uint32_t>(std::int64_t{4} * -32768 * 5));
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::int32_t> value(-32768, 32767);
  for (std::int64_t count = 0; count < 70; ++count) {
    std::vector<std::int32_t> row(static_cast<std::size_t>(count));
    std::vector<std::uint32_t> got(static_cast<std::size_t>(count));
    std::vector<std::int64_t> want(static_cast<std::size_t>(count));
    for (std::size_t n = 0; n < row.size(); ++n) got[n] = static_cast<std::uint32_t>(value(rng));
    for (std::size_t n = 0; n < row.size(); ++n) want[n] = static_cast<std::int32_t>(got[n]);
    for (int k = 0; k < 3; ++k) {
      for (auto& v : row) v = value(rng);
      const std::int32_t a = value(rng);
      kernels::accumulate_scaled(a, row.data(), count, got.data());
      for (std::size_t n = 0; n < row.size(); ++n) want[n] += std::int64_t{a} * row[n];
    }
    for (std::size_t n = 0; n < row.size(); ++n)
      ASSERT_EQ(got[n], static_cast<std::uint32_t>(want[n])) << "count " << count << " n " << n;
  }
}

// Scratchpads start zero without a write (ZeroedAllocator: calloc below 64 KiB, a fresh
// mapping above), whatever the heap held before.
TEST(SimKernels, scratchpad_bytes_start_zero_at_every_size) {
  for (std::size_t size : {std::size_t{1}, std::size_t{4096}, std::size_t{65535},
                           std::size_t{65536}, std::size_t{3} << 20}) {
    {
      std::vector<std::uint8_t> dirty(size, 0xA5);  // leaves non-zero bytes in freed memory
      ASSERT_EQ(dirty.back(), 0xA5);
    }
    const ScratchpadBytes pad(size);
    ASSERT_EQ(pad.size(), size);
    EXPECT_TRUE(std::all_of(pad.begin(), pad.end(), [](std::uint8_t b) { return b == 0; }))
        << size << " bytes";
  }
}

TEST(SimKernels, store_elements_writes_little_endian_low_bytes) {
  const std::int32_t values[3] = {-2, 0x1234, -0x1234567};
  std::uint8_t one[3], two[6], four[12];
  kernels::store_elements(values, 3, 1, one);
  kernels::store_elements(values, 3, 2, two);
  kernels::store_elements(values, 3, 4, four);
  EXPECT_EQ(std::vector<std::uint8_t>(one, one + 3), (std::vector<std::uint8_t>{0xfe, 0x34, 0x99}));
  EXPECT_EQ(std::vector<std::uint8_t>(two, two + 6),
            (std::vector<std::uint8_t>{0xfe, 0xff, 0x34, 0x12, 0x99, 0xba}));
  EXPECT_EQ(std::vector<std::uint8_t>(four, four + 12),
            (std::vector<std::uint8_t>{0xfe, 0xff, 0xff, 0xff, 0x34, 0x12, 0, 0, 0x99, 0xba, 0xdc,
                                       0xfe}));
}

}  // namespace
}  // namespace tessel::sim
