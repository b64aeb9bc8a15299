// Datapath: loops over the 3-D boxes of docs/isa.md; arithmetic from support/int_ops.hpp.
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

namespace {

/// Whether load `x` copies one run of bytes on both sides: no padding, pixels back to back,
/// rows back to back (or one row).
bool one_run(const isa::Load& x) {
  const std::uint64_t row = std::uint64_t{x.x_size} * x.c_size;
  return x.pad_top == 0 && x.pad_bottom == 0 && x.pad_left == 0 && x.pad_right == 0 &&
         x.sram_stride_x == x.c_size && x.dram_stride_x == x.c_size && row != 0 && x.y_size != 0 &&
         (x.y_size == 1 || (x.sram_stride_y == row && x.dram_stride_y == row));
}

std::uint64_t run_bytes(const isa::Load& x) {
  return std::uint64_t{x.x_size} * x.c_size * x.y_size * element_bytes(x.elem);
}

/// The byte range from a box's first element to one past its last (its bytes and any gaps
/// between its rows and pixels: a superset); empty for an empty box.
std::uint64_t box_end(std::uint64_t addr, std::uint64_t rows, std::uint64_t stride_y,
                      std::uint64_t cols, std::uint64_t stride_x, std::uint64_t channels,
                      std::uint64_t bytes) {
  if (rows == 0 || cols == 0 || channels == 0) return addr;
  return addr + ((rows - 1) * stride_y + (cols - 1) * stride_x + channels) * bytes;
}

}  // namespace

Datapath::Datapath(const HwConfig& config, std::vector<std::uint8_t>& dram, bool reference_kernels,
                   int threads)
    : split_(threads >= 2 ? std::make_unique<SplitRunner>() : nullptr),
      dram_(dram),
      reference_kernels_(reference_kernels),
      matrix_rows_(config.matrix.rows),
      matrix_cols_(config.matrix.cols),
      weight_bytes_(config.matrix.weight_bits / 8),
      copies_(config.scratchpads.size()) {
  for (const auto& sp : config.scratchpads) {
    scratchpad_names_.push_back(sp.name);
    scratchpads_.emplace_back(static_cast<std::size_t>(sp.size_bytes), std::uint8_t{0});
    page_generation_.emplace_back(
        (static_cast<std::uint64_t>(sp.size_bytes) + kPageBytes - 1) / kPageBytes, 0);
  }
}

Datapath::~Datapath() = default;

void Datapath::execute(const isa::Instruction& instruction, const DenseWeights* prepacked) {
  // Only a datapath that defers weight loads has any (deferred_ is empty otherwise).
  const bool defer = !deferred_.empty() && settle_before(instruction);
  note_writes(instruction);
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, isa::Load>) {
          if (defer) {
            deferred_[x.sp].emplace(x.sram_addr, DramRun{x.sram_addr + run_bytes(x), x.dram_addr});
            deferred_bytes_ += run_bytes(x);
          } else {
            execute_load(x);
          }
          copies_.after_load(x);
        } else if constexpr (std::is_same_v<T, isa::Store>) {
          execute_store(x);
        } else if constexpr (std::is_same_v<T, isa::Conv>) {
          execute_conv(x, prepacked);
        } else if constexpr (std::is_same_v<T, isa::Vcfg>) {
          registers_ = {x.mult_a, x.mult_b, static_cast<int>(x.shift), x.zp, x.lo, x.hi};
        } else if constexpr (std::is_same_v<T, isa::Requant>) {
          execute_requant(x);
        } else if constexpr (std::is_same_v<T, isa::Add>) {
          execute_add(x);
        } else if constexpr (std::is_same_v<T, isa::Pool>) {
          execute_pool(x);
        } else if constexpr (std::is_same_v<T, isa::Copy>) {
          execute_copy(x);
        } else if constexpr (std::is_same_v<T, isa::Lut>) {
          execute_lut(x);
        } else if constexpr (std::is_same_v<T, isa::Reduce>) {
          execute_reduce(x);
        }
        // nop, finish: no data effect.
      },
      instruction);
}

void Datapath::settle(std::uint32_t sp, std::uint64_t begin, std::uint64_t end) {
  if (sp >= deferred_.size() || deferred_[sp].empty()) return;
  // Only the bytes asked for: a merged load of a layer's weights, bias and requantize table
  // is read by the requantize for its table alone (ResNet-50: settling whole loads copied 58%
  // of the deferred bytes).
  DramRuns& loads = deferred_[sp];
  take_runs(loads, begin, end, [&](std::uint64_t from, std::uint64_t to, std::uint64_t dram) {
    std::memcpy(scratchpads_[sp].data() + from, dram_.data() + dram, to - from);
    settled_bytes_ += to - from;
  });
}

bool Datapath::deferred_over(std::uint32_t sp, std::uint64_t begin, std::uint64_t end) const {
  if (begin >= end || sp >= deferred_.size()) return false;
  const DramRuns& loads = deferred_[sp];
  auto it = loads.lower_bound(begin);
  if (it != loads.end() && it->first < end) return true;
  return it != loads.begin() && std::prev(it)->second.end > begin;
}

void Datapath::settle_dram(std::uint64_t begin, std::uint64_t end) {
  if (begin >= end) return;
  for (std::uint32_t sp = 0; sp < deferred_.size(); ++sp)
    for (auto it = deferred_[sp].begin(); it != deferred_[sp].end();) {
      const std::uint64_t from = it->second.dram, to = from + (it->second.end - it->first);
      if (from < end && begin < to) {
        const std::uint64_t at = it->first, at_end = it->second.end;
        ++it;  // settle erases only this load
        settle(sp, at, at_end);
      } else {
        ++it;
      }
    }
}

