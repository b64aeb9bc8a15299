#include "python/src/cancellable.hpp"

namespace tessel::py_api {

void raise_interrupted(const char* what, bool early) {
  py::error_already_set pending;  // the KeyboardInterrupt PyErr_CheckSignals raised
  py::object value = pending.value();
  if (py::hasattr(value, "add_note"))  // Python 3.11
    value.attr("add_note")(std::string(what) +
                           (early ? ": stopped early by the interrupt; nothing was returned or "
                                    "written"
                                  : ": had finished when the interrupt was seen; its result "
                                    "was dropped"));
  throw pending;
}

}  // namespace tessel::py_api
