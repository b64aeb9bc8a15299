// docs/timing.md's per-instruction formulas, written once for the simulator.
#include "sim/core/costs.hpp"

#include <algorithm>
#include <type_traits>
#include <variant>

#include "isa/timing.hpp"
#include "support/int_ops.hpp"

namespace tessel::sim {
namespace {

using intops::ceil_div;

template <class Dma>
DmaWalk walk_of(const Dma& x, DramDirection direction) {
  const std::uint64_t e = element_bytes(x.elem);
  DmaWalk walk;
  walk.address = x.dram_addr;
  walk.row_stride_bytes = std::uint64_t{x.dram_stride_y} * e;
  walk.pixel_stride_bytes = std::uint64_t{x.dram_stride_x} * e;
  walk.run_bytes = std::uint64_t{x.c_size} * e;
  walk.rows = x.y_size;
  walk.pixels = x.x_size;
  walk.direction = direction;
  walk.kind = traffic_kind(x.kind);
  return walk;
}

}  // namespace

std::uint64_t element_bytes(isa::Elem elem) {
  switch (elem) {
    case isa::Elem::kI8:
      return 1;
    case isa::Elem::kI16:
      return 2;
    case isa::Elem::kI32:
      return 4;
  }
  return 1;
}

TrafficKind traffic_kind(isa::Traffic kind) {
  switch (kind) {
    case isa::Traffic::kActivations:
      return TrafficKind::kActivations;
    case isa::Traffic::kWeights:
      return TrafficKind::kWeights;
    case isa::Traffic::kOutputs:
      return TrafficKind::kOutputs;
  }
  return TrafficKind::kActivations;
}

std::uint64_t fixed_cost_cycles(const isa::Instruction& instruction, const HwConfig& config) {
  const std::uint64_t rows = static_cast<std::uint64_t>(config.matrix.rows);
  const std::uint64_t lanes = static_cast<std::uint64_t>(config.vector.lanes);
  const std::uint64_t load_rows = static_cast<std::uint64_t>(config.matrix.weight_load_rows);
  return std::visit(
      [&](const auto& x) -> std::uint64_t {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, isa::Load> || std::is_same_v<T, isa::Store>) {
          return 0;
        } else if constexpr (std::is_same_v<T, isa::Gather>) {
          return static_cast<std::uint64_t>(
              isa::timing::gather_mover_cycles(x, config.dma_mover_bytes_per_cycle()));
        } else if constexpr (std::is_same_v<T, isa::Conv>) {
          const std::uint64_t pixels = std::uint64_t{x.out_h} * x.out_w;
          const std::uint64_t kernel = std::uint64_t{x.kh} * x.kw;
          const std::uint64_t passes = x.depthwise
                                           ? x.oc_blocks * kernel
                                           : std::uint64_t{x.oc_blocks} * x.ic_blocks * kernel;
          // A block loads weight_load_rows array rows a cycle (docs/timing.md "conv").
          const std::uint64_t weight_load = x.depthwise ? 1 : ceil_div(rows, load_rows);
          return weight_load + passes * std::max(pixels, weight_load) +
                 static_cast<std::uint64_t>(config.matrix.fill_cycles) +
                 static_cast<std::uint64_t>(config.matrix.drain_cycles);
        } else if constexpr (std::is_same_v<T, isa::Matmul>) {
          // b's block loads weight_load_rows rows (of R) or, transposed, columns (of C) a cycle.
          const std::uint64_t cols = static_cast<std::uint64_t>(config.matrix.cols);
          const std::uint64_t load = ceil_div(x.transpose_b ? cols : rows, load_rows);
          const std::uint64_t passes = ceil_div(x.n_size, cols) * ceil_div(x.k_size, rows);
          return load + passes * std::max<std::uint64_t>(x.m_size, load) +
                 static_cast<std::uint64_t>(config.matrix.fill_cycles) +
                 static_cast<std::uint64_t>(config.matrix.drain_cycles);
        } else if constexpr (std::is_same_v<T, isa::Pool>) {
          return std::uint64_t{x.out_h} * x.out_w * x.kh * x.kw * ceil_div(x.c_size, lanes) +
                 kVectorPipelineCycles;
        } else if constexpr (std::is_same_v<T, isa::Requant> || std::is_same_v<T, isa::Add> ||
                             std::is_same_v<T, isa::Copy> || std::is_same_v<T, isa::Reduce> ||
                             std::is_same_v<T, isa::Mul>) {
          return std::uint64_t{x.y_size} * x.x_size * ceil_div(x.c_size, lanes) +
                 kVectorPipelineCycles;
        } else if constexpr (std::is_same_v<T, isa::Softmax>) {
          return static_cast<std::uint64_t>(
              isa::timing::softmax_cycles(x, static_cast<std::int64_t>(lanes)));
        } else if constexpr (std::is_same_v<T, isa::Norm>) {
          return static_cast<std::uint64_t>(
              isa::timing::norm_cycles(x, static_cast<std::int64_t>(lanes)));
        } else if constexpr (std::is_same_v<T, isa::Lut>) {
          // The table's 256 entries enter the unit V a cycle, then the box streams through.
          return ceil_div(256, lanes) +
                 std::uint64_t{x.y_size} * x.x_size * ceil_div(x.c_size, lanes) +
                 kVectorPipelineCycles;
        } else {
          return 1;  // nop, vcfg, finish
        }
      },
      instruction);
}

