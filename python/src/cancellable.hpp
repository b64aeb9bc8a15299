// Ctrl-C inside a long C++ call: while the call runs (GIL released, on the calling thread), a
// SIGINT handler of ours sets the call's CancelToken, which the C++ polls; afterwards Python's
// own handler raises the KeyboardInterrupt (python/README.md).
#pragma once

#include <pybind11/pybind11.h>

#include <csignal>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include "compiler/ir/graph.hpp"
#include "compiler/zoo/load_model.hpp"
#include "support/cancel.hpp"
#include "support/result.hpp"

namespace tessel::py_api {

namespace py = pybind11;

/// Whether `value` is the failure a call returns when its token stopped it (cancelled(), maybe
/// prefixed by the stages it passed through, e.g. "optimal: simulator: cancelled").
template <class T>
bool stopped_early(const T& value) {
  if constexpr (requires { value.reason(); }) {
    if (value.ok()) return false;  // (reason() is only for a failure)
    const std::string& reason = value.reason();
    const std::string tail = kCancelledReason;
    return reason.size() >= tail.size() &&
           reason.compare(reason.size() - tail.size(), tail.size(), tail) == 0;
  } else {
    return false;
  }
}

/// SIGINT taken over for one call: from the constructor (GIL held) to the destructor, a SIGINT
/// requests `token` instead of reaching Python's handler; the destructor restores that handler
/// and, when a SIGINT came, hands it on (PyErr_SetInterrupt), so the next PyErr_CheckSignals()
/// raises KeyboardInterrupt. Inactive (SIGINT left alone) off the main thread, where Python
/// never handles signals, and when Python's SIGINT handler is not signal.default_int_handler
/// (a script's own handler, or SIG_IGN, keeps its meaning).
class SigintScope {
 public:
  explicit SigintScope(CancelToken& token);
  ~SigintScope();
  SigintScope(const SigintScope&) = delete;
  SigintScope& operator=(const SigintScope&) = delete;
  /// Whether a SIGINT arrived in the scope (so far).
  bool fired() const;

 private:
  bool active_ = false;
  struct sigaction previous_ {};
  CancelToken* previous_token_ = nullptr;
  unsigned previous_count_ = 0;
};

/// Raises the pending KeyboardInterrupt (or whatever the signal handler raised), with a note
/// saying whether `what` stopped early or its running step (one that is not polled) ran to its
/// end; its result is dropped either way.
[[noreturn]] void raise_interrupted(const char* what, bool early);

/// Runs `work` (which must not touch Python objects) with the GIL released and a CancelToken
/// installed (support/cancel.hpp) that Ctrl-C requests (SigintScope): the work returns at its
/// next poll (the scheduler's group search, the simulator's cycle loop, the executor's op
/// loop) and KeyboardInterrupt is raised. On the calling thread: no thread is started, so a
/// call costs what it did without Ctrl-C support (bench/python).
template <class F>
std::invoke_result_t<F&> run_cancellable(const char* what, F&& work) {
  CancelToken token;
  std::optional<std::invoke_result_t<F&>> result;
  bool interrupted = false;
  {
    SigintScope sigint(token);
    {
      py::gil_scoped_release release;
      const CancelScope scope(token);
      result.emplace(work());
    }
    interrupted = sigint.fired();
  }  // hands a SIGINT on to Python
  if (interrupted && PyErr_CheckSignals() != 0) raise_interrupted(what, stopped_early(*result));
  return std::move(*result);
}

/// zoo::load_model (a zoo name or a model file) with Ctrl-C support: the ONNX importer polls
/// between nodes (a large export takes seconds), and an interrupt raises KeyboardInterrupt.
std::shared_ptr<ir::Graph> load_cancellable(const std::string& name_or_path,
                                            const zoo::LoadOptions& options);

}  // namespace tessel::py_api
