// The row normaliser of ISA version 3 (docs/isa.md, "softmax" and "norm"): the golden integer
// executor's Softmax and LayerNorm/RMSNorm rows, through the same functions
// (support/int_nonlinear.hpp: softmax_row, norm_row and its norm_scale), after a check of the
// table or parameters the instruction reads from SRAM.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/costs.hpp"
#include "sim/core/datapath.hpp"
#include "support/int_nonlinear.hpp"

namespace tessel::sim {
namespace {

std::uint32_t read_u16(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8);
}

std::int64_t read_i64(const std::uint8_t* p) {
  std::uint64_t u = 0;
  for (int i = 7; i >= 0; --i) u = (u << 8) | p[i];
  return static_cast<std::int64_t>(u);
}

constexpr std::int64_t kOne15 = std::int64_t{1} << 15;

}  // namespace

void Datapath::note_bad_data(std::string message) {
  if (!bad_table_) bad_table_ = BadTable{per_channel_requants_ - 1, std::move(message)};
}

void Datapath::execute_softmax(const isa::Softmax& x) {
  ++per_channel_requants_;
  // The whole table enters the unit before the first row (docs/timing.md): entries are
  // unsigned 16-bit, at most 2^15, and exp(0) = 2^15 in both halves, so that every row with a
  // kept position sums to S >= 2^15 and R = floor(2^45 / S) <= 2^30.
  intops::SoftmaxParams params;
  const std::uint8_t* table = scratchpads_[x.table_sp].data() + x.table_addr;
  for (std::int64_t i = 0; i < isa::kSoftmaxTableEntries; ++i) {
    const std::int64_t v = read_u16(table + 2 * i);
    const bool high = i < 256;
    const std::string name =
        std::string(high ? "exp_high[" : "exp_low[") + std::to_string(high ? i : i - 256) + "]";
    if (v > kOne15 || (i % 256 == 0 && v != kOne15)) {
      note_bad_data("softmax table entry " + name + " (" + scratchpad_names_[x.table_sp] +
                    " byte " + std::to_string(x.table_addr + 2 * static_cast<std::uint64_t>(i)) +
                    ") = " + std::to_string(v) + "; docs/isa.md allows entries <= 32768 and " +
                    (i % 256 == 0 ? "needs " + name + " = 32768 (exp 0)" : "no more"));
      return;
    }
    (high ? params.exp_high : params.exp_low)[static_cast<std::size_t>(i % 256)] =
        static_cast<std::int32_t>(v);
  }
  params.output = intops::Requant{static_cast<std::int32_t>(registers_.mult_a), registers_.shift,
                                  registers_.zero_point, registers_.lo, registers_.hi};
  const std::uint64_t e = element_bytes(x.elem), out = element_bytes(x.dst_elem);
  const std::uint8_t* src = scratchpads_[x.src_sp].data() + x.src_addr;
  std::uint8_t* dst = scratchpads_[x.dst_sp].data() + x.dst_addr;
  std::vector<std::int32_t> row(x.c_size), result(x.c_size);
  std::vector<std::uint8_t> keep(x.causal ? x.c_size : 0);
  for (std::uint64_t y = 0; y < x.y_size; ++y) {
    for (std::uint64_t px = 0; px < x.x_size; ++px) {
      const std::uint8_t* s = src + (y * x.src_stride_y + px * x.src_stride_x) * e;
      for (std::uint64_t c = 0; c < x.c_size; ++c) row[c] = read_element(s + c * e, e);
      // The causal mask: column c of the pixel at x index px is kept iff c <= px + offset.
      const std::int64_t last = static_cast<std::int64_t>(px) + x.mask_offset;
      for (std::uint64_t c = 0; c < keep.size(); ++c)
        keep[c] = static_cast<std::int64_t>(c) <= last ? 1 : 0;
      intops::softmax_row(row.data(), x.causal ? keep.data() : nullptr, x.c_size, params,
                          result.data());
      std::uint8_t* d = dst + (y * x.dst_stride_y + px * x.dst_stride_x) * out;
      for (std::uint64_t c = 0; c < x.c_size; ++c) write_element(d + c * out, out, result[c]);
    }
  }
}

void Datapath::execute_norm(const isa::Norm& x) {
  ++per_channel_requants_;
  // E and every channel's (G, r, B) within docs/quantization.md's bounds, which keep every
  // intermediate of intops::norm_row inside int64.
  const std::uint8_t* params = scratchpads_[x.param_sp].data() + x.param_addr;
  const std::int64_t epsilon_term = read_i64(params);
  if (epsilon_term < 0 || epsilon_term >= (std::int64_t{1} << 60)) {
    note_bad_data("norm epsilon term E (" + scratchpad_names_[x.param_sp] + " byte " +
                  std::to_string(x.param_addr) + ") = " + std::to_string(epsilon_term) +
                  "; docs/isa.md allows 0 <= E < 2^60");
    return;
  }
  std::vector<intops::NormAffine> affine(x.c_size);
  for (std::uint64_t k = 0; k < x.c_size; ++k) {
    const std::uint64_t at = isa::kNormParamHeaderBytes + k * isa::kNormParamChannelBytes;
    const std::int32_t g = read_element(params + at, 4), r = read_element(params + at + 4, 4);
    const std::int64_t b = read_i64(params + at + 8);
    constexpr std::int64_t kBiasBound = std::int64_t{1} << 61;
    if (g == INT32_MIN || r < 0 || r > 62 || b > kBiasBound || b < -kBiasBound) {
      note_bad_data("norm parameters of channel " + std::to_string(k) + " (" +
                    scratchpad_names_[x.param_sp] + " byte " + std::to_string(x.param_addr + at) +
                    "): G = " + std::to_string(g) + ", r = " + std::to_string(r) +
                    ", B = " + std::to_string(b) +
                    "; docs/isa.md allows |G| < 2^31, 0 <= r <= 62, |B| <= 2^61");
      return;
    }
    affine[k] = intops::NormAffine{g, r, b};
  }
  const std::uint64_t e = element_bytes(x.elem), out = element_bytes(x.dst_elem);
  const std::uint8_t* src = scratchpads_[x.src_sp].data() + x.src_addr;
  std::uint8_t* dst = scratchpads_[x.dst_sp].data() + x.dst_addr;
  std::vector<std::int32_t> row(x.c_size), result(x.c_size);
  for (std::uint64_t y = 0; y < x.y_size; ++y) {
    for (std::uint64_t px = 0; px < x.x_size; ++px) {
      const std::uint8_t* s = src + (y * x.src_stride_y + px * x.src_stride_x) * e;
      for (std::uint64_t c = 0; c < x.c_size; ++c) row[c] = read_element(s + c * e, e);
      intops::norm_row(row.data(), x.c_size, x.centre, epsilon_term, affine.data(), registers_.lo,
                       registers_.hi, result.data());
      std::uint8_t* d = dst + (y * x.dst_stride_y + px * x.dst_stride_x) * out;
      for (std::uint64_t c = 0; c < x.c_size; ++c) write_element(d + c * out, out, result[c]);
    }
  }
}

}  // namespace tessel::sim
