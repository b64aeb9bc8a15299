// Bounded child-process runs (fork/exec in a new process group) and log scanning.
#include "hw/fpga/tool_run.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace tessel::fpga {
namespace {

using Clock = std::chrono::steady_clock;

/// Waits for `pid` until `deadline`; true when it exited (status stored).
bool wait_until(pid_t pid, Clock::time_point deadline, int& status) {
  while (true) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) return true;
    if (done < 0 && errno != EINTR) return true;  // already reaped elsewhere: treat as ended
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

Result<ToolRun> run_tool(const std::vector<std::string>& argv, const std::string& working_dir,
                         const std::string& output_path, std::chrono::milliseconds timeout) {
  if (argv.empty()) return fail("run_tool: empty command");
  const int output = ::open(output_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (output < 0) return fail(output_path + ": cannot write: " + std::strerror(errno));
  // The child reports a failed exec through this close-on-exec pipe.
  int exec_pipe[2];
  if (::pipe2(exec_pipe, O_CLOEXEC) != 0) {
    ::close(output);
    return fail(std::string("run_tool: pipe: ") + std::strerror(errno));
  }
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  const auto start = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(output);
    ::close(exec_pipe[0]);
    ::close(exec_pipe[1]);
    return fail(std::string("run_tool: fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
    ::setpgid(0, 0);
    int error = 0;
    if (::chdir(working_dir.c_str()) != 0 || ::dup2(output, STDOUT_FILENO) < 0 ||
        ::dup2(output, STDERR_FILENO) < 0) {
      error = errno;
    } else {
      ::execvp(args[0], args.data());
      error = errno;
    }
    [[maybe_unused]] const auto written = ::write(exec_pipe[1], &error, sizeof error);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also here, so the group exists before any kill below
  ::close(output);
  ::close(exec_pipe[1]);
  int exec_error = 0;
  const auto got = ::read(exec_pipe[0], &exec_error, sizeof exec_error);
  ::close(exec_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof exec_error)) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return fail(argv[0] + ": cannot run: " + std::strerror(exec_error));
  }

  ToolRun run;
  int status = 0;
  if (!wait_until(pid, start + timeout, status)) {
    ::kill(-pid, SIGTERM);
    if (!wait_until(pid, Clock::now() + std::chrono::seconds(2), status)) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
    }
    ::kill(-pid, SIGKILL);  // children that ignored SIGTERM or outlived the leader
    run.outcome = ToolRun::Outcome::kTimedOut;
    run.exit_code = -1;
  } else if (WIFEXITED(status)) {
    run.exit_code = WEXITSTATUS(status);
    run.outcome = run.exit_code == 0 ? ToolRun::Outcome::kOk : ToolRun::Outcome::kFailed;
  } else {
    run.exit_code = -1;
    run.outcome = ToolRun::Outcome::kFailed;
  }
  run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return run;
}

std::string first_error_line(std::string_view log) {
  std::size_t begin = 0;
  while (begin < log.size()) {
    std::size_t end = log.find('\n', begin);
    if (end == std::string_view::npos) end = log.size();
    const std::string_view line = log.substr(begin, end - begin);
    if (line.find("ERROR:") != std::string_view::npos) return std::string(line);
    begin = end + 1;
  }
  return "";
}

}  // namespace tessel::fpga
