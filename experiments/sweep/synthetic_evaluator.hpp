// The synthetic evaluator: deterministic made-up figures, for testing the sweep machinery.
#pragma once

#include <memory>

#include "experiments/sweep/evaluator.hpp"

namespace tessel::sweep {

/// `mode: synthetic` — a test fixture, not a model of anything. Each point's figures are a
/// deterministic function of its model and policy names and its validated hw config (so
/// reruns, shards and Slurm runs must agree byte for byte), shaped like real ones:
/// dram_bytes >= compulsory_bytes falling with on-chip capacity, cycles >= roofline_cycles.
/// Options (spec section `synthetic:`):
///   delay_ms: N        sleep N ms per point (to make a sweep slow enough to interrupt)
///   invalid_every: K   every K-th point (by index, K > 0) is invalid, with a reason
///   thread_safe: false run each point in a `tessel sweep point` subprocess (tests that path)
Result<std::unique_ptr<PointEvaluator>> make_synthetic_evaluator(const SweepSpec& spec);

}  // namespace tessel::sweep
