// Running an external EDA tool (Yosys) with a wall-clock bound, and reading its error lines.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "support/result.hpp"

namespace tessel::fpga {

/// How a bounded tool run ended.
struct ToolRun {
  enum class Outcome { kOk, kFailed, kTimedOut };
  Outcome outcome = Outcome::kOk;
  int exit_code = 0;   ///< the tool's exit status; -1 when it was killed
  double seconds = 0;  ///< wall-clock time until it ended (or was reaped after the kill)
};

/// Runs `argv` (argv[0] looked up on PATH) in `working_dir` with stdout and stderr appended to
/// `output_path`, in a process group of its own. When it runs longer than `timeout`, the whole
/// group (the tool and any children it started, e.g. Yosys's ABC) gets SIGTERM, then SIGKILL
/// 2 s later, and is reaped: no process outlives the call. Fails only when the tool cannot be
/// started ("yosys: cannot run: No such file or directory") or the output cannot be opened.
Result<ToolRun> run_tool(const std::vector<std::string>& argv, const std::string& working_dir,
                         const std::string& output_path, std::chrono::milliseconds timeout);

/// The first line of a Yosys log that reports an error ("ERROR:" anywhere in it), without its
/// trailing newline; parse errors read "FILE:LINE: ERROR: syntax error, ...". Empty when none.
std::string first_error_line(std::string_view log);

}  // namespace tessel::fpga
