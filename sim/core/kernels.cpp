// The datapath's multiply-accumulate loops (kernels.hpp), compiled -O3 for the auto-vectoriser.
#include "sim/core/kernels.hpp"

// Each loop is compiled once per x86-64 ISA level and picked by the CPU at load time (GCC
// ifunc), as compiler/targets/cpu/nhwc_kernels.cpp does; the results are the same on every
// level (integer arithmetic mod 2^32).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_ADDRESS__)
#define TESSEL_SIM_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define TESSEL_SIM_CLONES
#endif

namespace tessel::sim::kernels {

namespace {

/// A product in the ISA's int32 arithmetic: exact for int16 operands (|a * w| <= 2^30), then
/// taken mod 2^32 so that sums wrap instead of overflowing.
inline std::uint32_t product(std::int32_t a, std::int16_t w) {
  return static_cast<std::uint32_t>(a) * static_cast<std::uint32_t>(std::int32_t{w});
}

}  // namespace

TESSEL_SIM_CLONES void accumulate_dense(const std::int32_t* a, std::int64_t in_channels,
                                        const std::int16_t* w, std::int64_t out_channels,
                                        std::uint32_t* sums) {
  std::uint32_t* __restrict out = sums;
  std::int64_t i = 0;
  // Four input channels per pass over `sums`: a quarter of the loads and stores of the sums.
  for (; i + 4 <= in_channels; i += 4) {
    const std::int32_t a0 = a[i], a1 = a[i + 1], a2 = a[i + 2], a3 = a[i + 3];
    const std::int16_t* __restrict w0 = w + i * out_channels;
    const std::int16_t* __restrict w1 = w0 + out_channels;
    const std::int16_t* __restrict w2 = w1 + out_channels;
    const std::int16_t* __restrict w3 = w2 + out_channels;
    for (std::int64_t o = 0; o < out_channels; ++o)
      out[o] += product(a0, w0[o]) + product(a1, w1[o]) + product(a2, w2[o]) + product(a3, w3[o]);
  }
  for (; i < in_channels; ++i) {
    const std::int32_t ai = a[i];
    const std::int16_t* __restrict wi = w + i * out_channels;
    for (std::int64_t o = 0; o < out_channels; ++o) out[o] += product(ai, wi[o]);
  }
}

TESSEL_SIM_CLONES void accumulate_depthwise(const std::int32_t* a, const std::int16_t* w,
                                            std::int64_t channels, std::uint32_t* sums) {
  std::uint32_t* __restrict out = sums;
  for (std::int64_t c = 0; c < channels; ++c) out[c] += product(a[c], w[c]);
}

}  // namespace tessel::sim::kernels
