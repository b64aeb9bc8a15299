// The cost model's one timeline (timeline.hpp).
#include "scheduler/timeline.hpp"

#include <algorithm>
#include <array>

namespace tessel::sched {

Timeline run_timeline(const StepCosts& steps) {
  return run_timeline(steps.load, steps.compute, steps.store, steps.before, steps.copies,
                      steps.store_bytes);
}

Timeline run_timeline(std::span<const int64_t> load, std::span<const int64_t> compute,
                      std::span<const int64_t> store, int64_t before, int copies,
                      std::span<const int64_t> store_bytes) {
  const size_t n = load.size();
  const auto k = static_cast<size_t>(copies);
  // The last three steps' compute and store ends (k <= 2 looks back at most two steps).
  std::array<int64_t, 3> compute_end{}, store_end{};
  auto at = [](std::array<int64_t, 3>& a, size_t w) -> int64_t& { return a[w % 3]; };
  int64_t bus = before;  // the DRAM bus is free from here
  int64_t last_load_end = before;
  Timeline tl;
  auto tail_store = [&](size_t w) {  // step w's stores run after the last load
    tl.tail_dma_cycles += store[w];
    if (w < store_bytes.size()) tl.tail_dma_bytes += store_bytes[w];
  };
  auto store_after = [&](size_t w) {  // the stores of step w, once it has computed
    at(store_end, w) = 0;
    if (store[w] == 0) return;
    bus = std::max(bus, at(compute_end, w)) + store[w];
    at(store_end, w) = bus;
  };
  for (size_t w = 0; w < n; ++w) {
    const int64_t copy_free = w >= k ? at(compute_end, w - k) : 0;
    bus = last_load_end = std::max(bus, copy_free) + load[w];
    int64_t output_free = 0;
    if (w >= k) {
      store_after(w - k);
      output_free = at(store_end, w - k);
      if (w + 1 == n) tail_store(w - k);
    }
    const int64_t previous = w >= 1 ? at(compute_end, w - 1) : 0;
    at(compute_end, w) = std::max({last_load_end, previous, output_free}) + compute[w];
  }
  for (size_t w = n >= k ? n - k : 0; w < n; ++w) {
    store_after(w);
    tail_store(w);
  }
  tl.cycles = std::max(n > 0 ? at(compute_end, n - 1) : before, bus);
  tl.tail_cycles = tl.cycles - last_load_end;
  return tl;
}

}  // namespace tessel::sched