void Datapath::settle_all() {
  for (std::uint32_t sp = 0; sp < deferred_.size(); ++sp)
    settle(sp, 0, std::numeric_limits<std::uint64_t>::max());
}

bool Datapath::settle_before(const isa::Instruction& instruction) {
  // The bytes of a box an operand reads: its runs (a row, or a pixel where pixels lie apart),
  // not its whole byte range, whose gaps may hold deferred weights.
  const auto box = [&](std::uint32_t sp, std::uint64_t addr, std::int64_t rows,
                       std::uint64_t stride_y, std::int64_t cols, std::uint64_t stride_x,
                       std::uint64_t channels, std::uint64_t bytes) {
    if (rows <= 0 || cols <= 0) return;
    const auto r = static_cast<std::uint64_t>(rows), c = static_cast<std::uint64_t>(cols);
    if (!deferred_over(sp, addr, box_end(addr, r, stride_y, c, stride_x, channels, bytes))) return;
    const bool row_runs = c == 1 || stride_x == channels;
    for (std::uint64_t y = 0; y < r; ++y) {
      const std::uint64_t row = addr + y * stride_y * bytes;
      if (row_runs) {
        settle(sp, row, row + ((c - 1) * stride_x + channels) * bytes);
        continue;
      }
      for (std::uint64_t px = 0; px < c; ++px)
        settle(sp, row + px * stride_x * bytes, row + (px * stride_x + channels) * bytes);
    }
  };
  bool defer = false;
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, isa::Load>) {
          if (!one_run(x)) return;  // settled as written below
          defer = x.kind == isa::Traffic::kWeights;
          // This load writes all of [begin, end) and nothing else: the deferred loads lose
          // those bytes (ResNet-50's weight buffers take loads of other sizes at other
          // offsets).
          take_runs(deferred_[x.sp], x.sram_addr, x.sram_addr + run_bytes(x),
                    [](std::uint64_t, std::uint64_t, std::uint64_t) {});
          return;
        } else if constexpr (std::is_same_v<T, isa::Store>) {
          box(x.sp, x.sram_addr, x.y_size, x.sram_stride_y, x.x_size, x.sram_stride_x, x.c_size,
              element_bytes(x.elem));
        } else if constexpr (std::is_same_v<T, isa::Conv>) {
          // The stored input box and the bias; the weights in
          // execute_conv; the accumulators as written below.
          const std::uint64_t channels =
              std::uint64_t{x.depthwise ? 1 : x.ic_blocks} *
              static_cast<std::uint64_t>(x.depthwise ? std::int64_t{x.oc_blocks} * matrix_cols_
                                                     : matrix_rows_);
          box(x.in_sp, x.in_addr,
              (std::int64_t{x.out_h} - 1) * x.stride_h + (std::int64_t{x.kh} - 1) * x.dil_h + 1 -
                  x.pad_top - x.pad_bottom,
              x.in_stride_y,
              (std::int64_t{x.out_w} - 1) * x.stride_w + (std::int64_t{x.kw} - 1) * x.dil_w + 1 -
                  x.pad_left - x.pad_right,
              x.in_stride_x, channels, element_bytes(x.elem));
          if (x.init == isa::Init::kBias)
            settle(x.w_sp, x.bias_addr,
                   x.bias_addr +
                       std::uint64_t{x.oc_blocks} * static_cast<std::uint64_t>(matrix_cols_) * 4);
        } else if constexpr (std::is_same_v<T, isa::Requant>) {
          box(x.src_sp, x.src_addr, x.y_size, x.src_stride_y, x.x_size, x.src_stride_x, x.c_size,
              4);
          if (x.per_channel)
            settle(x.param_sp, x.param_addr, x.param_addr + 8 * std::uint64_t{x.c_size});
        } else if constexpr (std::is_same_v<T, isa::Add>) {
          box(x.a_sp, x.a_addr, x.y_size, x.a_stride_y, x.x_size, x.a_stride_x, x.c_size,
              element_bytes(x.elem));
          box(x.b_sp, x.b_addr, x.y_size, x.b_stride_y, x.x_size, x.b_stride_x, x.c_size,
              element_bytes(x.elem));
        } else if constexpr (std::is_same_v<T, isa::Copy>) {
          box(x.src_sp, x.src_addr, x.y_size, x.src_stride_y, x.x_size, x.src_stride_x, x.c_size,
              element_bytes(x.elem));
        } else if constexpr (std::is_same_v<T, isa::Lut>) {
          box(x.src_sp, x.src_addr, x.y_size, x.src_stride_y, x.x_size, x.src_stride_x, x.c_size,
              1);
          settle(x.table_sp, x.table_addr, x.table_addr + 256 * element_bytes(x.dst_elem));
        } else if constexpr (std::is_same_v<T, isa::Reduce>) {
          box(x.src_sp, x.src_addr, x.y_size, x.src_stride_y, x.x_size, x.src_stride_x, x.c_size,
              element_bytes(x.elem));
        } else if constexpr (std::is_same_v<T, isa::Pool>) {
          box(x.src_sp, x.src_addr,
              (std::int64_t{x.out_h} - 1) * x.stride_h + x.kh - x.pad_top - x.pad_bottom,
              x.src_stride_y,
              (std::int64_t{x.out_w} - 1) * x.stride_w + x.kw - x.pad_left - x.pad_right,
              x.src_stride_x, x.c_size, element_bytes(x.elem));
        }
        // vcfg, nop, finish: no operand.
      },
      instruction);
  // What it writes: the scratchpad bytes (a superset: settled, then partly overwritten), or
  // the DRAM bytes a deferred load copies (none is left in a one-run load's bytes: cut above).
  const WrittenBytes w = written_bytes(instruction, matrix_cols_);
  if (w.sram) {
    settle(w.sp, w.begin, w.end);
  } else {
    settle_dram(w.begin, w.end);
  }
  return defer;
}

