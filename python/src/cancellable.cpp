#include "python/src/cancellable.hpp"

#include <atomic>

namespace tessel::py_api {
namespace {

// What the handler touches: lock-free atomics only (async-signal-safe).
std::atomic<CancelToken*> g_token{nullptr};
std::atomic<unsigned> g_sigints{0};
static_assert(std::atomic<CancelToken*>::is_always_lock_free &&
              std::atomic<unsigned>::is_always_lock_free);

extern "C" void on_sigint(int /*signal*/) {
  if (CancelToken* token = g_token.load()) token->request();
  g_sigints.fetch_add(1);
}

bool python_handles_sigint_by_default() {
  py::module_ threading = py::module_::import("threading");
  if (!threading.attr("current_thread")().is(threading.attr("main_thread")())) return false;
  py::module_ signal = py::module_::import("signal");
  return signal.attr("getsignal")(SIGINT).is(signal.attr("default_int_handler"));
}

}  // namespace

SigintScope::SigintScope(CancelToken& token) {
  if (!python_handles_sigint_by_default()) return;
  struct sigaction ours {};
  ours.sa_handler = on_sigint;
  sigemptyset(&ours.sa_mask);
  ours.sa_flags = SA_ONSTACK;  // as Python installs its own
  previous_token_ = g_token.exchange(&token);
  previous_count_ = g_sigints.load();
  if (sigaction(SIGINT, &ours, &previous_) != 0) {
    g_token.store(previous_token_);
    return;
  }
  active_ = true;
}

SigintScope::~SigintScope() {
  if (!active_) return;
  sigaction(SIGINT, &previous_, nullptr);
  g_token.store(previous_token_);
  if (fired()) PyErr_SetInterrupt();  // Python's handler runs at the next check
}

bool SigintScope::fired() const {
  return active_ && g_sigints.load() != previous_count_;
}

void raise_interrupted(const char* what, bool early) {
  py::error_already_set pending;  // the KeyboardInterrupt PyErr_CheckSignals raised
  py::object value = pending.value();
  if (py::hasattr(value, "add_note"))  // Python 3.11
    value.attr("add_note")(std::string(what) +
                           (early ? ": stopped early by the interrupt; nothing was returned or "
                                    "written"
                                  : ": interrupted; the step that was running does not stop "
                                    "early and ran to its end; nothing was returned"));
  throw pending;
}

std::shared_ptr<ir::Graph> load_cancellable(const std::string& name_or_path,
                                            const zoo::LoadOptions& options) {
  auto loaded = run_cancellable("tessel.load_model", [&]() -> Result<std::shared_ptr<ir::Graph>> {
    try {
      return std::make_shared<ir::Graph>(zoo::load_model(name_or_path, options));
    } catch (const CancelledError&) {
      return cancelled();
    }
  });
  // Not interrupted: the value, or load_model's own error (InputError propagated above).
  if (!loaded.ok()) throw std::runtime_error("tessel.load_model: " + loaded.reason());
  return std::move(loaded).value();
}

}  // namespace tessel::py_api
