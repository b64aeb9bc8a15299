// SramPairModel: the verilated sram_pair_top of each config behind sram_pair_model.hpp.
#include "tests/rtl/sram_pair_model.hpp"

#include <stdexcept>

#include "Vsram_pair_edge_small.h"
#include "Vsram_pair_micro.h"
#include "verilated.h"

namespace tessel::hw::test {
namespace {

// Bytes of a wide (VlWide) or narrow Verilator signal, byte j at bits 8j + 7 .. 8j.
template <typename Signal>
void put(Signal& signal, const std::vector<std::uint8_t>& bytes) {
  if constexpr (sizeof(Signal) <= 8) {
    std::uint64_t v = 0;
    for (std::size_t j = 0; j < bytes.size(); ++j) v |= std::uint64_t{bytes[j]} << (8 * j);
    signal = static_cast<Signal>(v);
  } else {
    for (std::size_t w = 0; w < sizeof(Signal) / 4; ++w) signal[w] = 0;
    for (std::size_t j = 0; j < bytes.size(); ++j)
      signal[j / 4] |= static_cast<std::uint32_t>(bytes[j]) << (8 * (j % 4));
  }
}
template <typename Signal>
void put_bits(Signal& signal, const std::vector<bool>& bits) {
  if constexpr (sizeof(Signal) <= 8) {
    std::uint64_t v = 0;
    for (std::size_t j = 0; j < bits.size(); ++j) v |= std::uint64_t{bits[j]} << j;
    signal = static_cast<Signal>(v);
  } else {
    for (std::size_t w = 0; w < sizeof(Signal) / 4; ++w) signal[w] = 0;
    for (std::size_t j = 0; j < bits.size(); ++j)
      signal[j / 32] |= static_cast<std::uint32_t>(bits[j]) << (j % 32);
  }
}
template <typename Signal>
std::vector<std::uint8_t> get(const Signal& signal, std::size_t bytes) {
  std::vector<std::uint8_t> out(bytes);
  for (std::size_t j = 0; j < bytes; ++j) {
    if constexpr (sizeof(Signal) <= 8)
      out[j] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(signal) >> (8 * j));
    else
      out[j] = static_cast<std::uint8_t>(signal[j / 4] >> (8 * (j % 4)));
  }
  return out;
}

struct Base {
  virtual ~Base() = default;
  virtual SramOutputs cycle(const SramInputs& in) = 0;
  unsigned dw = 0, cw = 0;
};

template <typename Top>
struct Model final : Base {
  VerilatedContext context;
  std::unique_ptr<Top> top{new Top(&context)};
  Model() {
    dw = static_cast<unsigned>(sizeof(top->lw_data));  // VlWide<N>: N 32-bit words
    cw = static_cast<unsigned>(sizeof(top->cw_data));
    // Two idle cycles (no port enabled) align tessel_sram's clk2x phase (tog, tog_d)
    // whatever their power-on values.
    for (int i = 0; i < 2; ++i) cycle(idle());
  }
  SramInputs idle() const {
    SramInputs in;
    in.lw_data.assign(dw, 0);
    in.lw_mask.assign(dw, false);
    in.cw_data.assign(cw, 0);
    in.cw_mask.assign(cw, false);
    return in;
  }
  ~Model() override { top->final(); }
  SramOutputs cycle(const SramInputs& in) override {
    Top& m = *top;
    // After the edge that ended the previous cycle (clk = clk2x = 1): this cycle's inputs.
    m.lw_en = in.lw_en;
    m.lw_sp = in.lw_sp;
    m.lw_addr = in.lw_addr;
    put(m.lw_data, in.lw_data);
    put_bits(m.lw_mask, in.lw_mask);
    m.sr_sp = in.sr_sp;
    m.sr_addr = in.sr_addr;
    m.cr_sp = (in.cr_sp[2] << 8) | (in.cr_sp[1] << 4) | in.cr_sp[0];
    for (int p = 0; p < 3; ++p) m.cr_addr[p] = in.cr_addr[p];
    m.cw_en = in.cw_en;
    m.cw_sp = in.cw_sp;
    m.cw_addr = in.cw_addr;
    put(m.cw_data, in.cw_data);
    put_bits(m.cw_mask, in.cw_mask);
    m.eval();
    SramOutputs out;
    out.sr_model = get(m.sr_data_model, dw);
    out.sr_banked = get(m.sr_data_banked, dw);
    out.cr_model = get(m.cr_data_model, 3 * cw);
    out.cr_banked = get(m.cr_data_banked, 3 * cw);
    out.collision = m.collision != 0;
    m.clk2x = 0;  // clk high, clk2x low
    m.eval();
    m.clk = 0;  // the middle of the cycle: clk2x's edge alone (M)
    m.clk2x = 1;
    m.eval();
    m.clk2x = 0;
    m.eval();
    m.clk = 1;  // the edge that ends the cycle: clk's and clk2x's (E)
    m.clk2x = 1;
    m.eval();
    return out;
  }
};

}  // namespace

struct SramPairModel::Impl {
  std::unique_ptr<Base> model;
};

SramPairModel::SramPairModel(const std::string& config) : impl_(std::make_unique<Impl>()) {
  if (config == "micro") {
    impl_->model = std::make_unique<Model<Vsram_pair_micro>>();
  } else if (config == "edge-small") {
    impl_->model = std::make_unique<Model<Vsram_pair_edge_small>>();
  } else {
    throw std::invalid_argument("no sram_pair_top model for config '" + config + "'");
  }
}

SramPairModel::~SramPairModel() = default;

unsigned SramPairModel::dma_bytes() const {
  return impl_->model->dw;
}
unsigned SramPairModel::compute_bytes() const {
  return impl_->model->cw;
}

SramOutputs SramPairModel::cycle(const SramInputs& in) {
  return impl_->model->cycle(in);
}

}  // namespace tessel::hw::test
