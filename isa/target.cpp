// SRAM operand extents of every instruction and their validation against a target.
#include "isa/target.hpp"

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <type_traits>

namespace tessel::isa {
namespace {

using K = SramKind;

std::int64_t elem_bytes(Elem elem) {
  switch (elem) {
    case Elem::kI8:
      return 1;
    case Elem::kI16:
      return 2;
    case Elem::kI32:
      break;
  }
  return 4;
}

/// Byte just past the last element of a y x x x c box (non-negative strides).
std::int64_t box_end(std::int64_t addr, std::int64_t ny, std::int64_t nx, std::int64_t nc,
                     std::int64_t stride_y, std::int64_t stride_x, std::int64_t bytes) {
  return addr + ((ny - 1) * stride_y + (nx - 1) * stride_x + nc) * bytes;
}

/// Scratchpad kinds as bits (1 << kind): an operand's admissible kinds without an allocation.
using KindMask = std::uint8_t;

constexpr KindMask mask(std::initializer_list<SramKind> kinds) {
  KindMask out = 0;
  for (const SramKind k : kinds) out = static_cast<KindMask>(out | (1u << static_cast<int>(k)));
  return out;
}

/// One SRAM operand as sram_accesses() describes it, with its kinds as a mask (the kinds of
/// every operand are listed in SramKind order, so the mask keeps their order too).
struct Access {
  std::string_view sp_field;
  std::string_view addr_field;
  std::uint32_t sp = 0;
  std::int64_t begin = 0;
  std::int64_t end = 0;
  bool is_write = false;
  KindMask kinds = 0;
};

Access box(std::string_view sp_field, std::string_view addr_field, std::uint32_t sp,
           std::int64_t addr, std::int64_t ny, std::int64_t nx, std::int64_t nc,
           std::int64_t stride_y, std::int64_t stride_x, std::int64_t bytes, bool is_write,
           KindMask kinds) {
  return {sp_field, addr_field, sp, addr, box_end(addr, ny, nx, nc, stride_y, stride_x, bytes),
          is_write, kinds};
}

std::int64_t stored(std::int64_t out, std::int64_t stride, std::int64_t kernel,
                    std::int64_t dilation, std::int64_t pad_before, std::int64_t pad_after) {
  return (out - 1) * stride + (kernel - 1) * dilation + 1 - pad_before - pad_after;
}

std::string hex(std::int64_t value) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace

std::string_view to_string(SramKind kind) {
  switch (kind) {
    case SramKind::kActivations:
      return "activations";
    case SramKind::kWeights:
      return "weights";
    case SramKind::kAccumulators:
      return "accumulators";
    case SramKind::kOutputs:
      break;
  }
  return "outputs";
}

bool ScratchpadInfo::may_hold(SramKind kind) const {
  return std::find(holds.begin(), holds.end(), kind) != holds.end();
}

std::string format_size(std::int64_t bytes) {
  if (bytes >= (1 << 20) && bytes % (1 << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

namespace {

/// Calls `f(const Access&)` for every SRAM operand of `instruction`, in sram_accesses() order.
template <class F>
void for_each_access(const Instruction& instruction, int matrix_rows, int matrix_cols,
                     int weight_bits, F&& f) {
  const std::int64_t rows = matrix_rows, cols = matrix_cols;
  const std::int64_t weight_bytes = weight_bits / 8;
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Load>) {
          const KindMask kinds = x.kind == Traffic::kWeights ? mask({K::kWeights})
                                 : x.kind == Traffic::kActivations
                                     ? mask({K::kActivations, K::kAccumulators, K::kOutputs})
                                     : mask({K::kActivations, K::kOutputs});
          f(box("sp", "sram_addr", x.sp, x.sram_addr, x.pad_top + x.y_size + x.pad_bottom,
                x.pad_left + x.x_size + x.pad_right, x.c_size, x.sram_stride_y, x.sram_stride_x,
                elem_bytes(x.elem), true, kinds));
        } else if constexpr (std::is_same_v<T, Gather>) {
          // The gathered rows are an activation whatever their DRAM bytes count as.
          f(box("sp", "sram_addr", x.sp, x.sram_addr, x.y_size, 1, x.c_size, x.sram_stride_y,
                x.c_size, elem_bytes(x.elem), true, mask({K::kActivations, K::kOutputs})));
        } else if constexpr (std::is_same_v<T, Store>) {
          const KindMask kinds = x.kind == Traffic::kWeights
                                     ? mask({K::kWeights})
                                     : mask({K::kActivations, K::kAccumulators, K::kOutputs});
          f(box("sp", "sram_addr", x.sp, x.sram_addr, x.y_size, x.x_size, x.c_size, x.sram_stride_y,
                x.sram_stride_x, elem_bytes(x.elem), false, kinds));
        } else if constexpr (std::is_same_v<T, Conv>) {
          const std::int64_t out_channels = x.oc_blocks * cols;
          const std::int64_t in_channels = x.depthwise ? out_channels : x.ic_blocks * rows;
          const std::int64_t in_h =
              stored(x.out_h, x.stride_h, x.kh, x.dil_h, x.pad_top, x.pad_bottom);
          const std::int64_t in_w =
              stored(x.out_w, x.stride_w, x.kw, x.dil_w, x.pad_left, x.pad_right);
          f(box("in_sp", "in_addr", x.in_sp, x.in_addr, in_h, in_w, in_channels, x.in_stride_y,
                x.in_stride_x, elem_bytes(x.elem), false, mask({K::kActivations})));
          const std::int64_t weight_elements =
              x.depthwise ? x.oc_blocks * x.kh * x.kw * cols
                          : x.oc_blocks * x.ic_blocks * x.kh * x.kw * rows * cols;
          f(Access{"w_sp", "w_addr", x.w_sp, x.w_addr, x.w_addr + weight_elements * weight_bytes,
                   false, mask({K::kWeights})});
          if (x.init == Init::kBias)
            f(Access{"w_sp", "bias_addr", x.w_sp, x.bias_addr, x.bias_addr + out_channels * 4,
                     false, mask({K::kWeights})});
          if (x.init == Init::kAcc)
            f(box("acc_sp", "acc_addr", x.acc_sp, x.acc_addr, x.out_h, x.out_w, out_channels,
                  x.acc_stride_y, x.acc_stride_x, 4, false, mask({K::kAccumulators})));
          f(box("acc_sp", "acc_addr", x.acc_sp, x.acc_addr, x.out_h, x.out_w, out_channels,
                x.acc_stride_y, x.acc_stride_x, 4, true, mask({K::kAccumulators})));
        } else if constexpr (std::is_same_v<T, Matmul>) {
          // a: m_size rows of k_size; b: k_size rows of n_size, or n_size rows of k_size when
          // read transposed; the accumulators m_size rows of n_size (exactly the result box:
          // columns past n_size are neither read nor written).
          const auto bytes = elem_bytes(x.elem);
          const KindMask operand = mask({K::kActivations, K::kOutputs});
          f(box("a_sp", "a_addr", x.a_sp, x.a_addr, x.m_size, 1, x.k_size, x.a_stride, 0, bytes,
                false, operand));
          f(box("b_sp", "b_addr", x.b_sp, x.b_addr, x.transpose_b ? x.n_size : x.k_size, 1,
                x.transpose_b ? x.k_size : x.n_size, x.b_stride, 0, bytes, false, operand));
          if (x.init == Init::kBias)
            f(Access{"bias_sp", "bias_addr", x.bias_sp, x.bias_addr,
                     x.bias_addr + std::int64_t{x.n_size} * 4, false,
                     mask({K::kWeights, K::kAccumulators})});
          if (x.init == Init::kAcc)
            f(box("acc_sp", "acc_addr", x.acc_sp, x.acc_addr, x.m_size, 1, x.n_size, x.acc_stride,
                  0, 4, false, mask({K::kAccumulators})));
          f(box("acc_sp", "acc_addr", x.acc_sp, x.acc_addr, x.m_size, 1, x.n_size, x.acc_stride, 0,
                4, true, mask({K::kAccumulators})));
        } else if constexpr (std::is_same_v<T, Requant>) {
          f(box("src_sp", "src_addr", x.src_sp, x.src_addr, x.y_size, x.x_size, x.c_size,
                x.src_stride_y, x.src_stride_x, 4, false, mask({K::kAccumulators})));
          if (x.per_channel)
            f(Access{"param_sp", "param_addr", x.param_sp, x.param_addr,
                     x.param_addr + std::int64_t{x.c_size} * 8, false,
                     mask({K::kWeights, K::kAccumulators})});
          f(box("dst_sp", "dst_addr", x.dst_sp, x.dst_addr, x.y_size, x.x_size, x.c_size,
                x.dst_stride_y, x.dst_stride_x, elem_bytes(x.dst_elem), true,
                mask({K::kActivations, K::kOutputs})));
        } else if constexpr (std::is_same_v<T, Add>) {
          const auto bytes = elem_bytes(x.elem);
          f(box("a_sp", "a_addr", x.a_sp, x.a_addr, x.y_size, x.x_size, x.c_size, x.a_stride_y,
                x.a_stride_x, bytes, false, mask({K::kActivations, K::kOutputs})));
          // b may be a constant loaded like a table (sched::Op::constant_operand), as mul's.
          f(box("b_sp", "b_addr", x.b_sp, x.b_addr, x.y_size, x.x_size, x.c_size, x.b_stride_y,
                x.b_stride_x, bytes, false, mask({K::kActivations, K::kOutputs, K::kWeights})));
          f(box("dst_sp", "dst_addr", x.dst_sp, x.dst_addr, x.y_size, x.x_size, x.c_size,
                x.dst_stride_y, x.dst_stride_x, bytes, true, mask({K::kActivations, K::kOutputs})));
        } else if constexpr (std::is_same_v<T, Pool>) {
          const auto bytes = elem_bytes(x.elem);
          const std::int64_t in_h = stored(x.out_h, x.stride_h, x.kh, 1, x.pad_top, x.pad_bottom);
          const std::int64_t in_w = stored(x.out_w, x.stride_w, x.kw, 1, x.pad_left, x.pad_right);
          f(box("src_sp", "src_addr", x.src_sp, x.src_addr, in_h, in_w, x.c_size, x.src_stride_y,
                x.src_stride_x, bytes, false, mask({K::kActivations, K::kOutputs})));
          f(box("dst_sp", "dst_addr", x.dst_sp, x.dst_addr, x.out_h, x.out_w, x.c_size,
                x.dst_stride_y, x.dst_stride_x, bytes, true, mask({K::kActivations, K::kOutputs})));
        } else if constexpr (std::is_same_v<T, Lut>) {
          const auto out = elem_bytes(x.dst_elem);
          f(box("src_sp", "src_addr", x.src_sp, x.src_addr, x.y_size, x.x_size, x.c_size,
                x.src_stride_y, x.src_stride_x, 1, false, mask({K::kActivations, K::kOutputs})));
          f(Access{"table_sp", "table_addr", x.table_sp, x.table_addr,
                   x.table_addr + 256 * static_cast<std::int64_t>(out), false,
                   mask({K::kWeights, K::kAccumulators})});
          f(box("dst_sp", "dst_addr", x.dst_sp, x.dst_addr, x.y_size, x.x_size, x.c_size,
                x.dst_stride_y, x.dst_stride_x, out, true, mask({K::kActivations, K::kOutputs})));
        } else if constexpr (std::is_same_v<T, Mul>) {
          // b: one element per pixel (b_per_pixel), else a box like a's (strides 0: per channel).
          const auto bytes = elem_bytes(x.elem);
          f(box("a_sp", "a_addr", x.a_sp, x.a_addr, x.y_size, x.x_size, x.c_size, x.a_stride_y,
                x.a_stride_x, bytes, false, mask({K::kActivations, K::kOutputs})));
          f(box("b_sp", "b_addr", x.b_sp, x.b_addr, x.y_size, x.x_size,
                x.b_per_pixel ? 1 : x.c_size, x.b_stride_y, x.b_stride_x, bytes, false,
                mask({K::kActivations, K::kOutputs, K::kWeights})));
          f(box("dst_sp", "dst_addr", x.dst_sp, x.dst_addr, x.y_size, x.x_size, x.c_size,
                x.dst_stride_y, x.dst_stride_x, elem_bytes(x.dst_elem), true,
                mask({K::kActivations, K::kOutputs})));
        } else if constexpr (std::is_same_v<T, Softmax>) {
          f(box("src_sp", "src_addr", x.src_sp, x.src_addr, x.y_size, x.x_size, x.c_size,
                x.src_stride_y, x.src_stride_x, elem_bytes(x.elem), false,
                mask({K::kActivations, K::kOutputs})));
          f(Access{"table_sp", "table_addr", x.table_sp, x.table_addr,
                   x.table_addr + kSoftmaxTableBytes, false,
                   mask({K::kWeights, K::kAccumulators})});
          f(box("dst_sp", "dst_addr", x.dst_sp, x.dst_addr, x.y_size, x.x_size, x.c_size,
                x.dst_stride_y, x.dst_stride_x, elem_bytes(x.dst_elem), true,
                mask({K::kActivations, K::kOutputs})));
        } else if constexpr (std::is_same_v<T, Norm>) {
          f(box("src_sp", "src_addr", x.src_sp, x.src_addr, x.y_size, x.x_size, x.c_size,
                x.src_stride_y, x.src_stride_x, elem_bytes(x.elem), false,
                mask({K::kActivations, K::kOutputs})));
          f(Access{"param_sp", "param_addr", x.param_sp, x.param_addr,
                   x.param_addr + norm_param_bytes(x.c_size), false,
                   mask({K::kWeights, K::kAccumulators})});
          f(box("dst_sp", "dst_addr", x.dst_sp, x.dst_addr, x.y_size, x.x_size, x.c_size,
                x.dst_stride_y, x.dst_stride_x, elem_bytes(x.dst_elem), true,
                mask({K::kActivations, K::kOutputs})));
        } else if constexpr (std::is_same_v<T, Reduce>) {
          f(box("src_sp", "src_addr", x.src_sp, x.src_addr, x.y_size, x.x_size, x.c_size,
                x.src_stride_y, x.src_stride_x, elem_bytes(x.elem), false,
                mask({K::kActivations, K::kOutputs})));
          f(box("dst_sp", "dst_addr", x.dst_sp, x.dst_addr, x.y_size, x.x_size, 1, x.dst_stride_y,
                x.dst_stride_x, 4, true, mask({K::kAccumulators})));
        } else if constexpr (std::is_same_v<T, Copy>) {
          const auto bytes = elem_bytes(x.elem);
          const KindMask any = mask({K::kActivations, K::kWeights, K::kAccumulators, K::kOutputs});
          f(box("src_sp", "src_addr", x.src_sp, x.src_addr, x.y_size, x.x_size, x.c_size,
                x.src_stride_y, x.src_stride_x, bytes, false, any));
          f(box("dst_sp", "dst_addr", x.dst_sp, x.dst_addr, x.y_size, x.x_size, x.c_size,
                x.dst_stride_y, x.dst_stride_x, bytes, true, any));
        }
      },
      instruction);
}

}  // namespace

std::vector<SramAccess> sram_accesses(const Instruction& instruction, int matrix_rows,
                                      int matrix_cols, int weight_bits) {
  std::vector<SramAccess> out;
  for_each_access(instruction, matrix_rows, matrix_cols, weight_bits, [&](const Access& a) {
    std::vector<SramKind> kinds;
    for (int k = 0; k < 4; ++k)
      if (a.kinds & (1u << k)) kinds.push_back(static_cast<SramKind>(k));
    out.push_back({a.sp_field, a.addr_field, a.sp, a.begin, a.end, a.is_write, std::move(kinds)});
  });
  return out;
}

namespace {

/// The first problem of one operand: its scratchpad exists, may hold the operand's kind, and
/// holds its bytes. The messages are built only for a failing operand.
std::optional<FieldProblem> check_access(const Access& access, const TargetInfo& target) {
  if (access.sp >= target.scratchpads.size()) {
    std::string names;
    for (const auto& s : target.scratchpads) names += (names.empty() ? "" : ", ") + s.name;
    return FieldProblem{std::string(access.sp_field),
                        "field '" + std::string(access.sp_field) + "' = " +
                            std::to_string(access.sp) + ": no such scratchpad (the config has " +
                            std::to_string(target.scratchpads.size()) + ": " + names + ")"};
  }
  const ScratchpadInfo& pad = target.scratchpads[access.sp];
  bool may_hold = false;
  for (const SramKind k : pad.holds)
    if ((access.kinds >> static_cast<int>(k)) & 1u) may_hold = true;
  if (!may_hold) {
    std::string kinds;
    for (int k = 0; k < 4; ++k)
      if (access.kinds & (1u << k))
        kinds += std::string(kinds.empty() ? "" : " or ") +
                 std::string(to_string(static_cast<SramKind>(k)));
    return FieldProblem{std::string(access.sp_field), "field '" + std::string(access.sp_field) +
                                                          "' = " + pad.name +
                                                          ": the scratchpad may not hold " + kinds};
  }
  if (access.begin < pad.size_bytes && access.end <= pad.size_bytes) return std::nullopt;
  const std::string field = "field '" + std::string(access.addr_field) + "' = " + hex(access.begin);
  const std::string where = "scratchpad '" + pad.name + "' (" + format_size(pad.size_bytes) + ")";
  if (access.begin >= pad.size_bytes)
    return FieldProblem{std::string(access.addr_field), field + " beyond " + where};
  return FieldProblem{
      std::string(access.addr_field),
      field + ": the operand's last byte " + hex(access.end - 1) + " is beyond " + where};
}

}  // namespace

std::optional<FieldProblem> validate(const Instruction& instruction, const TargetInfo& target) {
  if (const auto* conv = std::get_if<Conv>(&instruction)) {
    const int bits = conv->elem == Elem::kI8 ? 8 : 16;
    if (bits != target.input_bits)
      return FieldProblem{
          "elem", "field 'elem' = " + std::string(kElemNames[static_cast<int>(conv->elem)]) +
                      " but the matrix unit takes " + std::to_string(target.input_bits) +
                      "-bit inputs (matrix.input_bits)"};
  }
  if (const auto* matmul = std::get_if<Matmul>(&instruction)) {
    if (!target.activation_operands)
      return FieldProblem{"opcode",
                          "opcode 'matmul' needs a matrix unit that takes both operands from "
                          "activations, which this config lacks (matrix.activation_operands: "
                          "true)"};
    const int bits = matmul->elem == Elem::kI8 ? 8 : 16;
    if (bits != target.input_bits)
      return FieldProblem{
          "elem", "field 'elem' = " + std::string(kElemNames[static_cast<int>(matmul->elem)]) +
                      " but the matrix unit takes " + std::to_string(target.input_bits) +
                      "-bit inputs (matrix.input_bits)"};
  }
  if (std::holds_alternative<Lut>(instruction) && !target.lookup_table)
    return FieldProblem{"opcode",
                        "opcode 'lut' needs a vector unit with a lookup table, which this config "
                        "lacks (vector.lookup_table: true)"};
  if (std::holds_alternative<Reduce>(instruction) && !target.row_reduce)
    return FieldProblem{"opcode",
                        "opcode 'reduce' needs a vector unit with row reductions, which this "
                        "config lacks (vector.row_reduce: true)"};
  if (std::holds_alternative<Mul>(instruction) && !target.broadcast_multiply)
    return FieldProblem{"opcode",
                        "opcode 'mul' needs a vector unit with a broadcast multiplier, which this "
                        "config lacks (vector.broadcast_multiply: true)"};
  if ((std::holds_alternative<Softmax>(instruction) || std::holds_alternative<Norm>(instruction)) &&
      !target.row_normalise)
    return FieldProblem{"opcode", "opcode '" + std::string(mnemonic(instruction)) +
                                      "' needs a vector unit with row normalisation, which this "
                                      "config lacks (vector.row_normalise: true)"};
  if (const auto* gather = std::get_if<Gather>(&instruction);
      gather && target.dram_burst_bytes > 0) {
    // The rows start on bursts, so that a row's bursts (and the timing) do not depend on its id.
    const std::int64_t burst = target.dram_burst_bytes;
    const std::int64_t row_bytes =
        std::int64_t{gather->dram_stride_y} * static_cast<std::int64_t>(elem_bytes(gather->elem));
    if (static_cast<std::int64_t>(gather->dram_addr % static_cast<std::uint64_t>(burst)) != 0)
      return FieldProblem{
          "dram_addr", "field 'dram_addr' = " + hex(static_cast<std::int64_t>(gather->dram_addr)) +
                           ": a gather's table starts on a DRAM burst (" + std::to_string(burst) +
                           " bytes)"};
    if (row_bytes % burst != 0)
      return FieldProblem{"dram_stride_y",
                          "field 'dram_stride_y' = " + std::to_string(gather->dram_stride_y) +
                              ": a gather's table rows are whole DRAM bursts apart (" +
                              std::to_string(row_bytes) + " bytes, burst " + std::to_string(burst) +
                              ")"};
  }
  // Allocation-free unless a check fails: validate runs once per simulated instruction.
  std::optional<FieldProblem> problem;
  for_each_access(instruction, target.matrix_rows, target.matrix_cols, target.weight_bits,
                  [&](const Access& access) {
                    if (!problem) problem = check_access(access, target);
                  });
  if (problem) return problem;
  return std::nullopt;
}

}  // namespace tessel::isa
