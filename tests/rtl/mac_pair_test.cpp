// Two int8 products from one 25 x 8-bit multiply (tessel_mac_pair in hw/rtl/tessel_matrix.sv,
// the matrix unit's DSP48E1 packing): the RTL against x * w for all 2^24 (x, w_lo, w_hi), and
// the arithmetic argument's cases by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>

#include "tests/rtl/mac_pair_model.hpp"

namespace tessel::hw::test {
namespace {

// The packing of docs/fpga.md in 64-bit integers: A = w_hi * 2^16 + w_lo, P = A * x.
std::int64_t packed_product(int x, int w_lo, int w_hi) {
  return (std::int64_t{w_hi} * 65536 + w_lo) * x;
}

TEST(MacPair, the_high_product_needs_the_low_products_sign_as_a_carry) {
  // x = 1, w_lo = -1, w_hi = 1: P = 65536 - 1 = 0xffff. The low 16 bits read as signed are -1;
  // P >> 16 alone is 0, not 1: the borrow of the negative low product has to be added back.
  const std::int64_t p = packed_product(1, -1, 1);
  EXPECT_EQ(p, 65535);
  EXPECT_EQ(p >> 16, 0);
  EXPECT_EQ((p >> 16) + ((p >> 15) & 1), 1);
  MacPairModel model;
  const MacPairProducts got = model.eval(1, -1, 1);
  EXPECT_EQ(got.p_lo, -1);
  EXPECT_EQ(got.p_hi, 1);
}

TEST(MacPair, extreme_operands_fit_the_dsp48e1_ports) {
  // A's extremes are -2^23 - 128 (w_hi = w_lo = -128) and 2^23 - 2^16 + 127 (both 127): inside
  // the 25-bit signed A port [-2^24, 2^24); a shift of 17 would give -2^24 - 128, outside it.
  EXPECT_EQ(std::int64_t{-128} * 65536 - 128, -(std::int64_t{1} << 23) - 128);
  EXPECT_LT(std::int64_t{-128} * 131072 - 128, -(std::int64_t{1} << 24));
  // x = w_lo = w_hi = -128: both products are +16384 = 2^14, P = 2^30 + 2^14 < 2^31.
  EXPECT_EQ(packed_product(-128, -128, -128), (std::int64_t{1} << 30) + (1 << 14));
  MacPairModel model;
  MacPairProducts got = model.eval(-128, -128, -128);
  EXPECT_EQ(got.p_lo, 16384);
  EXPECT_EQ(got.p_hi, 16384);
  got = model.eval(-128, 127, -128);  // -16256 low, 16384 high
  EXPECT_EQ(got.p_lo, -16256);
  EXPECT_EQ(got.p_hi, 16384);
  got = model.eval(127, -128, 127);  // -16256 low, 16129 high
  EXPECT_EQ(got.p_lo, -16256);
  EXPECT_EQ(got.p_hi, 16129);
}

TEST(MacPair, every_int8_triple_gives_both_exact_products) {
  MacPairModel model;
  std::int64_t checked = 0;
  std::int64_t wrong = 0;
  std::string first_wrong;
  for (int x = -128; x < 128; ++x)
    for (int w_lo = -128; w_lo < 128; ++w_lo)
      for (int w_hi = -128; w_hi < 128; ++w_hi) {
        const MacPairProducts got =
            model.eval(static_cast<std::int8_t>(x), static_cast<std::int8_t>(w_lo),
                       static_cast<std::int8_t>(w_hi));
        ++checked;
        if (got.p_lo != x * w_lo || got.p_hi != x * w_hi) {
          if (wrong++ == 0) {
            std::ostringstream os;
            os << "x " << x << " w_lo " << w_lo << " w_hi " << w_hi << ": got (" << got.p_lo << ", "
               << got.p_hi << "), want (" << x * w_lo << ", " << x * w_hi << ")";
            first_wrong = os.str();
          }
        }
      }
  EXPECT_EQ(checked, std::int64_t{1} << 24);
  EXPECT_EQ(wrong, 0) << "first: " << first_wrong;
}

}  // namespace
}  // namespace tessel::hw::test
