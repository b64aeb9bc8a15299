// Counter-based deterministic random numbers for seeded weights (order-independent).
#pragma once

#include <cstdint>
#include <string_view>

namespace tessel::ir {

/// splitmix64's finaliser: a bijective 64-bit mix.
std::uint64_t splitmix64(std::uint64_t x);
/// 64-bit FNV-1a of a string.
std::uint64_t fnv1a64(std::string_view text);

/// Random numbers addressed by (seed, stream name, index): element i of tensor "conv1.weight"
/// gets the same value whatever else was generated before, so weights do not depend on the
/// order in which a model is built.
class CounterRng {
 public:
  CounterRng(std::uint64_t seed, std::string_view stream);

  /// Uniform in [0, 1) with 53 random bits.
  double uniform(std::uint64_t index) const;
  /// Standard normal (Box-Muller on two uniforms drawn at counters 2i, 2i+1).
  double normal(std::uint64_t index) const;
  /// The stream's key: uniform(i) is built from splitmix64(key() ^ splitmix64(i)). For batched
  /// generators that must reproduce uniform()/normal() bit for bit (zoo/normal_fill.hpp).
  std::uint64_t key() const { return key_; }

 private:
  std::uint64_t key_;
};

}  // namespace tessel::ir
