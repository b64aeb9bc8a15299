// The vector unit's ISA version 2 instructions (docs/isa.md): requant, add, pool and copy.
#include "sim/core/datapath.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <type_traits>
#include <variant>

#include "sim/core/costs.hpp"
#include "sim/core/kernels.hpp"
#include "support/int_ops.hpp"

namespace tessel::sim {

void Datapath::execute_requant(const isa::Requant& x) {
  const std::uint64_t out_bytes = element_bytes(x.dst_elem);
  const std::uint8_t* src = scratchpads_[x.src_sp].data() + x.src_addr;
  std::uint8_t* dst = scratchpads_[x.dst_sp].data() + x.dst_addr;
  const std::uint8_t* table = scratchpads_[x.param_sp].data() + x.param_addr;
  if (x.per_channel) {
    ++per_channel_requants_;
    // Every entry before the first write; an output over the table is checked again below,
    // before each read of what it may have written.
    if (!table_ok(x, table, 0, x.c_size)) return;
  }
  intops::Requant q{static_cast<std::int32_t>(registers_.mult_a), registers_.shift,
                    registers_.zero_point, registers_.lo, registers_.hi};
  const bool same_sp = x.src_sp == x.dst_sp;
  // requantize_store writes channel by channel as it reads: not for an output over the table.
  const auto to_u64 = [](auto v) { return static_cast<std::uint64_t>(v); };
  const std::uint64_t dst_end = x.dst_addr + (to_u64(x.y_size - 1) * x.dst_stride_y +
                                              to_u64(x.x_size - 1) * x.dst_stride_x + x.c_size) *
                                                 out_bytes;
  const bool table_overlaps_output = x.per_channel && x.param_sp == x.dst_sp &&
                                     x.param_addr < dst_end &&
                                     x.dst_addr < x.param_addr + to_u64(x.c_size) * 8;
  // Two threads when the output lies apart from the accumulators and the table: then every
  // pixel takes requantize_store, reading only its own accumulators and writing only its own
  // outputs.
  const std::uint64_t src_end = x.src_addr + (to_u64(x.y_size - 1) * x.src_stride_y +
                                              to_u64(x.x_size - 1) * x.src_stride_x + x.c_size) *
                                                 4;
  const bool pixels_apart =
      (x.x_size == 1 || x.dst_stride_x >= x.c_size) &&
      (x.y_size == 1 ||
       x.dst_stride_y >= (std::uint64_t{x.x_size} - 1) * x.dst_stride_x + x.c_size);
  const bool output_apart = pixels_apart && !table_overlaps_output &&
                            (!same_sp || dst_end <= x.src_addr || src_end <= x.dst_addr);
  const auto pixels = static_cast<std::int64_t>(std::uint64_t{x.y_size} * x.x_size);
  if (output_apart) {
    for_split(pixels, pixels * static_cast<std::int64_t>(x.c_size),
              [&](std::int64_t begin, std::int64_t end) {
                // Row by row: the row's pixels [xx, xx + n) in one kernel call.
                for (std::int64_t p = begin; p < end;) {
                  const std::uint64_t y = to_u64(p) / x.x_size, xx = to_u64(p) % x.x_size;
                  const std::int64_t n =
                      std::min<std::int64_t>(end - p, static_cast<std::int64_t>(x.x_size - xx));
                  kernels::requantize_store_pixels(
                      src + (y * x.src_stride_y + xx * x.src_stride_x) * 4,
                      std::int64_t{x.src_stride_x} * 4, n, static_cast<std::int64_t>(x.c_size),
                      x.per_channel ? table : nullptr, q, out_bytes,
                      dst + (y * x.dst_stride_y + xx * x.dst_stride_x) * out_bytes,
                      static_cast<std::int64_t>(x.dst_stride_x * out_bytes));
                  p += n;
                }
              });
    return;
  }
  std::vector<std::int32_t>& pixel = pixel_;
  pixel.resize(x.c_size);
  for (std::uint64_t y = 0; y < x.y_size; ++y) {
    for (std::uint64_t xx = 0; xx < x.x_size; ++xx) {
      const std::uint8_t* s = src + (y * x.src_stride_y + xx * x.src_stride_x) * 4;
      std::uint8_t* d = dst + (y * x.dst_stride_y + xx * x.dst_stride_x) * out_bytes;
      // The kernel reads the whole pixel before it is written; docs/isa.md goes channel by
      // channel. They agree unless a write lands on a later channel's accumulator, which takes
      // an output that starts inside the pixel's accumulators, after their start.
      if (!(same_sp && d > s && d < s + x.c_size * 4)) {
        if (!table_overlaps_output) {
          kernels::requantize_store(s, static_cast<std::int64_t>(x.c_size),
                                    x.per_channel ? table : nullptr, q, out_bytes, d);
          continue;
        }
        if (x.per_channel && !table_ok(x, table, 0, x.c_size)) return;
        kernels::requantize(s, static_cast<std::int64_t>(x.c_size), x.per_channel ? table : nullptr,
                            q, pixel.data());
        kernels::store_elements(pixel.data(), static_cast<std::int64_t>(x.c_size), out_bytes, d);
        continue;
      }
      for (std::uint64_t c = 0; c < x.c_size; ++c) {
        if (x.per_channel) {
          if (!table_ok(x, table + c * 8, c, 1)) return;
          q.multiplier = read_element(table + c * 8, 4);
          q.shift = read_element(table + c * 8 + 4, 4);
        }
        write_element(d + c * out_bytes, out_bytes,
                      intops::requantize(read_element(s + c * 4, 4), q));
      }
    }
  }
}

bool Datapath::table_ok(const isa::Requant& x, const std::uint8_t* table, std::uint64_t first,
                        std::uint64_t count) {
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::int32_t m = read_element(table + i * 8, 4), r = read_element(table + i * 8 + 4, 4);
    if (m >= 0 && r >= 0 && r <= 62) continue;  // an int32 M is below 2^31
    if (!bad_table_) {
      const std::uint64_t c = first + i;
      bad_table_ = BadTable{per_channel_requants_ - 1,
                            "requantize table entry of channel " + std::to_string(c) + " (" +
                                scratchpad_names_[x.param_sp] + " byte " +
                                std::to_string(x.param_addr + c * 8) +
                                "): M = " + std::to_string(m) + ", r = " + std::to_string(r) +
                                "; docs/isa.md allows 0 <= M < 2^31 and 0 <= r <= 62"};
    }
    return false;
  }
  return true;
}

