// The analytic scratchpad-to-block-RAM mapping (7-series shapes from UG473).
#include "hw/fpga/bram_map.hpp"

#include <algorithm>

#include "hw/gen/hwgen.hpp"
#include "support/int_ops.hpp"

namespace tessel::fpga {
namespace {

using intops::ceil_div;

std::string depth_text(int depth) {
  return depth >= 1024 && depth % 1024 == 0 ? std::to_string(depth / 1024) + "K"
                                            : std::to_string(depth);
}

}  // namespace

std::string BramShape::name() const {
  return depth_text(depth_words) + "x" + std::to_string(port_bits);
}

const std::vector<BramShape>& bram_shapes() {
  static const std::vector<BramShape> shapes = {
      {"RAMB36E1", 512, 64, 72, true, 1.0},   {"RAMB36E1", 1024, 32, 36, false, 1.0},
      {"RAMB36E1", 2048, 16, 18, false, 1.0}, {"RAMB36E1", 4096, 8, 9, false, 1.0},
      {"RAMB36E1", 8192, 4, 4, false, 1.0},   {"RAMB36E1", 16384, 2, 2, false, 1.0},
      {"RAMB36E1", 32768, 1, 1, false, 1.0},  {"RAMB18E1", 512, 32, 36, true, 0.5},
      {"RAMB18E1", 1024, 16, 18, false, 0.5}, {"RAMB18E1", 2048, 8, 9, false, 0.5},
      {"RAMB18E1", 4096, 4, 4, false, 0.5},   {"RAMB18E1", 8192, 2, 2, false, 0.5},
      {"RAMB18E1", 16384, 1, 1, false, 0.5},
  };
  return shapes;
}

ScratchpadBram map_scratchpad(const ScratchpadConfig& scratchpad) {
  ScratchpadBram out;
  out.name = scratchpad.name;
  out.size_bytes = scratchpad.size_bytes;
  out.banks = scratchpad.banks;
  out.port_width_bytes = scratchpad.port_width_bytes;
  const std::int64_t bank_bytes = scratchpad.size_bytes / scratchpad.banks;
  out.bank_depth_words = ceil_div(bank_bytes, scratchpad.port_width_bytes);
  out.bank_width_bits = 8 * scratchpad.port_width_bytes;

  bool chosen = false;
  double best_cost = 0;
  for (const BramShape& shape : bram_shapes()) {
    const std::int64_t count = ceil_div(out.bank_depth_words, shape.depth_words) *
                               ceil_div(out.bank_width_bits, shape.data_bits);
    const double cost = shape.bram36_cost * static_cast<double>(count);
    if (!chosen || cost < best_cost || (cost == best_cost && count < out.primitives_per_bank)) {
      chosen = true;
      best_cost = cost;
      out.shape = shape;
      out.primitives_per_bank = count;
    }
  }
  const std::int64_t primitives = out.primitives_per_bank * scratchpad.banks;
  (out.shape.primitive == "RAMB36E1" ? out.bram36 : out.bram18) = primitives;
  const double capacity_bits =
      static_cast<double>(primitives) * out.shape.depth_words * out.shape.data_bits;
  out.bit_efficiency =
      capacity_bits > 0 ? 8.0 * static_cast<double>(bank_bytes) * scratchpad.banks / capacity_bits
                        : 0;
  return out;
}

Result<RtlBram> rtl_bram(const HwConfig& config) {
  auto hw = hw::derive_hw_params(config);
  if (!hw) return hw.failure();
  // The port widths tessel_top gives tessel_sram (hw/rtl/tessel_top.sv), bytes.
  const std::int64_t r = hw.value().matrix_rows, c = hw.value().matrix_cols;
  const std::int64_t v = hw.value().vector_lanes;
  const std::int64_t ib = hw.value().input_bits / 8, wb = hw.value().weight_bits / 8;
  const std::int64_t a_bytes = std::max(std::max(r, c) * ib, 4 * v);
  const std::int64_t b_bytes = std::max(4 * c, 4 * v);  // the compute write as well
  const std::int64_t c_bytes = std::max(c * wb, 4 * v);
  const std::int64_t widest =
      std::max({a_bytes, b_bytes, c_bytes, std::int64_t{hw.value().dma_bytes_per_cycle}});
  RtlBram out;
  out.widest_port_bytes = static_cast<int>(widest);
  out.banks = 1;
  while (out.banks < widest / 4 + 1) out.banks *= 2;
  const std::int64_t row_bytes = 4 * std::int64_t{out.banks};
  for (const ScratchpadConfig& scratchpad : config.scratchpads) {
    const auto size = static_cast<std::int64_t>(scratchpad.size_bytes);
    const std::int64_t depth = (size + row_bytes - 1) / row_bytes;
    out.bank_depth_words.push_back(depth);
    out.bram36 += 2 * std::int64_t{out.banks} * ((depth + 1023) / 1024);
  }
  return out;
}

ScratchpadBramMap map_scratchpads(const HwConfig& config) {
  ScratchpadBramMap map;
  for (const ScratchpadConfig& scratchpad : config.scratchpads) {
    map.scratchpads.push_back(map_scratchpad(scratchpad));
    map.bram18 += map.scratchpads.back().bram18;
    map.bram36 += map.scratchpads.back().bram36;
  }
  return map;
}

}  // namespace tessel::fpga
