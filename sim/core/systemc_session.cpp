// SystemcSession: installs and tears down a fresh sc_simcontext; also provides sc_main.
#include "sim/core/systemc_session.hpp"

#include <systemc>

namespace tessel::sim {

SystemcSession::SystemcSession() {
  context_ = new sc_core::sc_simcontext;
  sc_core::sc_curr_simcontext = context_;
  sc_core::sc_default_global_context = context_;
  sc_core::sc_report_handler::set_actions("/IEEE_Std_1666/deprecated", sc_core::SC_DO_NOTHING);
  // sc_stop() after a fault reports "Simulation stopped by user" as info; the fault report
  // says what happened.
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  sc_core::sc_set_time_resolution(1, sc_core::SC_NS);
}

SystemcSession::~SystemcSession() {
  delete context_;
  sc_core::sc_curr_simcontext = nullptr;
  sc_core::sc_default_global_context = nullptr;
}

}  // namespace tessel::sim

// libsystemc.so defines main() and references sc_main; Tessel's executables have their own
// main() and run simulations through tessel::sim::simulate(), so this is never called.
int sc_main(int, char**) {
  return 0;
}
