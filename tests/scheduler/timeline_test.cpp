// The cost model's one timeline (scheduler/timeline.hpp): hand-computed event orders, and the
// closed forms docs/scheduler.md "Cycles" gives for one and two copies.
#include "scheduler/timeline.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace tessel::sched {
namespace {

// One copy: before 3; step 0 loads 3-7, computes 7-17; step 1 loads 17-23 (its copy is free
// once step 0 has computed), step 0's store follows on the bus, 23-24; step 1 computes
// max(23, 17, 24) = 24 .. 27; step 2 loads 27-29 (step 1 stores nothing), computes 29-36 and
// stores 36-41. The sum: 3 + (4 + 6 + 2) + (10 + 3 + 7) + (1 + 0 + 5) = 41. Tail after the
// last load (29): 12, of which the stores after it, 0 + 5.
TEST(Timeline, one_copy_runs_steps_one_after_another) {
  const Timeline tl = run_timeline({{4, 6, 2}, {10, 3, 7}, {1, 0, 5}, 3, 1, {100, 0, 300}});
  EXPECT_EQ(tl.cycles, 41);
  EXPECT_EQ(tl.tail_cycles, 12);
  EXPECT_EQ(tl.tail_dma_cycles, 5);
  EXPECT_EQ(tl.tail_dma_bytes, 300);  // the bytes of those stores (step 2's)
}

// Two copies, loads and stores contending for the bus: L0 0-5, C0 5-15; L1 5-13, C1 15-25;
// L2 waits for C0 (its copy): 15-23, then S0 23-29; C2 waits for S0 (its output copy): 29-39;
// L3 29-37 (bus), S1 37-43, C3 43-53; S2 43-49, S3 53-59. Lockstep: 5 + max(10, 8) +
// max(10, 8 + 6) + max(10, 8 + 6) + max(10, 6) + 6 = 59. Tail after L3: 22, stores S1-S3 18.
TEST(Timeline, two_copies_overlap_compute_with_the_next_load_and_the_previous_store) {
  const Timeline tl =
      run_timeline({{5, 8, 8, 8}, {10, 10, 10, 10}, {6, 6, 6, 6}, 0, 2, {1, 20, 300, 4000}});
  EXPECT_EQ(tl.cycles, 59);
  EXPECT_EQ(tl.tail_cycles, 22);
  EXPECT_EQ(tl.tail_dma_cycles, 18);
  EXPECT_EQ(tl.tail_dma_bytes, 4320);  // S1, S2, S3
}

// One step (tests/scheduler/prefetch_test.cpp's first group): resident weights 12, load 8,
// compute 196, store 8 = 224, tail 204 with 8 of DMA; the copies do not matter.
TEST(Timeline, one_step_is_serial_whatever_the_copies) {
  for (int copies : {1, 2}) {
    const Timeline tl = run_timeline({{8}, {196}, {8}, 12, copies, {}});
    EXPECT_EQ(tl.cycles, 224);
    EXPECT_EQ(tl.tail_cycles, 204);
    EXPECT_EQ(tl.tail_dma_cycles, 8);
  }
}

// The closed forms (docs/scheduler.md "Cycles"), on pseudo-random steps: one copy takes
// before + the sum of every load, compute and store; two copies before + load_0 +
// sum_t max(compute_t, load_{t+1} + store_{t-1}) + store_last. The tail is defined differently
// there (from the DMA slot of the last load, which includes store_{T-3}), but the part of the
// tail the next group's prefetch can use, tail - tail DMA, is the same.
TEST(Timeline, matches_the_closed_forms_for_one_and_two_copies) {
  std::mt19937 rng(35);
  for (int trial = 0; trial < 500; ++trial) {
    const size_t n = 1 + rng() % 7;
    StepCosts s;
    for (size_t t = 0; t < n; ++t) {
      s.load.push_back(rng() % 40);
      s.compute.push_back(rng() % 40);
      s.store.push_back(rng() % 3 == 0 ? 0 : rng() % 40);
    }
    s.before = rng() % 2 ? rng() % 40 : 0;
    int64_t serial = s.before;
    for (size_t t = 0; t < n; ++t) serial += s.load[t] + s.compute[t] + s.store[t];
    s.copies = 1;
    const Timeline one = run_timeline(s);
    EXPECT_EQ(one.cycles, serial);
    EXPECT_EQ(one.tail_cycles - one.tail_dma_cycles, s.compute[n - 1]);

    int64_t lockstep = s.before + s.load[0];
    int64_t slot_dma_end = lockstep;  // the end of the DMA slot holding the last load
    for (size_t t = 0; t < n; ++t) {
      const int64_t dma = (t + 1 < n ? s.load[t + 1] : 0) + (t > 0 ? s.store[t - 1] : 0);
      if (t + 2 == n) slot_dma_end = lockstep + dma;
      lockstep += std::max(s.compute[t], dma);
    }
    lockstep += s.store[n - 1];
    const int64_t lockstep_tail_free =
        lockstep - slot_dma_end - s.store[n - 1] - (n >= 2 ? s.store[n - 2] : 0);
    s.copies = 2;
    const Timeline two = run_timeline(s);
    EXPECT_EQ(two.cycles, lockstep) << "trial " << trial;
    EXPECT_EQ(two.tail_cycles - two.tail_dma_cycles, lockstep_tail_free) << "trial " << trial;
  }
}

}  // namespace
}  // namespace tessel::sched
