// Seeded generator of small conv/pool/add/concat DAGs for property tests of the scheduler.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "scheduler/net.hpp"
#include "tests/support/sanitized.hpp"

namespace tessel::sched::testing {

/// Under AddressSanitizer (tests/support/sanitized.hpp) property tests sample a quarter of their
/// cases (random_seeds below).
using tessel::testing::kSanitized;

/// How many random seeds a property test runs: `n`, or a quarter of them (at least 2) under
/// AddressSanitizer, where the same loops run about ten times slower. The sanitizer looks for
/// memory errors in code that the first seeds already reach; the default preset runs all `n`
/// (in CI's ASan leg the four tests that use it took 125 of 600 CPU-seconds; 40 now; in session 28
/// the bound's random loops, 113 of 776, joined them; in session 34 the group floor's 6 seeds,
/// 14 s of scheduler_tests' 172 s under ASan; the sweep checker's 40 keep all of them: its first
/// 10 have no whole-tensor or early store, the cases it must see).
inline uint64_t random_seeds(uint64_t n) {
  if (!kSanitized) return n;
  return n / 4 > 2 ? n / 4 : 2;
}

/// A random DAG: `ops` layers over tensors of 4..16 channels and 8..24 rows; each layer picks
/// a conv (1x1, 3x3 or 5x5, stride 1 or 2, maybe depthwise), a pool, a ReLU, an add of two
/// same-shaped tensors or a concat of two same-sized tensors. Deterministic for a seed.
inline Net random_net(uint64_t seed, int ops = 10) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  NetBuilder b("random" + std::to_string(seed));
  const int64_t side = pick(8, 24);
  std::vector<int> live = {b.input("x", {pick(3, 8), side, side})};
  for (int i = 0; i < ops; ++i) {
    const std::string name = "op" + std::to_string(i);
    const int x = live[static_cast<size_t>(pick(0, static_cast<int64_t>(live.size()) - 1))];
    const Shape3 s = b.peek().tensor(x).shape;
    const int64_t kind = pick(0, 9);
    int y = -1;
    if (kind <= 3) {
      const int64_t k = std::vector<int64_t>{1, 3, 5}[static_cast<size_t>(pick(0, 2))];
      const int64_t stride = (s.h >= 8 && pick(0, 3) == 0) ? 2 : 1;
      const bool depthwise = pick(0, 4) == 0;
      y = b.conv(name, x, depthwise ? s.c : pick(4, 16), k, stride, k / 2, depthwise ? s.c : 1);
    } else if (kind == 4 && s.h >= 4) {
      y = b.pool(name, x, pick(0, 1) ? OpKind::MaxPool : OpKind::AvgPool, 2, 2);
    } else if (kind == 5) {
      y = b.eltwise(name, x);
    } else if (kind <= 7) {
      // add with another live tensor of the same shape, else a same-shape conv branch.
      int other = -1;
      for (int t : live) {
        if (t != x && b.peek().tensor(t).shape == s) other = t;
      }
      if (other < 0) other = b.conv(name + "_b", x, s.c, 3, 1, 1);
      y = b.add(name, x, other);
    } else {
      int other = -1;
      for (int t : live) {
        const Shape3 o = b.peek().tensor(t).shape;
        if (t != x && o.h == s.h && o.w == s.w) other = t;
      }
      if (other < 0) other = b.conv(name + "_b", x, pick(4, 8), 1);
      y = b.concat(name, {x, other});
    }
    if (y >= 0) live.push_back(y);
  }
  return b.build();
}

}  // namespace tessel::sched::testing
