// The lowering of scheduled groups to ISA instructions and the DRAM image: the `Lowering` class
// that codegen.cpp's compile() runs, shared by the files that implement it (docs/codegen.md).
// Internal to codegen/: nothing outside this folder includes it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "codegen/codegen.hpp"
#include "codegen/emitter.hpp"
#include "compiler/ir/graph.hpp"
#include "configs/hw_config.hpp"
#include "isa/program.hpp"
#include "scheduler/loop_nest.hpp"
#include "scheduler/machine.hpp"
#include "scheduler/shape.hpp"
#include "scheduler/weight_loads.hpp"
#include "support/int_ops.hpp"
#include "support/result.hpp"

namespace tessel::codegen::detail {

using sched::Box;
using std::int64_t;

using intops::ceil_div;

/// Where an activation tile lives on chip: buffer offset, the box it holds, HWC strides.
struct TileView {
  int sp = 0;
  int64_t offset = 0;
  Box box;
  int64_t pixel_elems = 0;  ///< x stride in elements
  int64_t element_bytes = 1;
  int64_t stride_y() const { return box.w.size() * pixel_elems; }
  /// Byte address of element (y, x, c) in absolute tensor coordinates.
  int64_t addr(int64_t y, int64_t x, int64_t c) const {
    return offset + ((y - box.h.b) * stride_y() + (x - box.w.b) * pixel_elems + (c - box.c.b)) *
                        element_bytes;
  }
};

/// Sets the source and destination fields that every one-source vector instruction over an
/// H x W x C box shares (`lut`, `norm`, ...: the generated structs name them alike): scratchpads,
/// the box's first element in `in` and `out`, its sizes and the HWC strides.
template <class Insn>
void set_box_operands(Insn& insn, const TileView& in, const TileView& out, const Box& box) {
  insn.src_sp = static_cast<std::uint32_t>(in.sp);
  insn.dst_sp = static_cast<std::uint32_t>(out.sp);
  insn.src_addr = static_cast<std::uint32_t>(in.addr(box.h.b, box.w.b, box.c.b));
  insn.dst_addr = static_cast<std::uint32_t>(out.addr(box.h.b, box.w.b, box.c.b));
  insn.y_size = static_cast<std::uint32_t>(box.h.size());
  insn.x_size = static_cast<std::uint32_t>(box.w.size());
  insn.c_size = static_cast<std::uint32_t>(box.c.size());
  insn.src_stride_y = static_cast<std::uint32_t>(in.stride_y());
  insn.src_stride_x = static_cast<std::uint32_t>(in.pixel_elems);
  insn.dst_stride_y = static_cast<std::uint32_t>(out.stride_y());
  insn.dst_stride_x = static_cast<std::uint32_t>(out.pixel_elems);
}

/// Sets the operand `a` and destination fields that the two-source vector instructions (`add`,
/// `mul`) share, for an `x_size x c_size` slab of `box` (its rows and first addresses are set
/// per row portion by the caller): scratchpads, sizes and HWC strides.
template <class Insn>
void set_a_dst_strides(Insn& insn, const TileView& a, const TileView& out, const Box& box) {
  insn.a_sp = static_cast<std::uint32_t>(a.sp);
  insn.dst_sp = static_cast<std::uint32_t>(out.sp);
  insn.x_size = static_cast<std::uint32_t>(box.w.size());
  insn.c_size = static_cast<std::uint32_t>(box.c.size());
  insn.a_stride_y = static_cast<std::uint32_t>(a.stride_y());
  insn.a_stride_x = static_cast<std::uint32_t>(a.pixel_elems);
  insn.dst_stride_y = static_cast<std::uint32_t>(out.stride_y());
  insn.dst_stride_x = static_cast<std::uint32_t>(out.pixel_elems);
}

/// The `vcfg` of a one-multiplier requantizer (`mul`, pools, softmax, matmul outputs): M, r, z
/// and the clamp bounds of `p`.
isa::Vcfg requant_vcfg(const intops::Requant& p);

/// A one-operand vector `add` (a = b; the `vcfg` before it sets the map): the box of `rows x
/// cols x channels` elements at (y, x, in_c) of `in` to (y, x, out_c) of `out`. Copies (halo
/// rows, concat slices) and ReLU/Clip are this instruction.
isa::Add unary_add(const TileView& in, const TileView& out, isa::Elem elem, int64_t y, int64_t x,
                   int64_t in_c, int64_t out_c, int64_t rows, int64_t cols, int64_t channels);

/// The largest value field `field` of opcode `opcode` takes, from the generated ISA table
/// (isa/isa_table.yaml), so limits follow the table rather than literals here.
int64_t field_max(std::string_view opcode, std::string_view field);

/// Sets token flags on whichever instruction `instruction` holds.
template <class F>
void set_flag(isa::Instruction& instruction, F f) {
  std::visit([&](auto& x) { f(x); }, instruction);
}

/// A Conv or Gemm as the matrix unit sees it. A Gemm is a 1x1 conv of one output pixel over
/// its input as stored: the whole `C x H x W` input is one pixel of `K = C*H*W` channels in
/// HWC order (the bytes of the NHWC tensor in DRAM), so reduction index `k = (y*W + x)*C + c`
/// maps to ONNX's NCHW flatten index `c*H*W + y*W + x` (docs/codegen.md, "Gemm").
struct MatrixOp {
  const ir::Op* op = nullptr;            ///< the integer IR Conv or Gemm
  int64_t co = 0, ci = 0;                ///< output channels, input channels (per group; Gemm: K)
  int64_t kh = 1, kw = 1;                ///< kernel (Gemm: 1 x 1)
  int64_t in_c = 1, in_h = 1, in_w = 1;  ///< Gemm: the stored input's shape (K = product)
  bool depthwise = false;
  /// A grouped (not depthwise) conv: `groups` groups of ci inputs and co / groups outputs, run
  /// `pack` groups per conv instruction, block-diagonally (pack > 1, or one group narrower than
  /// C), or a conv instruction per group (docs/codegen.md, "Grouped convolution").
  int64_t groups = 1, pack = 1;
  bool block_diagonal = false;
  /// Output channels one conv instruction computes (a grouped conv's unit; co otherwise).
  int64_t unit_out() const { return groups > 1 ? co / groups * pack : co; }
  /// A grouped conv's unit for sched::column_blocks; 0 for every other op.
  int64_t unit() const { return groups > 1 ? unit_out() : 0; }
  bool gemm = false;
  bool trans_b = false;
  /// A token-wise Linear (a Gemm over [S, K] rows, docs/scheduler-transformers.md "Transformers"):
  /// a 1x1 conv, weight (o, i) at [o][i] (transB) or [i][o].
  bool token_linear = false;
  const ir::Tensor* weights = nullptr;
  const ir::Tensor* bias = nullptr;  ///< nullptr without one
  /// A conv over a space-to-depth input (sched::SpaceToDepthConv; channels 0: none): ci, kh
  /// and kw are the rewritten conv's, `weights` the original's.
  sched::SpaceToDepthConv s2d;
  /// Weights as stored and loaded: co x ci x kh x kw (Gemm: K x N).
  int64_t weight_count() const { return co * ci * kh * kw; }
  /// Integer weight of output channel o, input channel i, kernel position (y, x).
  std::int32_t weight(int64_t o, int64_t i, int64_t y, int64_t x) const {
    if (s2d.channels > 0) {  // channel (f a + b) C + k at (y, x): original k at (f y + a, f x + b)
      const int64_t at = s2d.original_weight(o, i, y, x);
      return at < 0 ? 0 : weights->int_values[static_cast<size_t>(at)];
    }
    if (token_linear)
      return weights->int_values[static_cast<size_t>(trans_b ? o * ci + i : i * co + o)];
    if (!gemm) return weights->int_values[static_cast<size_t>(((o * ci + i) * kh + y) * kw + x)];
    const int64_t pixel = i / in_c, c = i % in_c;                       // HWC order on chip
    const int64_t k = (c * in_h + pixel / in_w) * in_w + pixel % in_w;  // NCHW flatten order
    return weights->int_values[static_cast<size_t>(trans_b ? o * ci + k : k * co + o)];
  }
};

/// Where one output-channel slice of a matrix op's packed weights, bias and requant table live
/// on chip. A channel-tiled op has one slice per channel tile, each packed on its own (whole
/// R x C blocks from the slice's first channel), so a tile's conv needs no column offset.
struct SliceParams {
  sched::Interval channels;
  int64_t dram_weights = 0;  ///< DRAM offset of the slice's compact weights
  int64_t w_addr = 0, bias_addr = 0, table_addr = 0;
};

/// A matrix op's on-chip parameters: the scratchpad and every slice.
struct ConvParams {
  int sp = 0;
  bool has_bias = false;
  std::vector<SliceParams> slices;
  /// Double-buffered streamed weights: the second copy's byte distance from the first (0 when
  /// the weights have one copy).
  int64_t copy1_delta = 0;
  /// Input blocks per reduction chunk (docs/codegen.md, "Reduction chunks"): all of the
  /// op's input blocks, unless the schedule chunks a streamed Gemm's or conv's reduction. Then each
  /// slice's blocks go through the buffer one chunk at a time, accumulated in place.
  int64_t chunk_blocks = 1;
  int64_t chunks = 1;  ///< reduction chunks per slice
};

/// The one or two buffers a matrix op's weight slices go through (Lowering::weight_copies).
struct WeightCopies {
  const sched::BufferAlloc* copy[2] = {nullptr, nullptr};  ///< copy 1: nullptr when one copy
  bool shared = false;  ///< a weight sweep's pair, shared by its convs
};

/// One load-then-compute step of a tile. A tile is one phase, or, with reduction chunks,
/// one phase per chunk: chunk k's weights load once chunk k-1's conv has read the buffer.
struct Phase {
  std::vector<isa::Instruction> loads, compute;
};

class Lowering;

/// Emits one op of a tile (a vector op): its instructions for the box `need` holds of its output,
/// appended to `code`.
using VectorEmit = Status (Lowering::*)(const sched::GroupSchedule& gs, const sched::Op& op,
                                        const std::vector<Box>& need,
                                        std::vector<isa::Instruction>& code);

/// How the lowering emits an op kind (registered by kind in vector_ops.cpp's table, as policies
/// are by name in scheduler/policy.cpp). A kind with no entry is not supported by codegen.
struct OpEmitter {
  sched::OpKind kind = sched::OpKind::Input;
  /// A matrix op (Conv, Gemm): weight slices placed per group (place_conv), loaded per step
  /// (emit_conv_loads), its conv and requant steps emitted by emit_conv into the tile's phases.
  bool matrix = false;
  VectorEmit emit = nullptr;  ///< the others: emitted into the tile's last compute phase
  /// Runs per output-channel slice in a weight sweep (after the slice's conv).
  bool per_slice = false;
};

/// One step of a group's loop nest: a tile of a tile-major nest (halo copies before it, its
/// load/compute phases, one or one per Gemm reduction chunk, its stores), or a slice phase of a
/// weight sweep (one phase; the stores of the outputs it completes, perhaps none).
struct TileCode {
  std::vector<isa::Instruction> prelude;
  std::vector<Phase> phases;
  std::vector<isa::Instruction> stores;
};

/// How a tiled group runs (lower_group): streamed weights, halo caching, double buffering,
/// and which inputs stay on chip from the first tile (GroupSchedule::keeps_inputs).
struct GroupTiling {
  bool streamed = false, cache = false, pipelined = false;
  std::vector<char> kept;
};

class Lowering {
 public:
  Lowering(const ir::Graph& graph, const sched::ScheduledNet& scheduled, const HwConfig& config,
           CompiledProgram& out)
      : graph_(graph),
        net_(scheduled.net),
        schedule_(scheduled.schedule),
        config_(config),
        machine_(scheduled.machine),
        out_(out),
        emitter_(config.queues.token_fifo_depth) {
    // The matrix geometry and element sizes from the schedule's hardware view (compile()
    // checked it describes `config`).
    rows_ = machine_.matrix_rows;
    cols_ = machine_.matrix_cols;
    act_bytes_ = machine_.activation_bytes;
    weight_bytes_ = machine_.weight_bytes;
    act_elem_ = act_bytes_ == 1 ? isa::Elem::kI8 : isa::Elem::kI16;
    weight_elem_ = weight_bytes_ == 1 ? isa::Elem::kI8 : isa::Elem::kI16;
  }

