// A cooperative cancellation hook for long library calls (Ctrl-C in the Python module).
#pragma once

#include <atomic>
#include <stdexcept>

#include "support/result.hpp"

namespace tessel {

/// A request to stop early, set from another thread (the Python module's watcher sets it when
/// Ctrl-C arrives). Long loops poll it through cancel_requested() and return cancelled().
class CancelToken {
 public:
  void request() { requested_.store(true, std::memory_order_relaxed); }
  bool requested() const { return requested_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> requested_{false};
};

/// Installs `token` as this thread's for the scope (the previous one comes back after).
/// Code that runs without a scope is never cancelled (the CLI, the tests).
class CancelScope {
 public:
  explicit CancelScope(const CancelToken& token);
  ~CancelScope();
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

 private:
  const CancelToken* previous_;
};

/// Whether this thread's token (if any) asks to stop. Cheap: a thread-local load and a relaxed
/// atomic load. The polled loops: the scheduler's group search (scheduler/search.cpp), the
/// simulator's cycle loop (sim/core/accelerator.cpp), the CPU executor's op loop
/// (compiler/targets/cpu/executor.cpp), the pass pipeline (compiler/passes/pass.cpp), the
/// calibration's threshold searches (compiler/targets/cpu/quantize_flow.cpp), the ONNX
/// importer's node loop (compiler/frontend/importer.cpp, throwing CancelledError), the quantized
/// graph's realization (compiler/quant/realize.cpp), codegen's groups (codegen/codegen.cpp),
/// the sweep runner's workers (experiments/sweep/runner.cpp) and the pipeline between its
/// stages (tools/run).
bool cancel_requested();

/// The failure a cancelled call returns (its caller knows from its token that it was asked).
inline constexpr const char* kCancelledReason = "cancelled";
inline Failure cancelled() {
  return fail(kCancelledReason);
}

/// What a polled loop that reports errors by exception throws when asked to stop (the ONNX
/// importer's node loop); the caller that installed the token catches it.
class CancelledError : public std::runtime_error {
 public:
  CancelledError() : std::runtime_error(kCancelledReason) {}
};

}  // namespace tessel