std::uint64_t mac_count(const isa::Instruction& instruction, const HwConfig& config) {
  const std::uint64_t rows = static_cast<std::uint64_t>(config.matrix.rows);
  const std::uint64_t cols = static_cast<std::uint64_t>(config.matrix.cols);
  if (const auto* matmul = std::get_if<isa::Matmul>(&instruction))
    return std::uint64_t{matmul->m_size} * ceil_div(matmul->n_size, cols) *
           ceil_div(matmul->k_size, rows) * rows * cols;
  const auto* conv = std::get_if<isa::Conv>(&instruction);
  if (!conv) return 0;
  const std::uint64_t pixels = std::uint64_t{conv->out_h} * conv->out_w;
  const std::uint64_t kernel = std::uint64_t{conv->kh} * conv->kw;
  if (conv->depthwise) return pixels * conv->oc_blocks * kernel * cols;
  return pixels * conv->oc_blocks * conv->ic_blocks * kernel * rows * cols;
}

VectorOps vector_ops(const isa::Instruction& instruction) {
  VectorOps ops;
  if (const auto* requant = std::get_if<isa::Requant>(&instruction)) {
    ops.requant_elements = std::uint64_t{requant->y_size} * requant->x_size * requant->c_size;
  } else if (const auto* add = std::get_if<isa::Add>(&instruction)) {
    ops.add_elements = std::uint64_t{add->y_size} * add->x_size * add->c_size;
  } else if (const auto* pool = std::get_if<isa::Pool>(&instruction)) {
    ops.pool_window_elements =
        std::uint64_t{pool->out_h} * pool->out_w * pool->c_size * pool->kh * pool->kw;
  } else if (const auto* lut = std::get_if<isa::Lut>(&instruction)) {
    ops.lut_bytes =
        std::uint64_t{lut->y_size} * lut->x_size * lut->c_size * element_bytes(lut->dst_elem);
  } else if (const auto* reduce = std::get_if<isa::Reduce>(&instruction)) {
    ops.reduce_elements = std::uint64_t{reduce->y_size} * reduce->x_size * reduce->c_size;
    if (reduce->mode == isa::ReduceMode::kSumsq) ops.square_elements = ops.reduce_elements;
  } else if (const auto* mul = std::get_if<isa::Mul>(&instruction)) {
    ops.mul_elements = std::uint64_t{mul->y_size} * mul->x_size * mul->c_size;
  } else if (const auto* softmax = std::get_if<isa::Softmax>(&instruction)) {
    ops.softmax_rows = std::uint64_t{softmax->y_size} * softmax->x_size;
    ops.softmax_elements = ops.softmax_rows * softmax->c_size;  // masked columns too
  } else if (const auto* norm = std::get_if<isa::Norm>(&instruction)) {
    ops.norm_rows = std::uint64_t{norm->y_size} * norm->x_size;
    ops.norm_elements = ops.norm_rows * norm->c_size;
  }
  return ops;
}

DmaWalk dma_walk(const isa::Instruction& instruction) {
  if (const auto* load = std::get_if<isa::Load>(&instruction))
    return walk_of(*load, DramDirection::kRead);
  if (const auto* store = std::get_if<isa::Store>(&instruction))
    return walk_of(*store, DramDirection::kWrite);
  if (const auto* gather = std::get_if<isa::Gather>(&instruction)) {
    const std::uint64_t e = element_bytes(gather->elem);
    DmaWalk walk;
    walk.address = gather->dram_addr;
    walk.row_stride_bytes = std::uint64_t{gather->dram_stride_y} * e;
    walk.pixel_stride_bytes = walk.run_bytes = std::uint64_t{gather->c_size} * e;
    walk.rows = gather->y_size;
    walk.pixels = 1;
    walk.direction = DramDirection::kRead;
    walk.kind = traffic_kind(gather->kind);
    walk.merge = false;
    walk.head_address = gather->ids_addr;
    walk.head_bytes = 4 * std::uint64_t{gather->y_size};
    walk.table_end = gather->dram_addr +
                     (std::uint64_t{gather->table_rows} - 1) * walk.row_stride_bytes +
                     walk.run_bytes;
    return walk;
  }
  return {};
}

