// Seeded N(0,1) tensors: the default network input every tool (infer, calibration, sim) shares.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace tessel {

/// splitmix64's finaliser: a bijective 64-bit mix.
constexpr std::uint64_t seeded_mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// Uniform in (0, 1) from counter `index` of stream `seed` (53 random bits, never 0).
inline double seeded_uniform(std::uint64_t seed, std::uint64_t index) {
  const std::uint64_t bits = seeded_mix(seeded_mix(seed) ^ index) >> 11;
  return (static_cast<double>(bits) + 0.5) * 0x1p-53;
}

/// Standard normal element `index` of stream `seed`: Box-Muller's cosine branch on the uniforms
/// at counters 2*index and 2*index+1, rounded to float.
inline float seeded_normal(std::uint64_t seed, std::uint64_t index) {
  const double u1 = seeded_uniform(seed, 2 * index);
  const double u2 = seeded_uniform(seed, 2 * index + 1);
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
}

/// `count` values seeded_normal(seed, 0..count-1): the default input tensor, flattened NCHW.
inline std::vector<float> seeded_normal_values(std::int64_t count, std::uint64_t seed) {
  std::vector<float> values(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i)
    values[static_cast<std::size_t>(i)] = seeded_normal(seed, static_cast<std::uint64_t>(i));
  return values;
}

}  // namespace tessel