void Datapath::mark_written(std::uint32_t sp, std::uint64_t begin, std::uint64_t end) {
  if (begin >= end || sp >= page_generation_.size()) return;
  std::vector<std::uint64_t>& pages = page_generation_[sp];
  const std::uint64_t last = std::min<std::uint64_t>((end - 1) / kPageBytes, pages.size() - 1);
  ++write_generation_;
  for (std::uint64_t page = begin / kPageBytes; page <= last; ++page)
    pages[page] = write_generation_;
  copies_.written(sp, begin, end);
}

void CopyTracker::written(std::uint32_t sp, std::uint64_t begin, std::uint64_t end) {
  if (begin >= end || sp >= loaded_.size()) return;
  take_runs(loaded_[sp], begin, end, [](std::uint64_t, std::uint64_t, std::uint64_t) {});
}

void CopyTracker::stored(std::uint64_t begin, std::uint64_t end) {
  if (begin >= end) return;
  const std::uint64_t last = (end - 1) / kPageBytes;
  if (dram_stored_.size() <= last) dram_stored_.resize(last + 1, false);
  for (std::uint64_t page = begin / kPageBytes; page <= last; ++page) dram_stored_[page] = true;
}

void CopyTracker::before(const isa::Instruction& instruction, int matrix_cols) {
  const WrittenBytes w = written_bytes(instruction, matrix_cols);
  if (w.sram) {
    written(w.sp, w.begin, w.end);
  } else {
    stored(w.begin, w.end);
  }
}

void CopyTracker::after_load(const isa::Load& x) {
  if (!one_run(x)) return;
  const std::uint64_t bytes = run_bytes(x);
  DramRuns& runs = loaded_[x.sp];
  std::uint64_t begin = x.sram_addr;
  DramRun run{x.sram_addr + bytes, x.dram_addr};
  // note_writes cut every run over these bytes: join a run that ends where this one starts,
  // or starts where it ends, with DRAM bytes contiguous too.
  auto next = runs.lower_bound(begin);
  if (next != runs.begin()) {
    const auto before = std::prev(next);
    if (before->second.end == begin && before->second.dram + (begin - before->first) == run.dram) {
      begin = before->first;
      run.dram = before->second.dram;
      runs.erase(before);
    }
  }
  if (next != runs.end() && next->first == run.end &&
      next->second.dram == run.dram + (run.end - begin)) {
    run.end = next->second.end;
    runs.erase(next);
  }
  runs.emplace(begin, run);
}

std::optional<std::uint64_t> CopyTracker::source(std::uint32_t sp, std::uint64_t begin,
                                                 std::uint64_t end) const {
  if (begin >= end || sp >= loaded_.size()) return std::nullopt;
  const DramRuns& runs = loaded_[sp];
  auto it = runs.upper_bound(begin);
  if (it == runs.begin()) return std::nullopt;
  --it;
  if (it->second.end < end) return std::nullopt;
  const std::uint64_t dram = it->second.dram + (begin - it->first);
  for (std::uint64_t page = dram / kPageBytes;
       page < dram_stored_.size() && page <= (dram + (end - begin) - 1) / kPageBytes; ++page)
    if (dram_stored_[page]) return std::nullopt;
  return dram;
}

bool Datapath::written_since(std::uint32_t sp, std::uint64_t begin, std::uint64_t end,
                             std::uint64_t since) const {
  if (begin >= end) return false;
  const std::vector<std::uint64_t>& pages = page_generation_[sp];
  const std::uint64_t last = std::min<std::uint64_t>((end - 1) / kPageBytes, pages.size() - 1);
  for (std::uint64_t page = begin / kPageBytes; page <= last; ++page)
    if (pages[page] > since) return true;
  return false;
}

WrittenBytes written_bytes(const isa::Instruction& instruction, int matrix_cols) {
  // The output box's byte range, box_end's superset: safe, it only costs a repack.
  WrittenBytes out;
  const auto sram = [&](std::uint32_t sp, std::uint64_t begin, std::uint64_t end) {
    out = {true, sp, begin, end};
  };
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, isa::Load>) {
          const std::uint64_t rows = std::uint64_t{x.pad_top} + x.y_size + x.pad_bottom;
          const std::uint64_t cols = std::uint64_t{x.pad_left} + x.x_size + x.pad_right;
          sram(x.sp, x.sram_addr,
               box_end(x.sram_addr, rows, x.sram_stride_y, cols, x.sram_stride_x, x.c_size,
                       element_bytes(x.elem)));
        } else if constexpr (std::is_same_v<T, isa::Conv>) {
          sram(x.acc_sp, x.acc_addr,
               box_end(x.acc_addr, x.out_h, x.acc_stride_y, x.out_w, x.acc_stride_x,
                       std::uint64_t{x.oc_blocks} * static_cast<std::uint64_t>(matrix_cols), 4));
        } else if constexpr (std::is_same_v<T, isa::Requant>) {
          sram(x.dst_sp, x.dst_addr,
               box_end(x.dst_addr, x.y_size, x.dst_stride_y, x.x_size, x.dst_stride_x, x.c_size,
                       element_bytes(x.dst_elem)));
        } else if constexpr (std::is_same_v<T, isa::Lut>) {
          sram(x.dst_sp, x.dst_addr,
               box_end(x.dst_addr, x.y_size, x.dst_stride_y, x.x_size, x.dst_stride_x, x.c_size,
                       element_bytes(x.dst_elem)));
        } else if constexpr (std::is_same_v<T, isa::Reduce>) {
          sram(x.dst_sp, x.dst_addr,
               box_end(x.dst_addr, x.y_size, x.dst_stride_y, x.x_size, x.dst_stride_x, 1, 4));
        } else if constexpr (std::is_same_v<T, isa::Add> || std::is_same_v<T, isa::Copy>) {
          sram(x.dst_sp, x.dst_addr,
               box_end(x.dst_addr, x.y_size, x.dst_stride_y, x.x_size, x.dst_stride_x, x.c_size,
                       element_bytes(x.elem)));
        } else if constexpr (std::is_same_v<T, isa::Pool>) {
          sram(x.dst_sp, x.dst_addr,
               box_end(x.dst_addr, x.out_h, x.dst_stride_y, x.out_w, x.dst_stride_x, x.c_size,
                       element_bytes(x.elem)));
        } else if constexpr (std::is_same_v<T, isa::Store>) {
          out.begin = x.dram_addr;
          out.end = box_end(x.dram_addr, x.y_size, x.dram_stride_y, x.x_size, x.dram_stride_x,
                            x.c_size, element_bytes(x.elem));
        }
        // vcfg, nop, finish: no write.
      },
      instruction);
  return out;
}