void Datapath::execute_add(const isa::Add& x) {
  const std::uint64_t e = element_bytes(x.elem);
  // `subtract` (ONNX Sub) negates b's multiplier: M_b < 2^31, so -M_b fits an int32.
  const auto mult_b = static_cast<std::int32_t>(registers_.mult_b);
  const intops::AddRequant q{static_cast<std::int32_t>(registers_.mult_a),
                             x.subtract ? -mult_b : mult_b,
                             registers_.shift,
                             registers_.zero_point,
                             registers_.lo,
                             registers_.hi};
  const std::uint8_t* a = scratchpads_[x.a_sp].data() + x.a_addr;
  const std::uint8_t* b = scratchpads_[x.b_sp].data() + x.b_addr;
  std::uint8_t* dst = scratchpads_[x.dst_sp].data() + x.dst_addr;
  // Two threads when every pixel takes add_requantize_store and no pixel's output is another
  // pixel's operand: the output's pixels are disjoint, and each operand box lies apart from the
  // output or is exactly the output box (an in-place add, pixel over pixel).
  const auto box_end = [&](std::uint64_t addr, std::uint64_t stride_y, std::uint64_t stride_x) {
    return addr + ((x.y_size - 1) * stride_y + (x.x_size - 1) * stride_x + x.c_size) * e;
  };
  const std::uint64_t dst_end = box_end(x.dst_addr, x.dst_stride_y, x.dst_stride_x);
  const auto operand_ok = [&](std::uint32_t sp, std::uint64_t addr, std::uint64_t stride_y,
                              std::uint64_t stride_x) {
    if (sp != x.dst_sp) return true;
    if (addr == x.dst_addr && stride_y == x.dst_stride_y && stride_x == x.dst_stride_x) return true;
    return box_end(addr, stride_y, stride_x) <= x.dst_addr || dst_end <= addr;
  };
  const bool pixels_apart =
      (x.x_size == 1 || x.dst_stride_x >= x.c_size) &&
      (x.y_size == 1 || x.dst_stride_y >= std::uint64_t{x.x_size - 1} * x.dst_stride_x + x.c_size);
  if (e <= 2 && pixels_apart && operand_ok(x.a_sp, x.a_addr, x.a_stride_y, x.a_stride_x) &&
      operand_ok(x.b_sp, x.b_addr, x.b_stride_y, x.b_stride_x)) {
    const auto pixels = static_cast<std::int64_t>(x.y_size * x.x_size);
    const bool contiguous =
        x.a_stride_x == x.c_size && x.b_stride_x == x.c_size && x.dst_stride_x == x.c_size;
    for_split(
        pixels, pixels * static_cast<std::int64_t>(x.c_size),
        [&](std::int64_t begin, std::int64_t end) {
          // Row by row; a row's pixels in one call where every operand's pixels are
          // contiguous (element-wise: one run of n * c elements).
          for (std::int64_t p = begin; p < end;) {
            const std::uint64_t y = static_cast<std::uint64_t>(p) / x.x_size;
            const std::uint64_t xx = static_cast<std::uint64_t>(p) % x.x_size;
            const std::int64_t n =
                contiguous
                    ? std::min<std::int64_t>(end - p, static_cast<std::int64_t>(x.x_size - xx))
                    : 1;
            kernels::add_requantize_store(a + (y * x.a_stride_y + xx * x.a_stride_x) * e,
                                          b + (y * x.b_stride_y + xx * x.b_stride_x) * e, e,
                                          n * static_cast<std::int64_t>(x.c_size), q,
                                          dst + (y * x.dst_stride_y + xx * x.dst_stride_x) * e);
            p += n;
          }
        });
    return;
  }
  std::vector<std::int32_t>& pixel = pixel_;
  pixel.resize(x.c_size);
  for (std::uint64_t y = 0; y < x.y_size; ++y) {
    for (std::uint64_t xx = 0; xx < x.x_size; ++xx) {
      const std::uint8_t* pa = a + (y * x.a_stride_y + xx * x.a_stride_x) * e;
      const std::uint8_t* pb = b + (y * x.b_stride_y + xx * x.b_stride_x) * e;
      std::uint8_t* pd = dst + (y * x.dst_stride_y + xx * x.dst_stride_x) * e;
      // add_requantize_store reads each step's channels before it writes them: right for an
      // output exactly over an operand or apart from both.
      const std::uint64_t bytes = x.c_size * e;
      const auto apart_or_same = [&](const std::uint8_t* operand) {
        const auto o = reinterpret_cast<std::uintptr_t>(operand);
        const auto d = reinterpret_cast<std::uintptr_t>(pd);
        return o == d || o + bytes <= d || d + bytes <= o;
      };
      if (e <= 2 && apart_or_same(pa) && apart_or_same(pb)) {
        kernels::add_requantize_store(pa, pb, e, static_cast<std::int64_t>(x.c_size), q, pd);
        continue;
      }
      // Read the whole pixel before writing it: in-place adds read before they write.
      if (e <= 2) {
        kernels::add_requantize(pa, pb, e, static_cast<std::int64_t>(x.c_size), q, pixel.data());
      } else {
        for (std::uint64_t c = 0; c < x.c_size; ++c)
          pixel[c] =
              intops::add_requantize(read_element(pa + c * e, e), read_element(pb + c * e, e), q);
      }
      kernels::store_elements(pixel.data(), static_cast<std::int64_t>(x.c_size), e, pd);
    }
  }
}

