// The Verilator model of tessel_mac_pair (hw/rtl/tessel_matrix.sv) behind a plain C++ interface
// (no Verilator headers here, so that the test builds with the project's warnings).
#pragma once

#include <cstdint>
#include <memory>

namespace tessel::hw::test {

/// Both products of one evaluation of `tessel_mac_pair`.
struct MacPairProducts {
  std::int16_t p_lo = 0;  ///< the RTL's x * w_lo
  std::int16_t p_hi = 0;  ///< the RTL's x * w_hi
};

/// One instance of the RTL module (its own VerilatedContext). Not thread-safe.
class MacPairModel {
 public:
  MacPairModel();
  ~MacPairModel();
  MacPairModel(const MacPairModel&) = delete;
  MacPairModel& operator=(const MacPairModel&) = delete;

  /// Drives x, w_lo, w_hi, evaluates the combinational module and reads its two outputs.
  MacPairProducts eval(std::int8_t x, std::int8_t w_lo, std::int8_t w_hi);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessel::hw::test
