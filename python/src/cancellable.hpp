// Ctrl-C inside a long C++ call: the call runs on a worker thread under a CancelToken while the
// calling thread waits with the GIL released and checks for signals (python/README.md).
#pragma once

#include <pybind11/pybind11.h>

#include <chrono>
#include <future>
#include <string>
#include <type_traits>

#include "support/cancel.hpp"
#include "support/result.hpp"

namespace tessel::py_api {

namespace py = pybind11;

/// Whether `value` is the failure a call returns when its token stopped it (cancelled(), maybe
/// prefixed by the stages it passed through, e.g. "optimal: simulator: cancelled").
template <class T>
bool stopped_early(const T& value) {
  if constexpr (requires { value.reason(); }) {
    const std::string& reason = value.reason();
    const std::string tail = kCancelledReason;
    return !value.ok() && reason.size() >= tail.size() &&
           reason.compare(reason.size() - tail.size(), tail.size(), tail) == 0;
  } else {
    return false;
  }
}

/// Raises the pending KeyboardInterrupt (or whatever the signal handler raised), with a note
/// saying whether `what` stopped early or had finished first; its result is dropped either way.
[[noreturn]] void raise_interrupted(const char* what, bool early);

/// Runs `work` (which must not touch Python objects) on a worker thread with a CancelToken
/// installed (support/cancel.hpp), while this thread, holding the GIL only between waits, checks
/// for signals every 50 ms. On Ctrl-C the token is set, the work returns at its next poll
/// (the scheduler's group search, the simulator's cycle loop, the executor's op loop), and the
/// KeyboardInterrupt is raised. Exceptions `work` throws come back here. A call from a thread
/// other than the main one never sees a signal (Python runs handlers on the main thread).
template <class F>
std::invoke_result_t<F&> run_cancellable(const char* what, F&& work) {
  CancelToken token;
  auto task = std::async(std::launch::async, [&]() {
    const CancelScope scope(token);
    return work();
  });
  bool interrupted = false;
  for (;;) {
    std::future_status state;
    {
      py::gil_scoped_release release;
      state = task.wait_for(std::chrono::milliseconds(50));
    }
    if (state == std::future_status::ready) break;
    if (!interrupted && PyErr_CheckSignals() != 0) {
      interrupted = true;
      token.request();
    }
  }
  if (interrupted) {
    bool early = false;
    try {
      early = stopped_early(task.get());
    } catch (...) {  // dropped: the interrupt is what the caller sees
    }
    raise_interrupted(what, early);
  }
  return task.get();
}

}  // namespace tessel::py_api