void Datapath::execute_pool(const isa::Pool& x) {
  const std::uint64_t e = element_bytes(x.elem);
  const std::int64_t in_h =
      (std::int64_t{x.out_h} - 1) * x.stride_h + x.kh - x.pad_top - x.pad_bottom;
  const std::int64_t in_w =
      (std::int64_t{x.out_w} - 1) * x.stride_w + x.kw - x.pad_left - x.pad_right;
  const std::uint8_t* src = scratchpads_[x.src_sp].data() + x.src_addr;
  std::uint8_t* dst = scratchpads_[x.dst_sp].data() + x.dst_addr;
  const intops::Requant q{static_cast<std::int32_t>(registers_.mult_a), registers_.shift,
                          registers_.zero_point, registers_.lo, registers_.hi};
  const auto channels = static_cast<std::int64_t>(x.c_size);
  // `taps` = the stored input pixels in output pixel (oy, ox)'s window (check() guarantees at
  // least one: pads < window).
  const auto window_taps = [&](std::int64_t oy, std::int64_t ox,
                               std::vector<const std::uint8_t*>& taps) {
    taps.clear();
    for (std::int64_t ky = 0; ky < x.kh; ++ky) {
      const std::int64_t iy = oy * x.stride_h + ky - x.pad_top;
      if (iy < 0 || iy >= in_h) continue;
      for (std::int64_t kx = 0; kx < x.kw; ++kx) {
        const std::int64_t ix = ox * x.stride_w + kx - x.pad_left;
        if (ix < 0 || ix >= in_w) continue;
        taps.push_back(src +
                       static_cast<std::uint64_t>(iy * x.src_stride_y + ix * x.src_stride_x) * e);
      }
    }
  };
  // Int8 and int16: the max kept in the elements' own bytes (the output is one of them), the
  // average's sum in uint32 (requantize reads the sum's low 32 bits: the int64 sum's, mod 2^32),
  // a window position's channels in one vectorised kernel call.
  const auto narrow_rows = [&](std::int64_t begin, std::int64_t end) {
    const bool max_mode = x.mode == isa::PoolMode::kMax;
    std::vector<std::uint8_t> best(max_mode ? x.c_size * e : 0);
    std::vector<std::uint32_t> sums(max_mode ? 0 : x.c_size);
    std::vector<const std::uint8_t*> taps;  // the window's positions inside the input
    taps.reserve(std::uint64_t{x.kh} * x.kw);
    for (std::int64_t oy = begin; oy < end; ++oy) {
      for (std::int64_t ox = 0; ox < x.out_w; ++ox) {
        window_taps(oy, ox, taps);
        const auto tap_count = static_cast<std::int64_t>(taps.size());
        if (max_mode) {
          kernels::max_of_taps(taps.data(), tap_count, channels, e, best.data());
        } else {
          std::fill(sums.begin(), sums.end(), 0u);
          for (const std::uint8_t* p : taps) kernels::add_elements(p, channels, e, sums.data());
        }
        std::uint8_t* d =
            dst + static_cast<std::uint64_t>(oy * x.dst_stride_y + ox * x.dst_stride_x) * e;
        if (max_mode) {
          std::memcpy(d, best.data(), x.c_size * e);
        } else {
          kernels::requantize_store(reinterpret_cast<const std::uint8_t*>(sums.data()), channels,
                                    nullptr, q, e, d);
        }
      }
    }
  };
  // Output rows [begin, end), each thread with its own window buffers.
  const auto rows = [&](std::int64_t begin, std::int64_t end) {
    if (e <= 2 && std::endian::native == std::endian::little) {
      narrow_rows(begin, end);
      return;
    }
    // Other widths (and big-endian hosts): element by element through read_element, the max
    // of the stored elements or their int64 sum then requantized (docs/isa.md).
    const bool max_mode = x.mode == isa::PoolMode::kMax;
    std::vector<std::int32_t> pixel(x.c_size);
    std::vector<std::int64_t> sums(max_mode ? 0 : x.c_size);
    std::vector<const std::uint8_t*> taps;
    for (std::int64_t oy = begin; oy < end; ++oy) {
      for (std::int64_t ox = 0; ox < x.out_w; ++ox) {
        if (max_mode) {
          std::fill(pixel.begin(), pixel.end(), std::numeric_limits<std::int32_t>::min());
        } else {
          std::fill(sums.begin(), sums.end(), std::int64_t{0});
        }
        std::int32_t* __restrict best = pixel.data();
        std::int64_t* __restrict sum = sums.data();
        window_taps(oy, ox, taps);
        for (const std::uint8_t* p : taps)
          for (std::int64_t c = 0; c < channels; ++c) {
            const std::int32_t v = read_element(p + static_cast<std::uint64_t>(c) * e, e);
            if (max_mode)
              best[c] = std::max(best[c], v);
            else
              sum[c] += v;
          }
        if (!max_mode)
          for (std::int64_t c = 0; c < channels; ++c)
            best[c] = intops::requantize(static_cast<std::int32_t>(sum[c]), q);
        std::uint8_t* d =
            dst + static_cast<std::uint64_t>(oy * x.dst_stride_y + ox * x.dst_stride_x) * e;
        kernels::store_elements(pixel.data(), channels, e, d);
      }
    }
  };
  // Two threads when the output lies apart from the source (each output pixel reads only the
  // source and writes only itself).
  const auto to_u64 = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
  const std::uint64_t src_end =
      x.src_addr +
      (to_u64(in_h - 1) * x.src_stride_y + to_u64(in_w - 1) * x.src_stride_x + x.c_size) * e;
  const std::uint64_t dst_end =
      x.dst_addr +
      (to_u64(x.out_h - 1) * x.dst_stride_y + to_u64(x.out_w - 1) * x.dst_stride_x + x.c_size) * e;
  const bool pixels_apart =
      (x.out_w == 1 || x.dst_stride_x >= x.c_size) &&
      (x.out_h == 1 || x.dst_stride_y >= (std::uint64_t{x.out_w} - 1) * x.dst_stride_x + x.c_size);
  const bool apart =
      pixels_apart && (x.src_sp != x.dst_sp || dst_end <= x.src_addr || src_end <= x.dst_addr);
  const std::int64_t elements = std::int64_t{x.out_h} * x.out_w * x.kh * x.kw * channels;
  if (apart) {
    for_split(x.out_h, elements, rows);
  } else {
    rows(0, x.out_h);
  }
}

