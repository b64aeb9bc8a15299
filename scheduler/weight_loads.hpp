// A matrix op's weight loads as code generation emits them (codegen's emit_conv_loads): the
// matrix unit's view of the op, and the DMA instructions of its weight blocks after merging.
// Shared by the cost model (each DMA pays the DRAM latency) and the program-size prediction
// (each DMA is an instruction), so both follow one rule.
#pragma once

#include <cstdint>
#include <vector>

#include "scheduler/machine.hpp"
#include "scheduler/net.hpp"
#include "scheduler/shape.hpp"

namespace tessel::sched {

/// Ops whose operand (a lookup table, a pool's ones, a constant, a normaliser's parameters) loads
/// whole whatever channels a tile needs, one DMA (codegen's loads_table, table_ops.cpp).
bool loads_table(const Op& op);

/// A constant operand that varies along its output's rows (ViT's position embedding, a rotary
/// table: Op::constant_stride_y > 0) and is not one sequence's rows broadcast over a batch
/// (Op::constant_row_period 0, which loads whole): a streamed tile loads only the rows its
/// output box covers (constant_rows), not the whole constant.
bool constant_by_rows(const Op& op);

/// Whether net tensor `tensor` is the token ids of an Embedding among `ops`: its gather reads
/// them from DRAM, so no load puts them on chip.
bool gathered_ids(const Net& net, const std::vector<int>& ops, int tensor);

/// Rows one ISA `gather` takes at most (its y_size field).
inline constexpr int64_t kGatherRows = 4095;

/// The DRAM bytes an Embedding's gathers read for output box `box`: a row a token.
int64_t gathered_bytes(const Op& op, const Box& box);

/// The rows of output rows `rows` of `op` that one vector instruction each covers: `rows` cut at
/// every multiple of a constant operand's row period (Op::constant_row_period), else whole.
std::vector<Interval> constant_row_portions(const Op& op, Interval rows);

/// Elements [b, e) of such a constant that output rows `rows` read (every column and channel
/// of them); the whole constant for any other op with a table.
Interval constant_rows(const Net& net, const Op& op, Interval rows);

/// What a tile loads of `op`'s table (loads_table) whose output box is `box`, and so what must
/// match the previous tile's for the load to be kept (a group that keeps weight slices): the
/// rows of a constant that varies by rows, else the channels.
Interval table_part(const Op& op, const Box& box);

/// Bytes of `op`'s table a streamed tile with output box `box` loads: its rows of a constant
/// that varies by rows, else the whole table (weight_bytes; a pool's ones are the caller's).
int64_t table_tile_bytes(const Net& net, const Op& op, const Box& box);

/// A Conv or Gemm as the matrix unit sees it (codegen's MatrixOp, from the net's shapes).
struct MatrixShape {
  int64_t co = 0, ci = 0, kh = 1, kw = 1;
  bool depthwise = false, gemm = false, block_diagonal = false;
  int64_t groups = 1, pack = 1;
  int64_t bias_bytes_per_channel = 0;  ///< the int32 bias (4), or 0 without one
  int64_t unit_out() const { return groups > 1 ? co / groups * pack : co; }
  /// A grouped conv's unit (column_blocks); 0 for every other op.
  int64_t unit() const { return groups > 1 ? unit_out() : 0; }
  bool has_bias() const { return bias_bytes_per_channel > 0; }
};

/// One column block of the array as a matrix op's output channels occupy it: channels
/// [first, first + count) in its columns [0, count), the rest unused.
struct ColumnBlock {
  int64_t first = 0, count = 0;
};

/// The parts of output channels `c` that one conv instruction each computes: `c` cut at every
/// multiple of `unit` (a grouped conv's unit of groups, MatrixShape::unit_out()); `c` whole for
/// `unit` 0.
std::vector<Interval> unit_portions(Interval c, int64_t unit);

/// The column blocks that output channels `c` occupy, in the order the packed weights, the bias
/// and the accumulators hold them (docs/codegen.md "Grouped convolution"): blocks of `cols`
/// channels from c.b; for a grouped conv whose conv instruction computes `unit` channels (a
/// block-diagonal block of groups, or one group), every unit portion (unit_portions) from a
/// block of its own, its last block's columns past the portion unused (a unit of 5 x 24
/// channels uses 120 of 128 columns). `unit` 0: the plain blocks.
std::vector<ColumnBlock> column_blocks(Interval c, int64_t unit, int64_t cols);

/// column_blocks(c, unit, cols).size(), without the list.
int64_t column_block_count(Interval c, int64_t unit, int64_t cols);

/// Whether column_blocks holds consecutive channels in consecutive columns (every block but the
/// last full), so that one requant reads them all; else one requant per unit portion.
bool columns_contiguous(Interval c, int64_t unit, int64_t cols);

/// Whether output channel `b` may start a slice of a grouped conv of `unit` channels a conv
/// instruction and `pack` groups a unit: a block-diagonal unit's first channel; with one group
/// a unit (a dense conv per group), any channel (a group wider than one slice holds, RegNet-X
/// 32GF's 168 x 168 x 3 x 3 weights on vta-pynq, runs in parts, one conv per part).
bool starts_unit_slice(int64_t b, int64_t unit, int64_t pack);

/// The unit of `op` for column_blocks: a grouped (not depthwise) conv's MatrixShape::unit_out(),
/// 0 for every other op.
int64_t matrix_unit(const Net& net, const Machine& machine, const Op& op);

/// The matrix view of Conv or Gemm `op`: reduction `ci x kh x kw` per output channel (a
/// space-to-depth stem's `f x f` phases of its original channels), grouping, and the bias
/// `Op::weight_bytes` holds beside the packed weights (compact).
MatrixShape matrix_shape(const Net& net, const Machine& machine, const Op& op);

/// The DMA instructions that load the weight blocks of output channels `channels` and input
/// blocks [b0, b1) (a reduction chunk; [0, all) otherwise): one per block, a block continuing
/// the previous load (same row shape, no left padding) extending it up to the DMA's 4,095 rows;
/// a block-diagonal grouped conv one per group of each block. Bias and requant table not
/// included (one DMA each).
int64_t weight_block_dmas(const MatrixShape& m, const Machine& machine, Interval channels,
                          int64_t b0, int64_t b1);

}  // namespace tessel::sched
