// The DMA engines' instructions (docs/isa.md): load (with padding) and store.
#include "sim/core/datapath.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdio>
#include <cstring>
#include <limits>
#include <type_traits>
#include <variant>

#include "sim/core/costs.hpp"
#include "sim/core/kernels.hpp"
#include "support/int_ops.hpp"

namespace tessel::sim {

namespace {

/// Writes `count` elements of `bytes` bytes, each `value` (write_element's bytes), at `dst`:
/// one memset when the element's bytes are all equal (0, -1, an int8), else the first
/// element copied over the rest in doubling runs.
void fill_elements(std::uint8_t* dst, std::uint64_t count, std::uint64_t bytes,
                   std::int32_t value) {
  const std::uint64_t total = count * bytes;
  if (total == 0) return;
  const auto u = static_cast<std::uint32_t>(value);
  bool uniform = true;
  for (std::uint64_t k = 1; k < bytes; ++k)
    uniform = uniform && ((u >> (8 * k)) & 0xffu) == (u & 0xffu);
  if (uniform) {
    std::memset(dst, static_cast<int>(u & 0xffu), total);
    return;
  }
  write_element(dst, bytes, value);
  for (std::uint64_t filled = bytes; filled < total;) {
    const std::uint64_t n = std::min(filled, total - filled);
    std::memcpy(dst + filled, dst, n);
    filled += n;
  }
}

}  // namespace

void Datapath::execute_load(const isa::Load& x) {
  const std::uint64_t e = element_bytes(x.elem);
  std::uint8_t* sram = scratchpads_[x.sp].data();
  const std::uint64_t padded_h = std::uint64_t{x.pad_top} + x.y_size + x.pad_bottom;
  const std::uint64_t padded_w = std::uint64_t{x.pad_left} + x.x_size + x.pad_right;
  // Rows apart: DRAM and a scratchpad never alias, and a load's rows write disjoint bytes
  // unless its strides overlap them (then one thread keeps docs/isa.md's order).
  const bool rows_apart =
      x.sram_stride_y >= padded_w * x.sram_stride_x && x.sram_stride_x >= x.c_size;
  // Runs: with the pixels of a row back to back in the scratchpad (sram_stride_x = c_size), a
  // padding row or a row's left or right padding is one fill, and with them back to back in
  // DRAM too a row's pixels are one memmove.
  const bool sram_run = rows_apart && x.sram_stride_x == x.c_size;
  const bool dram_run = sram_run && x.dram_stride_x == x.c_size;
  const auto fast_rows = [&](std::int64_t begin, std::int64_t end) {
    for (auto py = static_cast<std::uint64_t>(begin); py < static_cast<std::uint64_t>(end); ++py) {
      std::uint8_t* row = sram + x.sram_addr + py * x.sram_stride_y * e;
      if (py < x.pad_top || py >= x.pad_top + x.y_size) {
        fill_elements(row, padded_w * x.c_size, e, x.pad_value);
        continue;
      }
      fill_elements(row, std::uint64_t{x.pad_left} * x.c_size, e, x.pad_value);
      const std::uint8_t* src = dram_.data() + x.dram_addr + (py - x.pad_top) * x.dram_stride_y * e;
      std::uint8_t* dst = row + std::uint64_t{x.pad_left} * x.c_size * e;
      if (dram_run) {
        std::memcpy(dst, src, std::uint64_t{x.x_size} * x.c_size * e);
      } else {
        for (std::uint64_t px = 0; px < x.x_size; ++px)
          std::memcpy(dst + px * x.c_size * e, src + px * x.dram_stride_x * e, x.c_size * e);
      }
      fill_elements(dst + std::uint64_t{x.x_size} * x.c_size * e,
                    std::uint64_t{x.pad_right} * x.c_size, e, x.pad_value);
    }
  };
  const auto rows = [&](std::int64_t begin, std::int64_t end) {
    if (sram_run) {
      fast_rows(begin, end);
      return;
    }
    for (auto py = static_cast<std::uint64_t>(begin); py < static_cast<std::uint64_t>(end); ++py) {
      const bool row_inside = py >= x.pad_top && py < x.pad_top + x.y_size;
      for (std::uint64_t px = 0; px < padded_w; ++px) {
        std::uint8_t* dst = sram + x.sram_addr + (py * x.sram_stride_y + px * x.sram_stride_x) * e;
        if (row_inside && px >= x.pad_left && px < x.pad_left + x.x_size) {
          const std::uint8_t* src =
              dram_.data() + x.dram_addr +
              ((py - x.pad_top) * x.dram_stride_y + (px - x.pad_left) * x.dram_stride_x) * e;
          std::memmove(dst, src, x.c_size * e);
        } else {
          fill_elements(dst, x.c_size, e, x.pad_value);
        }
      }
    }
  };
  const auto count = static_cast<std::int64_t>(padded_h);
  if (rows_apart) {
    for_split(count, static_cast<std::int64_t>(padded_h * padded_w * x.c_size), rows);
  } else {
    rows(0, count);
  }
}

void Datapath::execute_gather(const isa::Gather& x) {
  ++per_channel_requants_;  // a data-checked instruction (is_data_checked)
  const std::uint64_t e = element_bytes(x.elem);
  const std::uint64_t row_bytes = std::uint64_t{x.c_size} * e;
  const std::uint64_t stride = std::uint64_t{x.dram_stride_y} * e;
  const auto id_at = [&](std::uint64_t r) {
    std::int32_t id = 0;
    std::memcpy(&id, dram_.data() + x.ids_addr + 4 * r, 4);  // little-endian, as DRAM holds it
    return std::int64_t{id};
  };
  const auto rows = std::int64_t{x.table_rows};
  for (std::uint64_t r = 0; r < x.y_size; ++r) {
    const std::int64_t id = id_at(r);
    if (id < -rows || id >= rows) {
      char text[200];
      std::snprintf(text, sizeof text,
                    "gather id %lld of row %llu (DRAM 0x%llx) outside [-%lld, %lld): the table "
                    "has %lld rows",
                    static_cast<long long>(id), static_cast<unsigned long long>(r),
                    static_cast<unsigned long long>(x.ids_addr + 4 * r),
                    static_cast<long long>(rows), static_cast<long long>(rows),
                    static_cast<long long>(rows));
      note_bad_data(text);
      return;
    }
  }
  std::uint8_t* sram = scratchpads_[x.sp].data();
  for (std::uint64_t r = 0; r < x.y_size; ++r) {
    const std::int64_t id = id_at(r);
    const auto row = static_cast<std::uint64_t>(id < 0 ? id + rows : id);
    std::memmove(sram + x.sram_addr + r * x.sram_stride_y * e,
                 dram_.data() + x.dram_addr + row * stride, row_bytes);
  }
}

void Datapath::execute_store(const isa::Store& x) {
  const std::uint64_t e = element_bytes(x.elem);
  const std::uint8_t* sram = scratchpads_[x.sp].data();
  const bool rows_apart =
      x.dram_stride_y >= std::uint64_t{x.x_size} * x.dram_stride_x && x.dram_stride_x >= x.c_size;
  // With the pixels back to back on both sides (strides_x = c_size), a row is one copy.
  const bool run = rows_apart && x.dram_stride_x == x.c_size && x.sram_stride_x == x.c_size;
  const auto rows = [&](std::int64_t begin, std::int64_t end) {
    for (auto y = static_cast<std::uint64_t>(begin); y < static_cast<std::uint64_t>(end); ++y) {
      std::uint8_t* dst = dram_.data() + x.dram_addr + y * x.dram_stride_y * e;
      const std::uint8_t* src = sram + x.sram_addr + y * x.sram_stride_y * e;
      if (run) {
        std::memcpy(dst, src, std::uint64_t{x.x_size} * x.c_size * e);
        continue;
      }
      for (std::uint64_t xx = 0; xx < x.x_size; ++xx)
        std::memmove(dst + xx * x.dram_stride_x * e, src + xx * x.sram_stride_x * e, x.c_size * e);
    }
  };
  const auto count = static_cast<std::int64_t>(x.y_size);
  if (rows_apart) {
    for_split(count, static_cast<std::int64_t>(x.y_size * x.x_size * x.c_size), rows);
  } else {
    rows(0, count);
  }
}

}  // namespace tessel::sim
