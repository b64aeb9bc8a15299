// fill_normal_floats: the zoo's seeded He-normal weights, 8 at a time, bit-identical to scalar.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "compiler/ir/rng.hpp"

namespace tessel::zoo {

/// Sets out[i] = static_cast<float>(mean + std_dev * rng.normal(first_index + i)) for every i,
/// bit for bit the value of that scalar expression (the zoo's weights must not change).
///
/// On a CPU with AVX-512 (F, DQ, VL) it draws 8 values at once with glibc's vector log and cos
/// (libmvec), which may differ from the scalar libm results in the last bits. A value is kept
/// only when that cannot change its float: the double result plus and minus a bound on the
/// difference (2^-36 of the Box-Muller radius, about 2^16 times libmvec's documented error)
/// rounds to the same float; otherwise, and for zero or subnormal results, the element is drawn
/// again by the scalar expression. Without AVX-512 every element takes the scalar path.
///
/// Returns how many elements the scalar path drew (all of them without AVX-512; with it,
/// about 0.2%, most near a zero of the cosine, plus a tail of fewer than 8). ResNet-50's
/// largest weight tensors draw ~4.5x faster than by the scalar expression.
std::size_t fill_normal_floats(const ir::CounterRng& rng, double mean, double std_dev,
                               std::span<float> out, std::uint64_t first_index = 0);

/// True when fill_normal_floats takes its 8-wide path on this CPU.
bool fast_normal_fill_available();

}  // namespace tessel::zoo
