// splitmix64-based counter RNG: value = f(seed, stream, index), no hidden state.
#include "compiler/ir/rng.hpp"

#include <cmath>
#include <numbers>

namespace tessel::ir {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::uint64_t fnv1a64(std::string_view text) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

CounterRng::CounterRng(std::uint64_t seed, std::string_view stream)
    : key_(splitmix64(splitmix64(seed) ^ fnv1a64(stream))) {}

double CounterRng::uniform(std::uint64_t index) const {
  const std::uint64_t bits = splitmix64(key_ ^ splitmix64(index));
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

double CounterRng::normal(std::uint64_t index) const {
  const double u1 = 1.0 - uniform(2 * index);  // (0, 1]: log is finite
  const double u2 = uniform(2 * index + 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

}  // namespace tessel::ir