void Datapath::note_writes(const isa::Instruction& instruction) {
  const WrittenBytes w = written_bytes(instruction, matrix_cols_);
  if (w.sram) {
    mark_written(w.sp, w.begin, w.end);
  } else {
    copies_.stored(w.begin, w.end);
  }
}

void Datapath::for_split(std::int64_t count, std::int64_t elements,
                         const std::function<void(std::int64_t, std::int64_t)>& fn) {
  if (split_ && count >= 2 && elements >= kSplitMinElements) {
    split_->run(count, count / 2, fn);
  } else {
    fn(0, count);
  }
}

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

namespace {

/// The bytes [begin, end) of scratchpad `sp` that an operand's box lies within.
struct ByteRange {
  std::uint32_t sp = 0;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;

  bool overlaps(const ByteRange& other) const {
    return sp == other.sp && begin < other.end && other.begin < end;
  }
};

/// `count` elements of `bytes` (1 or 2) at `src`, sign-extended.
template <class T>
void widen(const std::uint8_t* src, std::uint64_t bytes, std::int64_t count, T* dst) {
  if (bytes == 1) {
    for (std::int64_t i = 0; i < count; ++i) dst[i] = static_cast<std::int8_t>(src[i]);
  } else if (std::endian::native == std::endian::little && sizeof(T) == 2) {
    std::memcpy(dst, src, static_cast<std::size_t>(count) * 2);  // the same bytes
  } else {
    for (std::int64_t i = 0; i < count; ++i) dst[i] = static_cast<T>(read_element(src + 2 * i, 2));
  }
}

}  // namespace

void pack_dense_weights(const isa::Conv& x, int matrix_rows, int matrix_cols, int weight_bytes,
                        const std::uint8_t* weights, DenseWeights& out) {
  const auto wb = static_cast<std::uint64_t>(weight_bytes);
  const std::int64_t rows = matrix_rows, cols = matrix_cols;
  const std::int64_t in_channels = std::int64_t{x.ic_blocks} * rows;
  const std::int64_t out_channels = std::int64_t{x.oc_blocks} * cols;
  const std::int64_t in_pairs = kernels::channel_pairs(in_channels);
  const std::int64_t block = kernels::dense_block(out_channels);
  kernels::PairWeights& packed = out.packed;
  const std::int64_t taps = std::int64_t{x.kh} * x.kw;
  const auto at = [&](std::int64_t tap, std::int64_t i, std::int64_t o) {
    return packed.data() + kernels::dense_index(tap, i, o, taps, in_pairs, out_channels, block);
  };
  // No zero fill (kernels::PairWeights): every element is written below, each input channel
  // once per tap and output, and with an odd channel count the last pair's filler.
  packed.resize(static_cast<std::size_t>(taps * 2 * in_pairs * out_channels));
  out.block = block;
  if (in_channels % 2 != 0)
    for (std::int64_t tap = 0; tap < taps; ++tap)
      for (std::int64_t o = 0; o < out_channels; ++o) *at(tap, in_channels, o) = 0;
  // The raw layout is [ocb][icb][ky][kx][r][c]: rows r and r + 1 (input channels 2k and
  // 2k + 1 when `rows` is even) are adjacent and interleave into one pair row.
  const std::int64_t row_elements = cols;
  const auto element = [&](const std::uint8_t* row, std::int64_t c) -> std::int16_t {
    return wb == 2 ? static_cast<std::int16_t>(read_element(row + 2 * c, 2))
                   : static_cast<std::int16_t>(static_cast<std::int8_t>(row[c]));
  };
  // Raw row (ocb, icb, tap, r): its `cols` elements.
  const auto raw_row = [&](std::int64_t ocb, std::int64_t icb, std::int64_t tap, std::int64_t r) {
    return weights +
           static_cast<std::uint64_t>(((ocb * x.ic_blocks + icb) * taps + tap) * rows + r) *
               static_cast<std::uint64_t>(row_elements) * wb;
  };
  // Raw rows in their own order within a column block (output block, input block, tap, row):
  // each read front to back, each written pair row a whole run of the packed layout (a
  // 64-byte line for blocks of 16). A raw row's channels [c0, c1) are the ones in the block.
  for (std::int64_t first = 0; first < out_channels; first += block) {
    const std::int64_t last = std::min(out_channels, first + block);
    for (std::int64_t ocb = first / cols; ocb * cols < last; ++ocb) {
      const std::int64_t c0 = std::max<std::int64_t>(0, first - ocb * cols);
      const std::int64_t c1 = std::min(cols, last - ocb * cols);
      for (std::int64_t icb = 0; icb < x.ic_blocks; ++icb)
        for (std::int64_t tap = 0; tap < taps; ++tap) {
          std::int64_t r = 0;
          for (; rows % 2 == 0 && r < rows; r += 2) {
            std::int16_t* __restrict dst = at(tap, icb * rows + r, ocb * cols + c0);
            const std::uint8_t* first_row = raw_row(ocb, icb, tap, r);
            const std::uint8_t* second_row =
                first_row + static_cast<std::uint64_t>(row_elements) * wb;
            for (std::int64_t c = c0; c < c1; ++c) {
              dst[2 * (c - c0)] = element(first_row, c);
              dst[2 * (c - c0) + 1] = element(second_row, c);
            }
          }
          for (; r < rows; ++r) {
            std::int16_t* dst = at(tap, icb * rows + r, ocb * cols + c0);
            const std::uint8_t* src = raw_row(ocb, icb, tap, r);
            for (std::int64_t c = c0; c < c1; ++c) dst[2 * (c - c0)] = element(src, c);
          }
        }
    }
  }
  out.pair_channels = kernels::drop_zero_pairs(packed, taps, in_pairs, out_channels, block);
}

