// tessel_rtl_bench: Verilator speed (simulated kHz) of the RTL model on bench/rtl/conv_layer.tasm
// (micro config), with every thread count the model was built for; also checks its cycles
// against the simulator.
#include <cstdio>

#include "bench/rtl/conv_layer_case.hpp"
#include "hw/harness/rtl_runner.hpp"

int main() {
  using namespace tessel;
  const auto loaded = bench::load_conv_layer_case();
  if (!loaded) return 1;
  const auto& [config, words, dram, simulated] = *loaded;
  std::printf("conv layer on micro: simulator %llu cycles\n",
              static_cast<unsigned long long>(simulated.report.cycles));
  int status = 0;
  for (const auto& model : hw::rtl_models()) {
    if (model.name != "micro") continue;
    for (int repeat = 0; repeat < 3; ++repeat) {
      auto rtl = hw::run_rtl(config, words, sim::DramImage::from_bytes(dram), {}, model.threads);
      if (!rtl.ok()) {
        std::fprintf(stderr, "%s\n", rtl.reason().c_str());
        return 1;
      }
      const auto& r = rtl.value();
      const bool same = loaded->matches(r);
      status |= same ? 0 : 1;
      std::printf("rtl, %d thread%s: %llu cycles (%s), %llu clocks in %.3f s = %.1f kHz\n",
                  model.threads, model.threads == 1 ? " " : "s",
                  static_cast<unsigned long long>(r.report.cycles),
                  same ? "= simulator, same DRAM" : "MISMATCH",
                  static_cast<unsigned long long>(r.simulated_cycles), r.wall_seconds,
                  static_cast<double>(r.simulated_cycles) / r.wall_seconds / 1e3);
    }
  }
  return status;
}
