// The `tessel` executable: every subcommand is registered by the module that owns it.
#include <malloc.h>

#include "support/cli.hpp"

int main(int argc, char** argv) {
  // Keep freed memory in the process. By default glibc hands every block above its mmap
  // threshold (128 KiB, rising with use) back to the kernel and trims the heap above 128 KiB,
  // so each calibration run, DRAM image or weight copy starts on fresh pages that the kernel
  // must fault in and zero again: on the shared VM that was a third of `tessel compile`'s CPU
  // time (bench/e2e/README.md). Blocks below 32 MiB (glibc's largest mmap threshold) now come
  // from the heap and are reused; the process's peak memory is unchanged.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  return tessel::cli::run_main(argc, argv);
}