const Datapath::PackedWeights& Datapath::dense_weights(const isa::Conv& x, std::int64_t in_channels,
                                                       std::int64_t out_channels,
                                                       const std::uint8_t* weights,
                                                       std::size_t raw_bytes, bool amx) {
  // The packing this use needs, made on the entry's first use of that kind.
  const auto packing = [&](PackedWeights& entry) -> const PackedWeights& {
    if (amx && entry.amx.tiles.empty()) {
      ++weight_packings_;
      const kernels::amx::RawWeightLayout layout{
          x.oc_blocks,  x.ic_blocks,  std::int64_t{x.kh} * x.kw,
          matrix_rows_, matrix_cols_, weight_bytes_};
      kernels::amx::pack_weights_raw(weights, layout, entry.amx);
    } else if (!amx && entry.dense.packed.empty()) {
      ++weight_packings_;
      pack_dense_weights(x, matrix_rows_, matrix_cols_, weight_bytes_, weights, entry.dense);
    }
    return entry;
  };
  const std::array<std::int64_t, 5> key = {std::int64_t{x.kh} * x.kw, in_channels, out_channels,
                                           matrix_rows_, weight_bytes_};
  ++weight_uses_;
  // A copy of DRAM bytes no store wrote (the weights, loaded for this use) takes the entry
  // packed from any copy of the same DRAM bytes, at any scratchpad address: they are equal.
  const std::optional<std::uint64_t> source =
      copies_.source(x.w_sp, x.w_addr, x.w_addr + raw_bytes);
  PackedWeights* entry = nullptr;
  for (auto& candidate : weight_cache_) {
    if (candidate.key != key || candidate.raw_bytes != raw_bytes) continue;
    if (source && candidate.source == source) {
      entry = &candidate;
      break;
    }
    if (candidate.sp == x.w_sp && candidate.addr == x.w_addr) entry = &candidate;
  }
  // Else valid while no page of the weights was written since the entry was made; after a
  // write, still valid when the bytes are the ones packed (kept only for bytes with no source).
  if (entry && ((source && entry->source == source) ||
                !written_since(x.w_sp, x.w_addr, x.w_addr + raw_bytes, entry->generation) ||
                (!entry->source && std::memcmp(entry->raw.data(), weights, raw_bytes) == 0))) {
    entry->sp = x.w_sp;
    entry->addr = x.w_addr;
    entry->generation = write_generation_;
    entry->last_use = weight_uses_;
    return packing(*entry);
  }
  if (!entry) {
    if (weight_cache_.size() < kWeightCacheEntries) {
      entry = &weight_cache_.emplace_back();
    } else {
      entry = &*std::min_element(
          weight_cache_.begin(), weight_cache_.end(),
          [](const PackedWeights& a, const PackedWeights& b) { return a.last_use < b.last_use; });
    }
  }
  entry->sp = x.w_sp;
  entry->addr = x.w_addr;
  entry->key = key;
  entry->raw_bytes = raw_bytes;
  entry->source = source;
  if (!source) entry->raw.assign(weights, weights + raw_bytes);
  entry->generation = write_generation_;
  entry->dense.packed.clear();  // stale; repacked (in their allocations) on the next use
  entry->amx.tiles.clear();
  entry->last_use = weight_uses_;
  return packing(*entry);
}

