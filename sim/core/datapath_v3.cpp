// The vector ops of ISA version 3 (docs/isa.md): table lookup, row reduction, broadcast multiply.
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "sim/core/costs.hpp"
#include "sim/core/datapath.hpp"
#include "support/int_nonlinear.hpp"

namespace tessel::sim {

void Datapath::execute_lut(const isa::Lut& x) {
  const std::uint64_t out = element_bytes(x.dst_elem);
  // The unit reads the whole table before the first element (docs/timing.md), so a lut whose
  // output overwrites its own table still looks every element up in the table as it was.
  std::array<std::int32_t, 256> table{};
  const std::uint8_t* entries = scratchpads_[x.table_sp].data() + x.table_addr;
  for (std::uint64_t i = 0; i < table.size(); ++i) table[i] = read_element(entries + i * out, out);
  const std::uint8_t* src = scratchpads_[x.src_sp].data() + x.src_addr;
  std::uint8_t* dst = scratchpads_[x.dst_sp].data() + x.dst_addr;
  std::vector<std::int32_t> pixel(x.c_size);
  // Pixel by pixel in (y, x) order, each pixel read whole before it is written (in place:
  // dst = src with the same strides and dst_elem = i8).
  for (std::uint64_t y = 0; y < x.y_size; ++y) {
    for (std::uint64_t px = 0; px < x.x_size; ++px) {
      const std::uint8_t* s = src + y * x.src_stride_y + px * x.src_stride_x;
      for (std::uint64_t c = 0; c < x.c_size; ++c)
        pixel[c] = table[static_cast<std::uint8_t>(static_cast<std::int8_t>(s[c]) + 128)];
      std::uint8_t* d = dst + (y * x.dst_stride_y + px * x.dst_stride_x) * out;
      for (std::uint64_t c = 0; c < x.c_size; ++c) write_element(d + c * out, out, pixel[c]);
    }
  }
}

void Datapath::execute_reduce(const isa::Reduce& x) {
  const std::uint64_t e = element_bytes(x.elem);
  const std::uint8_t* src = scratchpads_[x.src_sp].data() + x.src_addr;
  std::uint8_t* dst = scratchpads_[x.dst_sp].data() + x.dst_addr;
  for (std::uint64_t y = 0; y < x.y_size; ++y) {
    for (std::uint64_t px = 0; px < x.x_size; ++px) {
      const std::uint8_t* s = src + (y * x.src_stride_y + px * x.src_stride_x) * e;
      // c_size >= 1 (the field's range): no row is empty. Sums are exact in int64 and fit
      // int32 (|sum| <= 65535 * 32768 < 2^31; squares only of int8: < 2^30).
      std::int64_t acc = x.mode == isa::ReduceMode::kMax ? read_element(s, e) : 0;
      for (std::uint64_t c = 0; c < x.c_size; ++c) {
        const std::int64_t v = read_element(s + c * e, e);
        switch (x.mode) {
          case isa::ReduceMode::kMax:
            acc = std::max(acc, v);
            break;
          case isa::ReduceMode::kSum:
            acc += v;
            break;
          case isa::ReduceMode::kSumsq:
            acc += v * v;
            break;
        }
      }
      write_element(dst + (y * x.dst_stride_y + px * x.dst_stride_x) * 4, 4,
                    static_cast<std::int32_t>(acc));
    }
  }
}

void Datapath::execute_mul(const isa::Mul& x) {
  const std::uint64_t e = element_bytes(x.elem);
  const std::uint64_t out = element_bytes(x.dst_elem);
  // Exactly the golden executor's integer Mul (support/int_nonlinear.hpp, docs/quantization.md):
  // |a * b| <= 2^30 (i16 operands) times M < 2^31 stays inside int64.
  const intops::Requant q{static_cast<std::int32_t>(registers_.mult_a), registers_.shift,
                          registers_.zero_point, registers_.lo, registers_.hi};
  const std::uint8_t* a = scratchpads_[x.a_sp].data() + x.a_addr;
  const std::uint8_t* b = scratchpads_[x.b_sp].data() + x.b_addr;
  std::uint8_t* dst = scratchpads_[x.dst_sp].data() + x.dst_addr;
  std::vector<std::int32_t> pixel(x.c_size);
  // Pixel by pixel in (y, x) order, each pixel's operands read whole before it is written (so
  // dst may be a itself, with a's strides).
  for (std::uint64_t y = 0; y < x.y_size; ++y) {
    for (std::uint64_t px = 0; px < x.x_size; ++px) {
      const std::uint8_t* pa = a + (y * x.a_stride_y + px * x.a_stride_x) * e;
      const std::uint8_t* pb = b + (y * x.b_stride_y + px * x.b_stride_x) * e;
      for (std::uint64_t c = 0; c < x.c_size; ++c)
        pixel[c] = intops::mul_requantize(read_element(pa + c * e, e),
                                          read_element(pb + (x.b_per_pixel ? 0 : c * e), e), q);
      std::uint8_t* d = dst + (y * x.dst_stride_y + px * x.dst_stride_x) * out;
      for (std::uint64_t c = 0; c < x.c_size; ++c) write_element(d + c * out, out, pixel[c]);
    }
  }
}

}  // namespace tessel::sim
