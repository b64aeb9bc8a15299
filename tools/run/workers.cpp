// run_in_workers(): fork a child per task, collect each reply through a pipe, in task order.
#include "tools/run/workers.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <map>

namespace tessel::pipeline {

namespace {

/// Writes all of `text` to `fd` (retrying short writes and EINTR); false on an error.
bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// Exit statuses of a child: 0 replied; kTaskThrew the reply is the exception's message.
constexpr int kTaskThrew = 3;

/// The child's side: run the task, reply, leave without running the parent's atexit handlers or
/// flushing its copied stdio buffers (the parent flushed them before forking).
[[noreturn]] void run_child(int fd, std::size_t index,
                            const std::function<std::string(std::size_t)>& task) {
  int status = 0;
  std::string reply;
  try {
    reply = task(index);
  } catch (const std::exception& e) {
    reply = e.what();
    status = kTaskThrew;
  } catch (...) {
    reply = "unknown exception";
    status = kTaskThrew;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  if (!write_all(fd, reply)) status = status ? status : 4;
  close(fd);
  _exit(status);
}

struct Running {
  pid_t pid = 0;
  std::size_t index = 0;
  std::string reply;
};

WorkerOutcome outcome_of(int wait_status, std::string reply) {
  WorkerOutcome outcome;
  if (WIFSIGNALED(wait_status)) {
    const int signal = WTERMSIG(wait_status);
    outcome.error =
        "worker process died of signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  } else if (!WIFEXITED(wait_status)) {
    outcome.error = "worker process ended abnormally";
  } else if (WEXITSTATUS(wait_status) == 0) {
    outcome.ok = true;
    outcome.reply = std::move(reply);
  } else if (WEXITSTATUS(wait_status) == kTaskThrew) {
    outcome.error = reply;
  } else {
    outcome.error = "worker process exited with status " + std::to_string(WEXITSTATUS(wait_status));
  }
  return outcome;
}

}  // namespace

std::size_t available_cores() {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<std::size_t>(n) : 1;
}

std::vector<WorkerOutcome> run_in_workers(std::size_t count, std::size_t jobs,
                                          const std::function<std::string(std::size_t)>& task) {
  std::vector<WorkerOutcome> outcomes(count);
  std::map<int, Running> running;  // by the read end of its pipe
  std::size_t next = 0;
  if (jobs == 0) jobs = 1;
  while (next < count || !running.empty()) {
    while (next < count && running.size() < jobs) {
      const std::size_t index = next++;
      int fds[2];
      if (pipe2(fds, O_CLOEXEC) != 0) {
        outcomes[index].error = std::string("cannot create a pipe: ") + std::strerror(errno);
        continue;
      }
      std::fflush(stdout);
      std::fflush(stderr);
      const pid_t pid = fork();
      if (pid == 0) {
        close(fds[0]);
        run_child(fds[1], index, task);
      }
      close(fds[1]);
      if (pid < 0) {
        close(fds[0]);
        outcomes[index].error = std::string("cannot fork a worker: ") + std::strerror(errno);
        continue;
      }
      running.emplace(fds[0], Running{pid, index, {}});
    }
    if (running.empty()) continue;

    // Read whatever any child has written; a child's EOF means it is done (or dead).
    std::vector<pollfd> polled;
    for (const auto& [fd, child] : running) polled.push_back({fd, POLLIN, 0});
    if (poll(polled.data(), polled.size(), -1) < 0) {
      if (errno == EINTR) continue;
      // poll itself failed: fall back to blocking reads below, one child at a time.
      for (auto& p : polled) p.revents = POLLIN;
    }
    for (const pollfd& p : polled) {
      if (p.revents == 0) continue;
      Running& child = running.at(p.fd);
      char buffer[8192];
      const ssize_t got = read(p.fd, buffer, sizeof buffer);
      if (got > 0) {
        child.reply.append(buffer, static_cast<std::size_t>(got));
        continue;
      }
      if (got < 0 && errno == EINTR) continue;
      close(p.fd);
      int wait_status = 0;
      while (waitpid(child.pid, &wait_status, 0) < 0 && errno == EINTR) {
      }
      outcomes[child.index] = outcome_of(wait_status, std::move(child.reply));
      running.erase(p.fd);
    }
  }
  return outcomes;
}

}  // namespace tessel::pipeline
