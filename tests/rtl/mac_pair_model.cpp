// MacPairModel: Vtessel_mac_pair (tessel_mac_pair of hw/rtl/tessel_matrix.sv, verilated) behind
// mac_pair_model.hpp.
#include "tests/rtl/mac_pair_model.hpp"

#include "Vtessel_mac_pair.h"
#include "verilated.h"

namespace tessel::hw::test {

struct MacPairModel::Impl {
  VerilatedContext context;
  std::unique_ptr<Vtessel_mac_pair> model{new Vtessel_mac_pair(&context)};
};

MacPairModel::MacPairModel() : impl_(std::make_unique<Impl>()) {}

MacPairModel::~MacPairModel() {
  impl_->model->final();
}

MacPairProducts MacPairModel::eval(std::int8_t x, std::int8_t w_lo, std::int8_t w_hi) {
  Vtessel_mac_pair& m = *impl_->model;
  m.x = static_cast<std::uint8_t>(x);
  m.w_lo = static_cast<std::uint8_t>(w_lo);
  m.w_hi = static_cast<std::uint8_t>(w_hi);
  m.eval();
  return {static_cast<std::int16_t>(m.p_lo), static_cast<std::int16_t>(m.p_hi)};
}

}  // namespace tessel::hw::test
