// A lower bound on the cycles of every schedule of a network, tighter than the roofline where
// weights that do not fit on chip must stream after a long stretch of compute (docs/scheduler.md,
// "The barrier bound").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scheduler/machine.hpp"
#include "scheduler/net.hpp"

namespace tessel::sched {

/// The barrier bound's terms at the tensor that gives the largest bound.
struct BarrierBound {
  int64_t cycles = 0;               ///< 0 when no op needs a tensor whole
  int barrier = -1;                 ///< the first (lowest-index) op of the completing set
  int tensor = -1;                  ///< the tensor t
  int64_t before_macs = 0;          ///< MACs on stored inputs that t needs
  int64_t before_weight_bytes = 0;  ///< those ops' weight bytes
  int64_t after_macs = 0;           ///< MACs of the completing Gemms
  int64_t after_weight_bytes = 0;   ///< the completing ops' weight bytes still needed
  int64_t on_chip_bytes = 0;        ///< every scratchpad's bytes together
};

/// For each tensor t, the **completing set** K(t): every Gemm and every dense conv (one group,
/// reading all of its input, not a rewritten stem) whose input needs t whole and whose output
/// the network outputs need whole. An op k of K(t) *completes* when the first of its output
/// channels has all of its elements: a Gemm at its first MAC (Tessel runs no Gemm MAC before
/// its whole input exists), a conv when one channel's every pixel has been computed, which reads
/// every stored element of its input. Either way t is complete by then. Let tau be the first
/// completion over K(t). Then
///
///   cycles >= max(ceil(M_before / (R*C)), floor(W_before / b))
///             + max(ceil(M_after / (R*C)), floor((W_after - S) / b))
///
/// - M_before, W_before: the multiply-accumulates on stored (not padding) inputs, and the
///   weights, of the convs and Gemms whose every output element t needs (found backwards from t
///   through ops that read all of their input; a strided window that skips elements stops the
///   walk). All of them run, and so all of those weights cross the bus, before t is complete.
/// - W_after: a Gemm's weights (every one is used after its input is complete), and a conv's
///   weights less `matrix_cols` output channels': the matrix unit finishes at most one output
///   element per column in a cycle, so at most C channels complete in the cycle of the conv's
///   first. Every other channel still has a pixel to compute in a later cycle, which needs
///   every weight of its channel (every input channel and tap) after tau: none of its MACs
///   precedes tau, so not even a conv that splits its reduction into chunks (docs/codegen.md
///   "Reduction chunks") has used a chunk of it before. A weight needed after tau is on chip at
///   tau, where at most S bytes (every scratchpad) are, or it crosses the one DRAM bus, b bytes
///   per cycle, after tau.
/// - M_after: the completing Gemms' MACs, all after tau, at most R*C per cycle.
///
/// Weights count only taps that meet stored inputs (`weight_bytes` per element, no bias or
/// table). Returns the largest bound over the tensors (zero when no op qualifies). A policy's
/// predicted cycles and the simulator's never go below max(roofline, this).
BarrierBound barrier_bound(const Net& net, const Machine& machine);

/// Multiply-accumulates of a conv or Gemm whose input element is stored (taps on padding left
/// out): C_out * (C_in / groups) * taps_h * taps_w with taps_* the (output, kernel tap) pairs per
/// axis that land inside the input; 0 for other ops.
int64_t stored_input_macs(const Net& net, int op);

/// Whether `op` reads every element of its input number `index` (windows that cover every row
/// and column; the other ops read all).
bool reads_all_of_input(const Net& net, int op, size_t index);

/// Tensors whose every element `from` needs: `from` itself, then backwards through ops that read
/// all of their input (reads_all_of_input; ops in topological order, one reverse pass).
std::vector<bool> fully_needed(const Net& net, const std::vector<int>& from);

}  // namespace tessel::sched
