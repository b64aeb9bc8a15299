// A lower bound on the cycles of every schedule of a network, tighter than the roofline where a
// barrier op (Gemm, global pool, softmax) must wait for its whole input while its weights do not
// fit on chip (docs/scheduler.md, "The barrier bound").
#pragma once

#include <cstdint>
#include <string>

#include "scheduler/machine.hpp"
#include "scheduler/net.hpp"

namespace tessel::sched {

/// The barrier bound's terms at the barrier that gives the largest bound.
struct BarrierBound {
  int64_t cycles = 0;              ///< 0 when the net has no barrier
  int barrier = -1;                ///< op index of that barrier
  int64_t before_macs = 0;         ///< MACs on stored inputs that the barrier's input needs
  int64_t after_macs = 0;          ///< MACs of the Gemms that need the barrier's output
  int64_t after_weight_bytes = 0;  ///< those Gemms' weight bytes (bias and tables left out)
  int64_t on_chip_bytes = 0;       ///< every scratchpad's bytes together
};

/// For each barrier op g (Gemm, GlobalPool, Softmax: every output needs the whole input t, so
/// in Tessel's execution model, where each tile of g's group needs all of t, none of g's work
/// starts before t is complete):
///
///   cycles >= ceil(M_before / (R*C)) + max(ceil(M_after / (R*C)), ceil((W_after - S) / b))
///
/// - M_before: the multiply-accumulates on stored (not padding) inputs of the convs and Gemms
///   that every element of t needs, found backwards from t through ops that read all of their
///   input (a strided window that skips elements stops the walk: its producer's work is not all
///   needed). The matrix unit does at most R*C of them per cycle, and all precede t's last
///   element.
/// - W_after, M_after: the weights (weight_bytes per element, no bias) and MACs of the Gemms
///   after g whose every input element depends on g's output (reached from g through Gemm,
///   elementwise, add, concat, reshape, global pool and softmax ops only). Every such weight is
///   needed and used only after t is complete; a byte loaded before then must stay on chip, and
///   at most S (every scratchpad's bytes) can. The rest crosses the DRAM bus, at most b bytes per
///   cycle, after t is complete.
///
/// Returns the largest bound over the barriers (zero cycles when there is none). A policy's
/// predicted cycles and the simulator's never go below max(roofline, this).
BarrierBound barrier_bound(const Net& net, const Machine& machine);

/// Multiply-accumulates of a conv or Gemm whose input element is stored (taps on padding left
/// out): C_out * (C_in / groups) * taps_h * taps_w with taps_* the (output, kernel tap) pairs per
/// axis that land inside the input; 0 for other ops.
int64_t stored_input_macs(const Net& net, int op);

/// Whether `op` reads every element of its input number `index` (windows that cover every row
/// and column; the other ops read all).
bool reads_all_of_input(const Net& net, int op, size_t index);

}  // namespace tessel::sched
