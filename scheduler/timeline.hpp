// The cost model's one timeline (docs/scheduler.md, "Cycles"): every mapping of a group runs as
// a sequence of steps of its loop nest (a group tiling's tiles in the order code generation runs
// them, a weight sweep's phases), each loading what its compute waits for, computing, and
// storing what its compute completed, on the LOAD, COMPUTE and STORE engines with one DRAM bus.
// Internal to scheduler/ (tiling_model.cpp and sweep_model.cpp build the steps).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace tessel::sched {

/// A group's steps, as its mapping's loop nest runs them.
struct StepCosts {
  std::vector<int64_t> load;     ///< per step: DMA cycles of the loads its compute waits for
  std::vector<int64_t> compute;  ///< per step: COMPUTE-engine cycles
  std::vector<int64_t> store;    ///< per step: DMA cycles of the stores its compute completes
  /// DMA cycles on the bus before step 0's load (a tiling's resident weights, a sweep's
  /// activations).
  int64_t before = 0;
  /// Copies of the step buffers the steps rotate through: 1, or 2 when double-buffered.
  int copies = 1;
  std::vector<int64_t> store_bytes;  ///< per step: the bytes `store` moves (empty: not known)
};

/// When the group ends, and its tail as the next group's prefetch sees it.
struct Timeline {
  int64_t cycles = 0;
  int64_t tail_cycles = 0;      ///< from the end of the last load to the group's end
  int64_t tail_dma_cycles = 0;  ///< store cycles on the bus after the last load
  int64_t tail_dma_bytes = 0;   ///< the bytes of those stores (0 where store_bytes is empty)
};

/// The steps' event recurrence with `copies` = k: step w's load starts once the bus is free
/// and step w-k has computed (its copy is free); the stores of step w-k follow it on the bus
/// (a load before a store ready at the same time, docs/timing.md); step w computes after its
/// load, step w-1's compute and step w-k's stores (its output copy is free); the last k
/// steps' stores run after the last load. With k = 1 the group takes before + the sum of every
/// load, compute and store; with k = 2 it equals the lockstep form before + load_0 +
/// sum_t max(compute_t, load_{t+1} + store_{t-1}) + store_last. `steps` must have at least one
/// step and `copies` must be 1 or 2.
Timeline run_timeline(const StepCosts& steps);
/// The same over per-step figures held elsewhere (a tiling's activation costs, shared by every
/// mapping of its geometry): no copy.
Timeline run_timeline(std::span<const int64_t> load, std::span<const int64_t> compute,
                      std::span<const int64_t> store, int64_t before, int copies,
                      std::span<const int64_t> store_bytes = {});

}  // namespace tessel::sched
