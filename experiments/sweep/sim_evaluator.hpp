// The simulation evaluator: schedule, compile and cycle-simulate each point (SystemC simulator).
#pragma once

#include <memory>

#include "experiments/sweep/evaluator.hpp"

namespace tessel::sweep {

/// `mode: sim` — per point: the scheduler (sched::schedule_graph, as analytic mode), codegen
/// (codegen::compile) and the SystemC cycle simulator (sim::simulate); records the simulated
/// cycles and DRAM bytes beside the analytic prediction (figure names in docs/sweep.md).
///
/// Per model and quantization (the spec's `quantization` section with quantization.* axes; bits
/// default to the config's matrix.input_bits) the model is loaded with its seeded zoo weights,
/// BN-folded, quantized on synthetic calibration samples and its default input quantized, once,
/// and shared by all threads. Scheduling and codegen run on the runner's threads; simulations
/// run one at a time on one dedicated thread (a SystemC context is per process and not
/// thread-safe), so the evaluator as a whole is thread-safe.
///
/// Options (`sim:` in the spec): `functional: false` (default) simulates timing only (same
/// cycles and bytes, no data movement); `functional: true` moves the data and checks every
/// network output bit for bit against the golden integer executor (figure `bit_exact`).
///
/// A point is invalid when the scheduler finds no schedule, codegen does not support the
/// schedule (its message names the group and op), or the simulation faults (the fault's text).
Result<std::unique_ptr<PointEvaluator>> make_sim_evaluator(const SweepSpec& spec);

}  // namespace tessel::sweep
