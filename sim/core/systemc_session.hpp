// SystemcSession: one fresh SystemC simulation context per simulation run, so a process (a
// test, a sweep worker) can run many simulations one after another.
#pragma once

namespace sc_core {
class sc_simcontext;
}

namespace tessel::sim {

/// RAII owner of a fresh `sc_simcontext`, installed as the current and default context for
/// its lifetime, with a time resolution of 1 ns (one simulated cycle = 1 ns of SystemC time).
///
/// Why: SystemC 2.3.4 allows one elaboration per context, and its kernel reads the context
/// through the globals `sc_curr_simcontext` / `sc_default_global_context`. Creating a new
/// context, pointing both globals at it, building the modules, `sc_start()`, then destroying
/// the modules and the context, gives each run a clean kernel (verified for thousands of
/// runs per process in tests/sim). Constraints: one session at a time per process (they are
/// not reentrant and not thread-safe); every SystemC object of a run must be destroyed before
/// the session ends.
class SystemcSession {
 public:
  SystemcSession();
  ~SystemcSession();
  SystemcSession(const SystemcSession&) = delete;
  SystemcSession& operator=(const SystemcSession&) = delete;

 private:
  sc_core::sc_simcontext* context_ = nullptr;
};

}  // namespace tessel::sim
