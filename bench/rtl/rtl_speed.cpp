// tessel_rtl_bench: Verilator speed (simulated kHz) of the RTL model on bench/rtl/conv_layer.tasm
// (micro config), with every thread count the model was built for; also checks its cycles
// against the simulator.
#include <cstdio>
#include <string>

#include "configs/hw_config.hpp"
#include "hw/harness/rtl_runner.hpp"
#include "sim/inputs.hpp"
#include "sim/simulator.hpp"

int main() {
  using namespace tessel;
  const std::string root = TESSEL_SOURCE_DIR;
  const HwConfig config = load_hw_config(root + "/tests/isa/programs/micro.yaml");
  const auto words = sim::read_program_words(root + "/bench/rtl/conv_layer.tasm", &config);
  const std::vector<std::uint8_t> dram(1 << 20, 1);
  auto simulated = sim::simulate(config, words, sim::DramImage::from_bytes(dram));
  if (!simulated.ok()) {
    std::fprintf(stderr, "%s\n", simulated.reason().c_str());
    return 1;
  }
  std::printf("conv layer on micro: simulator %llu cycles\n",
              static_cast<unsigned long long>(simulated.value().report.cycles));
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
      const bool same =
          r.report.cycles == simulated.value().report.cycles && r.dram == simulated.value().dram;
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
