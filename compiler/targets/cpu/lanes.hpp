// Branch-free integer lanes shared by the vectorised kernel files (nhwc_kernels.cpp,
// workload_kernels.cpp): the rounding and clamping of support/int_ops.hpp written so that the
// compiler vectorises them in each target_clones clone. Internal to compiler/targets/cpu; include
// it only from the per-ISA translation units.
#pragma once

#include <cstdint>

// Each hot loop is compiled three times and picked by the CPU at load time (GCC/Clang ifunc).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__)
#define TESSEL_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define TESSEL_CLONES
#endif
#define TESSEL_INLINE [[gnu::always_inline]] inline

namespace tessel::cpu::lanes {

/// intops::round_half_away(t, shift) without branches: sign-magnitude rounding on int64 lanes
/// (half = 2^(shift-1), 0 for shift 0).
TESSEL_INLINE std::int64_t rha_lane(std::int64_t t, std::int64_t half, std::int64_t shift) {
  const std::int64_t sign = t >> 63;  // 0 or -1
  const std::int64_t magnitude = ((t ^ sign) - sign + half) >> shift;
  return (magnitude ^ sign) - sign;
}

/// min(max(v, lo), hi) as two selects.
TESSEL_INLINE std::int64_t clamp_lane(std::int64_t v, std::int64_t lo, std::int64_t hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

}  // namespace tessel::cpu::lanes