void dma_requests(const isa::Instruction& instruction, std::uint64_t issue_cycle,
                  std::vector<DramRequest>& out) {
  out.clear();
  dma_walk(instruction).for_each_request(issue_cycle, [&](const DramRequest& request) {
    out.push_back(request);
  });
}

std::vector<DramRequest> dma_requests(const isa::Instruction& instruction,
                                      std::uint64_t issue_cycle) {
  std::vector<DramRequest> out;
  dma_requests(instruction, issue_cycle, out);
  return out;
}

}  // namespace tessel::sim

namespace tessel::sim {

namespace {

/// Calls out.push_back(SramTraffic) for each operand of sram_traffic(), in its order.
template <class Out>
void traffic_of(const isa::Instruction& instruction, const HwConfig& config, Out& out) {
  const std::uint64_t rows = static_cast<std::uint64_t>(config.matrix.rows);
  const std::uint64_t cols = static_cast<std::uint64_t>(config.matrix.cols);
  const std::uint64_t weight_bytes = static_cast<std::uint64_t>(config.matrix.weight_bits / 8);
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, isa::Load>) {
          const std::uint64_t padded = (std::uint64_t{x.pad_top} + x.y_size + x.pad_bottom) *
                                       (std::uint64_t{x.pad_left} + x.x_size + x.pad_right);
          out.push_back({x.sp, 0, padded * x.c_size * element_bytes(x.elem)});
        } else if constexpr (std::is_same_v<T, isa::Store>) {
          out.push_back(
              {x.sp, std::uint64_t{x.y_size} * x.x_size * x.c_size * element_bytes(x.elem), 0});
        } else if constexpr (std::is_same_v<T, isa::Gather>) {
          out.push_back({x.sp, 0, std::uint64_t{x.y_size} * x.c_size * element_bytes(x.elem)});
        } else if constexpr (std::is_same_v<T, isa::Conv>) {
          const std::uint64_t pixels = std::uint64_t{x.out_h} * x.out_w;
          const std::uint64_t kernel = std::uint64_t{x.kh} * x.kw;
          const std::uint64_t out_channels = x.oc_blocks * cols;
          const std::uint64_t passes = x.depthwise
                                           ? x.oc_blocks * kernel
                                           : std::uint64_t{x.oc_blocks} * x.ic_blocks * kernel;
          const std::uint64_t vector_elements = x.depthwise ? cols : rows;
          const std::uint64_t block_elements = x.depthwise ? cols : rows * cols;
          out.push_back({x.in_sp, pixels * passes * vector_elements * element_bytes(x.elem), 0});
          out.push_back({x.w_sp, passes * block_elements * weight_bytes, 0});
          if (x.init == isa::Init::kBias) out.push_back({x.w_sp, out_channels * 4, 0});
          const std::uint64_t acc_bytes = pixels * out_channels * 4;
          out.push_back({x.acc_sp, x.init == isa::Init::kAcc ? acc_bytes : 0, acc_bytes});
        } else if constexpr (std::is_same_v<T, isa::Matmul>) {
          // Elements read, not lanes: a's k_size per row once per column block, b once; the
          // accumulators (and the bias) once per tile, as conv counts them.
          const std::uint64_t e = element_bytes(x.elem);
          const std::uint64_t n_blocks = ceil_div(x.n_size, cols);
          const std::uint64_t acc_bytes = std::uint64_t{x.m_size} * x.n_size * 4;
          out.push_back({x.a_sp, std::uint64_t{x.m_size} * n_blocks * x.k_size * e, 0});
          out.push_back({x.b_sp, std::uint64_t{x.k_size} * x.n_size * e, 0});
          if (x.init == isa::Init::kBias)
            out.push_back({x.bias_sp, std::uint64_t{x.n_size} * 4, 0});
          out.push_back({x.acc_sp, x.init == isa::Init::kAcc ? acc_bytes : 0, acc_bytes});
        } else if constexpr (std::is_same_v<T, isa::Requant>) {
          const std::uint64_t n = std::uint64_t{x.y_size} * x.x_size * x.c_size;
          out.push_back({x.src_sp, n * 4, 0});
          if (x.per_channel) out.push_back({x.param_sp, std::uint64_t{x.c_size} * 8, 0});
          out.push_back({x.dst_sp, 0, n * element_bytes(x.dst_elem)});
        } else if constexpr (std::is_same_v<T, isa::Add>) {
          const std::uint64_t bytes =
              std::uint64_t{x.y_size} * x.x_size * x.c_size * element_bytes(x.elem);
          out.push_back({x.a_sp, bytes, 0});
          out.push_back({x.b_sp, bytes, 0});
          out.push_back({x.dst_sp, 0, bytes});
        } else if constexpr (std::is_same_v<T, isa::Mul>) {
          // b per pixel: one element a pixel, held across the pixel's chunks.
          const std::uint64_t n = std::uint64_t{x.y_size} * x.x_size * x.c_size;
          const std::uint64_t b = x.b_per_pixel ? std::uint64_t{x.y_size} * x.x_size : n;
          out.push_back({x.a_sp, n * element_bytes(x.elem), 0});
          out.push_back({x.b_sp, b * element_bytes(x.elem), 0});
          out.push_back({x.dst_sp, 0, n * element_bytes(x.dst_elem)});
        } else if constexpr (std::is_same_v<T, isa::Pool>) {
          const std::uint64_t e = element_bytes(x.elem);
          const std::uint64_t outputs = std::uint64_t{x.out_h} * x.out_w * x.c_size;
          out.push_back({x.src_sp, outputs * x.kh * x.kw * e, 0});
          out.push_back({x.dst_sp, 0, outputs * e});
        } else if constexpr (std::is_same_v<T, isa::Copy>) {
          const std::uint64_t bytes =
              std::uint64_t{x.y_size} * x.x_size * x.c_size * element_bytes(x.elem);
          out.push_back({x.src_sp, bytes, 0});
          out.push_back({x.dst_sp, 0, bytes});
        } else if constexpr (std::is_same_v<T, isa::Lut>) {
          const std::uint64_t n = std::uint64_t{x.y_size} * x.x_size * x.c_size;
          out.push_back({x.table_sp, 256 * element_bytes(x.dst_elem), 0});
          out.push_back({x.src_sp, n, 0});
          out.push_back({x.dst_sp, 0, n * element_bytes(x.dst_elem)});
        } else if constexpr (std::is_same_v<T, isa::Softmax>) {
          // Three reads of every row (max, sum of exp, normalise), one write.
          const std::uint64_t n = std::uint64_t{x.y_size} * x.x_size * x.c_size;
          out.push_back({x.table_sp, static_cast<std::uint64_t>(isa::kSoftmaxTableBytes), 0});
          out.push_back({x.src_sp, 3 * n * element_bytes(x.elem), 0});
          out.push_back({x.dst_sp, 0, n * element_bytes(x.dst_elem)});
        } else if constexpr (std::is_same_v<T, isa::Norm>) {
          // Two reads of every row (statistics, normalise); E and a channel's (G, r, B) once a row.
          const std::uint64_t pixels = std::uint64_t{x.y_size} * x.x_size;
          const std::uint64_t n = pixels * x.c_size;
          out.push_back({x.param_sp,
                         pixels * static_cast<std::uint64_t>(isa::norm_param_bytes(x.c_size)), 0});
          out.push_back({x.src_sp, 2 * n * element_bytes(x.elem), 0});
          out.push_back({x.dst_sp, 0, n * element_bytes(x.dst_elem)});
        } else if constexpr (std::is_same_v<T, isa::Reduce>) {
          const std::uint64_t pixels = std::uint64_t{x.y_size} * x.x_size;
          out.push_back({x.src_sp, pixels * x.c_size * element_bytes(x.elem), 0});
          out.push_back({x.dst_sp, 0, pixels * 4});
        }
      },
      instruction);
}

/// A fixed array with push_back: counts every entry, keeps the first out.size().
struct TrafficSpan {
  std::span<SramTraffic> out;
  std::size_t count = 0;
  void push_back(const SramTraffic& t) {
    if (count < out.size()) out[count] = t;
    ++count;
  }
};

}  // namespace

void sram_traffic(const isa::Instruction& instruction, const HwConfig& config,
                  std::vector<SramTraffic>& out) {
  out.clear();
  traffic_of(instruction, config, out);
}

std::size_t sram_traffic(const isa::Instruction& instruction, const HwConfig& config,
                         std::span<SramTraffic> out) {
  TrafficSpan span{out};
  traffic_of(instruction, config, span);
  return span.count;
}

std::vector<SramTraffic> sram_traffic(const isa::Instruction& instruction, const HwConfig& config) {
  std::vector<SramTraffic> out;
  sram_traffic(instruction, config, out);
  return out;
}

}  // namespace tessel::sim