void Datapath::execute_copy(const isa::Copy& x) {
  const std::uint64_t e = element_bytes(x.elem);
  const std::uint8_t* src = scratchpads_[x.src_sp].data() + x.src_addr;
  std::uint8_t* dst = scratchpads_[x.dst_sp].data() + x.dst_addr;
  const auto rows = [&](std::int64_t begin, std::int64_t end) {
    for (auto y = static_cast<std::uint64_t>(begin); y < static_cast<std::uint64_t>(end); ++y)
      for (std::uint64_t xx = 0; xx < x.x_size; ++xx)
        std::memmove(dst + (y * x.dst_stride_y + xx * x.dst_stride_x) * e,
                     src + (y * x.src_stride_y + xx * x.src_stride_x) * e, x.c_size * e);
  };
  // Two threads when the destination's pixels are disjoint and lie apart from the source.
  const auto box_end = [&](std::uint64_t addr, std::uint64_t stride_y, std::uint64_t stride_x) {
    return addr + ((std::uint64_t{x.y_size} - 1) * stride_y +
                   (std::uint64_t{x.x_size} - 1) * stride_x + x.c_size) *
                      e;
  };
  const bool pixels_apart =
      (x.x_size == 1 || x.dst_stride_x >= x.c_size) &&
      (x.y_size == 1 ||
       x.dst_stride_y >= (std::uint64_t{x.x_size} - 1) * x.dst_stride_x + x.c_size);
  const bool apart =
      pixels_apart &&
      (x.src_sp != x.dst_sp || box_end(x.dst_addr, x.dst_stride_y, x.dst_stride_x) <= x.src_addr ||
       box_end(x.src_addr, x.src_stride_y, x.src_stride_x) <= x.dst_addr);
  const auto count = static_cast<std::int64_t>(x.y_size);
  if (apart) {
    for_split(count, count * x.x_size * x.c_size, rows);
  } else {
    rows(0, count);
  }
}

}  // namespace tessel::sim
