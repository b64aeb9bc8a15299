// tessel_rtl_ab: two builds of the micro RTL model (Vbase: a git revision's hw/rtl, Vnew: the
// working tree's) in one binary, run alternately on bench/rtl/conv_layer.tasm so that both see
// the same machine load; prints each run's simulated kHz and the median per side, and checks
// cycles and the final DRAM against the SystemC simulator. Built by bench/rtl/ab.sh.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "Vbase.h"
#include "Vnew.h"
#include "bench/rtl/conv_layer_case.hpp"
#include "hw/harness/harness_impl.hpp"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tessel;
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
  const auto loaded = bench::load_conv_layer_case();
  if (!loaded) return 1;
  const auto& [config, words, dram, simulated] = *loaded;
  std::printf("conv layer on micro: simulator %llu cycles; %d rounds, base and new alternate\n",
              static_cast<unsigned long long>(simulated.report.cycles), rounds);
  std::vector<double> khz[2];
  int status = 0;
  for (int round = 0; round < rounds; ++round) {
    for (int side = 0; side < 2; ++side) {
      auto rtl =
          side == 0
              ? hw::detail::run_model<Vbase>(config, words, sim::DramImage::from_bytes(dram), {})
              : hw::detail::run_model<Vnew>(config, words, sim::DramImage::from_bytes(dram), {});
      if (!rtl.ok()) {
        std::fprintf(stderr, "%s\n", rtl.reason().c_str());
        return 1;
      }
      const auto& r = rtl.value();
      const bool same = loaded->matches(r);
      status |= same ? 0 : 1;
      const double k = static_cast<double>(r.simulated_cycles) / r.wall_seconds / 1e3;
      khz[side].push_back(k);
      std::printf("round %d %s: %llu cycles (%s), %.1f kHz\n", round, side == 0 ? "base" : "new ",
                  static_cast<unsigned long long>(r.report.cycles),
                  same ? "= simulator, same DRAM" : "MISMATCH", k);
    }
  }
  std::printf("median: base %.1f kHz, new %.1f kHz (x%.2f)\n", median(khz[0]), median(khz[1]),
              median(khz[1]) / median(khz[0]));
  return status;
}
