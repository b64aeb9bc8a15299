// The Verilator speed benchmarks' workload (rtl_speed.cpp, ab_speed.cpp): bench/rtl/
// conv_layer.tasm on the micro config over a 1 MiB DRAM of ones, and the SystemC simulator's
// run of it, which every RTL run must equal (cycles and final DRAM).
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "configs/hw_config.hpp"
#include "sim/inputs.hpp"
#include "sim/simulator.hpp"

namespace tessel::bench {

struct ConvLayerCase {
  HwConfig config;
  std::vector<isa::Word> words;    ///< the assembled program
  std::vector<std::uint8_t> dram;  ///< the initial DRAM image
  sim::SimResult simulated;        ///< the simulator's run: the reference

  /// Whether an RTL run ended at the simulator's cycle with the simulator's final DRAM.
  template <class RtlRun>
  bool matches(const RtlRun& r) const {
    return r.report.cycles == simulated.report.cycles && r.dram == simulated.dram;
  }
};

/// Loads the case and simulates it; prints the reason and returns nothing when that fails.
inline std::optional<ConvLayerCase> load_conv_layer_case() {
  const std::string root = TESSEL_SOURCE_DIR;
  ConvLayerCase c{load_hw_config(root + "/tests/isa/programs/micro.yaml"), {}, {}, {}};
  c.words = sim::read_program_words(root + "/bench/rtl/conv_layer.tasm", &c.config);
  c.dram.assign(1 << 20, 1);
  auto simulated = sim::simulate(c.config, c.words, sim::DramImage::from_bytes(c.dram));
  if (!simulated.ok()) {
    std::fprintf(stderr, "%s\n", simulated.reason().c_str());
    return std::nullopt;
  }
  c.simulated = std::move(simulated.value());
  return c;
}

}  // namespace tessel::bench