void Datapath::execute_conv(const isa::Conv& x, const DenseWeights* prepacked) {
  const std::uint64_t ib = element_bytes(x.elem);
  const std::uint64_t wb = static_cast<std::uint64_t>(weight_bytes_);
  const std::int64_t rows = matrix_rows_, cols = matrix_cols_;
  const std::int64_t in_channels =
      x.depthwise ? std::int64_t{x.oc_blocks} * cols : std::int64_t{x.ic_blocks} * rows;
  const std::int64_t out_channels = std::int64_t{x.oc_blocks} * cols;
  const std::int64_t taps = std::int64_t{x.kh} * x.kw;
  const std::int64_t in_h = (std::int64_t{x.out_h} - 1) * x.stride_h +
                            (std::int64_t{x.kh} - 1) * x.dil_h + 1 - x.pad_top - x.pad_bottom;
  const std::int64_t in_w = (std::int64_t{x.out_w} - 1) * x.stride_w +
                            (std::int64_t{x.kw} - 1) * x.dil_w + 1 - x.pad_left - x.pad_right;
  const std::int64_t weight_count = taps * out_channels * (x.depthwise ? 1 : in_channels);

  // The fast loop reads each output pixel's inputs (and all weights, up front) before it writes
  // the pixel's accumulators, where docs/isa.md interleaves reads and writes per output
  // channel. The two agree unless the accumulators overlap an operand, which no sensible
  // program does; such a conv, and element widths the int16 kernels do not cover, take the
  // reference loop.
  const auto to_u64 = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
  const ByteRange acc_bytes{
      x.acc_sp, x.acc_addr,
      x.acc_addr + (to_u64(x.out_h - 1) * x.acc_stride_y + to_u64(x.out_w - 1) * x.acc_stride_x +
                    to_u64(out_channels)) *
                       4};
  const ByteRange in_bytes{x.in_sp, x.in_addr,
                           x.in_addr + (to_u64(in_h - 1) * x.in_stride_y +
                                        to_u64(in_w - 1) * x.in_stride_x + to_u64(in_channels)) *
                                           ib};
  const ByteRange weight_bytes{x.w_sp, x.w_addr, x.w_addr + to_u64(weight_count) * wb};
  const ByteRange bias_bytes{
      x.w_sp, x.bias_addr,
      x.bias_addr + (x.init == isa::Init::kBias ? to_u64(out_channels) * 4 : 0)};
  const bool reference = reference_kernels_ || ib > 2 || wb > 2 || acc_bytes.overlaps(in_bytes) ||
                         acc_bytes.overlaps(weight_bytes) || acc_bytes.overlaps(bias_bytes);
  // The weights' deferred loads (settle_before), unless the dense loop below reads the
  // packing made ahead instead of these bytes.
  if (reference || x.depthwise || prepacked == nullptr || kernels::amx::available())
    settle(weight_bytes.sp, weight_bytes.begin, weight_bytes.end);
  if (reference) {
    execute_conv_reference(x);
    return;
  }

  const std::uint8_t* weights = scratchpads_[x.w_sp].data() + x.w_addr;
  const std::uint8_t* in = scratchpads_[x.in_sp].data() + x.in_addr;
  const std::uint8_t* bias = scratchpads_[x.w_sp].data() + x.bias_addr;
  std::uint8_t* acc = scratchpads_[x.acc_sp].data() + x.acc_addr;
  // Adds the initial value (0, the bias or the accumulator's own) to output pixel (oy, ox)'s
  // sums and writes the accumulators.
  const auto write_pixel = [&](std::int64_t oy, std::int64_t ox, const std::uint32_t* sums) {
    std::uint8_t* slot = acc + to_u64(oy * x.acc_stride_y + ox * x.acc_stride_x) * 4;
    const std::uint8_t* start = x.init == isa::Init::kBias  ? bias
                                : x.init == isa::Init::kAcc ? slot
                                                            : nullptr;
    kernels::store_accumulators(sums, start, out_channels, slot);
  };

  if (!x.depthwise) {
    // Every output pixel's taps x channel pairs reduced in registers by kernels::conv_dense,
    // reading int16 pixels: the scratchpad itself when it holds them unpadded, else a
    // zero-padded int16 copy of the input box.
    const std::int64_t in_pairs = kernels::channel_pairs(in_channels);
    // The AMX kernel (amx_conv.hpp) where the CPU and OS allow it, over the cache entry's
    // tiles; else kernels::conv_dense over its dense_index layout.
    const bool use_amx = kernels::amx::available();
    const DenseWeights* dense = use_amx ? nullptr : prepacked;
    const kernels::amx::Weights* amx = nullptr;
    if (!dense) {
      const PackedWeights& cached =
          dense_weights(x, in_channels, out_channels, weights,
                        static_cast<std::size_t>(weight_count) * wb, use_amx);
      dense = &cached.dense;
      if (use_amx) amx = &cached.amx;
    }
    const std::int16_t* packed = dense->packed.data();
    const bool padded = x.pad_top || x.pad_bottom || x.pad_left || x.pad_right;
    // Weights on only some input channels, the same in every tap (conv1's 3 of 16): the copy
    // holds those channels alone (amx::Weights::channels; without AMX the channels of the
    // pairs kernels::drop_zero_pairs keeps, two a pair, which conv_dense then runs over).
    const std::vector<std::int32_t>* kept =
        amx ? (amx->channels.empty() ? nullptr : &amx->channels)
            : (dense->pair_channels.empty() ? nullptr : &dense->pair_channels);
    const std::int64_t pairs =
        !amx && kept ? static_cast<std::int64_t>(kept->size()) / 2 : in_pairs;
    const std::uint8_t* image = in;
    std::int64_t row_bytes = std::int64_t{x.in_stride_y} * 2;
    std::int64_t col_bytes = std::int64_t{x.in_stride_x} * 2;
    if (ib != 2 || in_channels % 2 != 0 || padded || kept) {
      const std::int64_t padded_h = in_h + x.pad_top + x.pad_bottom;
      const std::int64_t padded_w = in_w + x.pad_left + x.pad_right;
      const std::int64_t pixel_stride =
          kept ? static_cast<std::int64_t>(kept->size()) : 2 * in_pairs;
      const std::int64_t padded_row = padded_w * pixel_stride;  // int16 elements
      // Only the padding is zeroed (the buffer keeps the last conv's bytes): the padding rows
      // and each row's left and right padding. With an odd channel count each pixel's
      // pair-filling last channel keeps stale bytes: its weights are 0 in every packing, and
      // any int16 x 0 adds 0. A row's pixels back to back on both sides (even channels,
      // in_stride_x = channels) widen in one call.
      image_.resize(static_cast<std::size_t>(padded_h * padded_row));
      std::int16_t* padded_image = image_.data();
      std::fill_n(padded_image, x.pad_top * padded_row, std::int16_t{0});
      std::fill_n(padded_image + (x.pad_top + in_h) * padded_row, x.pad_bottom * padded_row,
                  std::int16_t{0});
      const bool dense_rows = !kept && pixel_stride == in_channels && x.in_stride_x == in_channels;
      // The kept channels as runs of consecutive ones; those from `kept_present` on are an odd
      // count's missing pair-filling channel (drop_zero_pairs), copied as 0.
      kept_runs_.clear();
      std::int64_t kept_present = 0;
      for (; kept && kept_present < pixel_stride; ++kept_present) {
        const std::int64_t c = (*kept)[static_cast<std::size_t>(kept_present)];
        if (c >= in_channels) break;
        if (!kept_runs_.empty() && kept_runs_.back().channel + kept_runs_.back().count == c)
          ++kept_runs_.back().count;
        else
          kept_runs_.push_back({c, kept_present, 1});
      }
      for_split(in_h, in_h * in_w * in_channels, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t iy = begin; iy < end; ++iy) {
          std::int16_t* row = padded_image + (iy + x.pad_top) * padded_row;
          std::fill_n(row, x.pad_left * pixel_stride, std::int16_t{0});
          std::fill_n(row + (x.pad_left + in_w) * pixel_stride, x.pad_right * pixel_stride,
                      std::int16_t{0});
          const std::uint8_t* src = in + to_u64(iy * x.in_stride_y) * ib;
          std::int16_t* dst = row + x.pad_left * pixel_stride;
          if (dense_rows) {
            widen(src, ib, in_w * in_channels, dst);
            continue;
          }
          if (kept) {
            for (std::int64_t ix = 0; ix < in_w; ++ix) {
              const std::uint8_t* pixel = src + to_u64(ix * x.in_stride_x) * ib;
              std::int16_t* out = dst + ix * pixel_stride;
              for (const KeptRun& run : kept_runs_)
                widen(pixel + to_u64(run.channel) * ib, ib, run.count, out + run.at);
              for (std::int64_t j = kept_present; j < pixel_stride; ++j) out[j] = 0;
            }
            continue;
          }
          for (std::int64_t ix = 0; ix < in_w; ++ix) {
            widen(src + to_u64(ix * x.in_stride_x) * ib, ib, in_channels, dst + ix * pixel_stride);
          }
        }
      });
      image = reinterpret_cast<const std::uint8_t*>(padded_image);
      col_bytes = pixel_stride * 2;
      row_bytes = padded_w * col_bytes;
    }
    tap_offsets_.clear();
    for (std::int64_t ky = 0; ky < x.kh; ++ky)
      for (std::int64_t kx = 0; kx < x.kw; ++kx)
        tap_offsets_.push_back(ky * x.dil_h * row_bytes + kx * x.dil_w * col_bytes);
    pixel_offsets_.clear();
    slot_offsets_.clear();
    for (std::int64_t oy = 0; oy < x.out_h; ++oy)
      for (std::int64_t ox = 0; ox < x.out_w; ++ox) {
        pixel_offsets_.push_back(oy * x.stride_h * row_bytes + ox * x.stride_w * col_bytes);
        slot_offsets_.push_back((oy * x.acc_stride_y + ox * x.acc_stride_x) * 4);
      }
    const kernels::AccInit init = x.init == isa::Init::kBias  ? kernels::AccInit::kBias
                                  : x.init == isa::Init::kAcc ? kernels::AccInit::kSelf
                                                              : kernels::AccInit::kZero;
    const auto pixels = static_cast<std::int64_t>(pixel_offsets_.size());
    const auto run = [&](std::int64_t begin, std::int64_t end) {
      if (amx) {
        kernels::amx::conv_dense(image, pixel_offsets_.data() + begin, end - begin,
                                 tap_offsets_.data(), *amx, init, bias, acc,
                                 slot_offsets_.data() + begin, kept != nullptr);
        return;
      }
      kernels::conv_dense(image, pixel_offsets_.data() + begin, end - begin, tap_offsets_.data(),
                          static_cast<std::int64_t>(tap_offsets_.size()), pairs, packed,
                          out_channels, dense->block, init, bias, acc,
                          slot_offsets_.data() + begin);
    };
    // Two threads for a conv of at least ~0.5 M multiply-accumulates (a few microseconds on
    // one core; less does not pay for the hand-over), split in half.
    const std::int64_t pair_macs = pixels * taps * pairs * out_channels;
    const bool two = split_ && pair_macs >= (std::int64_t{1} << 18);
    const std::int64_t blocks = (pixels + 15) / 16;
    if (amx && two && blocks >= 2) {
      // Whole 16-pixel blocks to each thread (a tile of fewer rows costs as much as a full
      // one): blocks [begin, end) are pixels [16 begin, 16 end).
      split_->run(blocks, blocks / 2, [&](std::int64_t begin, std::int64_t end) {
        run(16 * begin, std::min(16 * end, pixels));
      });
      return;
    }
    if (two && pixels >= 12) {
      split_->run(pixels, pixels / 2, run);
    } else {
      run(0, pixels);
    }
    return;
  }

  // Depthwise: weights as int16 rows [ky][kx][o] from the packed [cb][ky][kx][c].
  packed_weights_.resize(static_cast<std::size_t>(weight_count));
  std::int64_t n = 0;
  for (std::int64_t cb = 0; cb < x.oc_blocks; ++cb)
    for (std::int64_t tap = 0; tap < taps; ++tap)
      for (std::int64_t c = 0; c < cols; ++c, ++n)
        packed_weights_[static_cast<std::size_t>(tap * out_channels + cb * cols + c)] =
            static_cast<std::int16_t>(read_element(weights + to_u64(n) * wb, wb));
  sums_.resize(static_cast<std::size_t>(out_channels));
  pixel_.resize(static_cast<std::size_t>(in_channels));
  for (std::int64_t oy = 0; oy < x.out_h; ++oy) {
    for (std::int64_t ox = 0; ox < x.out_w; ++ox) {
      std::fill(sums_.begin(), sums_.end(), 0u);
      for (std::int64_t ky = 0; ky < x.kh; ++ky) {
        const std::int64_t iy = oy * x.stride_h + ky * x.dil_h - x.pad_top;
        if (iy < 0 || iy >= in_h) continue;
        for (std::int64_t kx = 0; kx < x.kw; ++kx) {
          const std::int64_t ix = ox * x.stride_w + kx * x.dil_w - x.pad_left;
          if (ix < 0 || ix >= in_w) continue;
          widen(in + to_u64(iy * x.in_stride_y + ix * x.in_stride_x) * ib, ib, in_channels,
                pixel_.data());
          const std::int64_t tap = ky * x.kw + kx;
          kernels::accumulate_depthwise(pixel_.data(), packed_weights_.data() + tap * out_channels,
                                        out_channels, sums_.data());
        }
      }
      write_pixel(oy, ox, sums_.data());
    }
  }
}