  Status run(const std::map<std::string, std::vector<std::int32_t>>& input_values);

 private:
  Result<std::string> int_tensor(const std::string& sched_name) const;
  /// Finds the host tail: the groups from the first Softmax group on, which must all be
  /// Softmax-only (docs/codegen.md, "Host ops"). Sets host_from_.
  Status find_host_groups();
  /// Fills out_.host: the boundary tensors (regions planned) and the host graph.
  Status plan_host();
  Status plan_dram(const std::map<std::string, std::vector<std::int32_t>>& input_values);
  /// Regions of the activations the program loads or stores; concat slices and views.
  Status plan_activation_regions();
  /// The inputs of a row Concat (the KV cache append) as row slices of its output's region.
  Status place_row_concat(const sched::Op& concat);
  /// Regions within their concat's region for row slices that are network inputs or outputs.
  Status place_row_slice_regions();
  /// Compact weight, bias and requant-table regions of every matrix op.
  Status plan_weight_regions();
  Status write_input_values(const std::map<std::string, std::vector<std::int32_t>>& input_values);
  /// The quantized values of the constants in row Concats (sched::is_dram_constant).
  Status write_dram_constants();
  /// Weights in the block order the loads walk, biases, (M, r) tables.
  Status write_weight_values();
  /// The Conv or Gemm `op` with its integer weights; fails naming what is unsupported.
  Result<MatrixOp> matrix_op(const sched::Op& op) const;
  /// Output-channel slices of a matrix op: its group's channel tiles (1 when not tiled).
  std::vector<sched::Interval> slices_of(int op_index) const;
  /// Input blocks per reduction chunk of matrix op `op` in group `gs` (ConvParams::chunk_blocks).
  int64_t chunk_blocks_of(const sched::GroupSchedule& gs, const sched::Op& op,
                          const MatrixOp& m) const;
  /// Places matrix op `op`'s weight slices in the buffers its weights go through
  /// (weight_copies): resident, every slice one after another; streamed, every slice at the
  /// buffer's offset (copy1_delta to the second copy). A buffer of the op's own too small for
  /// the packed form moves above the schedule's peak (place_above_peak); a weight sweep's pair
  /// must hold every slice.
  Status place_conv(const sched::GroupSchedule& gs, const sched::Op& op);
  /// The buffers `op`'s weights go through: its own `w:<op>` (and `w:<op>#1` when streamed and
  /// double-buffered), or in a weight sweep the pair `w:sweep`/`w:sweep#1` its convs share.
  Result<WeightCopies> weight_copies(const sched::GroupSchedule& gs, const sched::Op& op) const;
  /// Moves an op's packed weights (`need` bytes a copy) above the schedule's peak where its
  /// buffer is smaller (the scheduler sizes compact bytes) or shares bytes with an earlier
  /// step's buffer; sets `base` and `p.copy1_delta` there. Fails when the scratchpad is full.
  Status place_above_peak(const sched::GroupSchedule& gs, const sched::Op& op, int64_t need,
                          const WeightCopies& copies, ConvParams& p, int64_t& base);
  /// The one lowering walk of a group (docs/codegen.md "One lowering walk"): places its ops'
  /// parameters, walks its mapping's loop nest into steps (tile_steps, sweep_steps), emits
  /// them under the token protocol (serialised, or double-buffered) and records its figures.
  Status lower_group(size_t index, const sched::GroupSchedule& gs);
  /// The op emitter of `kind`, or nullptr when codegen does not support it.
  static const OpEmitter* emitter_for(sched::OpKind kind);
  /// Checks every op of a group has an emitter (in a weight sweep: runs per slice or whole)
  /// and places its matrix ops' weights (place_conv).
  Status place_group_ops(const std::string& where, const sched::GroupSchedule& gs);
  /// Emits op `gs.ops[pos]` through the emitter registered for its kind: a matrix op's conv
  /// and requant steps into `phases` (emit_conv), any other op into the last phase's compute.
  Status emit_op(const sched::GroupSchedule& gs, size_t pos, const std::vector<Box>& need,
                 std::vector<Phase>& phases);
  /// A tile-major nest's steps: one per tile, in the scheduler's tile order (lower_tile);
  /// `pipelined` says whether they run double-buffered.
  Status tile_steps(const std::string& where, const sched::GroupSchedule& gs,
                    const std::vector<sched::NestStep>& nest, std::vector<TileCode>& tiles,
                    bool& pipelined);
  /// The op index of the reducer B of a group that chunks the MLP's hidden dimension
  /// (sched::chunks_hidden), else -1.
  int hidden_reducer(const sched::GroupSchedule& gs) const;
  /// Whether op `op` of group `gs` is an op run once (sched::runs_once: a hidden-chunk prefix op,
  /// an attention group's K or V projection) that does not run in tile `tile`: it loads and runs
  /// in the first tile only.
  bool idle_in_tile(const sched::GroupSchedule& gs, int op, int64_t tile) const;
  /// The reducer's conv over chunk `hidden_chunk_` of its inputs, per step of rows: init bias
  /// (chunk 0) or acc onto accumulators that hold every row; the requant at the last chunk.
  Status emit_hidden_chunk(const sched::GroupSchedule& gs, size_t pos, const sched::Op& op,
                           const std::vector<Box>& need, std::vector<Phase>& phases);
  /// Appends the loads, phases and stores of the tile of nest step `step` to `tiles`.
  Status lower_tile(const std::string& where, const sched::GroupSchedule& gs,
                    const GroupTiling& tiling, const sched::NestStep& step,
                    std::vector<Box>& previous, std::vector<TileCode>& tiles);
  /// Halo caching: trims `need` to the fresh rows and appends the copies that move the rows a
  /// tile shares with the previous one (`previous`, updated) to the top of their buffers.
  void halo_copies(const sched::GroupSchedule& gs, const std::vector<Box>& window,
                   std::vector<Box>& previous, std::vector<Box>& need,
                   std::vector<isa::Instruction>& prelude) const;
  /// The serialised tile protocol: token flags and program order, a barrier after each tile.
  Status emit_serialised(const std::string& where, std::vector<TileCode>& tiles);
  /// The double-buffered protocol (docs/codegen.md) of a tiling's tiles and a weight sweep's
  /// slice steps alike.
  Status emit_double_buffered(const std::string& where, std::vector<TileCode>& tiles);
  Status emit_all(const std::string& where, std::vector<isa::Instruction>& list);
  /// Of `n` loads spread over `m` other instructions in program order (the next phase's over this
  /// phase's compute, a prefetch over the previous group's tail), how many go before instruction
  /// i (i = m: all n): all first when they fit the engine's instruction queue, else half a
  /// queue first and the rest evenly, so that no run of loads holds back the dispatch.
  size_t loads_before(size_t i, size_t n, size_t m) const;
  Status emit_loads_beside(const std::string& where, std::vector<isa::Instruction>& loads,
                           std::vector<isa::Instruction>& compute);
  /// An op-major nest's steps (GroupSchedule::weight_sweep, docs/codegen.md "Weight sweeps"):
  /// one tile; each conv's slices in turn through the ping-pong pair `w:sweep`/`w:sweep#1`,
  /// one step each with the block's elementwise ops, each output stored after the step that
  /// completes it (early stores), the activations loaded with the first step.
  Status sweep_steps(const std::string& where, const sched::GroupSchedule& gs,
                     const std::vector<sched::NestStep>& nest, std::vector<TileCode>& steps);
  /// The sweep's steps, one per step of `nest` (a conv slice with its block's ops; whole ops at
  /// the end of the step before them) and per tensor made in the group the step that
  /// completes it.
  Status sweep_phases(const std::string& where, const sched::GroupSchedule& gs,
                      const std::vector<sched::NestStep>& nest, const std::vector<Box>& whole,
                      std::vector<TileCode>& steps, std::map<int, size_t>& ready_phase);
  /// Appends the per-group figures (instruction counts, bytes moved) of the instructions
  /// emitted since `before` / `traffic_before`.
  void record_group(const sched::GroupSchedule& gs, size_t before,
                    const CodeTraffic& traffic_before);
  Result<TileView> view_of(const sched::GroupSchedule& gs, int tensor, const Box& box) const;
  /// Loads of `op`'s weights, bias and requant table: slice `slice`, or all slices when -1.
  /// With reduction chunks, reduction chunk `chunk` of the slice's blocks only, and the bias and
  /// table with chunk 0.
  Status emit_conv_loads(const sched::Op& op, int slice, std::vector<isa::Instruction>& loads,
                         int64_t chunk = 0);
  /// The conv and requant instructions of `op`, appended to the tile's last phase; each further
  /// reduction chunk opens a phase (its weight loads, then its conv).
  Status emit_conv(const sched::GroupSchedule& gs, size_t pos, const sched::Op& op,
                   const std::vector<Box>& need, std::vector<Phase>& phases);
  /// A grouped conv's instructions for one step: `whole` (the slice's conv) split into one conv
  /// per unit of MatrixOp::pack groups.
  void emit_grouped_convs(const MatrixOp& m, const isa::Conv& whole, const TileView& in, int64_t y0,
                          int64_t x0, const SliceParams& slice,
                          std::vector<isa::Instruction>& compute) const;
  /// The requant of conv `c`'s accumulator rows into `out` at (y, x): `rows` x `cols` pixels of
  /// the slice's channels, with the slice's (M, r) table in scratchpad `param_sp`.
  isa::Requant requant_of(const isa::Conv& c, const TileView& out, const SliceParams& slice,
                          int param_sp, int64_t y, int64_t x, int64_t rows, int64_t cols) const;
  Status emit_eltwise(const sched::GroupSchedule& gs, const sched::Op& op,
                      const std::vector<Box>& need, std::vector<isa::Instruction>& code);
  /// The integer clamp of the Relu or Clip op `ir_op` ([0, qmax] or clip_bounds).
  intops::ClampRange activation_clamp(const ir::Op& ir_op) const;
  /// `cfg`'s clamp composed with the activation folded into `op` (sched::Op::activation;
  /// docs/scheduler.md "Activation folding"), if any: the output is the activation's.
  Status fold_activation(const sched::Op& op, isa::Vcfg& cfg) const;
  /// The accumulator buffer `acc:<op>` the schedule gives `op` in group `gs`; nullptr if none.
  static const sched::BufferAlloc* accumulator_of(const sched::GroupSchedule& gs,
                                                  const sched::Op& op);
  /// The vcfg of conv `conv`'s requantizer (the Requantize that consumes it): its zero point and
  /// clamp, composed with the activation folded into `op`.
  Result<isa::Vcfg> conv_requant_vcfg(const sched::Op& op, const ir::Op& conv) const;
  Status emit_add(const sched::GroupSchedule& gs, const sched::Op& op, const std::vector<Box>& need,
                  std::vector<isa::Instruction>& code);
  // ---- table_ops.cpp: unary functions by table lookup (`lut`) and the broadcast `mul` ----
  /// The 256-entry table of a lookup-table Eltwise (its quantized graph op's constant input).
  Result<const ir::Tensor*> lookup_table_of(const sched::Op& op) const;
  /// DRAM regions "lut:<op>" of every lookup table, and their contents.
  Status plan_table_regions();
  Status write_table_values();
  // ---- embedding_ops.cpp: the Embedding's table and its gathers (ISA `gather`) ----
  /// The quantized graph's table of Embedding `op`, [table_rows, d] codes at its output's scale.
  Result<const ir::Tensor*> embedding_table_of(const sched::Op& op) const;
  /// Bytes between the table's rows in DRAM: a row padded to whole bursts (docs/isa.md).
  int64_t embedding_row_stride_bytes(const sched::Op& op) const;
  /// DRAM regions "emb:<op>" of every Embedding's table, and their contents.
  Status plan_embedding_regions();
  Status write_embedding_values();
  /// The gathers of the tile's tokens of every Embedding of `gs` reading ids tensor `ids`, into
  /// its output's view (the tile's load phase; the ids stay in DRAM), counted as DRAM traffic.
  Status append_embedding_gathers(const sched::GroupSchedule& gs, int ids,
                                  const std::vector<Box>& need,
                                  std::vector<isa::Instruction>& loads);
  /// The Embedding's compute: none (the load phase's gathers filled its output).
  Status emit_embedding(const sched::GroupSchedule& gs, const sched::Op& op,
                        const std::vector<Box>& need, std::vector<isa::Instruction>& code);
  /// The loads of the tile's lookup tables, as the scheduler streams weights.
  Status emit_table_loads(const sched::GroupSchedule& gs, const GroupTiling& tiling, int64_t tile,
                          const std::vector<Box>& need, std::vector<isa::Instruction>& loads);
  /// One op's table for a tile whose output box is `box` (whole, or a row-varying constant's
  /// rows of the box: sched::constant_rows).
  Status emit_table_load(const sched::GroupSchedule& gs, const sched::Op& op, bool pipelined,
                         const Box& box, std::vector<isa::Instruction>& loads);
  /// A global pool wider than the pool window (sched::Op::pool_by_conv): per sub-window one
  /// depthwise conv of all-one weights into int32 sums, then vcfg (M, r) and one requant.
  Status emit_pool_by_conv(const sched::GroupSchedule& gs, const sched::Op& op,
                           const std::vector<Box>& need, std::vector<isa::Instruction>& code);
  Status emit_lookup(const sched::GroupSchedule& gs, const sched::Op& op,
                     const std::vector<Box>& need, std::vector<isa::Instruction>& code);
  Status emit_mul(const sched::GroupSchedule& gs, const sched::Op& op, const std::vector<Box>& need,
                  std::vector<isa::Instruction>& code);
  /// The b operand of an `add` or `mul` whose second input is a constant
  /// (sched::Op::constant_operand), loaded whole like a table: element (y, x, c) of the output
  /// `box` at y * constant_stride_y + x * constant_stride_x + c.
  struct ConstantB {
    std::uint32_t sp = 0, addr = 0, stride_y = 0, stride_x = 0;
  };
  Result<ConstantB> constant_b(const sched::Op& op, const Box& box) const;
  /// Pushes `insn` (an `add` or `mul` set up by set_a_dst_strides) once per period of rows of a
  /// constant b broadcast over a batch's sequences (sched::constant_row_portions; one portion
  /// otherwise), with that portion's first addresses, rows and constant b.
  template <class Insn>
  Status emit_row_portions(const sched::Op& op, const Box& box, const TileView& a,
                           const TileView& y, Insn insn,
                           std::vector<isa::Instruction>& code) const {
    for (const sched::Interval rows : sched::constant_row_portions(op, box.h)) {
      if (op.constant_operand) {
        auto b = constant_b(op, Box{box.c, rows, box.w});
        if (!b.ok()) return b.failure();
        insn.b_addr = b.value().addr;
      }
      insn.a_addr = static_cast<std::uint32_t>(a.addr(rows.b, box.w.b, box.c.b));
      insn.dst_addr = static_cast<std::uint32_t>(y.addr(rows.b, box.w.b, box.c.b));
      insn.y_size = static_cast<std::uint32_t>(rows.size());
      code.push_back(insn);
    }
    return {};
  }
  Status emit_pool(const sched::GroupSchedule& gs, const sched::Op& op,
                   const std::vector<Box>& need, std::vector<isa::Instruction>& code);
  // ---- transformer_ops.cpp: norm, softmax, matmul of two activations (docs/codegen.md) ----
  Result<const ir::Op*> quantized_op(const sched::Op& op) const;
  /// The DRAM bytes of a table-like operand: a norm's E and (G, r, B) per channel, a softmax's
  /// two exp tables, a Mul by a constant scalar's 256-entry table.
  Result<std::vector<std::uint8_t>> param_bytes(const sched::Op& op) const;
  Status emit_norm(const sched::GroupSchedule& gs, const sched::Op& op,
                   const std::vector<Box>& need, std::vector<isa::Instruction>& code);
  Status emit_row_softmax(const sched::GroupSchedule& gs, const sched::Op& op,
                          const std::vector<Box>& need, std::vector<isa::Instruction>& code);
  /// A matmul per head into the op's accumulators, then one per-tensor requant.
  Status emit_matmul(const sched::GroupSchedule& gs, const sched::Op& op,
                     const std::vector<Box>& need, std::vector<isa::Instruction>& code);
  /// A Concat inside a group: one exact copy per input into its channels of the output buffer.
  Status emit_concat(const sched::GroupSchedule& gs, const sched::Op& op,
                     const std::vector<Box>& need, std::vector<isa::Instruction>& code);
  /// The DRAM region holding scheduler tensor `name` (a Reshape's output is its input's).
  const DramRegion* region_of(const std::string& name) const;
  /// Where tensor `tensor`'s NHWC data lies in DRAM: in its own region, or (an aliased Concat's
  /// input, docs/codegen.md "Concat") in a channel slice of the concat output's region.
  struct DramPlace {
    const DramRegion* region = nullptr;
    int64_t channel_offset = 0;  ///< of the tensor's channel 0 within each stored pixel
    int64_t pixel_channels = 0;  ///< channels per stored pixel (the DMA's x stride)
    int64_t row_offset = 0;      ///< of the tensor's row 0 within the region (a row Concat)
    int64_t row_pixels = 1;      ///< pixels per row of the region (its tensor's columns)
    /// The tensor's first pixel within the region (its pixels follow in order).
    int64_t first_pixel() const { return row_offset * row_pixels; }
  };
  DramPlace place_of(int tensor) const;
  /// The tensor whose region holds `tensor` (itself unless it is a concat slice) and the
  /// channel offset there.
  std::pair<int, int64_t> root_of(int tensor) const;
  /// A DMA of `box` of `tensor` between DRAM and `view`: addresses and strides of both sides.
  template <class Dma>
  void set_dma_box(Dma& dma, int tensor, const Box& box, const TileView& view) const;
  /// The loads of `box` of activation tensor `tensor` into `view`: one, or for a space-to-depth
  /// input (sched::Tensor::space_to_depth) one per row parity, each row of stored pixels one
  /// DRAM run (docs/codegen.md, "Space-to-depth stem").
  Status append_activation_loads(std::vector<isa::Instruction>& loads, int tensor, const Box& box,
                                 const TileView& view) const;
  /// The loads of `box` of a pixel gather's output (scheduler/pixel_gather.hpp), one DMA per
  /// run of its source pixels' boxes.
  Status append_gather_loads(std::vector<isa::Instruction>& loads, const sched::Op& gather,
                             int tensor, const Box& box, const TileView& view) const;
  /// The STORE of `box` of a group output `tensor` from `view` (network output bytes when its
  /// region is the network output's), counted in the program's written activation bytes.
  isa::Store store_of(int tensor, const Box& box, const TileView& view);
  void write_bytes(int64_t offset, int64_t value, int bytes);
  /// Writes weights (o0 + c, i, y, x) for c < count, each weight_bytes_ little-endian, from `at`:
  /// one row r of a weight block.
  void write_weight_row(int64_t at, const MatrixOp& m, int64_t o0, int64_t count, int64_t i,
                        int64_t y, int64_t x);

