// fill_normal_floats equals the scalar seeded draw bit for bit, its fallback included.
#include "compiler/zoo/normal_fill.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/rng.hpp"
#include "compiler/zoo/zoo.hpp"

namespace tessel::zoo {
namespace {

float scalar_draw(const ir::CounterRng& rng, double mean, double std_dev, std::uint64_t i) {
  return static_cast<float>(mean + std_dev * rng.normal(i));
}

// Index of the first element whose bits differ from the scalar draw, or -1.
std::int64_t first_mismatch(const ir::CounterRng& rng, double mean, double std_dev,
                            const std::vector<float>& values, std::uint64_t first) {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (std::bit_cast<std::uint32_t>(values[i]) !=
        std::bit_cast<std::uint32_t>(scalar_draw(rng, mean, std_dev, first + i)))
      return static_cast<std::int64_t>(i);
  return -1;
}

// The zoo's draws: a He-normal conv weight (std sqrt(2 / fan_in)), BatchNorm gamma (mean 1,
// std 0.1: the sum cancels near zero at times), a bias (std 0.01) and a unit normal.
TEST(NormalFill, equals_the_scalar_draw_bit_for_bit_for_the_zoos_parameters) {
  struct Case {
    std::string stream;
    double mean, std_dev;
  };
  const Case cases[] = {{"layer1.0.conv1.weight", 0.0, std::sqrt(2.0 / 576.0)},
                        {"bn1.weight", 1.0, 0.1},
                        {"fc.bias", 0.0, 0.01},
                        {"unit", 0.0, 1.0}};
  constexpr std::size_t kCount = 1 << 20;
  for (const auto& c : cases) {
    const ir::CounterRng rng(42, c.stream);
    std::vector<float> values(kCount);
    const std::size_t scalar = fill_normal_floats(rng, c.mean, c.std_dev, values);
    EXPECT_EQ(first_mismatch(rng, c.mean, c.std_dev, values, 0), -1) << c.stream;
    if (normal_fill_lanes() > 1) {
      // The rounding check sends ~0.2% of the values to the scalar path: it is exercised,
      // and the vector path does nearly all the work.
      EXPECT_GT(scalar, 0u) << c.stream;
      EXPECT_LT(scalar, kCount / 100) << c.stream;
    } else {
      EXPECT_EQ(scalar, kCount) << c.stream;
    }
    // The 4-lane path on its own wherever the CPU has AVX2, whichever path the CPU takes.
    std::vector<float> four(kCount);
    if (const auto scalar4 = fill_normal_floats_4_wide(rng, c.mean, c.std_dev, four)) {
      EXPECT_EQ(first_mismatch(rng, c.mean, c.std_dev, four, 0), -1) << c.stream << ", 4 lanes";
      EXPECT_GT(*scalar4, 0u) << c.stream;
      EXPECT_LT(*scalar4, kCount / 100) << c.stream;
    }
  }
}

TEST(NormalFill, an_offset_and_a_ragged_length_draw_the_same_elements) {
  const ir::CounterRng rng(7, "conv.weight");
  std::vector<float> all(1000);
  fill_normal_floats(rng, 0.0, 0.05, all);
  // Starts off the lane grid, ends with a scalar tail of 37 % lanes (5 of 8, 1 of 4).
  std::vector<float> part(37);
  const std::size_t scalar = fill_normal_floats(rng, 0.0, 0.05, part, 101);
  for (std::size_t i = 0; i < part.size(); ++i)
    EXPECT_EQ(std::bit_cast<std::uint32_t>(part[i]), std::bit_cast<std::uint32_t>(all[101 + i]))
        << i;
  EXPECT_GE(scalar, static_cast<std::size_t>(37 % normal_fill_lanes() +
                                             (normal_fill_lanes() == 1 ? 37 : 0)));
  EXPECT_EQ(first_mismatch(rng, 0.0, 0.05, part, 101), -1);
  std::vector<float> part4(37);
  if (const auto scalar4 = fill_normal_floats_4_wide(rng, 0.0, 0.05, part4, 101)) {
    EXPECT_GE(*scalar4, 1u);
    EXPECT_EQ(first_mismatch(rng, 0.0, 0.05, part4, 101), -1);
  }
}

TEST(NormalFill, a_built_models_weights_are_the_scalar_draws) {
  ZooOptions options;
  options.seed = 3;
  auto built = build_model("resnet18", options);
  ASSERT_TRUE(built.ok()) << built.reason();
  const auto& w = built.value().tensor("layer3.0.conv1.weight");  // 256 x 128 x 3 x 3
  ASSERT_EQ(w.f32_values.size(), 294912u);
  const ir::CounterRng rng(3, w.name);
  EXPECT_EQ(first_mismatch(rng, 0.0, std::sqrt(2.0 / (128 * 9)), w.f32_values, 0), -1);
}

}  // namespace
}  // namespace tessel::zoo
