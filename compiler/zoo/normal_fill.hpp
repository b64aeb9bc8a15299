// fill_normal_floats: the zoo's seeded He-normal weights, 8 or 4 at a time, bit-identical to
// scalar.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
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
/// again by the scalar expression. On a CPU with AVX2 and not AVX-512 the same 4 at a time
/// (libmvec's AVX2 log and cos, the same bounds; session 17). Without either every element
/// takes the scalar path.
///
/// Returns how many elements the scalar path drew (all of them without AVX-512 or AVX2; with
/// them, about 0.2%, most near a zero of the cosine, plus a tail of fewer than the lanes).
/// ResNet-50's largest weight tensors draw ~4.5x faster than by the scalar expression (8 lanes).
std::size_t fill_normal_floats(const ir::CounterRng& rng, double mean, double std_dev,
                               std::span<float> out, std::uint64_t first_index = 0);

/// The lanes fill_normal_floats draws at once on this CPU: 8 (AVX-512), 4 (AVX2) or 1.
int normal_fill_lanes();

/// fill_normal_floats' 4-lane path alone, on any CPU with AVX2 (so that tests check it on
/// AVX-512 machines too): its result, or nullopt without AVX2.
std::optional<std::size_t> fill_normal_floats_4_wide(const ir::CounterRng& rng, double mean,
                                                     double std_dev, std::span<float> out,
                                                     std::uint64_t first_index = 0);

}  // namespace tessel::zoo
