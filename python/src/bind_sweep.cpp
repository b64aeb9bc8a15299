// Bindings of the sweep runner: a spec (file or dict) evaluated into a resumable JSONL file.
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <filesystem>
#include <future>
#include <memory>
#include <ostream>
#include <streambuf>
#include <string>
#include <thread>
#include <unordered_map>

#include "experiments/sweep/evaluator.hpp"
#include "experiments/sweep/results_file.hpp"
#include "experiments/sweep/runner.hpp"
#include "experiments/sweep/spec.hpp"
#include "python/src/bindings.hpp"
#include "python/src/convert.hpp"

namespace tessel::py_api {
namespace {

namespace fs = std::filesystem;

// Hands each complete line written to it to a Python callable (taking the GIL).
class CallbackLines : public std::streambuf {
 public:
  explicit CallbackLines(py::object callback) : callback_(std::move(callback)) {}
  ~CallbackLines() override {
    py::gil_scoped_acquire gil;
    callback_ = py::object();
  }
  CallbackLines(const CallbackLines&) = delete;
  CallbackLines& operator=(const CallbackLines&) = delete;

 protected:
  int overflow(int c) override {
    if (c == traits_type::eof()) return 0;
    if (c == '\n' || c == '\r') {
      if (!line_.empty()) emit();
    } else {
      line_.push_back(static_cast<char>(c));
    }
    return c;
  }

 private:
  void emit() {
    py::gil_scoped_acquire gil;
    try {
      callback_(line_);
    } catch (py::error_already_set& e) {
      e.discard_as_unraisable("tessel.sweep progress callback");
    }
    line_.clear();
  }
  py::object callback_;
  std::string line_;
};

sweep::SweepSpec spec_from(py::handle spec) {
  if (py::isinstance<py::dict>(spec)) {
    // Relative paths in the dict (hw:, model files) are relative to the working directory.
    const std::string text = yaml_text(to_yaml_node(spec, ""));
    return sweep::parse_spec(text, fs::current_path() / "<dict>");
  }
  if (py::isinstance<py::str>(spec) || py::hasattr(spec, "__fspath__"))
    return sweep::load_spec(
        py::str(py::module_::import("os").attr("fspath")(spec)).cast<std::string>());
  throw ArgumentError("spec: expected a dict or a YAML path, got " +
                      py::type::of(spec).attr("__name__").cast<std::string>());
}

// Runs the sweep on a thread of its own while this one waits for Ctrl-C: the first
// KeyboardInterrupt asks the runner to stop (in-flight points stop at their next poll of the
// cancel token and are not written; a rerun evaluates them), then raises. Returns the summary.
sweep::RunSummary run_interruptible(const sweep::SweepSpec& spec, sweep::PointEvaluator& evaluator,
                                    sweep::RunOptions options) {
  std::atomic<bool> stop{false};
  CancelToken cancel;  // the points in flight stop at their next poll, unrecorded
  options.stop = &stop;
  options.cancel = &cancel;
  auto task =
      std::async(std::launch::async, [&] { return sweep::run_sweep(spec, evaluator, options); });
  bool interrupted = false;
  for (;;) {
    std::future_status state;
    {
      py::gil_scoped_release release;
      state = task.wait_for(std::chrono::milliseconds(100));
    }
    if (state == std::future_status::ready) break;
    if (!interrupted && PyErr_CheckSignals() != 0) {
      interrupted = true;
      stop.store(true);
      cancel.request();
    }
  }
  Result<sweep::RunSummary> summary = fail("not run");
  {
    py::gil_scoped_release release;
    summary = task.get();  // rethrows what the runner threw
  }
  if (interrupted) throw py::error_already_set();
  return value_or_raise(std::move(summary), "sweep");
}

py::dict run(py::handle spec_value, py::handle out, unsigned jobs, py::handle progress) {
  const sweep::SweepSpec spec = spec_from(spec_value);
  auto made = sweep::make_evaluator(spec);
  if (!made.ok()) throw Error("sweep: " + made.reason());
  std::unique_ptr<sweep::PointEvaluator> evaluator = std::move(made.value());
  if (!evaluator->thread_safe()) {
    if (py::isinstance<py::dict>(spec_value))
      throw ArgumentError(
          "sweep: this spec's evaluator runs each point in a `tessel sweep point` process, "
          "which re-reads the spec file: pass the spec as a YAML path");
    evaluator = std::make_unique<sweep::SubprocessEvaluator>(TESSEL_EXECUTABLE, spec);
  }
  sweep::RunOptions options;
  options.out = py::str(py::module_::import("os").attr("fspath")(out)).cast<std::string>();
  options.jobs = jobs;
  std::unique_ptr<CallbackLines> lines;
  std::unique_ptr<std::ostream> log;
  if (!progress.is_none()) {
    lines = std::make_unique<CallbackLines>(py::reinterpret_borrow<py::object>(progress));
    log = std::make_unique<std::ostream>(lines.get());
    options.log = log.get();
    options.progress_interval = std::chrono::milliseconds(500);
  }
  const sweep::RunSummary s = run_interruptible(spec, *evaluator, options);
  log.reset();
  {
    py::gil_scoped_release release;
    lines.reset();  // its destructor takes the GIL
  }

  // The spec's points, in enumeration order, from the results file (this run's and earlier).
  auto read = sweep::read_results(options.out);
  auto lines_read = value_or_raise(std::move(read), "sweep");
  std::unordered_map<std::string, const std::string*> by_id;
  for (const auto& line : lines_read) by_id[line.id] = &line.text;
  py::list rows;
  py::object loads = py::module_::import("json").attr("loads");
  for (const sweep::SweepPoint& point : spec.points)
    if (auto it = by_id.find(point.id); it != by_id.end()) rows.append(loads(*it->second));
  py::dict result;
  result["rows"] = rows;
  result["points"] = spec.points.size();
  result["already_done"] = s.already_done;
  result["ok"] = s.ok;
  result["invalid"] = s.invalid;
  result["errors"] = s.errors;
  result["error_reasons"] = s.error_reasons;
  result["wall_seconds"] = s.wall_seconds;
  return result;
}

}  // namespace

void bind_sweep(py::module_& m) {
  m.def("_sweep", &run, py::arg("spec"), py::arg("out"), py::arg("jobs") = 0,
        py::arg("progress") = py::none());
}

}  // namespace tessel::py_api
