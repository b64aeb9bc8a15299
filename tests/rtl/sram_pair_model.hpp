// The Verilator models of tests/rtl/sram_pair_top.sv (tessel_sram_model and tessel_sram on the
// same inputs) behind a plain C++ interface (no Verilator headers here, so that the test builds
// with the project's warnings). One model per config package the build verilated.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tessel::hw::test {

/// One clk cycle's port inputs (widths: DW bytes for the DMA ports, CW for the compute ports).
struct SramInputs {
  bool lw_en = false;
  unsigned lw_sp = 0;
  std::uint32_t lw_addr = 0;
  std::vector<std::uint8_t> lw_data;  // DW bytes
  std::vector<bool> lw_mask;          // DW
  unsigned sr_sp = 0;
  std::uint32_t sr_addr = 0;
  unsigned cr_sp[3] = {0, 0, 0};
  std::uint32_t cr_addr[3] = {0, 0, 0};
  bool cw_en = false;
  unsigned cw_sp = 0;
  std::uint32_t cw_addr = 0;
  std::vector<std::uint8_t> cw_data;  // CW bytes
  std::vector<bool> cw_mask;          // CW
};

/// Both memories' read data in one clk cycle (what the reads addressed a cycle earlier return).
struct SramOutputs {
  std::vector<std::uint8_t> sr_model, sr_banked;  // DW bytes each
  std::vector<std::uint8_t> cr_model, cr_banked;  // 3 x CW bytes each, port a first
  bool collision = false;  // tessel_sram's: the writes of the last edge share a bank word
};

class SramPairModel {
 public:
  /// `config`: the name of a verilated config ("micro", "edge-small"); throws otherwise.
  explicit SramPairModel(const std::string& config);
  ~SramPairModel();
  SramPairModel(const SramPairModel&) = delete;
  SramPairModel& operator=(const SramPairModel&) = delete;

  unsigned dma_bytes() const;      // DW
  unsigned compute_bytes() const;  // CW

  /// Cycle t: applies `in` after clk's rising edge, reads both memories' outputs, then runs
  /// clk2x's edge in the middle of the cycle and the edge that ends it (clk's and clk2x's).
  SramOutputs cycle(const SramInputs& in);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessel::hw::test
