// The cost model (Timeloop's Model): the cycles and bytes of one mapping of a group, group
// tiling (evaluate_with) or weight sweep (evaluate_sweep), from the timing formulas of
// docs/timing.md; both run their steps on the one timeline (timeline.hpp). Internal to scheduler/;
// plan.hpp's evaluate_mapping and dma_cycles_for_box are its public face.
#pragma once

#include <vector>

#include "scheduler/group_info.hpp"
#include "scheduler/machine.hpp"
#include "scheduler/plan.hpp"
#include "scheduler/schedule.hpp"
#include "scheduler/tiling.hpp"
#include "support/result.hpp"

namespace tessel::sched {

/// Output rows per conv instruction: enough rows that a pass streams at least R pixels (so it
/// is not bound by the weight-block load), never more than the tile has.
int64_t conv_rows_per_step(const Machine& machine, int64_t tile_width);

/// COMPUTE-engine cycles of one op producing box `out` of its output in one tile. A conv's
/// reduction chunk (the MLP's hidden chunks): `reduction_channels` > 0 input channels of its
/// reduction (0: all), and its requant pass only where `requant`.
int64_t compute_cycles_of(const Net& net, const Machine& machine, const Op& op, const Box& out,
                          int64_t rows_per_step, int64_t reduction_channels = 0,
                          bool requant = true);

/// Cycles of one DMA of `bytes` contiguous bytes (burst-aligned).
int64_t dma_cycles_for_bytes(const Machine& machine, int64_t bytes);
/// DMA cycles of loading `bytes` of op `op`'s weights (and tables) for output channels `c`, one
/// DMA instruction per load as codegen's emit_conv_loads emits them, each paying the DRAM
/// latency: for a Conv or Gemm its weight blocks' DMAs (weight_block_dmas, per reduction chunk
/// of `chunk_blocks` input blocks where > 0; the bytes shared evenly), the int32 bias vector
/// when the op has one, and the requant table; for any other op one run.
int64_t weight_dma_cycles(const Net& net, const Machine& machine, const Op& op, Interval c,
                          int64_t bytes, int64_t chunk_blocks = 0);

/// Weight bytes an op needs to produce output channels `c` (per-channel share, exact for
/// conv/Gemm weights + bias and per-channel BN/Scale parameters).
int64_t weight_bytes_for(const Net& net, const Op& op, Interval c);

/// Requant-table DRAM bytes of the loads for output channels `c`.
int64_t table_bytes_for(const Net& net, const Op& op, Interval c);

/// Loads `op`'s weights and requant table for output channels `c`: adds their bytes to
/// `traffic` and returns the DMA's cycles (one DMA of both).
int64_t load_weight_slice(const Net& net, const Machine& machine, const Op& op, Interval c,
                          Traffic& traffic, int64_t chunk_blocks = 0);

/// Loads reduction chunk `k` (input channels [k x chunk, (k + 1) x chunk)) of a dense 1x1 conv's
/// weights for all its output channels, and with chunk 0 its bias and requant table (the MLP's
/// hidden chunks): adds their bytes to `traffic`, returns the DMA's cycles.
int64_t load_reduction_chunk(const Net& net, const Machine& machine, const Op& op,
                             int64_t chunk_inputs, int64_t k, Traffic& traffic);

/// On-chip bytes of one reduction chunk of `chunk_inputs` input channels of a dense 1x1 conv for
/// all its output channels: packed blocks, the bias vector and the table (onchip_weight_bytes'
/// layout with the chunk's input blocks).
int64_t onchip_chunk_bytes(const Net& net, const Machine& machine, const Op& op,
                           int64_t chunk_inputs);

/// Input blocks (of the matrix rows) of one reduction chunk of `op` when streamed: a Gemm or a
/// dense, ungrouped Conv whose one output block's whole reduction (every kernel tap) exceeds
/// the weights' scratchpad accumulates it in chunks of as many input blocks as that scratchpad
/// holds for one output block, at most 64 (docs/codegen.md "Reduction chunks"), as does one
/// whose input blocks exceed the conv instruction's `ic_blocks` field; 0 for every other op,
/// and where not even one block fits.
int64_t reduction_chunk_blocks(const Net& net, const Machine& machine, const Op& op);

/// The on-chip bytes of one output block of a Gemm or a dense, ungrouped Conv with its whole
/// reduction (packed blocks, the block's bias and table): above the weights' scratchpad the op
/// runs in reduction chunks; 0 for every other op.
int64_t output_block_reduction_bytes(const Net& net, const Machine& machine, const Op& op);
/// The least on-chip bytes of one reduction chunk of one output block (one input block, the
/// block's bias and table): reduction_chunk_blocks is > 0 exactly where this fits the weights'
/// scratchpad and output_block_reduction_bytes does not; 0 for every other op.
int64_t output_block_chunk_bytes(const Net& net, const Machine& machine, const Op& op);
/// The rule of reduction_chunk_blocks on those two sizes: the whole output block exceeds the
/// weights' `capacity` and one chunk of it fits (the bytes bound applies it per capacity).
bool reduces_in_chunks(int64_t whole, int64_t chunk, int64_t capacity);

/// Whether `op` runs its tile in one instruction step, its accumulators holding every row of
/// the tile: a MatMul (one per head), or a conv in reduction chunks (the chunks add up on the
/// whole tile). Its rows per step are then the tile's rows.
bool one_step_per_tile(const Net& net, const Machine& machine, const Op& op);

/// On-chip bytes of an op's weights for output channels `c`, in the layout the matrix unit
/// reads (docs/isa.md): whole R x C blocks `[ocb][icb][ky][kx][R][C]` (depthwise
/// `[cb][ky][kx][C]`), the int32 bias vector of whole output blocks and the requant table (8 B
/// per channel). Ops without matrix work keep their compact parameters (BatchNorm/Scale
/// vectors). `streamed`: a slice too large for the weights' scratchpad holds one reduction
/// chunk (reduction_chunk_blocks).
int64_t onchip_weight_bytes(const Net& net, const Machine& machine, const Op& op, Interval c,
                            bool streamed = false);

/// Accumulator bytes of one matrix instruction producing `channels` output channels of box
/// `out`, `rows_per_step` rows at a time: whole column blocks of accumulator words.
/// A pool-by-conv's on-chip ones for channels `c` (depthwise blocks of the largest sub-window).
int64_t pool_ones_bytes(const Net& net, const Machine& machine, const Op& op, Interval c);

int64_t accumulator_bytes(const Machine& machine, int64_t rows_per_step, const Box& out,
                          int64_t channels);

/// The widest of `parts` near-equal output-channel slices of `op`, packed on chip (the packed
/// size grows with the channel count alone; the widest part has ceil(C / parts) channels);
/// `streamed`: as a group tiling streams it (one reduction chunk where the op has them).
int64_t widest_slice_bytes(const Net& net, const Machine& machine, const Op& op, int64_t parts,
                           bool streamed = false);

/// What a mapping must not exceed to matter to a search past its first feasible mapping (-1:
/// no limit): a mapping over either is rejected before its buffers are built and allocated.
struct Cutoff {
  int64_t cycles = -1;
  int64_t bytes = -1;
  bool active() const { return cycles >= 0 || bytes >= 0; }
};

/// The tile shape a schedule reports: the first non-empty tile of the last op's output (a
/// stored tensor with fewer rows than the tiling has tiles leaves some tiles empty).
void set_tile_shape(const GroupInfo& g, const TileGeometry& geo, GroupSchedule& gs);

/// The activation traffic and per-tile engine cycles (weights excluded) of the tiling `geo`
/// (a weight sweep: its one tile) with cached halos or not, computed on first use: every
/// residency and buffering choice of the tiling shares them. A cached halo's rows, computed or
/// read by the previous row tile, are neither computed nor read again. `kept`: per local, an
/// input the first tile loads for all (kept_inputs).
const TileGeometry::ActivationCosts& activation_costs(const Net& net, const Machine& machine,
                                                      const GroupInfo& g, const TileGeometry& geo,
                                                      const std::vector<char>& kept, bool cache);

/// The model of a group tiling `m` (not a sweep) whose per-tile boxes and sizes are `geo`:
/// buffers, allocation, traffic and cycles; fails when the buffers do not fit or the mapping
/// exceeds `cutoff`.
Result<GroupSchedule> evaluate_with(const Net& net, const Machine& machine, const GroupInfo& g,
                                    const TileGeometry& geo, const Mapping& m,
                                    const PlanOptions& options, Cutoff cutoff = {});

/// The model of a weight sweep `m` (docs/scheduler.md, "Weight sweeps"; sweep_model.cpp): its
/// one tile measured as a tiling's (tile_group, measure_geometry, activation_costs), its blocks'
/// slices phase by phase.
Result<GroupSchedule> evaluate_sweep(const Net& net, const Machine& machine, const GroupInfo& g,
                                     const Mapping& m, const PlanOptions& options);

/// A group that is a DRAM view (is_view_group): no buffer, no cost.
GroupSchedule view_group(const Net& net, const std::vector<int>& ops);
bool is_view_group(const Net& net, const std::vector<int>& ops, const PlanOptions& options);

/// The fields every mapping's schedule starts from: the ops, the group's inputs and stored
/// outputs in local order, its MACs, and the options' memory reuse.
GroupSchedule schedule_of_group(const Net& net, const GroupInfo& g, const PlanOptions& options);

}  // namespace tessel::sched
