// The analytic evaluator: the scheduler's search + cost model on each point (no simulation).
#pragma once

#include <memory>

#include "experiments/sweep/evaluator.hpp"

namespace tessel::sweep {

/// `mode: analytic` — schedules the point's model on its hw config with its policy and the
/// spec's objective (scheduler/driver.hpp schedule_graph) and reports the schedule's figures.
/// Each model is built once (shapes only) and shared read-only by all threads. A policy that
/// finds no schedule (a buffer too small for one tile) makes the point invalid with its reason.
/// Fails for a model or policy name the zoo or scheduler does not know (with did-you-mean).
Result<std::unique_ptr<PointEvaluator>> make_analytic_evaluator(const SweepSpec& spec);

}  // namespace tessel::sweep