void Datapath::execute_conv_reference(const isa::Conv& x) {
  const std::uint64_t ib = element_bytes(x.elem);
  const std::uint64_t wb = static_cast<std::uint64_t>(weight_bytes_);
  const std::int64_t rows = matrix_rows_, cols = matrix_cols_;
  const std::int64_t in_channels = std::int64_t{x.ic_blocks} * rows;
  const std::int64_t out_channels = std::int64_t{x.oc_blocks} * cols;
  const std::int64_t in_h = (std::int64_t{x.out_h} - 1) * x.stride_h +
                            (std::int64_t{x.kh} - 1) * x.dil_h + 1 - x.pad_top - x.pad_bottom;
  const std::int64_t in_w = (std::int64_t{x.out_w} - 1) * x.stride_w +
                            (std::int64_t{x.kw} - 1) * x.dil_w + 1 - x.pad_left - x.pad_right;
  const std::uint8_t* in = scratchpads_[x.in_sp].data() + x.in_addr;
  const std::uint8_t* weights = scratchpads_[x.w_sp].data() + x.w_addr;
  const std::uint8_t* bias = scratchpads_[x.w_sp].data() + x.bias_addr;
  std::uint8_t* acc = scratchpads_[x.acc_sp].data() + x.acc_addr;

  for (std::int64_t oy = 0; oy < x.out_h; ++oy) {
    for (std::int64_t ox = 0; ox < x.out_w; ++ox) {
      std::uint8_t* acc_pixel = acc + (oy * x.acc_stride_y + ox * x.acc_stride_x) * 4;
      for (std::int64_t o = 0; o < out_channels; ++o) {
        // int32 arithmetic with wrap-around (docs/isa.md), done in uint32 to be defined.
        std::uint32_t sum = 0;
        const std::int64_t ocb = o / cols, oc = o % cols;
        for (std::int64_t ky = 0; ky < x.kh; ++ky) {
          const std::int64_t iy = oy * x.stride_h + ky * x.dil_h - x.pad_top;
          if (iy < 0 || iy >= in_h) continue;
          for (std::int64_t kx = 0; kx < x.kw; ++kx) {
            const std::int64_t ix = ox * x.stride_w + kx * x.dil_w - x.pad_left;
            if (ix < 0 || ix >= in_w) continue;
            const std::uint8_t* in_pixel =
                in + static_cast<std::uint64_t>(iy * x.in_stride_y + ix * x.in_stride_x) * ib;
            if (x.depthwise) {
              // [cb][ky][kx][c]
              const std::int64_t w_index = ((ocb * x.kh + ky) * x.kw + kx) * cols + oc;
              const std::int32_t a = read_element(in_pixel + o * static_cast<std::int64_t>(ib), ib);
              const std::int32_t w =
                  read_element(weights + w_index * static_cast<std::int64_t>(wb), wb);
              sum += static_cast<std::uint32_t>(a * w);
            } else {
              for (std::int64_t i = 0; i < in_channels; ++i) {
                const std::int64_t icb = i / rows, r = i % rows;
                const std::int64_t w_index =
                    ((((ocb * x.ic_blocks + icb) * x.kh + ky) * x.kw + kx) * rows + r) * cols + oc;
                const std::int32_t a =
                    read_element(in_pixel + i * static_cast<std::int64_t>(ib), ib);
                const std::int32_t w =
                    read_element(weights + w_index * static_cast<std::int64_t>(wb), wb);
                sum += static_cast<std::uint32_t>(a * w);
              }
            }
          }
        }
        std::uint8_t* slot = acc_pixel + o * 4;
        std::uint32_t start = 0;
        if (x.init == isa::Init::kBias)
          start = static_cast<std::uint32_t>(read_element(bias + o * 4, 4));
        if (x.init == isa::Init::kAcc) start = static_cast<std::uint32_t>(read_element(slot, 4));
        write_element(slot, 4, static_cast<std::int32_t>(start + sum));
      }
    }
  }
}

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
  const intops::AddRequant q{static_cast<std::int32_t>(registers_.mult_a),
                             static_cast<std::int32_t>(registers_.mult_b),
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