  const ir::Graph& graph_;
  const sched::Net& net_;
  const sched::Schedule& schedule_;
  const HwConfig& config_;
  const sched::Machine& machine_;  // the schedule's hardware view (ScheduledNet::machine)
  CompiledProgram& out_;
  Emitter emitter_;
  int64_t rows_ = 16, cols_ = 16, act_bytes_ = 1, weight_bytes_ = 1;
  isa::Elem act_elem_ = isa::Elem::kI8, weight_elem_ = isa::Elem::kI8;
  // Lookup tables of the group being lowered: the copy last loaded into, where it lies
  // (scratchpad, address) and the channels it was loaded for (table_ops.cpp).
  std::map<int, int> table_copy_of_;
  std::map<int, int64_t> ones_blocks_;  // a pool-by-conv's blocks of ones loaded
  std::map<int, std::pair<int, int64_t>> table_at_;
  std::map<int, sched::Interval> table_channels_;
  std::map<int, ConvParams> conv_params_;     // by scheduler op index, for the current group
  std::map<std::string, std::string> alias_;  // Reshape output -> the tensor it views
  // Input of an aliased (DRAM view) Concat -> (the concat's output tensor, channel offset).
  std::map<int, std::pair<int, int64_t>> slice_of_;
  std::map<int, int64_t> row_of_;            // inputs of a row Concat (KV append): row offset in it
  size_t host_from_ = 0;                     // groups [host_from_, end) run on the host
  std::map<std::string, int> tensor_index_;  // scheduler tensor name -> index
  std::map<int, int64_t> channel_tiles_;     // matrix op index -> its group's channel tiles
  std::map<int, int64_t> extra_top_;         // per scratchpad: codegen-owned bytes above the peak
  bool work_before_ = false;                 // a tile has been emitted (the next one waits on it)
  // Cross-group weight prefetch (GroupSchedule::prefetched): the group's first weight loads,
  // taken out of its first tile and inserted after the previous group's last load, at
  // prefetch_point_ (-1: no group emitted yet).
  std::vector<isa::Instruction> prefetch_;
  std::int64_t prefetch_point_ = -1;
  Status place_prefetch(const std::string& where, size_t& before);
  void mark_prefetch_point(size_t before);
  int copy_ = 0;         // the ping-pong copy the current tile uses (double buffering)
  int weight_copy_ = 0;  // the copy of streamed weight slices the current tile uses
  // A double-buffered Gemm with reduction chunks ping-pongs every chunk (docs/codegen.md "Gemm
  // reduction chunks"): `weight_copy_` is then the copy of the tile's first chunk, chunk k
  // lands in copy (weight_copy_ + k) % 2, and the bias vector and table stay in copy
  // `table_copy_` (the tile's parity). -1: no chunk ping-pong (the table goes with the blocks).
  int table_copy_ = -1;
  bool chunk_pingpong_ = false;
  // The MLP's hidden chunks: the chunk (channel part) of the current tile; -1 in other groups.
  int64_t hidden_chunk_ = -1;
  std::vector<Box> layout_;  // per tensor: the window its buffer holds in the current tile
  static bool has_copy(const sched::GroupSchedule& gs, int tensor, int copy) {
    for (const auto& b : gs.buffers)
      if (b.tensor == tensor && b.copy == copy) return true;
    return false;
  }
};

}  // namespace tessel::codegen::detail
