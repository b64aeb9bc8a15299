// Speed of the datapath's dense conv kernels (sim/core/kernels.hpp) on this CPU: the one
// conv_dense picks, the AVX2 loop alone and the portable loop, over ResNet-like shapes, in G
// multiply-accumulates per second (best of the repeats). A benchmark, not a test: the kernel
// tests check the results. Usage: tessel_conv_kernel_speed [REPEATS]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "sim/core/kernels.hpp"

namespace {

using tessel::sim::kernels::AccInit;

struct Shape {
  const char* name;
  std::int64_t out_channels, in_pairs, kernel;
};

}  // namespace

int main(int argc, char** argv) {
  namespace kernels = tessel::sim::kernels;
  const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  const Shape shapes[] = {{"3x3 64->64", 64, 32, 3},
                          {"3x3 128->128", 128, 64, 3},
                          {"1x1 256->256", 256, 128, 1},
                          {"3x3 48->48", 48, 24, 3},
                          {"1x1 1024->24", 24, 512, 1}};
  const std::int64_t out_side = 14, in_side = out_side + 2;
  std::mt19937 rng(1);
  std::printf("{\"avx2\": %s, \"simd\": %s, \"pixels\": %lld, \"rows\": [\n",
              __builtin_cpu_supports("avx2") ? "true" : "false",
              kernels::simd_kernels_enabled() ? "true" : "false",
              static_cast<long long>(out_side * out_side));
  bool first_row = true;
  for (const Shape& s : shapes) {
    const std::int64_t pixel_bytes = 4 * s.in_pairs;
    std::vector<std::uint8_t> image(static_cast<std::size_t>(in_side * in_side * pixel_bytes));
    for (auto& b : image) b = static_cast<std::uint8_t>(rng());
    std::vector<std::int64_t> pixels, taps, slots;
    for (std::int64_t y = 0; y < out_side; ++y)
      for (std::int64_t x = 0; x < out_side; ++x) {
        pixels.push_back((y * in_side + x) * pixel_bytes);
        slots.push_back((y * out_side + x) * s.out_channels * 4);
      }
    for (std::int64_t ky = 0; ky < s.kernel; ++ky)
      for (std::int64_t kx = 0; kx < s.kernel; ++kx)
        taps.push_back((ky * in_side + kx) * pixel_bytes);
    const auto tap_count = static_cast<std::int64_t>(taps.size());
    std::vector<std::int16_t> w(
        static_cast<std::size_t>(tap_count * 2 * s.in_pairs * s.out_channels));
    for (auto& v : w) v = static_cast<std::int16_t>(rng());
    std::vector<std::uint8_t> acc(slots.size() * static_cast<std::size_t>(s.out_channels) * 4);
    const double macs = static_cast<double>(pixels.size()) * static_cast<double>(tap_count) *
                        static_cast<double>(2 * s.in_pairs * s.out_channels);
    const auto best = [&](auto&& run) {
      double fastest = 1e30;
      for (int r = 0; r < repeats; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        run();
        fastest = std::min(
            fastest, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      return macs / fastest / 1e9;
    };
    // The weights' values do not matter to the speed: the same array read as each layout.
    const auto args = [&](auto&& kernel, std::int64_t block) {
      return kernel(image.data(), pixels.data(), static_cast<std::int64_t>(pixels.size()),
                    taps.data(), tap_count, s.in_pairs, w.data(), s.out_channels, block,
                    AccInit::kZero, nullptr, acc.data(), slots.data());
    };
    const std::int64_t block = kernels::dense_block(s.out_channels);
    const double chosen = best([&] { args(kernels::conv_dense, block); });
    bool avx2_ran = true;
    const double avx2 = best([&] { avx2_ran = args(kernels::conv_dense_avx2, s.out_channels); });
    const double avx2_16 = best([&] { args(kernels::conv_dense_avx2, 16); });
    const double portable = best([&] { args(kernels::conv_dense_portable, s.out_channels); });
    char avx2_text[64] = "null, \"gmacs_avx2_blocks_of_16\": null";
    if (avx2_ran)
      std::snprintf(avx2_text, sizeof avx2_text, "%.2f, \"gmacs_avx2_blocks_of_16\": %.2f", avx2,
                    avx2_16);
    std::printf(
        "%s  {\"shape\": \"%s\", \"block\": %lld, \"gmacs_conv_dense\": %.2f, "
        "\"gmacs_avx2_one_block\": %s, \"gmacs_portable\": %.2f}",
        first_row ? "" : ",\n", s.name, static_cast<long long>(block), chosen, avx2_text, portable);
    first_row = false;
  }
  std::printf("\n]}\n");
  return 0;
}
