// Datapath: loops over the 3-D boxes of docs/isa.md; arithmetic from support/int_ops.hpp. This
// file: dispatch, deferred loads and the write tracking; the units' instructions are in
// datapath_dma.cpp (load, store), datapath_matrix.cpp (conv), datapath_matmul.cpp (matmul),
// datapath_vector.cpp (requant, add, pool, copy) and datapath_v3.cpp (lut, reduce, mul).
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
    scratchpads_.emplace_back(static_cast<std::size_t>(sp.size_bytes));  // zero, unwritten
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
        } else if constexpr (std::is_same_v<T, isa::Gather>) {
          execute_gather(x);
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
        } else if constexpr (std::is_same_v<T, isa::Mul>) {
          execute_mul(x);
        } else if constexpr (std::is_same_v<T, isa::Matmul>) {
          execute_matmul(x);
        } else if constexpr (std::is_same_v<T, isa::Softmax>) {
          execute_softmax(x);
        } else if constexpr (std::is_same_v<T, isa::Norm>) {
          execute_norm(x);
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
        } else if constexpr (std::is_same_v<T, isa::Mul>) {
          box(x.a_sp, x.a_addr, x.y_size, x.a_stride_y, x.x_size, x.a_stride_x, x.c_size,
              element_bytes(x.elem));
          box(x.b_sp, x.b_addr, x.y_size, x.b_stride_y, x.x_size, x.b_stride_x,
              x.b_per_pixel ? 1 : x.c_size, element_bytes(x.elem));
        } else if constexpr (std::is_same_v<T, isa::Reduce>) {
          box(x.src_sp, x.src_addr, x.y_size, x.src_stride_y, x.x_size, x.src_stride_x, x.c_size,
              element_bytes(x.elem));
        } else if constexpr (std::is_same_v<T, isa::Matmul>) {
          box(x.a_sp, x.a_addr, x.m_size, x.a_stride, 1, 0, x.k_size, element_bytes(x.elem));
          box(x.b_sp, x.b_addr, x.transpose_b ? x.n_size : x.k_size, x.b_stride, 1, 0,
              x.transpose_b ? x.k_size : x.n_size, element_bytes(x.elem));
          if (x.init == isa::Init::kBias)
            settle(x.bias_sp, x.bias_addr, x.bias_addr + 4 * std::uint64_t{x.n_size});
        } else if constexpr (std::is_same_v<T, isa::Softmax>) {
          box(x.src_sp, x.src_addr, x.y_size, x.src_stride_y, x.x_size, x.src_stride_x, x.c_size,
              element_bytes(x.elem));
          settle(x.table_sp, x.table_addr, x.table_addr + isa::kSoftmaxTableBytes);
        } else if constexpr (std::is_same_v<T, isa::Norm>) {
          box(x.src_sp, x.src_addr, x.y_size, x.src_stride_y, x.x_size, x.src_stride_x, x.c_size,
              element_bytes(x.elem));
          settle(x.param_sp, x.param_addr, x.param_addr + isa::norm_param_bytes(x.c_size));
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
        } else if constexpr (std::is_same_v<T, isa::Gather>) {
          sram(x.sp, x.sram_addr,
               box_end(x.sram_addr, x.y_size, x.sram_stride_y, 1, 0, x.c_size,
                       element_bytes(x.elem)));
        } else if constexpr (std::is_same_v<T, isa::Conv>) {
          sram(x.acc_sp, x.acc_addr,
               box_end(x.acc_addr, x.out_h, x.acc_stride_y, x.out_w, x.acc_stride_x,
                       std::uint64_t{x.oc_blocks} * static_cast<std::uint64_t>(matrix_cols), 4));
        } else if constexpr (std::is_same_v<T, isa::Matmul>) {
          sram(x.acc_sp, x.acc_addr,
               box_end(x.acc_addr, x.m_size, x.acc_stride, 1, 0, x.n_size, 4));
        } else if constexpr (std::is_same_v<T, isa::Requant>) {
          sram(x.dst_sp, x.dst_addr,
               box_end(x.dst_addr, x.y_size, x.dst_stride_y, x.x_size, x.dst_stride_x, x.c_size,
                       element_bytes(x.dst_elem)));
        } else if constexpr (std::is_same_v<T, isa::Lut>) {
          sram(x.dst_sp, x.dst_addr,
               box_end(x.dst_addr, x.y_size, x.dst_stride_y, x.x_size, x.dst_stride_x, x.c_size,
                       element_bytes(x.dst_elem)));
        } else if constexpr (std::is_same_v<T, isa::Mul> || std::is_same_v<T, isa::Softmax> ||
                             std::is_same_v<T, isa::Norm>) {
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

}  // namespace tessel::sim
