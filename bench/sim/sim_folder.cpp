// Repeats simulate() on one compile folder in one process and prints each run's seconds: the
// in-process simulation time without process start-up or file reading, for profiling
// (`perf record`) and for before/after comparisons. A benchmark, not a test.
//   tessel_sim_folder FOLDER [--timing-only] [--repeats N] [--threads 1|2|3]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "configs/hw_config.hpp"
#include "sim/inputs.hpp"
#include "sim/simulator.hpp"

namespace {

/// CPU seconds of this process (all threads): on a shared machine, less noisy than wall time.
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(
        stderr,
        "usage: tessel_sim_folder FOLDER [--timing-only] [--repeats N] [--threads 1|2|3]\n");
    return 1;
  }
  bool timing_only = false;
  int repeats = 5;
  int threads = 1;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--timing-only") == 0) timing_only = true;
    if (std::strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) repeats = std::atoi(argv[++i]);
    if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = std::atoi(argv[++i]);
  }
  try {
    const tessel::sim::RunFolder folder = tessel::sim::read_run_folder(argv[1]);
    const tessel::HwConfig config = tessel::load_hw_config(folder.hw);
    const std::vector<tessel::isa::Word> program =
        tessel::sim::read_program_words(folder.program, &config);
    const tessel::sim::DramImage image = tessel::sim::read_dram_image(folder.dram, !timing_only);
    tessel::sim::SimOptions options;
    options.timing_only = timing_only;
    options.threads = threads;
    options.record_instruction_cycles = true;  // as `tessel sim` does for a compile folder
    std::vector<double> seconds, cpu;
    std::uint64_t cycles = 0;
    for (int r = 0; r < repeats; ++r) {
      tessel::sim::DramImage copy = image;  // simulate() takes the image; not timed
      const auto start = std::chrono::steady_clock::now();
      const double cpu_start = cpu_seconds();
      auto result = tessel::sim::simulate(config, program, std::move(copy), options);
      seconds.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      cpu.push_back(cpu_seconds() - cpu_start);
      if (!result.ok() || !result.value().report.ok()) {
        std::fprintf(stderr, "simulation failed\n");
        return 2;
      }
      cycles = result.value().report.cycles;
    }
    std::vector<double> sorted = seconds, sorted_cpu = cpu;
    std::sort(sorted.begin(), sorted.end());
    std::sort(sorted_cpu.begin(), sorted_cpu.end());
    std::printf(
        "{\"mode\": \"%s\", \"cycles\": %llu, \"repeats\": %d, \"min_s\": %.5f, "
        "\"median_s\": %.5f, \"cpu_min_s\": %.5f, \"cpu_median_s\": %.5f, \"seconds\": [",
        timing_only ? "timing-only" : "full", static_cast<unsigned long long>(cycles), repeats,
        sorted.front(), sorted[sorted.size() / 2], sorted_cpu.front(),
        sorted_cpu[sorted_cpu.size() / 2]);
    for (std::size_t i = 0; i < seconds.size(); ++i)
      std::printf("%s%.5f", i ? ", " : "", seconds[i]);
    std::printf("]}\n");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
